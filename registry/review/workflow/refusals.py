"""The predicates that say no. ``refusal()`` is the one predicate of a transition:
``enforce_transition()`` raises what it finds and ``open_transitions()`` keeps the
transitions it finds nothing against. The other moves (edit, revise, comment, the standardisation
flag, assign, resend mail, attach quarantined mail) each have their ``*_refusal``, and
a ``can_*`` for the templates that reads it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from registry.accounts.roles import EXPERT_ROLE, is_expert, is_iana_staff
from registry.namespaces.models import Namespace
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    State,
)
from registry.review.workflow.races import race_of
from registry.review.workflow.submission import holder_changed, submission_problems
from registry.review.workflow.tables import (
    FAST_TRACK,
    FINAL_STATES,
    INITIAL_STATE,
    TRANSITIONS,
    Transition,
    meaning_of,
    path_of,
)
from registry.review.workflow.visibility import (
    can_handle_quarantine,
    can_view,
    comment_audiences,
    is_holder,
    was_submitted,
)
from registry.review.workflow.visitors import (
    ROLE_NAMES,
    Visitor,
    is_registrant,
    is_signed_in,
    roles_on,
)
from registry.review.workflow.workload import conflict_of_interest, unavailability

if TYPE_CHECKING:
    from registry.accounts.models import User

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


def enforce_move(transition: Transition, *, state: str, path: str, roles: set[str]) -> None:
    """The table's answer for one (state, transition, roles) triple, raised when it is no."""
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
    roles = roles_on(user, registration)
    try:
        enforce_move(transition, state=registration.state, path=path_of(registration),
                     roles=roles)
    except Refused as exc:
        return exc
    problem = (_conflict_refusal(registration, transition, user, roles)
               or _standardisation_mismatch(registration, transition)
               or _race_refusal(registration, transition, roles)
               or _holder_refusal(registration, transition))
    if problem is not None or inputs is None:
        return problem
    return _inputs_refusal(registration, transition, inputs, now or timezone.now())


def _conflict_refusal(registration: RegistrationRequest, transition: Transition,
                      user: Visitor, roles: set[str]) -> Refused | None:
    """A move independent of the registrant is never theirs (conflict of interest)."""
    if not (transition.independent and is_registrant(user, registration)):
        return None
    return NotAllowed(
        f'You are the registrant of this request, so you cannot "{transition.label.lower()}"'
        " (conflict of interest): another "
        + ("designated expert" if EXPERT_ROLE in transition.roles & roles
           else "member of IANA staff") + " must."
    )


def _standardisation_mismatch(registration: RegistrationRequest,
                             transition: Transition) -> Refused | None:
    """A move only for requests that involve standardisation (or only for those that
    do not), on one that does not (or does)."""
    if transition.standardisation is False and registration.standardisation:
        return TransitionRefused(
            "Standardisation is involved: approve with a report to the IESG instead "
            "(RFC 8141 section 6.2, step 4)."
        )
    if transition.standardisation is True and not registration.standardisation:
        return TransitionRefused(
            "Only requests that involve standardisation go to the IESG; approve it directly."
        )
    return None


def _race_refusal(registration: RegistrationRequest, transition: Transition,
                  roles: set[str]) -> Refused | None:
    """Closing is only for a request overtaken by events (a race for its NID, a holder
    change of the namespace it revises); a NID registered meanwhile ends the moves that
    need it free."""
    if not (transition.overtaken_only or transition.needs_free_nid):
        return None
    race = race_of(registration)
    if transition.overtaken_only and not race and not holder_changed(registration):
        return TransitionRefused(
            "Only a request in a race for its NID (another open request proposes it, or it "
            "was registered meanwhile), or a revision of a namespace that changed holder "
            "since, can be closed; otherwise the registrant withdraws it or the experts "
            "decide on it."
        )
    if transition.needs_free_nid and race.taken:
        way_out = ('"Close the request" with a reason instead'
                   if roles & TRANSITIONS["close"].roles
                   else "withdraw it, or ask the experts to close it")
        return TransitionRefused(
            f"The NID {registration.shown_nid} was registered meanwhile, so "
            f'"{transition.label.lower()}" is no longer possible: {way_out}.'
        )
    return None


def _holder_refusal(registration: RegistrationRequest,
                    transition: Transition) -> Refused | None:
    """A revision is its namespace's holder's: one started before a holder change is
    neither sent to review again nor published (the new holder's version would carry
    the previous holder's text and contact); it can still be withdrawn, decided on or
    closed with a reason."""
    if not ((transition.creates_round or transition.publishes)
            and holder_changed(registration)):
        return None
    assert registration.revises is not None  # holder_changed: a revision
    return TransitionRefused(
        f"{registration.revises.nid} changed holder after this revision was started, so "
        f'"{transition.label.lower()}" is no longer possible: only its holder\'s revision '
        "goes on; the registrant can withdraw this one, or the experts or IANA staff close "
        "it with a reason."
    )


def _inputs_refusal(registration: RegistrationRequest, transition: Transition,
                    inputs: Inputs, now: dt.datetime) -> Refused | None:
    """What the person typed with the move (its comment, the reason for deciding
    before the review period ends), and a template ready to submit."""
    if transition.needs_comment and not inputs.comment.strip():
        return TransitionRefused(f"{transition.needs_comment} is required.", field="comment")
    if transition.decision:
        ends = registration.review_period_ends(now)
        if ends and now < ends and not inputs.early_reason.strip():
            return TransitionRefused(
                f"The public review period ({settings.REVIEW_MIN_DAYS} days) ends on "
                f"{ends:%Y-%m-%d}; to decide earlier, record a reason for the early decision.",
                field="early_reason",
            )
    if transition.complete_template:
        problems = submission_problems(registration)
        if problems:
            return TransitionRefused("The template is not ready: " + "; ".join(
                str(problem).rstrip(".") for problem in problems) + ".")
    return None


def enforce_transition(registration: RegistrationRequest, name: str, user: Visitor, *,
                       comment: str = "",
                       early_reason: str = "", now: dt.datetime | None = None) -> Transition:
    """The transition ``name``, which ``user`` may take on ``registration`` now; raises
    :class:`Refused` with the reason when they may not."""
    transition = TRANSITIONS.get(name)
    if transition is None:
        raise TransitionRefused(f"There is no action called {name!r}.")
    problem = refusal(registration, transition, user,
                      inputs=Inputs(comment=comment, early_reason=early_reason), now=now)
    if problem is not None:
        raise problem
    return transition


def open_transitions(registration: RegistrationRequest, user: Visitor) -> list[Transition]:
    """The transitions ``user`` could take on ``registration`` (not yet judging what they
    would have to type)."""
    return [t for t in TRANSITIONS.values() if refusal(registration, t, user) is None]


def page_transitions(registration: RegistrationRequest, user: Visitor) -> list[Transition]:
    """The buttons of the request page: every transition the person may take now, the
    draft's "Submit for public review" too (the request form has it as well) once its
    template is ready; until then the form, which marks what is missing, submits it."""
    moves = open_transitions(registration, user)
    if any(t.creates_round for t in moves) and submission_problems(registration):
        moves = [t for t in moves if not t.creates_round]
    return moves


def submit_transition(registration: RegistrationRequest) -> Transition | None:
    """Which transition the request form's "Submit" button takes in this state."""
    return next((t for t in TRANSITIONS.values()
                 if t.creates_round and registration.state in t.sources), None)


def edit_refusal(registration: RegistrationRequest, user: Visitor) -> Refused | None:
    if not is_registrant(user, registration):
        return NotAllowed("Only the registrant can edit this request.")
    if not meaning_of(registration.state).editable:
        return NotEditable(
            f'This request is now "{registration.get_state_display().lower()}" and can no longer '
            "be edited."
        )
    return None


def can_edit(registration: RegistrationRequest, user: Visitor) -> bool:
    return edit_refusal(registration, user) is None


def blocking_revisions(revisions: QuerySet[RegistrationRequest],
                       user: Visitor) -> QuerySet[RegistrationRequest]:
    """Among ``revisions``, those that stop ``user`` starting another: any open one of
    theirs, and one someone else submitted (a previous holder's draft is theirs alone,
    never goes on after a holder change, and must not block the new holder for ever)."""
    return (revisions.exclude(state__in=FINAL_STATES)
            .exclude(Q(state=INITIAL_STATE) & ~Q(registrant_id=getattr(user, "pk", None))))


def revise_refusal(namespace: Namespace, user: Visitor) -> Refused | None:
    """Whether ``user`` may start a new version of ``namespace`` now: its holder, once
    no other revision of it is open (so each version builds on the one before)."""
    if not is_holder(namespace, user):
        return NotAllowed("Only the holder of a namespace can revise it.")
    if hasattr(namespace, "open_revision_pk"):  # annotated for a list (one query)
        open_pk = namespace.open_revision_pk
        started_by = getattr(namespace, "open_revision_registrant_id", user.pk)
    else:
        open_pk, started_by = (blocking_revisions(
            RegistrationRequest.objects.filter(revises=namespace), user)
            .values_list("pk", "registrant_id").first() or (None, None))
    if open_pk is not None and started_by != user.pk:
        # Started by a previous holder before a holder change: not this person's to
        # finish or withdraw.
        return TransitionRefused(
            f"Request #{open_pk}, a new version of {namespace.nid} started by its previous "
            "holder, is still open; you can start yours once it is registered, withdrawn or "
            "closed, so that each version builds on the one before."
        )
    if open_pk is not None:
        return TransitionRefused(
            f"Request #{open_pk} already revises {namespace.nid}; finish or withdraw "
            "it first, so that each version builds on the one before."
        )
    return None


def can_revise(namespace: Namespace, user: Visitor) -> bool:
    return revise_refusal(namespace, user) is None


_AUDIENCE_REFUSALS: dict[str, str] = {
    Comment.Audience.EXPERTS: "Only designated experts can write internal comments, and not "
                              "on their own request.",
    Comment.Audience.REGISTRANT: "Only experts and IANA staff write to the registrant.",
    Comment.Audience.PUBLIC: "Public comments are for submitted requests: a draft is private "
                             "to its registrant, and once a request is over only its "
                             "registrant, the designated experts and IANA staff comment.",
}


def comment_refusal(registration: RegistrationRequest, user: Visitor,
                    audience: str) -> Refused | None:
    if audience in comment_audiences(registration, user):
        return None
    message = _AUDIENCE_REFUSALS.get(audience, "Choose who the comment is for.")
    if not is_signed_in(user):
        return NotAllowed("Log in to comment.", field="audience")
    return NotAllowed(message, field="audience")


def standardisation_refusal(registration: RegistrationRequest, user: Visitor) -> Refused | None:
    if not is_expert(user):
        return NotAllowed("Only designated experts decide whether standardisation is involved.")
    if registration.shown_fast_track:
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
    if is_registrant(user, registration):
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
    if is_signed_in(user) and expert.pk == user.pk:
        return None
    busy = unavailability(expert, today=timezone.localdate())
    if busy:
        return TransitionRefused(f"{expert.display_name} {busy}: assign another expert.",
                                 field="expert")
    return None


def may_be_assigned(registration: RegistrationRequest, expert: User, user: Visitor) -> bool:
    """Whether ``user``'s assign form for a request offers ``expert``: one they may
    assign it to (``assign_refusal``), or its assignee already (shown as chosen)."""
    return (expert.pk == registration.assigned_expert_id
            or assign_refusal(registration, user, expert) is None)


def can_assign(registration: RegistrationRequest, user: Visitor) -> bool:
    return can_view(registration, user) and assign_refusal(registration, user) is None


def sends_mail_again(user: Visitor) -> bool:
    """Who sends mail again at all (which message: ``enforce_resend``): IANA staff."""
    return is_iana_staff(user)


def enforce_resend(message: OutboundMessage, user: Visitor) -> None:
    """IANA staff may send again a message that failed (or is still failing), or one
    perhaps sent (its worker died as the server took it): they decide."""
    if not sends_mail_again(user):
        raise NotAllowed("Only IANA staff send mail again.")
    if message.state == OutboundMessage.Delivery.SENT:
        raise TransitionRefused("This message was sent; there is nothing to send again.")
    if message.state == OutboundMessage.Delivery.PENDING and not message.attempts:
        raise TransitionRefused("This message has not been tried yet; it is on its way.")
    if message.state == OutboundMessage.Delivery.SENDING:
        raise TransitionRefused("This message is being sent right now.")


def can_resend(message: OutboundMessage, user: Visitor) -> bool:
    try:
        enforce_resend(message, user)
    except (NotAllowed, TransitionRefused):
        return False
    return True


def attach_refusal(message: InboundMessage, registration: RegistrationRequest, user: Visitor,
                   audience: str) -> Refused | None:
    """May ``user`` attach the quarantined ``message`` to ``registration`` for ``audience``?"""
    if not can_handle_quarantine(user):
        return NotAllowed("Only IANA staff attach quarantined mail.")
    if message.outcome not in message.QUARANTINE or hasattr(message, "placement"):
        return TransitionRefused("This message is not in the quarantine (already attached, "
                                 "or placed when it arrived).")
    if not was_submitted(registration):  # a draft, or a draft withdrawn: never public
        if not can_view(registration, user):  # as for an id that does not exist
            return TransitionRefused(f"There is no request #{registration.pk}.",
                                     field="registration")
        return TransitionRefused("A draft is private to its registrant: attach the message "
                                 "to a submitted request.", field="registration")
    if audience not in Comment.Audience.values:
        return TransitionRefused("Choose who may read it.", field="audience")
    return None
