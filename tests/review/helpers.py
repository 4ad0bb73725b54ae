"""Drive a request into any state through the real actions; read what a page gives away."""

from lxml.html import HtmlElement

from registry.review import actions
from registry.review.actions import request_set_standardisation
from tests.factories import make_request
from tests.html import text

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


def readable(doc: HtmlElement) -> str:
    """Everything a page gives away to whoever reads it or its source: the visible text
    (whitespace collapsed), every attribute value (links, field values, titles, data-*)
    and any comment in the markup. What must NOT be shown is checked against this, so a
    negative assertion cannot pass because the words sit in markup rather than in text."""
    parts = [text(doc), *doc.xpath("//@*"), *(c.text or "" for c in doc.xpath("//comment()"))]
    return "\n".join(parts)


def textarea_text(element: HtmlElement) -> str:
    """What a browser shows in this textarea (it drops the one newline Django writes after
    the tag): for a form whose field names recur in other forms of the page, where
    tests.html.field_value(doc, name) cannot tell them apart."""
    assert element.tag == "textarea", element.tag
    return (element.text or "").removeprefix("\n")
