"""Every write to a registration request itself: create, edit, move it through the
workflow, assign, comment, remind.

Each function locks the request row (``select_for_update``), asks the workflow table
whether the move is allowed, writes the RequestEvent in the same transaction as the
change, and writes the mail it causes to the outbox in that same transaction
(``outbox.queue_message``): the worker sends it after commit, so a mail failure never
rolls back a decision and a broker outage loses nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from django.db import IntegrityError, transaction
from django.utils import timezone

from registry.accounts.models import User
from registry.namespaces.actions import (
    RegistryError,
    namespace_register,
    profile_text,
    registry_changed,
    version_publish,
)
from registry.namespaces.models import Namespace, TemplateVersion
from registry.namespaces.template import (
    PRIVATE_FIELDS,
    PROFILE_FIELD,
    STORED_FIELDS,
    TEMPLATE_FIELDS,
)
from registry.review import mails, workflow
from registry.review.models import (
    Comment,
    RegistrationRequest,
    RequestEvent,
    Round,
    State,
)
from registry.review.outbox import (
    queue_message,
)
from registry.review.workflow import (
    StaleEdit,
    TransitionRefused,
    enforce_transition,
)

logger = logging.getLogger(__name__)


def _queue_event_mails(event: RequestEvent, audiences: tuple[str, ...]) -> None:
    """Write the event's messages to the outbox, in the action's transaction."""
    for audience in audiences:
        queue_message(mails.event_message(event, audience), registration=event.registration,
                      audience=audience, event=event)


def _queue_comment_mails(comment: Comment, registration: RegistrationRequest) -> None:
    """Write a comment's messages to the outbox: to whom the workflow says
    (``COMMENT_MAIL``); what came from the list is never posted back to it."""
    for mail_audience in workflow.COMMENT_MAIL[comment.audience]:
        queue_message(mails.comment_message(comment, mail_audience), registration=registration,
                      audience=mail_audience, comment=comment)


def _clean_values(values: dict[str, str]) -> dict[str, str]:
    return {name: values.get(name, "") or "" for name in TEMPLATE_FIELDS if name in values}


@transaction.atomic
def registration_create(*, actor: User, kind: str = Namespace.Kind.FORMAL, proposed_nid: str = "",
                        fast_track: bool = False, values: dict[str, str] | None = None,
                        revises: Namespace | None = None, form_token: uuid.UUID | None = None,
                        submit: bool = False) -> RegistrationRequest:
    """Start a draft: a new namespace, or (``revises``) the next version of one the
    actor holds, starting from its current text.

    ``submit``: submitted for review in the same transaction, so a refusal (or any
    failure) leaves no draft behind. ``form_token``: the token of the form it comes from;
    the request the actor's form with that token made already is returned as it is, so a
    retried POST (a timeout, a double click, two at once) makes one request."""
    if form_token is not None:
        made: RegistrationRequest | None = (
            RegistrationRequest.objects.made_by_form(form_token, actor).first())
        if made is not None:
            return made
        try:
            with transaction.atomic():  # a savepoint: the same form posted at the same time
                registration = _create(actor=actor, kind=kind, proposed_nid=proposed_nid,
                                       fast_track=fast_track, values=values, revises=revises,
                                       form_token=form_token)
        except IntegrityError:  # the other post committed it first (the unique token)
            first: RegistrationRequest | None = (
                RegistrationRequest.objects.made_by_form(form_token, actor).first())
            if first is not None:
                return first
            # Someone else's form's token (it was never this actor's to send): a request
            # of their own, without it.
            registration = _create(actor=actor, kind=kind, proposed_nid=proposed_nid,
                                   fast_track=fast_track, values=values, revises=revises)
    else:
        registration = _create(actor=actor, kind=kind, proposed_nid=proposed_nid,
                               fast_track=fast_track, values=values, revises=revises)
    if submit:
        move = workflow.submit_transition(registration)
        registration = registration_transition(
            registration=registration, transition=move.name if move else "submit", actor=actor)
    return registration


def _create(*, actor: User, kind: str, proposed_nid: str, fast_track: bool,
            values: dict[str, str] | None, revises: Namespace | None,
            form_token: uuid.UUID | None = None) -> RegistrationRequest:
    if revises is not None:
        revises = Namespace.objects.select_for_update().get(pk=revises.pk)
        problem = workflow.revise_refusal(revises, actor)
        if problem is not None:
            raise problem
        current = revises.current_version()
        start = {name: getattr(current, name) for name in STORED_FIELDS} if current else {}
        if not workflow.gave_private_contact(current, actor):
            # Someone else's contact for IANA (a previous holder's) never starts this one.
            start.update(dict.fromkeys(PRIVATE_FIELDS, ""), **workflow.own_private_contact(actor))
        # The published profile is carried forward (a namespace imported without
        # template text may still have one).
        start[PROFILE_FIELD] = profile_text(revises.profile)
        start["revision_information"] = ""
        start.update(_clean_values(values or {}))
        values = start
        kind = revises.kind
        proposed_nid = ""
        fast_track = fast_track or bool(current and current.fast_track)
    registration = RegistrationRequest.objects.create(
        registrant=actor, kind=kind, proposed_nid=proposed_nid if kind == "formal" else "",
        fast_track=fast_track, revises=revises, form_token=form_token,
        **_clean_values(values or {}),
    )
    RequestEvent.objects.create(registration=registration, actor=actor,
                                kind=RequestEvent.Kind.CREATE,
                                from_state=State.DRAFT, to_state=State.DRAFT)
    return registration


@transaction.atomic
def registration_update(*, registration: RegistrationRequest, actor: User, edit_version: int,
                        kind: str,
                        proposed_nid: str, fast_track: bool,
                        values: dict[str, str]) -> RegistrationRequest:
    """Save the working copy of a draft (or of a request sent back for changes), with an
    event row only its registrant reads (workflow.EVENT_READERS).
    Partial content is fine; completeness is checked at submission."""
    registration = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
    problem = workflow.edit_refusal(registration, actor)
    if problem is not None:
        raise problem
    if edit_version != registration.edit_version:
        raise StaleEdit(
            "This request was changed in another window or tab after you opened this form. "
            "Your text is below; reload the request to see the saved copy before saving again."
        )
    if not registration.is_revision:
        registration.kind = kind
        registration.proposed_nid = proposed_nid if kind == Namespace.Kind.FORMAL else ""
    registration.fast_track = fast_track
    for name, value in _clean_values(values).items():
        setattr(registration, name, value)
    registration.edit_version += 1
    # Not last_activity_at: the experts' idle time and reminders follow what they can
    # read, and a working copy is its registrant's until resubmitted.
    registration.save()
    RequestEvent.objects.create(registration=registration, actor=actor,
                                kind=RequestEvent.Kind.EDIT, from_state=registration.state,
                                to_state=registration.state)
    return registration


def _make_round(registration: RegistrationRequest, actor: User) -> Round:
    number = registration.rounds.count() + 1
    if registration.is_revision:
        assert registration.revises is not None  # a revision revises a namespace
        current = registration.revises.versions.order_by("-number").values_list("number", flat=True)
        version = (current.first() or 0) + 1
        nid = registration.revises.nid
    else:
        version, nid = 1, registration.proposed_nid
    return Round.objects.create(
        registration=registration, number=number, nid=nid, kind=registration.kind,
        fast_track=registration.fast_track, version=version, date=timezone.localdate(),
        submitted_by=actor, **registration.values(),
    )


def _register(registration: RegistrationRequest, actor: User) -> TemplateVersion:
    """Publish the last submitted round. Its date, when the registration was requested
    of IANA, is the version's Date (Appendix A); today is the registration date."""
    round_ = registration.submitted_round
    assert round_ is not None  # publishing follows a submission, which made a round
    values = round_.values()
    try:
        if registration.is_revision:
            assert registration.revises is not None  # a revision revises a namespace
            return version_publish(namespace=registration.revises, values=values,
                                   date=round_.date, actor=actor,
                                   fast_track=round_.fast_track,
                                   source_registration=registration)
        namespace = namespace_register(
            kind=round_.kind, nid=round_.nid or None, values=values,
            date=timezone.localdate(), requested_on=round_.date, actor=actor,
            fast_track=round_.fast_track,
            holder=registration.registrant, source_registration=registration,
        )
        return namespace.versions.get(number=1)
    except RegistryError as exc:
        raise TransitionRefused(str(exc)) from exc


def _move_review_clock(registration: RegistrationRequest, target: str,
                       now: dt.datetime) -> None:
    """Stop the review clock on entering a state where it does not run (its row of
    workflow.STATES says), and add the time it stood still on leaving one."""
    if registration.review_started_at is None:
        return
    running = workflow.meaning_of(target).review_clock
    if running and registration.review_paused_at is not None:
        registration.review_paused_for += now - registration.review_paused_at
        registration.review_paused_at = None
    elif not running and registration.review_paused_at is None:
        registration.review_paused_at = now


@transaction.atomic
def registration_transition(*, registration: RegistrationRequest, transition: str, actor: User,
                            comment: str = "",
                            early_reason: str = "") -> RegistrationRequest:
    """Take one transition of the workflow table (see registry.review.workflow)."""
    registration = (RegistrationRequest.objects.select_for_update(of=("self",))
                    .select_related("registrant", "revises").get(pk=registration.pk))
    move = enforce_transition(registration, transition, actor, comment=comment,
                              early_reason=early_reason)
    now = timezone.now()
    round_ = None
    if move.creates_round:
        round_ = _make_round(registration, actor)
        registration.submitted_round = round_
        registration.review_started_at = now
        registration.review_paused_for, registration.review_paused_at = dt.timedelta(0), None
    ends = registration.review_period_ends(now)
    _move_review_clock(registration, move.target, now)
    if move.publishes:
        registration.published_version = _register(registration, actor)
    text = comment.strip()
    if move.decision and early_reason.strip() and ends and now < ends:
        text += f"\n\nDecided before the end of the public review period: {early_reason.strip()}"
    event = RequestEvent.objects.create(
        registration=registration, actor=actor, kind=RequestEvent.Kind.TRANSITION,
        transition=transition, from_state=registration.state, to_state=move.target,
        comment=text.strip(), round=round_,
    )
    registration.state = move.target
    registration.last_activity_at = now
    registration.save_with_event()
    # The public review list and the namespace's pending revision; not the exports (a
    # registration moved them already, in _register).
    registry_changed(exports=False)
    _queue_event_mails(event, workflow.told_about(registration, move))
    return registration


@transaction.atomic
def registration_assign(*, registration: RegistrationRequest, expert: User | None,
                        actor: User) -> RegistrationRequest:
    """Assign a request to a designated expert (an expert may take it themselves); an
    expert assigned by someone else is told by mail."""
    registration = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
    if expert is not None:  # the policy reads their availability as stored now
        expert = User.objects.get(pk=expert.pk)
    problem = workflow.assign_refusal(registration, actor, expert)
    if problem is not None:
        raise problem
    before = registration.assigned_expert_id
    registration.assigned_expert = expert
    registration.last_activity_at = timezone.now()
    registration.save(update_fields=["assigned_expert", "last_activity_at", "updated_at"])
    event = RequestEvent.objects.create(
        registration=registration, actor=actor, kind=RequestEvent.Kind.ASSIGN,
        from_state=registration.state, to_state=registration.state,
        comment=f"Assigned to {expert.display_name}." if expert else "Unassigned.",
    )
    if expert is not None and expert.pk not in (actor.pk, before):
        # Someone else gave it to them: they are told (one who took it knows).
        today = timezone.localdate()
        queue_message(mails.assignment_message(
            registration, expert=expert, actor=actor,
            away_until=expert.unavailable_until if workflow.is_away(expert, today=today)
            else None), registration=registration, audience=workflow.EXPERTS, event=event)
    return registration


@transaction.atomic
def registration_set_standardisation(*, registration: RegistrationRequest, involved: bool,
                                     actor: User,
                                     comment: str = "") -> RegistrationRequest:
    """The experts' flag: standardisation is involved, so approval goes to the IESG."""
    registration = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
    problem = workflow.standardisation_refusal(registration, actor)
    if problem is not None:
        raise problem
    registration.standardisation = involved
    registration.save(update_fields=["standardisation", "updated_at"])
    RequestEvent.objects.create(
        registration=registration, actor=actor, kind=RequestEvent.Kind.STANDARDISATION,
        from_state=registration.state, to_state=registration.state,
        comment=(("Standardisation is involved: approval goes to the IESG. " if involved
                  else "No standardisation involved. ") + comment).strip(),
    )
    return registration


@transaction.atomic
def registration_remind(*, registration: RegistrationRequest, idle: dt.timedelta,
                        actor: User | None = None) -> bool:
    """Bring up a request idle longer than ``idle``, once per idle period, each time to
    more people (workflow.next_reminder: its expert, the other experts, IANA staff);
    each step is an event with its mail. Returns whether a step was taken."""
    now = timezone.now()
    locked = (RegistrationRequest.objects.needing_reminder(now=now, idle=idle)
              .select_for_update().filter(pk=registration.pk).first())
    if locked is None:
        return False
    registration = locked
    done = (registration.events.filter(kind__in=workflow.REMINDER_KINDS,
                                       created_at__gte=registration.last_activity_at)
            .values_list("kind", flat=True))
    reminder = workflow.next_reminder(
        registration, done=done, experts=User.objects.designated_experts().with_load(),
        staff=User.objects.iana_staff(), today=timezone.localdate(now))
    if reminder is None:
        return False
    registration.reminded_at = now
    registration.save(update_fields=["reminded_at"])
    days = (now - registration.last_activity_at).days
    event = RequestEvent.objects.create(
        registration=registration, actor=actor, kind=reminder.kind, from_state=registration.state,
        to_state=registration.state,
        comment=reminder.summary.replace("No activity", f"No activity for {days} days", 1))
    queue_message(mails.reminder_message(registration, reminder), registration=registration,
                  audience=reminder.audience, event=event)
    return True


@transaction.atomic
def registration_comment(*, registration: RegistrationRequest, actor: User, body: str,
                         audience: str) -> Comment:
    """Comment on a request, to whom ``workflow.comment_audiences`` allows: publicly,
    anyone signed in once it is submitted and while it is open, and its participants
    (its registrant, the designated experts, IANA staff) after it is over; experts and
    IANA staff also write to the registrant, and experts among themselves."""
    registration = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
    body = body.strip()
    if not body:
        raise TransitionRefused("Write a comment first.", field="body")
    problem = workflow.comment_refusal(registration, actor, audience)
    if problem is not None:
        raise problem
    comment = Comment.objects.create(registration=registration, author=actor, audience=audience,
                                     body=body, round=registration.submitted_round)
    registration.last_activity_at = timezone.now()
    registration.save(update_fields=["last_activity_at", "updated_at"])
    if audience == Comment.Audience.PUBLIC:
        registry_changed(exports=False)  # the public review page shows the discussion
    _queue_comment_mails(comment, registration)
    return comment
