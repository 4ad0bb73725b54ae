"""The two tables of the review workflow (RFC 8141 sections 6.2 and 6.3).

Every state a request can be in is a row of STATES: what being in it means (open,
final, editable by the registrant, who is reminded first when it sits idle, listed
for public review, answered by the registrant by mail, in IANA staff's queue and what
their mail says they are to do, whether the public review period runs in it, its
badge). Every list, query, reminder, badge, mail rule and the review period read that
row.

Every move a request can make is a row of TRANSITIONS; each rule that depends on
the move is a column of that row (the states it leaves, the state it reaches, who
may take it, the path, what it requires, what it does, who is told, what the page
asks and says).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from registry.accounts.roles import EXPERT_ROLE, REGISTRANT_ROLE, STAFF_ROLE
from registry.review.models import RegistrationRequest, RequestEvent, State

COMMUNITY = "community"
FAST_TRACK = "fast_track"
BOTH = frozenset({COMMUNITY, FAST_TRACK})

# Who is told (registry.review.mails builds one message per audience).
REVIEW_LIST = "review_list"
REGISTRANT = "registrant"
EXPERTS = "experts"
STAFF = "staff"
IESG = "iesg"


@dataclass(frozen=True)
class StateMeaning:
    """What being in one state means. Each row of STATES is built by ``_s()``, whose
    arguments after the badge are keywords defaulting to False (or "" for the texts): a
    row names what holds in its state, and what it leaves out does not hold."""

    state: State
    badge: str  # the Bootstrap badge classes of the state's label
    initial: bool  # where every request starts (exactly one state)
    open: bool  # submitted and not yet finished: the experts' dashboard, assignable
    final: bool  # the request is over: no transition leaves it
    editable: bool  # its registrant may edit the template
    # Who is reminded first when it sits idle: whoever can act in the state (EXPERTS, or
    # STAFF for a request only IANA staff can move on); "" for a state nobody is reminded of.
    reminds: str
    public_review: bool  # listed on the public review page, with its review period
    answered_by_mail: bool  # a mail from the registrant becomes their answer to the experts
    # What IANA staff are to do with a request in it, as their mail about its arrival says
    # (section 6.2 step 4: IANA registers the NID, or first receives the IESG's directions);
    # "" for a state not in their queue.
    staff_next_step: str
    standardisation_open: bool  # the experts may still set whether standardisation is involved
    review_clock: bool  # the public review period runs while the request is in it

    @property
    def label(self) -> str:
        return str(self.state.label)

    @property
    def reminded(self) -> bool:
        """Someone is reminded when it sits idle."""
        return bool(self.reminds)

    @property
    def staff_queue(self) -> bool:
        """IANA staff have to act on it (their queue lists it)."""
        return bool(self.staff_next_step)


def _s(state: State, badge: str, *, initial: bool = False, open: bool = False,
       final: bool = False, editable: bool = False, reminds: str = "",
       public_review: bool = False, answered_by_mail: bool = False,
       staff_next_step: str = "", standardisation_open: bool = False,
       review_clock: bool = False) -> StateMeaning:
    return StateMeaning(state, badge, initial, open, final, editable, reminds, public_review,
                        answered_by_mail, staff_next_step, standardisation_open, review_clock)


STATES: dict[str, StateMeaning] = {row.state.value: row for row in (
    _s(State.DRAFT, "text-bg-light border", initial=True, editable=True),
    _s(State.IN_REVIEW, "text-bg-primary", open=True, reminds=EXPERTS, public_review=True,
       standardisation_open=True, review_clock=True),
    _s(State.CHANGES_REQUESTED, "text-bg-warning", open=True, editable=True, reminds=EXPERTS,
       answered_by_mail=True, standardisation_open=True),
    # Only IANA staff record the IESG's direction and register: they hear first.
    _s(State.AWAITING_IESG, "text-bg-info", open=True, reminds=STAFF,
       staff_next_step="Record the IESG's direction when it arrives"),
    _s(State.APPROVED, "text-bg-info", open=True, reminds=STAFF,
       staff_next_step="It is in the IANA staff queue for registration"),
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

# The final states a request is closed in without a registration: each with its reason.
CLOSED_STATES = tuple(state for state in FINAL_STATES if state != State.REGISTERED)


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
    # Only for a request overtaken by events: in a race for its NID (another open request
    # proposes it, or it was registered meanwhile), or a revision of a namespace whose
    # holder changed since (refusals._race_refusal).
    overtaken_only: bool = False
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
       independent=True, overtaken_only=True, mail=(REGISTRANT, EXPERTS),
       confirm="Close this request? This cannot be undone.", button="outline-danger"),
)}


def review_restarts_from(state: str) -> bool:
    """Whether the review clock, stopped in ``state``, starts again with a whole new
    period: every move out of it into a state where the clock runs makes a new round."""
    onward = [t for t in TRANSITIONS.values()
              if state in t.sources and meaning_of(t.target).review_clock]
    return bool(onward) and all(t.creates_round for t in onward)


def registers_from(state: str) -> bool:
    """Whether IANA staff register the namespace from ``state`` (a transition out of it
    publishes): the staff queue's first list, the rest by what staff do next."""
    return any(t.publishes and state in t.sources for t in TRANSITIONS.values())


def path_of(registration: RegistrationRequest) -> str:
    return FAST_TRACK if registration.shown_fast_track else COMMUNITY


def event_label(kind: str, name: str = "") -> str:
    """What a RequestEvent is called on the timeline."""
    if kind == RequestEvent.Kind.TRANSITION and name in TRANSITIONS:
        return TRANSITIONS[name].label
    return RequestEvent.Kind(kind).label
