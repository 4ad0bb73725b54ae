"""Every write to a registration request goes through one function here.

Each function locks the request row (``select_for_update``), asks the
workflow table whether the move is allowed, writes the RequestEvent in the same
transaction as the change, and writes the mail it causes to the outbox in that
same transaction (``outbox.queue_message``): the worker sends it after commit,
so a mail failure never rolls back a decision and a broker outage loses nothing.
Mail's own writes are here too: ``message_deliver`` (the worker's send),
``message_resend`` (staff) and ``inbound_mail_receive`` (what arrives).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import partial

from allauth.account.models import EmailAddress
from django.conf import settings
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from registry.accounts.models import User
from registry.namespaces.actions import (
    RegistryError,
    namespace_register,
    registry_changed,
    version_publish,
)
from registry.namespaces.models import Namespace, TemplateVersion
from registry.namespaces.template import STORED_FIELDS
from registry.review import mails, workflow
from registry.review.inbound import ParsedMail
from registry.review.inbound import parse as parse_mail
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
    Round,
    State,
)
from registry.review.outbox import as_email, enqueue, is_our_message_id, queue_message
from registry.review.workflow import (
    NotAllowed,
    NotEditable,
    Refused,
    StaleEdit,
    TransitionRefused,
    check,
    check_resend,
    mail_placement,
)
from registry.text_policy import BIDI_CONTROLS, NONCHARACTERS

__all__ = [
    "NotAllowed",
    "NotEditable",
    "Refused",
    "StaleEdit",
    "TransitionRefused",
    "inbound_mail_receive",
    "message_deliver",
    "message_resend",
    "request_assign",
    "request_comment",
    "request_create",
    "request_remind",
    "request_set_standardisation",
    "request_transition",
    "request_update",
]


def _queue_event_mails(event: RequestEvent, audiences: tuple[str, ...]) -> None:
    """Write the event's messages to the outbox, in the action's transaction."""
    for audience in audiences:
        queue_message(mails.event_message(event, audience), request=event.request,
                      audience=audience, event=event)


def _queue_comment_mails(comment: Comment, request: RegistrationRequest) -> None:
    """Write a comment's messages to the outbox: to whom the workflow says
    (``COMMENT_MAIL``); what came from the list is never posted back to it."""
    for mail_audience in workflow.COMMENT_MAIL[comment.audience]:
        queue_message(mails.comment_message(comment, mail_audience), request=request,
                      audience=mail_audience, comment=comment)


def _clean_values(values: dict[str, str]) -> dict[str, str]:
    return {name: values.get(name, "") or "" for name in STORED_FIELDS if name in values}


@transaction.atomic
def request_create(*, actor: User, kind: str = Namespace.Kind.FORMAL, proposed_nid: str = "",
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
        start = {name: getattr(current, name) for name in STORED_FIELDS} if current else {}
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
def request_update(*, request: RegistrationRequest, actor: User, edit_version: int, kind: str,
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


def _make_round(request: RegistrationRequest, actor: User) -> Round:
    number = request.rounds.count() + 1
    if request.is_revision:
        assert request.revises is not None  # a revision revises a namespace
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


def _register(request: RegistrationRequest, actor: User) -> TemplateVersion:
    """Publish the last submitted round. Its date, when the registration was requested
    of IANA, is the version's Date (Appendix A); today is the registration date."""
    round_ = request.latest_round()
    assert round_ is not None  # publishing follows a submission, which made a round
    values = round_.values()
    try:
        if request.is_revision:
            assert request.revises is not None  # a revision revises a namespace
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
def request_transition(*, request: RegistrationRequest, transition: str, actor: User,
                       comment: str = "",
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
def request_assign(*, request: RegistrationRequest, expert: User | None,
                   actor: User) -> RegistrationRequest:
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
def request_set_standardisation(*, request: RegistrationRequest, involved: bool, actor: User,
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
def request_remind(*, request: RegistrationRequest, idle: dt.timedelta,
                   actor: User | None = None) -> bool:
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
    event = RequestEvent.objects.create(
        request=request, actor=actor, kind=RequestEvent.Kind.REMIND, from_state=request.state,
        to_state=request.state, comment=f"No activity for {days} days; the experts were reminded.")
    queue_message(mails.reminder_message(request), request=request, audience="experts",
                  event=event)
    return True


@transaction.atomic
def request_comment(*, request: RegistrationRequest, actor: User, body: str,
                    audience: str) -> Comment:
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
    if audience == Comment.Audience.PUBLIC:
        registry_changed()  # the public review page shows the discussion
    _queue_comment_mails(comment, request)
    return comment


# --- mail ------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """What one delivery attempt did: the row's state now, and when to try again."""

    state: str
    retry_in: float | None = None


def _backoff(attempts: int) -> dt.timedelta:
    return dt.timedelta(seconds=min(30 * 2 ** max(attempts - 1, 0), 3600))


def message_deliver(*, message_pk: int) -> Delivery:
    """Send one outbox row (the worker's task calls this). The row is locked while
    it is sent, so two workers never send it twice; a failure is recorded on the
    row, and after ``MAIL_MAX_ATTEMPTS`` the row is marked failed for staff."""
    now = timezone.now()
    with transaction.atomic():
        row = (OutboundMessage.objects.select_for_update(skip_locked=True)
               .filter(pk=message_pk).first())
        if row is None:
            return Delivery("busy")  # another worker is sending it right now
        if row.state != OutboundMessage.Delivery.PENDING:
            return Delivery(row.state)
        if row.next_attempt_at > now + dt.timedelta(seconds=5):
            return Delivery("not_due")
        row.attempts += 1
        row.last_attempt_at = now
        try:
            as_email(row).send()
        except Exception as exc:  # SMTP, network, a refused address: all recorded
            row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
            if row.attempts >= settings.MAIL_MAX_ATTEMPTS:
                row.state = OutboundMessage.Delivery.FAILED
                row.save()
                RequestEvent.objects.create(
                    request_id=row.request_id, actor=None, kind=RequestEvent.Kind.MAIL_FAILED,
                    from_state=row.request.state, to_state=row.request.state,
                    comment=f"“{row.summary}” could not be sent after {row.attempts} "
                            f"attempts: {row.last_error}")
                return Delivery(row.state)
            delay = _backoff(row.attempts)
            row.next_attempt_at = now + delay
            row.save()
            return Delivery(row.state, retry_in=delay.total_seconds())
        row.state = OutboundMessage.Delivery.SENT
        row.sent_at = now
        row.last_error = ""
        row.save()
        return Delivery(row.state)


@transaction.atomic
def message_resend(*, message: OutboundMessage, actor: User) -> OutboundMessage:
    """Staff send again a message that failed: same Message-ID, so a recipient who
    did get it sees one message, not two."""
    row = (OutboundMessage.objects.select_for_update(of=("self",))
           .select_related("request").get(pk=message.pk))
    check_resend(row, actor)
    attempts = row.attempts
    row.state = OutboundMessage.Delivery.PENDING
    row.attempts = 0
    row.next_attempt_at = timezone.now()
    row.save()
    RequestEvent.objects.create(
        request=row.request, actor=actor, kind=RequestEvent.Kind.RESEND_MAIL,
        from_state=row.request.state, to_state=row.request.state,
        comment=f"Sent again: “{row.summary}” ({attempts} failed attempts before).")
    transaction.on_commit(partial(enqueue, row.pk), robust=True)
    return row


# What the text policy refuses at a form is dropped from mail (the raw message keeps it):
# control characters but TAB and LF, bidi overrides and isolates, noncharacters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f"
                     + "".join(sorted(BIDI_CONTROLS | NONCHARACTERS)) + "]")


def _safe_text(text: str) -> str:
    return _UNSAFE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
MAX_COMMENT_CHARS = 100_000


def inbound_mail_receive(*, raw: bytes, source: str = "pipe") -> InboundMessage:
    """Take in one message: add it to its request's timeline, or record for staff
    why not. Every message is kept (``InboundMessage.raw``), none is placed twice,
    and no mail changes a request's state."""
    parsed = parse_mail(raw)
    try:
        with transaction.atomic():
            return _receive(parsed, raw, source)
    except IntegrityError:
        # Another delivery of the same message was placed at the same moment.
        return _record(parsed, raw, source, InboundMessage.Outcome.DUPLICATE,
                       "The same message was added by a concurrent delivery.")
    except DataError as exc:
        # Something in it the database will not store as text: keep the bytes.
        bare = ParsedMail(message_id=parsed.message_id[:998],
                          problem=f"Its headers or text could not be stored: {exc}")
        return _record(bare, raw, source, InboundMessage.Outcome.UNPLACED, "")


def _record(parsed: ParsedMail, raw: bytes, source: str, outcome: str, reason: str,
            **links: object) -> InboundMessage:
    return InboundMessage.objects.create(
        source=source, message_id=parsed.message_id, from_name=parsed.from_name,
        from_address=parsed.from_address, subject=parsed.subject[:5000],
        sent_at=parsed.sent_at, in_reply_to=" ".join(parsed.in_reply_to)[:5000],
        references=" ".join(parsed.references)[:20000], list_id=parsed.list_id,
        text=parsed.text, raw=raw, outcome=outcome,
        reason=" ".join(filter(None, [reason, parsed.problem])), **links)


def _receive(parsed: ParsedMail, raw: bytes, source: str) -> InboundMessage:
    Outcome = InboundMessage.Outcome
    placed = (InboundMessage.objects.filter(message_id=parsed.message_id,
                                            outcome=Outcome.PLACED).first())
    if placed is not None:
        return _record(parsed, raw, source, Outcome.DUPLICATE,
                       f"Already added to request #{placed.request_id}.",
                       request_id=placed.request_id)
    ours = OutboundMessage.objects.filter(message_id=parsed.message_id).first()
    if ours is not None or is_our_message_id(parsed.message_id):
        return _record(parsed, raw, source, Outcome.LOOP,
                       "One of the registry's own messages came back (for instance the "
                       "list's copy of a posting).",
                       request_id=ours.request_id if ours else None)
    if parsed.bounce is not None:
        return _receive_bounce(parsed, raw, source)
    if parsed.auto_reply:
        return _record(parsed, raw, source, Outcome.AUTO_REPLY,
                       "An automatic reply (Auto-Submitted, or a vacation responder).",
                       request=_locate(parsed))
    request = _locate(parsed)
    if request is None:
        return _record(parsed, raw, source, Outcome.UNPLACED,
                       "No ticket ([URN #n]) in the subject, and In-Reply-To/References "
                       "name no message of a request.")
    request = (RegistrationRequest.objects.select_for_update(of=("self",))
               .select_related("registrant").get(pk=request.pk))
    if InboundMessage.objects.filter(message_id=parsed.message_id,
                                     outcome=Outcome.PLACED).exists():
        return _record(parsed, raw, source, Outcome.DUPLICATE,
                       f"Already added to request #{request.pk}.", request=request)
    sender = _sender(parsed.from_address)
    audience, refusal = mail_placement(
        request, via_list=_via_list(parsed),
        from_registrant=sender is not None and sender.pk == request.registrant_id,
        answers_changes_request=_answers_changes_request(parsed, request))
    if audience is None:
        return _record(parsed, raw, source, Outcome.HELD, refusal, request=request)
    body = _safe_text(parsed.text).strip() or "(The message had no text.)"
    if len(body) > MAX_COMMENT_CHARS:
        body = body[:MAX_COMMENT_CHARS] + "\n\n(Cut here; IANA staff keep the whole message.)"
    if parsed.attachments:
        body += "\n\n" + "\n".join(f"[Attachment kept by IANA staff: {name}]"
                                    for name in parsed.attachments)
    via = Comment.Via.LIST if audience == Comment.Audience.PUBLIC else Comment.Via.MAIL
    comment = Comment.objects.create(
        request=request, author=sender, author_name=_safe_text(parsed.from_name).strip(),
        author_email=parsed.from_address, audience=audience, via=via, body=body,
        round=request.latest_round(), sent_at=parsed.sent_at)
    RequestEvent.objects.create(
        request=request, actor=sender,
        kind=(RequestEvent.Kind.LIST_COMMENT if via == Comment.Via.LIST
              else RequestEvent.Kind.MAIL_REPLY), from_state=request.state, to_state=request.state,
        comment=(f"{comment.author_label} wrote on the review list." if via == Comment.Via.LIST
                 else "The registrant answered the request for changes by mail."))
    request.last_activity_at = timezone.now()
    request.save(update_fields=["last_activity_at", "updated_at"])
    if audience == Comment.Audience.PUBLIC:
        registry_changed()  # the public review page shows the discussion
    record = _record(parsed, raw, source, Outcome.PLACED, "", request=request, comment=comment)
    _queue_comment_mails(comment, request)
    return record


def _receive_bounce(parsed: ParsedMail, raw: bytes, source: str) -> InboundMessage:
    """A delivery failure report: marks the message it is about as failed, for staff
    to see on the request and resend."""
    bounce = parsed.bounce
    assert bounce is not None
    row = (OutboundMessage.objects.select_for_update(of=("self",)).select_related("request")
           .filter(message_id=bounce.original_message_id).first()
           if bounce.original_message_id else None)
    if row is None:
        return _record(parsed, raw, source, InboundMessage.Outcome.BOUNCE,
                       "A delivery failure report about no message of ours that is known.")
    if bounce.failed:
        row.state = OutboundMessage.Delivery.FAILED
        row.last_error = f"Bounced: {bounce.detail or parsed.subject}"[:2000]
        row.save(update_fields=["state", "last_error"])
        RequestEvent.objects.create(
            request=row.request, actor=None, kind=RequestEvent.Kind.MAIL_BOUNCED,
            from_state=row.request.state, to_state=row.request.state,
            comment=f"“{row.summary}” bounced: {bounce.detail or parsed.subject}"[:2000])
    return _record(parsed, raw, source, InboundMessage.Outcome.BOUNCE,
                   "Delivery failed for good." if bounce.failed
                   else "A delay notice; delivery is still being tried.",
                   request=row.request, bounced_message=row)


def _locate(parsed: ParsedMail) -> RegistrationRequest | None:
    """The request a message is about: by the messages it answers (ours, or list
    mail already placed), else by the ticket in its subject."""
    ids = parsed.thread_ids[:100]
    if ids:
        found = dict(OutboundMessage.objects.filter(message_id__in=ids)
                     .values_list("message_id", "request_id"))
        found.update({k: v for k, v in InboundMessage.objects
                      .filter(message_id__in=ids, request__isnull=False)
                      .values_list("message_id", "request_id") if k not in found})
        for message_id in ids:
            if message_id in found:
                return RegistrationRequest.objects.filter(pk=found[message_id]).first()
    if parsed.ticket is not None:
        return RegistrationRequest.objects.filter(pk=parsed.ticket).first()
    return None


def _sender(address: str) -> User | None:
    """The account whose verified address sent the message, if any."""
    if not address:
        return None
    found = (EmailAddress.objects.filter(email__iexact=address, verified=True)
             .select_related("user").first())
    return found.user if found else None


def _via_list(parsed: ParsedMail) -> bool:
    """Sent to the review list: the list's copy (List-Id), or a copy of a message
    addressed to it."""
    return (parsed.list_id == settings.REVIEW_LIST_ID.lower()
            or settings.REVIEW_LIST_ADDRESS.lower() in parsed.to)


def _answers_changes_request(parsed: ParsedMail, request: RegistrationRequest) -> bool:
    if request.state == State.CHANGES_REQUESTED:
        return True
    return OutboundMessage.objects.filter(
        request=request, message_id__in=parsed.thread_ids[:100],
        event__transition="request_changes").exists()
