"""Every write to a registration request goes through one function here.

Each function locks the request row (``select_for_update``), asks the
workflow table whether the move is allowed, writes the RequestEvent in the same
transaction as the change, and queues mail with ``transaction.on_commit`` so a
mail failure never rolls back a decision.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from registry.namespaces.actions import (
    RegistryError,
    namespace_register,
    registry_changed,
    version_publish,
)
from registry.namespaces.models import Namespace
from registry.namespaces.template import TEXT_FIELDS
from registry.review import tasks, workflow
from registry.review.models import (
    Comment,
    RegistrationRequest,
    RequestEvent,
    Round,
    State,
)
from registry.review.workflow import (
    NotAllowed,
    NotEditable,
    Refused,
    StaleEdit,
    TransitionRefused,
    check,
)

__all__ = [
    "NotAllowed",
    "NotEditable",
    "Refused",
    "StaleEdit",
    "TransitionRefused",
    "request_assign",
    "request_comment",
    "request_create",
    "request_remind",
    "request_set_standardisation",
    "request_transition",
    "request_update",
]


def _queue_event_mails(event: RequestEvent, audiences: tuple[str, ...]) -> None:
    for audience in audiences:
        transaction.on_commit(
            lambda audience=audience: tasks.send_event_mail_task.delay(event.pk, audience)
        )


def _clean_values(values: dict[str, str]) -> dict[str, str]:
    return {name: values.get(name, "") or "" for name in TEXT_FIELDS if name in values}


@transaction.atomic
def request_create(*, actor, kind: str = Namespace.Kind.FORMAL, proposed_nid: str = "",
                   fast_track: bool = False, values: dict[str, str] | None = None,
                   revises: Namespace | None = None) -> RegistrationRequest:
    """Start a draft: a new namespace, or (``revises``) the next version of one the
    actor holds, starting from its current text."""
    if revises is not None:
        revises = Namespace.objects.select_for_update().get(pk=revises.pk)
        problem = workflow.revise_refusal(revises, actor)
        if problem is not None:
            raise problem
        current = revises.current_version()
        start = {name: getattr(current, name) for name in TEXT_FIELDS} if current else {}
        start["revision_information"] = ""
        start.update(_clean_values(values or {}))
        values = start
        kind = revises.kind
        proposed_nid = ""
        fast_track = fast_track or bool(current and current.fast_track)
    request = RegistrationRequest.objects.create(
        registrant=actor, kind=kind, proposed_nid=proposed_nid if kind == "formal" else "",
        fast_track=fast_track, revises=revises, **_clean_values(values or {}),
    )
    RequestEvent.objects.create(request=request, actor=actor, kind=RequestEvent.Kind.CREATE,
                                from_state=State.DRAFT, to_state=State.DRAFT)
    return request


@transaction.atomic
def request_update(*, request: RegistrationRequest, actor, edit_version: int, kind: str,
                   proposed_nid: str, fast_track: bool,
                   values: dict[str, str]) -> RegistrationRequest:
    """Save the working copy of a draft (or of a request sent back for changes).
    Partial content is fine; completeness is checked at submission."""
    request = RegistrationRequest.objects.select_for_update().get(pk=request.pk)
    problem = workflow.edit_refusal(request, actor)
    if problem is not None:
        raise problem
    if edit_version != request.edit_version:
        raise StaleEdit(
            "This request was changed in another window or tab after you opened this form. "
            "Your text is below; reload the request to see the saved copy before saving again."
        )
    if not request.is_revision:
        request.kind = kind
        request.proposed_nid = proposed_nid if kind == Namespace.Kind.FORMAL else ""
    request.fast_track = fast_track
    for name, value in _clean_values(values).items():
        setattr(request, name, value)
    request.edit_version += 1
    request.last_activity_at = timezone.now()
    request.save()
    return request


def _make_round(request: RegistrationRequest, actor) -> Round:
    number = request.rounds.count() + 1
    if request.is_revision:
        current = request.revises.versions.order_by("-number").values_list("number", flat=True)
        version = (current.first() or 0) + 1
        nid = request.revises.nid
    else:
        version, nid = 1, request.proposed_nid
    return Round.objects.create(
        request=request, number=number, nid=nid, kind=request.kind,
        fast_track=request.fast_track, version=version, date=timezone.localdate(),
        submitted_by=actor, **request.values(),
    )


def _register(request: RegistrationRequest, actor):
    """Publish the last submitted round. Its date, when the registration was requested
    of IANA, is the version's Date (Appendix A); today is the registration date."""
    round_ = request.latest_round()
    values = round_.values()
    try:
        if request.is_revision:
            return version_publish(namespace=request.revises, values=values,
                                   date=round_.date, actor=actor,
                                   fast_track=request.fast_track, source_request=request)
        namespace = namespace_register(
            kind=request.kind, nid=round_.nid or None, values=values,
            date=timezone.localdate(), requested_on=round_.date, actor=actor,
            fast_track=request.fast_track,
            holder=request.registrant, source_request=request,
        )
        return namespace.versions.get(number=1)
    except RegistryError as exc:
        raise TransitionRefused(str(exc)) from exc


@transaction.atomic
def request_transition(*, request: RegistrationRequest, transition: str, actor, comment: str = "",
                       early_reason: str = "") -> RegistrationRequest:
    """Take one transition of the workflow table (see registry.review.workflow)."""
    request = (RegistrationRequest.objects.select_for_update(of=("self",))
               .select_related("registrant", "revises").get(pk=request.pk))
    move = check(request, transition, actor, comment=comment, early_reason=early_reason)
    now = timezone.now()
    round_ = None
    if move.creates_round:
        round_ = _make_round(request, actor)
        request.review_started_at = now
    if move.publishes:
        request.published_version = _register(request, actor)
    text = comment.strip()
    ends = request.review_period_ends()
    if move.decision and early_reason.strip() and ends and now < ends:
        text += f"\n\nDecided before the end of the public review period: {early_reason.strip()}"
    event = RequestEvent.objects.create(
        request=request, actor=actor, kind=RequestEvent.Kind.TRANSITION, transition=transition,
        from_state=request.state, to_state=move.target, comment=text.strip(), round=round_,
    )
    request.state = move.target
    request.last_activity_at = now
    request.save_with_event()
    registry_changed()  # the public review list and the namespace's pending revision
    _queue_event_mails(event, workflow.told_about(request, move))
    return request


@transaction.atomic
def request_assign(*, request: RegistrationRequest, expert, actor) -> RegistrationRequest:
    """Assign a request to a designated expert (an expert may take it themselves)."""
    request = RegistrationRequest.objects.select_for_update().get(pk=request.pk)
    problem = workflow.assign_refusal(request, actor, expert)
    if problem is not None:
        raise problem
    request.assigned_expert = expert
    request.last_activity_at = timezone.now()
    request.save(update_fields=["assigned_expert", "last_activity_at", "updated_at"])
    RequestEvent.objects.create(
        request=request, actor=actor, kind=RequestEvent.Kind.ASSIGN, from_state=request.state,
        to_state=request.state,
        comment=f"Assigned to {expert.display_name}." if expert else "Unassigned.",
    )
    return request


@transaction.atomic
def request_set_standardisation(*, request: RegistrationRequest, involved: bool, actor,
                                comment: str = "") -> RegistrationRequest:
    """The experts' flag: standardisation is involved, so approval goes to the IESG."""
    request = RegistrationRequest.objects.select_for_update().get(pk=request.pk)
    problem = workflow.standardisation_refusal(request, actor)
    if problem is not None:
        raise problem
    request.standardisation = involved
    request.save(update_fields=["standardisation", "updated_at"])
    RequestEvent.objects.create(
        request=request, actor=actor, kind=RequestEvent.Kind.STANDARDISATION,
        from_state=request.state, to_state=request.state,
        comment=(("Standardisation is involved: approval goes to the IESG. " if involved
                  else "No standardisation involved. ") + comment).strip(),
    )
    return request


@transaction.atomic
def request_remind(*, request: RegistrationRequest, idle, actor=None) -> bool:
    """Remind the experts of a request idle longer than ``idle`` (a timedelta), once
    per idle period. Returns whether a reminder was queued."""
    now = timezone.now()
    request = (RegistrationRequest.objects.needing_reminder(now=now, idle=idle)
               .select_for_update().filter(pk=request.pk).first())
    if request is None:
        return False
    request.reminded_at = now
    request.save(update_fields=["reminded_at"])
    days = (now - request.last_activity_at).days
    RequestEvent.objects.create(request=request, actor=actor, kind=RequestEvent.Kind.REMIND,
                                from_state=request.state, to_state=request.state,
                                comment=f"No activity for {days} days; the experts were reminded.")
    transaction.on_commit(lambda: tasks.send_reminder_task.delay(request.pk))
    return True


@transaction.atomic
def request_comment(*, request: RegistrationRequest, actor, body: str, audience: str) -> Comment:
    """Comment on a request. Anyone signed in may comment publicly while it is in
    public review; experts also write to the registrant or among themselves."""
    request = RegistrationRequest.objects.select_for_update().get(pk=request.pk)
    body = body.strip()
    if not body:
        raise TransitionRefused("Write a comment first.", field="body")
    problem = workflow.comment_refusal(request, actor, audience)
    if problem is not None:
        raise problem
    comment = Comment.objects.create(request=request, author=actor, audience=audience,
                                     body=body, round=request.latest_round())
    request.last_activity_at = timezone.now()
    request.save(update_fields=["last_activity_at", "updated_at"])
    for mail_audience in workflow.COMMENT_MAIL[audience]:
        transaction.on_commit(lambda mail_audience=mail_audience:
                              tasks.send_comment_mail_task.delay(comment.pk, mail_audience))
    return comment
