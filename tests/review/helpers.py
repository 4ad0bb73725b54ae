"""Drive a request into any state through the real actions; add designated experts away
or at their maximum; read what a page gives away; hand a message to the mail reader as an
MTA does."""

import datetime as dt
import io
import sys

from django.core.management import call_command
from django.utils import timezone
from lxml.html import HtmlElement

from registry.accounts.actions import expert_set_availability
from registry.accounts.roles import EXPERT_GROUP, EXPERT_ROLE, REGISTRANT_ROLE, STAFF_ROLE
from registry.review import actions, workflow
from registry.review.actions import registration_set_standardisation
from registry.review.models import InboundMessage
from tests.factories import make_registration, make_user
from tests.html import text

EARLY = "Tested before the period ends."

# Who takes a transition on the way, by the roles its row allows (the first that fits).
PERSONA_OF_ROLE = {REGISTRANT_ROLE: "registrant", EXPERT_ROLE: "expert", STAFF_ROLE: "staff"}


def _routes(path: str) -> dict[str, list[tuple[str, str]] | None]:
    """How to reach each state from a fresh draft on ``path``: the shortest run of
    transitions, taken in the order of workflow.TRANSITIONS, with who takes each; None
    for a state the path never reaches. Derived from the table, so a new state or move
    is reached without editing this file."""
    routes: dict[str, list[tuple[str, str]]] = {workflow.INITIAL_STATE: []}
    frontier = [workflow.INITIAL_STATE]
    while frontier:
        following = []
        for state in frontier:
            for move in workflow.TRANSITIONS.values():
                if state in move.sources and path in move.paths and move.target not in routes:
                    who = next(PERSONA_OF_ROLE[role] for role in PERSONA_OF_ROLE
                               if role in move.roles)
                    routes[move.target] = [*routes[state], (move.name, who)]
                    following.append(move.target)
        frontier = following
    return {state: routes.get(state) for state in workflow.STATES}


ROUTES = _routes(workflow.COMMUNITY)
FAST_ROUTES = _routes(workflow.FAST_TRACK)


def registration_in(state, *, path, people, nid, standardisation=False):
    """A request of ``people["registrant"]`` driven into ``state`` through the real
    actions; None when ``path`` never reaches it. What a move requires is read from its
    row: standardisation is set for a move that needs it, and a move only for a request
    in a race for its NID gets a rival (withdrawn once the move is taken)."""
    fast = path == "fast_track"
    route = (FAST_ROUTES if fast else ROUTES)[state]
    if route is None:
        return None
    owner = people["registrant"]
    registration = make_registration(owner, nid=nid, fast_track=fast, submit=False)
    flag = standardisation or any(workflow.TRANSITIONS[name].standardisation
                                  for name, _ in route)
    for name, who in route:
        rival = None
        if workflow.TRANSITIONS[name].overtaken_only:
            rival = make_registration(owner, nid=nid.upper(), fast_track=fast)
        registration = actions.registration_transition(
            registration=registration, transition=name, actor=people[who],
            comment="Because." , early_reason=EARLY,
        )
        if rival is not None:
            actions.registration_transition(registration=rival, transition="withdraw", actor=owner)
        if flag and name == "submit":  # the experts set it once they see the request
            registration = registration_set_standardisation(registration=registration,
                                                            involved=True,
                                                            actor=people["expert"])
            flag = False
    return registration


def more_experts(n: int, *, prefix: str) -> list:
    """``n`` designated experts: one in three away, one in three at a maximum of open
    requests (reached by an assignment), the others as they come."""
    experts = []
    for i in range(n):
        expert = make_user(f"{prefix}{i}@example.org", roles=[EXPERT_GROUP])
        if i % 3 == 1:
            expert = expert_set_availability(
                expert=expert, unavailable_until=timezone.localdate() + dt.timedelta(days=9),
                max_open_assignments=None, actor=expert)
        elif i % 3 == 2:
            expert = expert_set_availability(expert=expert, unavailable_until=None,
                                              max_open_assignments=1, actor=expert)
            taken = make_registration(make_user(f"{prefix}-r{i}@example.org"),
                                      nid=f"{prefix}taken{i}")
            actions.registration_assign(registration=taken, expert=expert, actor=expert)
        experts.append(expert)
    return experts


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


def feed(raw: bytes, *args: str) -> InboundMessage | None:
    """Pipe one message to ``manage.py receive_mail ARGS`` as an MTA does; the record
    it made."""
    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
    try:
        call_command("receive_mail", *args)
    finally:
        sys.stdin = stdin
    return InboundMessage.objects.order_by("-id").first()
