"""The review workflow of RFC 8141 sections 6.2 and 6.3, and every rule of who may
see and do what, in one module.

Every state a request can be in is a row of STATES: what being in it means (open,
final, editable by the registrant, reminded to the experts when idle, listed for
public review, answered by the registrant by mail, in IANA staff's queue, its
badge). Every list, query, reminder, badge and mail rule reads that row.

Every move a request can make is a row of TRANSITIONS; each rule that depends on
the move is a column of that row (the states it leaves, the state it reaches, who
may take it, the path, what it requires, what it does, who is told, what the page
asks and says). ``refusal()`` is the one predicate: ``check_transition()`` raises what it
finds and ``available()`` keeps the transitions it finds nothing against.

The other questions views, forms, templates and mail ask (``can_view``,
``can_edit``, ``can_revise``, ``comment_audiences``, ``can_set_standardisation``,
``can_assign``, ``submit_transition``, who sees the dashboard and the staff
queue, which requests and comments a person may read, who is suggested as a
request's expert and who is reminded of an idle one) are answered here and
nowhere else.

Community path (6.2): draft -> in_review (posted to the list) -> experts may
request changes (the registrant resubmits: a new round) -> experts approve or
reject with reasons; if standardisation is involved, approval is a report to
the IESG, and IANA staff record the IESG's direction. IANA staff register.

Fast track (6.3): the same template and public review, but reviews are
advisory: the body's representative decides when to ask IANA to register.

Races (6.2 asks the experts to avoid them): a request whose NID another open
request also proposes (compared case-insensitively), or whose NID was registered
meanwhile, may be closed by an expert or IANA staff with a reason; one whose NID
is taken can no longer be approved or registered.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from registry.accounts.roles import (
    EXPERT_ROLE,
    REGISTRANT_ROLE,
    STAFF_ROLE,
    is_expert,
    is_iana_staff,
)
from registry.namespaces.models import Namespace
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
    State,
)
from registry.review.validation import submission_problems

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser

    from registry.accounts.models import User

# Whoever asks: a signed-in user or an anonymous visitor.
Visitor = Union["User", "AnonymousUser"]

COMMUNITY = "community"
FAST_TRACK = "fast_track"
BOTH = frozenset({COMMUNITY, FAST_TRACK})

# Who is told (registry.review.mails builds one message per audience).
REVIEW_LIST = "review_list"
REGISTRANT = "registrant"
EXPERTS = "experts"
STAFF = "staff"
IESG = "iesg"


class Refused(Exception):
    """The workflow says no; the message says why and what to do instead. ``field``
    names the form field the answer is about, when it is about one."""

    status = 409

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class NotAllowed(Refused):
    """This person may not do this (role, holder, conflict of interest)."""

    status = 403


class TransitionRefused(Refused):
    """The move is not possible now (state, path, a missing reason, an unready
    template, a NID taken meanwhile)."""


class NotEditable(Refused):
    """The request is no longer in a state its registrant may edit."""


class StaleEdit(Refused):
    """The form was based on an older copy of the request than the one stored."""


@dataclass(frozen=True)
class StateMeaning:
    """What being in one state means. Every attribute is given for every state (no
    defaults): a new state must say what it means for each of them."""

    state: State
    badge: str  # the Bootstrap badge classes of the state's label
    initial: bool  # where every request starts (exactly one state)
    open: bool  # submitted and not yet finished: the experts' dashboard, assignable
    final: bool  # the request is over: no transition leaves it
    editable: bool  # its registrant may edit the template
    reminded: bool  # the experts are reminded when it sits idle
    public_review: bool  # listed on the public review page, with its review period
    answered_by_mail: bool  # a mail from the registrant becomes their answer to the experts
    staff_queue: bool  # IANA staff have to act on it
    standardisation_open: bool  # the experts may still set whether standardisation is involved

    @property
    def label(self) -> str:
        return str(self.state.label)


def _s(state: State, badge: str, *, initial: bool = False, open: bool = False,
       final: bool = False, editable: bool = False, reminded: bool = False,
       public_review: bool = False, answered_by_mail: bool = False,
       staff_queue: bool = False, standardisation_open: bool = False) -> StateMeaning:
    return StateMeaning(state, badge, initial, open, final, editable, reminded, public_review,
                        answered_by_mail, staff_queue, standardisation_open)


STATES: dict[str, StateMeaning] = {row.state.value: row for row in (
    _s(State.DRAFT, "text-bg-light border", initial=True, editable=True),
    _s(State.IN_REVIEW, "text-bg-primary", open=True, reminded=True, public_review=True,
       standardisation_open=True),
    _s(State.CHANGES_REQUESTED, "text-bg-warning", open=True, editable=True, reminded=True,
       answered_by_mail=True, standardisation_open=True),
    _s(State.AWAITING_IESG, "text-bg-info", open=True, reminded=True, staff_queue=True),
    _s(State.APPROVED, "text-bg-info", open=True, reminded=True, staff_queue=True),
    _s(State.REGISTERED, "text-bg-success", final=True),
    _s(State.REJECTED, "text-bg-secondary", final=True),
    _s(State.WITHDRAWN, "text-bg-secondary", final=True),
    _s(State.CLOSED, "text-bg-secondary", final=True),
)}


def states_where(**meaning: bool) -> tuple[State, ...]:
    """The states whose rows have every attribute given, in the table's order."""
    return tuple(row.state for row in STATES.values()
                 if all(getattr(row, name) == value for name, value in meaning.items()))


def meaning_of(state: str) -> StateMeaning:
    return STATES[state]


# For the transitions' sources and for queries; a question about one request reads
# its row (meaning_of), so a row changed in a test changes the answer.
INITIAL_STATE = states_where(initial=True)[0]
OPEN_STATES = states_where(open=True)
FINAL_STATES = states_where(final=True)


@dataclass(frozen=True)
class Transition:
    name: str
    label: str  # the button, and the timeline entry
    sources: frozenset[str]
    target: str
    roles: frozenset[str]
    done: str  # what the person is told once it is taken
    paths: frozenset[str] = BOTH
    needs_comment: str = ""  # the label of the required comment, if one is required
    decision: bool = False  # subject to the minimum public review period
    complete_template: bool = False  # the template must be ready to submit
    creates_round: bool = False  # snapshots the template as a new round of review
    publishes: bool = False  # registers the namespace or publishes its next version
    standardisation: bool | None = None  # only when involved (True) / not involved (False)
    independent: bool = False  # conflict of interest: never by the request's registrant
    race_only: bool = False  # only for a request that lost (or is in) a race for its NID
    needs_free_nid: bool = False  # refused once the proposed NID is registered meanwhile
    mail: tuple[str, ...] = ()  # who is told
    confirm: str = ""  # the question asked before it is taken
    button: str = "primary"


def _t(name: str, label: str, sources: Iterable[str], target: str, roles: Iterable[str],
       done: str, **kw: Any) -> Transition:
    return Transition(name, label, frozenset(sources), target, frozenset(roles), done, **kw)


PRE_FINAL = [INITIAL_STATE, *OPEN_STATES]
ONLY_COMMUNITY = frozenset({COMMUNITY})

TRANSITIONS: dict[str, Transition] = {t.name: t for t in (
    _t("submit", "Submit for public review", [State.DRAFT], State.IN_REVIEW, [REGISTRANT_ROLE],
       "Submitted: the template went to the review list and the designated experts.",
       complete_template=True, creates_round=True, mail=(REVIEW_LIST, REGISTRANT)),
    _t("resubmit", "Resubmit (new round)", [State.CHANGES_REQUESTED], State.IN_REVIEW,
       [REGISTRANT_ROLE],
       "Resubmitted: the new round went to the review list and the designated experts.",
       complete_template=True, creates_round=True, mail=(REVIEW_LIST, REGISTRANT)),
    _t("revise", "Take back to revise", [State.IN_REVIEW], State.CHANGES_REQUESTED,
       [REGISTRANT_ROLE], "Taken back: edit the template, then resubmit it.",
       button="secondary"),
    _t("request_changes", "Request changes", [State.IN_REVIEW], State.CHANGES_REQUESTED,
       [EXPERT_ROLE], "Changes requested; the registrant will be told by mail.",
       paths=ONLY_COMMUNITY,
       needs_comment="What must change", independent=True, mail=(REGISTRANT,),
       button="warning"),
    _t("approve", "Approve", [State.IN_REVIEW], State.APPROVED, [EXPERT_ROLE],
       "Approved: the request is in the IANA staff queue.", paths=ONLY_COMMUNITY,
       needs_comment="Reasons for approval", decision=True, standardisation=False,
       independent=True, needs_free_nid=True, mail=(REGISTRANT, STAFF), button="success"),
    _t("report_to_iesg", "Approve and report to the IESG", [State.IN_REVIEW],
       State.AWAITING_IESG, [EXPERT_ROLE],
       "Approved and reported: your report is being mailed to the IESG.", paths=ONLY_COMMUNITY,
       needs_comment="Expert review report", decision=True, standardisation=True,
       independent=True, needs_free_nid=True, mail=(REGISTRANT, STAFF, IESG),
       button="success"),
    _t("reject", "Reject", [State.IN_REVIEW], State.REJECTED, [EXPERT_ROLE],
       "Rejected; the registrant will be told by mail.", paths=ONLY_COMMUNITY,
       needs_comment="Reasons for rejection", decision=True, independent=True,
       mail=(REGISTRANT,), confirm="Reject this request? This cannot be undone.",
       button="danger"),
    _t("record_iesg_approval", "Record IESG approval", [State.AWAITING_IESG], State.APPROVED,
       [STAFF_ROLE], "The IESG's approval is recorded: the request is ready to register.",
       paths=ONLY_COMMUNITY, needs_comment="The IESG's direction", independent=True,
       needs_free_nid=True, mail=(REGISTRANT, STAFF), button="success"),
    _t("record_iesg_rejection", "Record IESG rejection", [State.AWAITING_IESG], State.REJECTED,
       [STAFF_ROLE], "The IESG's rejection is recorded; the registrant will be told by mail.",
       paths=ONLY_COMMUNITY, needs_comment="The IESG's direction", independent=True,
       mail=(REGISTRANT,), button="danger"),
    _t("request_registration", "Ask IANA to register", [State.IN_REVIEW], State.APPROVED,
       [REGISTRANT_ROLE], "Asked: the request is in the IANA staff queue.",
       paths=frozenset({FAST_TRACK}), complete_template=True, needs_free_nid=True,
       mail=(REVIEW_LIST, STAFF), button="success"),
    _t("register", "Complete the registration", [State.APPROVED], State.REGISTERED,
       [STAFF_ROLE], "Registered: the namespace is published.", publishes=True,
       independent=True, needs_free_nid=True, mail=(REGISTRANT, REVIEW_LIST),
       button="success"),
    _t("withdraw", "Withdraw the request", PRE_FINAL, State.WITHDRAWN, [REGISTRANT_ROLE],
       "Withdrawn.", mail=(EXPERTS,), confirm="Withdraw this request? This cannot be undone.",
       button="outline-danger"),
    _t("close", "Close the request", OPEN_STATES, State.CLOSED, [EXPERT_ROLE, STAFF_ROLE],
       "Closed; the registrant will be told by mail.", needs_comment="Why it is closed",
       independent=True, race_only=True, mail=(REGISTRANT, EXPERTS),
       confirm="Close this request? This cannot be undone.", button="outline-danger"),
)}

# Timeline events not everyone reads: who may, by role (everything else is public).
EVENT_READERS: dict[str, frozenset[str]] = {
    "mail_reply": frozenset({REGISTRANT_ROLE, EXPERT_ROLE, STAFF_ROLE}),
    "resend_mail": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_failed": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_bounced": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_attached": frozenset({EXPERT_ROLE, STAFF_ROLE}),
}


ROLE_NAMES = {REGISTRANT_ROLE: "the registrant", EXPERT_ROLE: "a designated expert",
              STAFF_ROLE: "IANA staff"}

# Who is told about a comment, by its audience.
COMMENT_MAIL: dict[str, tuple[str, ...]] = {
    Comment.Audience.PUBLIC: (REVIEW_LIST,),
    Comment.Audience.REGISTRANT: (REGISTRANT,),
    Comment.Audience.EXPERTS: (EXPERTS,),
}


def path_of(registration: RegistrationRequest) -> str:
    return FAST_TRACK if registration.fast_track else COMMUNITY


def _signed_in(user: Visitor) -> bool:
    return bool(getattr(user, "is_authenticated", False))


def _is_registrant(user: Visitor, registration: RegistrationRequest) -> bool:
    return _signed_in(user) and user.pk == registration.registrant_id


def roles_of(user: Visitor, registration: RegistrationRequest) -> set[str]:
    roles = set()
    if _is_registrant(user, registration):
        roles.add(REGISTRANT_ROLE)
    if is_expert(user):
        roles.add(EXPERT_ROLE)
    if is_iana_staff(user):
        roles.add(STAFF_ROLE)
    return roles


# --- Races for a NID ----------------------------------------------------------------

@dataclass(frozen=True)
class Race:
    twins: int  # other open requests proposing the same NID, case-insensitively
    taken: bool  # the NID was registered meanwhile

    def __bool__(self) -> bool:
        return bool(self.twins or self.taken)


def _nid_in_play(registration: RegistrationRequest) -> bool:
    """Whether the request's proposed NID can still be lost to a race: a new NID, proposed
    by a request not yet over."""
    return not (registration.is_revision or not registration.proposed_nid
                or meaning_of(registration.state).final)


def race_of(registration: RegistrationRequest) -> Race:
    """Read from the ``with_race()`` annotations when the queryset made them (one
    query for a whole list), else from two queries."""
    if not _nid_in_play(registration):
        return Race(0, False)
    if hasattr(registration, "race_twins"):
        return Race(int(registration.race_twins or 0),
                    bool(registration.race_taken))  # type: ignore[attr-defined]
    key = (registration.state, registration.proposed_nid)
    cached = registration.__dict__.get("_race")  # asked once per transition of a page
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    race = Race(RegistrationRequest.objects.conflicting_with(registration).count(),
                registered_meanwhile(registration) is not None)
    remember_race(registration, race)
    return race


def shows_nid_warnings(registration: RegistrationRequest) -> bool:
    """Whether the section 5.1/6.2 warnings for the proposed NID still matter: not once
    the request is registered or closed (its own registration would be the 'conflict')."""
    return registration.state not in FINAL_STATES


# The final states a request is closed in without a registration: each with its reason.
CLOSED_STATES = tuple(state for state in FINAL_STATES if state != State.REGISTERED)


def closing_event(registration: RegistrationRequest,
                  events: list[RequestEvent]) -> RequestEvent | None:
    """The transition (among ``events``, oldest first) that closed ``registration`` without
    registering it, whose comment is the reason the page shows at its top."""
    if registration.state not in CLOSED_STATES:
        return None
    return next((e for e in reversed(events) if e.kind == RequestEvent.Kind.TRANSITION
                 and e.to_state == registration.state), None)


def remember_race(registration: RegistrationRequest, race: Race) -> None:
    """Keep a race a page has already read, for the questions that follow."""
    registration.__dict__["_race"] = ((registration.state, registration.proposed_nid), race)


def registered_meanwhile(registration: RegistrationRequest) -> Namespace | None:
    """The namespace that took this request's proposed NID while it was open."""
    if not _nid_in_play(registration):
        return None
    namespace: Namespace | None = Namespace.objects.by_nid(registration.proposed_nid).first()
    return namespace


# --- The one predicate ----------------------------------------------------------------

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
        raise NotAllowed(f'Only {who} can "{transition.label.lower()}".')


@dataclass(frozen=True)
class Inputs:
    """What the person typed with the move (checked only when they take it)."""

    comment: str = ""
    early_reason: str = ""


def refusal(registration: RegistrationRequest, transition: Transition, user: Visitor, *,
            inputs: Inputs | None = None, now: dt.datetime | None = None) -> Refused | None:
    """Why ``user`` may not take ``transition`` on ``registration`` now, or None. Without
    ``inputs``, what the person would still have to type is not judged."""
    try:
        check_move(transition, state=registration.state, path=path_of(registration),
                   roles=roles_of(user, registration))
    except Refused as exc:
        return exc
    if transition.independent and _is_registrant(user, registration):
        return NotAllowed(
            f'You are the registrant of this request, so you cannot "{transition.label.lower()}"'
            " (conflict of interest): another "
            + ("designated expert" if EXPERT_ROLE in transition.roles & roles_of(user, registration)
               else "member of IANA staff") + " must."
        )
    if transition.standardisation is False and registration.standardisation:
        return TransitionRefused(
            "Standardisation is involved: approve with a report to the IESG instead "
            "(RFC 8141 section 6.2, step 4)."
        )
    if transition.standardisation is True and not registration.standardisation:
        return TransitionRefused(
            "Only requests that involve standardisation go to the IESG; approve it directly."
        )
    if transition.race_only or transition.needs_free_nid:
        race = race_of(registration)
        if transition.race_only and not race:
            return TransitionRefused(
                "Only a request in a race for its NID (another open request proposes it, or it "
                "was registered meanwhile) can be closed; otherwise the registrant withdraws it "
                "or the experts decide on it."
            )
        if transition.needs_free_nid and race.taken:
            way_out = ('"Close the request" with a reason instead'
                       if roles_of(user, registration) & TRANSITIONS["close"].roles
                       else "withdraw it, or ask the experts to close it")
            return TransitionRefused(
                f"The NID {registration.proposed_nid} was registered meanwhile, so "
                f'"{transition.label.lower()}" is no longer possible: {way_out}.'
            )
    if inputs is None:
        return None
    if transition.needs_comment and not inputs.comment.strip():
        return TransitionRefused(f"{transition.needs_comment} is required.", field="comment")
    if transition.decision:
        ends = registration.review_period_ends()
        if ends and (now or timezone.now()) < ends and not inputs.early_reason.strip():
            return TransitionRefused(
                f"The public review period ({settings.REVIEW_MIN_DAYS} days) ends on "
                f"{ends:%Y-%m-%d}; to decide earlier, record a reason for the early decision.",
                field="early_reason",
            )
    if transition.complete_template:
        problems = submission_problems(registration)
        if problems:
            return TransitionRefused("The template is not ready: " + "; ".join(problems))
    return None


def check_transition(registration: RegistrationRequest, name: str, user: Visitor, *,
                     comment: str = "",
                     early_reason: str = "", now: dt.datetime | None = None) -> Transition:
    """Whether ``user`` may take transition ``name`` on ``registration`` now; raises
    :class:`Refused` with the reason when not."""
    transition = TRANSITIONS.get(name)
    if transition is None:
        raise TransitionRefused(f"There is no action called {name!r}.")
    problem = refusal(registration, transition, user,
                      inputs=Inputs(comment=comment, early_reason=early_reason), now=now)
    if problem is not None:
        raise problem
    return transition


def available(registration: RegistrationRequest, user: Visitor) -> list[Transition]:
    """The transitions ``user`` could take on ``registration`` (not yet judging what they
    would have to type)."""
    return [t for t in TRANSITIONS.values() if refusal(registration, t, user) is None]


def page_transitions(registration: RegistrationRequest, user: Visitor) -> list[Transition]:
    """The buttons of the request page: submission happens from the request form."""
    return [t for t in available(registration, user) if not t.creates_round]


def submit_transition(registration: RegistrationRequest) -> Transition | None:
    """Which transition the request form's "Submit" button takes in this state."""
    return next((t for t in TRANSITIONS.values()
                 if t.creates_round and registration.state in t.sources), None)


def told_about(registration: RegistrationRequest, transition: Transition) -> tuple[str, ...]:
    """Who is told that ``transition`` was taken: nobody hears of a request that was
    never submitted (it was private all along)."""
    return transition.mail if was_submitted(registration) else ()


def event_label(kind: str, name: str = "") -> str:
    """What a RequestEvent is called on the timeline."""
    from registry.review.models import RequestEvent

    if kind == RequestEvent.Kind.TRANSITION and name in TRANSITIONS:
        return TRANSITIONS[name].label
    return RequestEvent.Kind(kind).label


# --- Seeing ----------------------------------------------------------------------------

def was_submitted(registration: RegistrationRequest) -> bool:
    return registration.review_started_at is not None


def can_view(registration: RegistrationRequest, user: Visitor) -> bool:
    """A request never submitted is private to its registrant, whatever its state
    (a withdrawn draft too); from submission on, review is public."""
    return was_submitted(registration) or _is_registrant(user, registration)


def requests_visible_to(user: Visitor) -> Q:
    """``can_view`` as a filter (RegistrationRequest.objects.visible_to)."""
    if not _signed_in(user):
        return Q(review_started_at__isnull=False)
    return Q(review_started_at__isnull=False) | Q(registrant=user)


def comments_visible_to(user: Visitor) -> Q:
    """Which comments ``user`` may read (Comment.objects.visible_to): public ones on
    requests they may see; those to the registrant by the registrant, the experts and
    staff; internal ones by the designated experts only, never on their own request."""
    on_visible = Q(registration__review_started_at__isnull=False)
    if _signed_in(user):
        on_visible |= Q(registration__registrant=user)
    audiences = Q(audience=Comment.Audience.PUBLIC)
    if _signed_in(user):
        audiences |= Q(audience=Comment.Audience.REGISTRANT, registration__registrant=user)
        if is_expert(user) or is_iana_staff(user):
            audiences |= Q(audience=Comment.Audience.REGISTRANT)
        if is_expert(user):
            audiences |= Q(audience=Comment.Audience.EXPERTS) & ~Q(registration__registrant=user)
    return on_visible & audiences


def can_read_comment(comment: Comment, user: Visitor) -> bool:
    registration = comment.registration
    if not can_view(registration, user):
        return False
    if comment.audience == Comment.Audience.PUBLIC:
        return True
    if comment.audience == Comment.Audience.REGISTRANT:
        return _is_registrant(user, registration) or is_expert(user) or is_iana_staff(user)
    return is_expert(user) and not _is_registrant(user, registration)


def can_see_private_contact(registration: RegistrationRequest, user: Visitor) -> bool:
    """The contact the registrant gave for IANA only: IANA staff and the registrant."""
    return _is_registrant(user, registration) or is_iana_staff(user)


def can_see_dashboard(user: Visitor) -> bool:
    """The dashboard: the open requests, each expert's load and the suggested assignees."""
    return is_expert(user) or is_iana_staff(user)


def can_see_workload(user: Visitor) -> bool:
    """Each expert's load and availability (the dashboard, the statistics) is for the
    designated experts and IANA staff."""
    return is_expert(user) or is_iana_staff(user)


def can_set_availability(user: Visitor) -> bool:
    """A designated expert says when they are away and how much they take."""
    return is_expert(user)


def can_see_staff_queue(user: Visitor) -> bool:
    return is_iana_staff(user)


# --- Doing other than transitions --------------------------------------------------------

def edit_refusal(registration: RegistrationRequest, user: Visitor) -> Refused | None:
    if not _is_registrant(user, registration):
        return NotAllowed("Only the registrant can edit this request.")
    if not meaning_of(registration.state).editable:
        return NotEditable(
            f'This request is now "{registration.get_state_display().lower()}" and can no longer '
            "be edited."
        )
    return None


def can_edit(registration: RegistrationRequest, user: Visitor) -> bool:
    return edit_refusal(registration, user) is None


def revise_refusal(namespace: Namespace, user: Visitor) -> Refused | None:
    """Whether ``user`` may start a new version of ``namespace`` now: its holder, once
    no other revision of it is open (so each version builds on the one before)."""
    if not _signed_in(user) or namespace.holder_id != user.pk:
        return NotAllowed("Only the holder of a namespace can revise it.")
    if hasattr(namespace, "open_revision_pk"):  # annotated for a list (one query)
        open_pk = namespace.open_revision_pk
    else:
        open_pk = (RegistrationRequest.objects.filter(revises=namespace)
                   .exclude(state__in=FINAL_STATES).values_list("pk", flat=True).first())
    if open_pk is not None:
        return TransitionRefused(
            f"Request #{open_pk} already revises {namespace.nid}; finish or withdraw "
            "it first, so that each version builds on the one before."
        )
    return None


def can_revise(namespace: Namespace, user: Visitor) -> bool:
    return revise_refusal(namespace, user) is None


def comment_audiences(registration: RegistrationRequest, user: Visitor) -> list[str]:
    """Who ``user`` may address a comment to on ``registration``: the public review (anyone
    signed in, once submitted and while open; the participants afterwards), the
    registrant (experts and staff), the experts only (experts, not on their own)."""
    if not _signed_in(user) or not can_view(registration, user):
        return []
    roles = roles_of(user, registration)
    audiences: list[str] = []
    meaning = meaning_of(registration.state)
    if not meaning.initial and (not meaning.final or roles):
        audiences.append(Comment.Audience.PUBLIC)
    if roles & {EXPERT_ROLE, STAFF_ROLE}:
        audiences.append(Comment.Audience.REGISTRANT)
    if EXPERT_ROLE in roles and REGISTRANT_ROLE not in roles:
        audiences.append(Comment.Audience.EXPERTS)
    return audiences


_AUDIENCE_REFUSALS: dict[str, str] = {
    Comment.Audience.EXPERTS: "Only designated experts can write internal comments, and not "
                              "on their own request.",
    Comment.Audience.REGISTRANT: "Only experts and IANA staff write to the registrant.",
    Comment.Audience.PUBLIC: "Public comments are for requests in review; a draft is private "
                             "and the review of a closed request is over.",
}


def comment_refusal(registration: RegistrationRequest, user: Visitor,
                    audience: str) -> Refused | None:
    if audience in comment_audiences(registration, user):
        return None
    message = _AUDIENCE_REFUSALS.get(audience, "Choose who the comment is for.")
    if not _signed_in(user):
        return NotAllowed("Log in to comment.", field="audience")
    return NotAllowed(message, field="audience")


def can_comment(registration: RegistrationRequest, user: Visitor,
                audience: str | None = None) -> bool:
    audiences = comment_audiences(registration, user)
    return bool(audiences) if audience is None else audience in audiences


def standardisation_refusal(registration: RegistrationRequest, user: Visitor) -> Refused | None:
    if not is_expert(user):
        return NotAllowed("Only designated experts decide whether standardisation is involved.")
    if registration.fast_track:
        return TransitionRefused("Fast-track requests do not go to the IESG (section 6.3).")
    if not meaning_of(registration.state).standardisation_open:  # theirs until they decide
        return TransitionRefused("The flag is set during the review, before a decision.")
    return None


def can_set_standardisation(registration: RegistrationRequest, user: Visitor) -> bool:
    return can_view(registration, user) and standardisation_refusal(registration, user) is None


def assign_refusal(registration: RegistrationRequest, user: Visitor,
                   expert: User | None = None) -> Refused | None:
    """Whether ``user`` may assign ``registration`` to ``expert`` (None: unassign). The
    designated experts and IANA staff assign; never to someone with a conflict of
    interest, and to someone else only while they are available and below their
    maximum (an expert may still take a request themselves)."""
    if not (is_expert(user) or is_iana_staff(user)):
        return NotAllowed("Only designated experts and IANA staff assign requests.")
    if _is_registrant(user, registration):
        return NotAllowed("You are the registrant of this request, so you cannot assign it "
                          "(conflict of interest): another designated expert must.")
    if not meaning_of(registration.state).open:
        return TransitionRefused("Only open requests are assigned.")
    if expert is None:
        return None
    if not (is_expert(expert) and expert.is_active):
        return TransitionRefused(f"{expert} is not a designated expert.", field="expert")
    conflict = conflict_of_interest(registration, expert)
    if conflict:
        return TransitionRefused(f"{expert.display_name} {conflict} (conflict of interest): "
                                 "assign another expert.", field="expert")
    if _signed_in(user) and expert.pk == user.pk:
        return None
    busy = unavailability(expert, today=timezone.localdate())
    if busy:
        return TransitionRefused(f"{expert.display_name} {busy}: assign another expert.",
                                 field="expert")
    return None


def may_be_assigned(registration: RegistrationRequest, expert: User) -> bool:
    """Whether ``expert`` is one a request can be assigned to (its assign form's choices)."""
    return expert.pk != registration.registrant_id


def can_assign(registration: RegistrationRequest, user: Visitor) -> bool:
    return can_view(registration, user) and assign_refusal(registration, user) is None


# --- Workload: who is suggested, who is reminded -------------------------------------

def _organisation_key(name: str) -> str:
    return " ".join(name.casefold().split())


def conflict_of_interest(registration: RegistrationRequest, expert: User) -> str:
    """Why ``expert`` should not review ``registration`` ("" when nothing stands against
    it): they are its registrant, or of the registrant's organisation (the one in the
    template or on the registrant's account)."""
    if expert.pk == registration.registrant_id:
        return "is the registrant of this request"
    own = _organisation_key(expert.organisation)
    if own and own in {_organisation_key(registration.registrant_organisation),
                       _organisation_key(registration.registrant.organisation)}:
        return f"is of the registrant's organisation ({expert.organisation})"
    return ""


def is_away(expert: User, *, today: dt.date) -> bool:
    return expert.unavailable_until is not None and expert.unavailable_until >= today


def open_assignments(expert: User) -> int:
    """The open requests assigned to ``expert``: the ``with_load()`` annotation when the
    list made it (one query for all), else one query."""
    if hasattr(expert, "open_assignments"):
        return int(expert.open_assignments)
    count: int = RegistrationRequest.objects.filter(state__in=OPEN_STATES,
                                                    assigned_expert=expert).count()
    return count


def unavailability(expert: User, *, today: dt.date) -> str:
    """Why ``expert`` takes no more requests now ("" when they do): away, or at their
    maximum of open assignments."""
    if is_away(expert, today=today):
        return f"is away until {expert.unavailable_until:%Y-%m-%d}"
    limit = expert.max_open_assignments
    if limit is not None and open_assignments(expert) >= limit:
        return f"has {limit} open request{'s' if limit != 1 else ''} already, their maximum"
    return ""


def suggestion_refusal(registration: RegistrationRequest, expert: User, *,
                       today: dt.date) -> str:
    """Why ``expert`` is not suggested for ``registration`` ("" when they may be)."""
    return conflict_of_interest(registration, expert) or unavailability(expert, today=today)


def suggested_assignee(registration: RegistrationRequest, experts: Iterable[User], *,
                       today: dt.date) -> User | None:
    """Who should take an open, unassigned ``registration``: of ``experts`` (read
    ``with_load()``), the least loaded one who is available, below their maximum and
    without a conflict of interest; None when nobody is."""
    if registration.state not in OPEN_STATES or registration.assigned_expert_id is not None:
        return None
    fit = [e for e in experts if not suggestion_refusal(registration, e, today=today)]
    return min(fit, key=lambda e: (open_assignments(e), e.display_name.casefold(), e.pk),
               default=None)


# A request idle past the reminder period is brought up once per idle period, each
# time to more people: its assigned expert (or, unassigned, every available expert),
# then the other experts, then IANA staff; after that nothing more until someone acts.
# Each step is a RequestEvent of its kind (counted since the request's last activity).
REMINDED = RequestEvent.Kind.REMIND
ESCALATED_TO_EXPERTS = RequestEvent.Kind.ESCALATE
ESCALATED_TO_STAFF = RequestEvent.Kind.ESCALATE_STAFF
REMINDER_KINDS = (REMINDED, ESCALATED_TO_EXPERTS, ESCALATED_TO_STAFF)


@dataclass(frozen=True)
class Reminder:
    kind: str  # one of REMINDER_KINDS: the event written
    audience: str  # EXPERTS or STAFF
    recipients: tuple[User, ...]
    summary: str  # the event's comment


def next_reminder(registration: RegistrationRequest, *, done: Iterable[str],
                  experts: Iterable[User], staff: Iterable[User],
                  today: dt.date) -> Reminder | None:
    """The next step for an idle ``registration``, given the reminder kinds ``done`` since
    its last activity; None once staff were told. An expert away, or with a conflict
    of interest, is never reminded."""
    done = set(done)
    if ESCALATED_TO_STAFF in done:
        return None
    pool = tuple(e for e in experts if not is_away(e, today=today)
                 and not conflict_of_interest(registration, e))
    assigned = next((e for e in pool if e.pk == registration.assigned_expert_id), None)
    to_staff = Reminder(ESCALATED_TO_STAFF, STAFF, tuple(staff),
                        "Still no activity; escalated to IANA staff.")
    if not done:
        if assigned is not None:
            return Reminder(REMINDED, EXPERTS, (assigned,),
                            f"No activity; {assigned.display_name} was reminded.")
        if pool:
            return Reminder(REMINDED, EXPERTS, pool,
                            "No activity; the available experts were reminded.")
        return to_staff
    # The first step went to the assigned expert alone only when they were available;
    # otherwise every available expert has heard already.
    others = tuple(e for e in pool if e.pk != registration.assigned_expert_id)
    if ESCALATED_TO_EXPERTS not in done and assigned is not None and others:
        return Reminder(ESCALATED_TO_EXPERTS, EXPERTS, others,
                        "Still no activity; escalated to the other available experts.")
    return to_staff


def hidden_events(registration: RegistrationRequest, user: Visitor) -> set[str]:
    """The kinds of timeline event ``user`` may not read on ``registration``."""
    roles = roles_of(user, registration)
    return {name for name, readers in EVENT_READERS.items() if not roles & readers}


def can_see_mail(registration: RegistrationRequest, user: Visitor) -> bool:
    """The mail sent and received about a request (addresses, delivery errors, held
    messages) is for the designated experts and IANA staff."""
    return bool(roles_of(user, registration) & {EXPERT_ROLE, STAFF_ROLE})


def check_resend(message: OutboundMessage, user: Visitor) -> None:
    """IANA staff may send again a message that failed (or is still failing)."""
    if not is_iana_staff(user):
        raise NotAllowed("Only IANA staff send mail again.")
    if message.state == OutboundMessage.Delivery.SENT:
        raise TransitionRefused("This message was sent; there is nothing to send again.")
    if message.state == OutboundMessage.Delivery.PENDING and not message.attempts:
        raise TransitionRefused("This message has not been tried yet; it is on its way.")


def can_resend(message: OutboundMessage, user: Visitor) -> bool:
    try:
        check_resend(message, user)
    except (NotAllowed, TransitionRefused):
        return False
    return True


def answered_by_mail(registration: RegistrationRequest) -> bool:
    """Whether a mail from the registrant now answers the experts: the request waits in
    a state the registrant answers by mail."""
    return meaning_of(registration.state).answered_by_mail


def moves_answered_by_mail() -> tuple[str, ...]:
    """The transitions whose mail the registrant may answer by replying: those that put
    a request in a state answered by mail and tell the registrant."""
    return tuple(t.name for t in TRANSITIONS.values()
                 if STATES[t.target].answered_by_mail and REGISTRANT in t.mail)


def mail_placement(registration: RegistrationRequest, *, via_list: bool, sender: User | None,
                   answered_audience: str = "") -> tuple[str | None, str]:
    """Where a message that arrived about ``registration`` goes: the audience of the
    comment it becomes, or None and the reason it is held for staff. Mail never
    changes a state; it only adds to the timeline.

    ``sender`` is the person whose reply address the message was sent to (the only
    proof of who wrote it): the registrant's reply is their answer to the experts;
    an expert's or staff member's is what they may write on the page, internal when
    it answers an internal message. List mail (``via_list``, from anyone: its headers
    prove nothing) is public and credited to nobody. The rest is held for staff."""
    if meaning_of(registration.state).initial:
        return None, "The request is a draft, private to its registrant."
    if sender is not None:
        if _is_registrant(sender, registration):
            return Comment.Audience.REGISTRANT, ""
        # An answer to a message written to the registrant's conversation goes back to
        # it; any other answer (an internal or staff message, or none named) stays
        # among the experts, never reaching the registrant by a guess.
        audience = (Comment.Audience.REGISTRANT if answered_audience == REGISTRANT
                    else Comment.Audience.EXPERTS)
        if comment_refusal(registration, sender, audience) is None:
            return audience, ""
        where = ("to the registrant" if audience == Comment.Audience.REGISTRANT
                 else "internally to the experts")
        return None, (f"Sent by {sender.display_name} from their reply address, but they may "
                      f"not write {where} on this request now.")
    if via_list:
        return Comment.Audience.PUBLIC, ""
    return None, ("Not sent to a reply address the registry gave (the only proof of who "
                  "wrote it), nor through the review list: the From line proves nothing.")


def can_handle_quarantine(user: Visitor) -> bool:
    """The quarantine of mail nobody could be credited with is for IANA staff."""
    return is_iana_staff(user)


def attach_refusal(message: InboundMessage, registration: RegistrationRequest, user: Visitor,
                   audience: str) -> Refused | None:
    """May ``user`` attach the quarantined ``message`` to ``registration`` for ``audience``?"""
    if not can_handle_quarantine(user):
        return NotAllowed("Only IANA staff attach quarantined mail.")
    if message.outcome not in message.QUARANTINE or hasattr(message, "placement"):
        return TransitionRefused("This message is not in the quarantine (already attached, "
                                 "or placed when it arrived).")
    if registration.state == State.DRAFT:
        return TransitionRefused("A draft is private to its registrant: attach the message "
                                 "to a submitted request.", field="registration")
    if audience not in Comment.Audience.values:
        return TransitionRefused("Choose who may read it.", field="audience")
    return None
