"""The review workflow of RFC 8141 sections 6.2 and 6.3 as one explicit table.

Every move a request can make is a row of TRANSITIONS: the states it leaves,
the state it reaches, the roles that may take it, the path (community, fast
track or both) it belongs to, and what it requires. ``check()`` is the one
place that says yes or no, with a message a person can act on; the actions
module applies a checked transition. Nothing else sets ``RegistrationRequest.state``.

Community path (6.2): draft -> in_review (posted to the list) -> experts may
request changes (the registrant resubmits: a new round) -> experts approve or
reject with reasons; if standardisation is involved, approval is a report to
the IESG, and IANA staff record the IESG's direction. IANA staff register.

Fast track (6.3): the same template and public review, but reviews are
advisory: the body's representative decides when to ask IANA to register.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from registry.accounts.roles import (
    EXPERT_ROLE,
    REGISTRANT_ROLE,
    STAFF_ROLE,
    is_expert,
    is_iana_staff,
)
from registry.review.models import (
    FINAL_STATES,
    Comment,
    OutboundMessage,
    RegistrationRequest,
    State,
)
from registry.review.validation import submission_problems

COMMUNITY = "community"
FAST_TRACK = "fast_track"
BOTH = frozenset({COMMUNITY, FAST_TRACK})
ROLES = (REGISTRANT_ROLE, EXPERT_ROLE, STAFF_ROLE)


@dataclass(frozen=True)
class Transition:
    name: str
    label: str
    sources: frozenset[str]
    target: str
    roles: frozenset[str]
    paths: frozenset[str] = BOTH
    needs_comment: str = ""  # the label of the required comment, if one is required
    decision: bool = False  # subject to the minimum public review period
    button: str = "primary"


def _t(name, label, sources, target, roles, **kw) -> Transition:
    return Transition(name, label, frozenset(sources), target, frozenset(roles), **kw)


TRANSITIONS: dict[str, Transition] = {t.name: t for t in (
    _t("submit", "Submit for public review", [State.DRAFT], State.IN_REVIEW,
       [REGISTRANT_ROLE]),
    _t("resubmit", "Resubmit (new round)", [State.CHANGES_REQUESTED], State.IN_REVIEW,
       [REGISTRANT_ROLE]),
    _t("revise", "Take back to revise", [State.IN_REVIEW], State.CHANGES_REQUESTED,
       [REGISTRANT_ROLE], button="secondary"),
    _t("request_changes", "Request changes", [State.IN_REVIEW], State.CHANGES_REQUESTED,
       [EXPERT_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="What must change", button="warning"),
    _t("approve", "Approve", [State.IN_REVIEW], State.APPROVED,
       [EXPERT_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="Reasons for approval", decision=True, button="success"),
    _t("report_to_iesg", "Approve and report to the IESG", [State.IN_REVIEW],
       State.AWAITING_IESG, [EXPERT_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="Expert review report", decision=True, button="success"),
    _t("reject", "Reject", [State.IN_REVIEW], State.REJECTED,
       [EXPERT_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="Reasons for rejection", decision=True, button="danger"),
    _t("record_iesg_approval", "Record IESG approval", [State.AWAITING_IESG], State.APPROVED,
       [STAFF_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="The IESG's direction", button="success"),
    _t("record_iesg_rejection", "Record IESG rejection", [State.AWAITING_IESG], State.REJECTED,
       [STAFF_ROLE], paths=frozenset({COMMUNITY}),
       needs_comment="The IESG's direction", button="danger"),
    _t("request_registration", "Ask IANA to register", [State.IN_REVIEW], State.APPROVED,
       [REGISTRANT_ROLE], paths=frozenset({FAST_TRACK}), button="success"),
    _t("register", "Complete the registration", [State.APPROVED], State.REGISTERED,
       [STAFF_ROLE], button="success"),
    _t("withdraw", "Withdraw the request",
       [State.DRAFT, State.IN_REVIEW, State.CHANGES_REQUESTED, State.AWAITING_IESG,
        State.APPROVED], State.WITHDRAWN, [REGISTRANT_ROLE], button="outline-danger"),
)}

# Events that record something other than a move of the state.
OTHER_EVENTS = {
    "create": "Draft started",
    "assign": "Assignment",
    "set_standardisation": "Standardisation flag",
    "remind": "Reminder to the experts",
    "list_comment": "Message on the review list",
    "mail_reply": "Reply by mail from the registrant",
    "resend_mail": "Mail sent again",
    "mail_failed": "Mail could not be sent",
    "mail_bounced": "Mail bounced",
}

# Timeline events not everyone reads: who may, by role (everything else is public).
EVENT_READERS: dict[str, frozenset[str]] = {
    "mail_reply": frozenset({REGISTRANT_ROLE, EXPERT_ROLE, STAFF_ROLE}),
    "resend_mail": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_failed": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_bounced": frozenset({EXPERT_ROLE, STAFF_ROLE}),
}


def event_label(name: str) -> str:
    """What a RequestEvent's ``transition`` is called on the timeline."""
    if name in TRANSITIONS:
        return TRANSITIONS[name].label
    return OTHER_EVENTS.get(name, name.replace("_", " ").capitalize())


ROLE_NAMES = {REGISTRANT_ROLE: "the registrant", EXPERT_ROLE: "a designated expert",
              STAFF_ROLE: "IANA staff"}


class TransitionRefused(Exception):
    """A transition the workflow does not allow now; the message says why."""


def path_of(request: RegistrationRequest) -> str:
    return FAST_TRACK if request.fast_track else COMMUNITY


def roles_of(user, request: RegistrationRequest) -> set[str]:
    roles = set()
    if getattr(user, "is_authenticated", False):
        if user.pk == request.registrant_id:
            roles.add(REGISTRANT_ROLE)
        if is_expert(user):
            roles.add(EXPERT_ROLE)
        if is_iana_staff(user):
            roles.add(STAFF_ROLE)
    return roles


def check_move(transition: Transition, *, state: str, path: str, roles: set[str]) -> None:
    """The table's answer for one (state, transition, roles) triple."""
    if state not in transition.sources:
        raise TransitionRefused(
            f'"{transition.label}" is not possible while the request is '
            f'"{State(state).label.lower()}".'
        )
    if path not in transition.paths:
        if path == FAST_TRACK:
            raise TransitionRefused(
                f'"{transition.label}" is not part of the fast track (RFC 8141 section 6.3): '
                "reviews are advisory and the standards body decides when to ask for "
                "registration."
            )
        raise TransitionRefused(
            f'"{transition.label}" is only for fast-track requests from recognized standards '
            "bodies (RFC 8141 section 6.3)."
        )
    if not roles & transition.roles:
        who = " or ".join(ROLE_NAMES[r] for r in sorted(transition.roles))
        raise TransitionRefused(f'Only {who} can "{transition.label.lower()}".')


def check(request: RegistrationRequest, name: str, user, *, comment: str = "",
          early_reason: str = "", now=None) -> Transition:
    """Whether ``user`` may take transition ``name`` on ``request`` now; raises
    :class:`TransitionRefused` with the reason when not."""
    transition = TRANSITIONS.get(name)
    if transition is None:
        raise TransitionRefused(f"There is no action called {name!r}.")
    check_move(transition, state=request.state, path=path_of(request),
               roles=roles_of(user, request))
    if transition.needs_comment and not comment.strip():
        raise TransitionRefused(f"{transition.needs_comment} is required.")
    if name == "approve" and request.standardisation:
        raise TransitionRefused(
            "Standardisation is involved: approve with a report to the IESG instead "
            "(RFC 8141 section 6.2, step 4)."
        )
    if name == "report_to_iesg" and not request.standardisation:
        raise TransitionRefused(
            "Only requests that involve standardisation go to the IESG; approve it directly."
        )
    if transition.decision:
        ends = request.review_period_ends()
        if ends and (now or timezone.now()) < ends and not early_reason.strip():
            raise TransitionRefused(
                f"The public review period ({settings.REVIEW_MIN_DAYS} days) ends on "
                f"{ends:%Y-%m-%d}; to decide earlier, record a reason for the early decision."
            )
    if name in ("submit", "resubmit", "request_registration"):
        _check_complete(request)
    return transition


def _check_complete(request: RegistrationRequest) -> None:
    problems = submission_problems(request)
    if problems:
        raise TransitionRefused("The template is not ready: " + "; ".join(problems))


def can_view(request: RegistrationRequest, user) -> bool:
    """A draft is private to its registrant; from submission on, review is public."""
    if request.state == State.DRAFT:
        return getattr(user, "is_authenticated", False) and user.pk == request.registrant_id
    return True


def comment_audiences(request: RegistrationRequest, user) -> list[str]:
    """Who ``user`` may address a comment to on ``request``: the public review (anyone
    signed in, once submitted and while open; the participants afterwards), the
    registrant (experts and staff), the experts only (experts)."""
    if not getattr(user, "is_authenticated", False):
        return []
    roles = roles_of(user, request)
    audiences = []
    if request.state != State.DRAFT and (request.state not in FINAL_STATES or roles):
        audiences.append(Comment.Audience.PUBLIC)
    if roles & {EXPERT_ROLE, STAFF_ROLE}:
        audiences.append(Comment.Audience.REGISTRANT)
    if EXPERT_ROLE in roles:
        audiences.append(Comment.Audience.EXPERTS)
    return audiences


def available(request: RegistrationRequest, user) -> list[Transition]:
    """The transitions ``user`` could take on ``request`` (ignoring comments and periods)."""
    roles = roles_of(user, request)
    result = []
    for transition in TRANSITIONS.values():
        try:
            check_move(transition, state=request.state, path=path_of(request), roles=roles)
        except TransitionRefused:
            continue
        if transition.name == "approve" and request.standardisation:
            continue
        if transition.name == "report_to_iesg" and not request.standardisation:
            continue
        result.append(transition)
    return result


def hidden_events(request: RegistrationRequest, user) -> set[str]:
    """The kinds of timeline event ``user`` may not read on ``request``."""
    roles = roles_of(user, request)
    return {name for name, readers in EVENT_READERS.items() if not roles & readers}


def can_see_mail(request: RegistrationRequest, user) -> bool:
    """The mail sent and received about a request (addresses, delivery errors, held
    messages) is for the designated experts and IANA staff."""
    return bool(roles_of(user, request) & {EXPERT_ROLE, STAFF_ROLE})


def check_resend(message: OutboundMessage, user) -> None:
    """IANA staff may send again a message that failed (or is still failing)."""
    if not is_iana_staff(user):
        raise TransitionRefused("Only IANA staff send mail again.")
    if message.state == OutboundMessage.Delivery.SENT:
        raise TransitionRefused("This message was sent; there is nothing to send again.")
    if message.state == OutboundMessage.Delivery.PENDING and not message.attempts:
        raise TransitionRefused("This message has not been tried yet; it is on its way.")


def can_resend(message: OutboundMessage, user) -> bool:
    try:
        check_resend(message, user)
    except TransitionRefused:
        return False
    return True


def mail_placement(request: RegistrationRequest, *, via_list: bool, from_registrant: bool,
                   answers_changes_request: bool) -> tuple[str | None, str]:
    """Where a message that arrived about ``request`` goes: the audience of the
    comment it becomes, or None and the reason it is held for staff. Mail never
    changes a state; it only adds to the timeline."""
    if request.state == State.DRAFT:
        return None, "The request is a draft, private to its registrant."
    if via_list:
        return Comment.Audience.PUBLIC, ""
    if from_registrant and answers_changes_request:
        return Comment.Audience.REGISTRANT, ""
    if from_registrant:
        return None, ("Sent by the registrant to the registry directly, not in answer to a "
                      "request for changes.")
    return None, ("Sent to the registry directly, not through the review list, and not by "
                  "the registrant from the address on file.")
