"""Drive a request into any state through the real actions."""

from registry.review import actions
from registry.review.actions import request_set_standardisation
from tests.factories import make_request

EARLY = "Tested before the period ends."

# How to reach each state from a fresh draft: the transitions to take, with who takes them.
ROUTES = {
    "draft": [],
    "in_review": [("submit", "registrant")],
    "changes_requested": [("submit", "registrant"), ("revise", "registrant")],
    "awaiting_iesg": [("submit", "registrant"), ("report_to_iesg", "expert")],
    "approved": [("submit", "registrant"), ("approve", "expert")],
    "registered": [("submit", "registrant"), ("approve", "expert"), ("register", "staff")],
    "rejected": [("submit", "registrant"), ("reject", "expert")],
    "withdrawn": [("withdraw", "registrant")],
}
FAST_ROUTES = {
    **ROUTES,
    "awaiting_iesg": None,  # the fast track never reaches the IESG
    "approved": [("submit", "registrant"), ("request_registration", "registrant")],
    "registered": [("submit", "registrant"), ("request_registration", "registrant"),
                   ("register", "staff")],
    "rejected": None,  # reviews are advisory: nothing rejects a fast-track request
}


def request_in(state, *, path, people, nid, standardisation=False):
    fast = path == "fast_track"
    route = (FAST_ROUTES if fast else ROUTES)[state]
    if route is None:
        return None
    owner = people["registrant"]
    request = make_request(owner, nid=nid, fast_track=fast, submit=False)
    flag = standardisation or any(name == "report_to_iesg" for name, _ in route)
    for name, who in route:
        request = actions.request_transition(
            request=request, transition=name, actor=people[who],
            comment="Because." , early_reason=EARLY,
        )
        if flag and name == "submit":  # the experts set it once they see the request
            request = request_set_standardisation(request=request, involved=True,
                                                  actor=people["expert"])
            flag = False
    return request


def sent_summaries(outbox) -> list[str]:
    """What each message sent was about (the outbox row's summary), in sending order:
    subjects themselves are the request's thread subject, the same for every message."""
    from registry.review.models import OutboundMessage

    summaries = dict(OutboundMessage.objects.values_list("message_id", "summary"))
    return [summaries[m.extra_headers["Message-ID"]] for m in outbox]
