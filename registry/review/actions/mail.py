"""Mail's own writes: ``message_deliver`` (the worker's send, each copy exactly once),
``message_resend`` (staff), ``inbound_mail_receive`` and ``inbound_message_attach``
(what arrives, and staff placing it), and what ends when a person leaves a role
(``person_withdraw``, ``reply_addresses_revoke``).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import secrets
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.db import DataError, IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from registry.accounts.mail import backoff
from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import is_expert
from registry.namespaces.actions import (
    registry_changed,
)
from registry.review import workflow
from registry.review.actions.registrations import _queue_comment_mails
from registry.review.inbound import ParsedMail
from registry.review.inbound import parse as parse_mail
from registry.review.mail_limits import mail_limit_refusal
from registry.review.mailaddress import read_reply_address, read_return_address
from registry.review.models import (
    Comment,
    InboundMessage,
    InboundPlacement,
    OutboundMessage,
    RegistrationRequest,
    ReplyKey,
    RequestEvent,
)
from registry.review.outbox import (
    enqueue,
    is_our_message_id,
    lease_end,
    send_copies,
)
from registry.review.workflow import (
    enforce_resend,
    mail_placement,
)
from registry.text_policy import BIDI_CONTROLS, NONCHARACTERS

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Delivery:
    """What one delivery attempt did: the row's state now, and when to try again."""

    state: str
    retry_in: float | None = None


def message_deliver(*, message_pk: int) -> Delivery:
    """Send one outbox row (the worker's task calls this), after the messages about
    the same request written before it and not yet tried: after a broker outage the
    tasks come back in any order, the mail goes out in the order it was written.
    (A message already tried and waiting to try again holds nothing up.)"""
    row = OutboundMessage.objects.filter(pk=message_pk).first()
    if row is None:
        return Delivery("gone")
    for earlier in OutboundMessage.objects.ahead_of(row).filter(attempts=0).values_list(
            "pk", flat=True):
        _deliver_one(earlier)
    return _deliver_one(message_pk)


def _deliver_one(message_pk: int) -> Delivery:
    """Send one row, each copy exactly once (``outbox`` says how). The attempt
    claims the row, committed, before any SMTP; a row another attempt is sending is
    left to it unless that attempt's lease ran out (its worker died), and then this
    one reconciles the copies first. A failure is recorded on the row, and after
    ``MAIL_MAX_ATTEMPTS`` the row is marked failed for staff."""
    Copy = OutboundMessage.Copy
    now = timezone.now()
    claim = secrets.token_hex(8)
    with transaction.atomic():
        row = (OutboundMessage.objects.select_for_update(skip_locked=True)
               .filter(pk=message_pk).first())
        if row is None:
            return Delivery("busy")  # another worker is claiming it right now
        if row.state == OutboundMessage.Delivery.SENDING:
            if row.lease_until is not None and row.lease_until > now:
                return Delivery("busy")  # being sent, its sender alive
            # Its sender died mid-conversation: a copy whose end went out may have been
            # taken by the server, so it is never sent again by the worker.
            row.copies = {key: ({**value, "state": Copy.UNCERTAIN}
                                if value.get("state") == Copy.DATA else value)
                          for key, value in row.copies.items()}
        elif row.state != OutboundMessage.Delivery.PENDING:
            return Delivery(row.state)
        elif row.next_attempt_at > now + dt.timedelta(seconds=5):
            return Delivery("not_due")
        row.state = OutboundMessage.Delivery.SENDING
        row.claim = claim
        row.lease_until = lease_end()
        row.attempts += 1
        row.last_attempt_at = now
        row.save()
    error = send_copies(row, claim)
    with transaction.atomic():
        row = (OutboundMessage.objects.select_for_update(of=("self",))
               .select_related("registration").get(pk=message_pk))
        if row.claim != claim:
            return Delivery("busy")  # taken over by another attempt, which finishes it
        row.claim = ""
        row.lease_until = None
        uncertain = [key for key, value in row.copies.items()
                     if value.get("state") == Copy.UNCERTAIN]
        if error is not None:
            row.last_error = f"{type(error).__name__}: {error}"[:2000]
            if row.attempts >= settings.MAIL_MAX_ATTEMPTS:
                row.state = OutboundMessage.Delivery.FAILED
                row.save()
                _mail_event(row, f"“{row.summary}” could not be sent after {row.attempts} "
                                 f"attempts: {row.last_error}")
                return Delivery(row.state)
            delay = backoff(row.attempts)
            row.state = OutboundMessage.Delivery.PENDING
            row.next_attempt_at = timezone.now() + delay
            row.save()
            return Delivery(row.state, retry_in=delay.total_seconds())
        if uncertain:
            row.state = OutboundMessage.Delivery.UNCERTAIN
            named = {"list": "the list's copy", "others": "the other addresses"}
            whom = "; ".join(named.get(key, key) for key in uncertain)
            row.last_error = (f"Perhaps sent, perhaps not, to {whom}: the "
                              "connection was lost after the message was handed over and "
                              "before the server said it took it. Not sent again, so as "
                              "not to send it twice; send it again if the recipient did "
                              "not get it.")[:2000]
            row.save()
            _mail_event(row, f"“{row.summary}”: {row.last_error}")
            return Delivery(row.state)
        row.state = OutboundMessage.Delivery.SENT
        row.sent_at = timezone.now()
        row.last_error = ""
        row.save()
        return Delivery(row.state)


def _mail_event(row: OutboundMessage, comment: str) -> None:
    """A request's timeline says what became of its mail; a notice about no request (a
    holder change) has its state in the admin only."""
    registration = row.registration
    if registration is None:
        return
    RequestEvent.objects.create(
        registration=registration, actor=None, kind=RequestEvent.Kind.MAIL_FAILED,
        from_state=registration.state, to_state=registration.state,
        comment=comment[:2000])


@transaction.atomic
def message_resend(*, message: OutboundMessage, actor: User) -> OutboundMessage:
    """Staff send again a message that failed: same Message-ID, so a recipient who
    did get it sees one message, not two."""
    row = (OutboundMessage.objects.select_for_update(of=("self",))
           .select_related("registration").get(pk=message.pk))
    enforce_resend(row, actor)
    attempts = row.attempts
    row.state = OutboundMessage.Delivery.PENDING
    # Staff decided: a copy perhaps sent goes again (same Message-ID).
    row.copies = {key: value for key, value in row.copies.items()
                  if value.get("state") == OutboundMessage.Copy.SENT}
    row.attempts = 0
    row.next_attempt_at = timezone.now()
    row.save()
    if row.registration is not None:
        RequestEvent.objects.create(
            registration=row.registration, actor=actor, kind=RequestEvent.Kind.RESEND_MAIL,
            from_state=row.registration.state, to_state=row.registration.state,
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


def inbound_mail_receive(*, raw: bytes, source: str = "pipe",
                         envelope_recipients: tuple[str, ...] = ()) -> InboundMessage:
    """Take in one message: add it to its request's timeline, or record for staff
    why not. Every message is kept (``InboundMessage.raw``), none is placed twice,
    and no mail changes a request's state.

    Who said it: a message is credited to a person only when it was sent to the
    reply address the registry gave that person (``mailaddress``); list mail is
    public, shown with the sender as the list gave it and credited to nobody; the
    rest waits in the staff quarantine. ``envelope_recipients`` are the addresses
    the MTA delivered it to (``receive_mail --recipient``), read with the headers."""
    parsed = parse_mail(raw, envelope_recipients=envelope_recipients,
                        authserv_id=settings.MAIL_AUTHSERV_ID)
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
        return _record(bare, raw, source, InboundMessage.Outcome.MALFORMED, "")
    except (OperationalError, InterfaceError):
        raise  # the database is away: the MTA (or the next poll) tries again later
    except Exception as exc:  # whatever else went wrong, the message is kept for staff
        logger.exception("Inbound message %s could not be taken in", parsed.message_id)
        bare = ParsedMail(message_id=parsed.message_id[:998],
                          problem=f"It could not be taken in ({type(exc).__name__}).")
        return _record(bare, raw, source, InboundMessage.Outcome.MALFORMED, "")


def _record(parsed: ParsedMail, raw: bytes, source: str, outcome: str, reason: str,
            **links: object) -> InboundMessage:
    return InboundMessage.objects.create(
        source=source, message_id=parsed.message_id, from_name=parsed.from_name,
        from_address=parsed.from_address, subject=parsed.subject[:5000],
        sent_at=parsed.sent_at, in_reply_to=" ".join(parsed.in_reply_to)[:5000],
        references=" ".join(parsed.references)[:20000], list_id=parsed.list_id,
        text=parsed.text, raw=raw, outcome=outcome, authentication=parsed.authentication[:300],
        reason=" ".join(filter(None, [reason, parsed.problem])), **links)


def _receive(parsed: ParsedMail, raw: bytes, source: str) -> InboundMessage:
    Outcome = InboundMessage.Outcome
    if parsed.malformed:
        return _record(parsed, raw, source, Outcome.MALFORMED,
                       "Not read further; kept whole for IANA staff.")
    placed = (InboundMessage.objects.filter(message_id=parsed.message_id,
                                            outcome=Outcome.PLACED).first())
    if placed is not None:
        return _record(parsed, raw, source, Outcome.DUPLICATE,
                       f"Already added to request #{placed.registration_id}.",
                       registration_id=placed.registration_id)
    return_path = _return_path(parsed)
    if return_path is not None or parsed.bounce is not None:
        return _receive_bounce(parsed, raw, source, return_path)
    ours = OutboundMessage.objects.filter(message_id=parsed.message_id).first()
    if ours is not None or is_our_message_id(parsed.message_id):
        return _record(parsed, raw, source, Outcome.LOOP,
                       "One of the registry's own messages came back (for instance the "
                       "list's copy of a posting).",
                       registration_id=ours.registration_id if ours else None)
    token = _reply_token(parsed)
    if parsed.auto_reply:
        return _record(parsed, raw, source, Outcome.AUTO_REPLY,
                       "An automatic reply (Auto-Submitted, or a vacation responder).",
                       registration=token[0] if token else _locate(parsed))
    if token is not None:
        registration, sender = token
    else:
        located, sender = _locate(parsed), None
        if located is None:
            return _record(parsed, raw, source, Outcome.UNPLACED,
                           "Not sent to a reply address of the registry, no ticket ([URN #n]) "
                           "in the subject, and In-Reply-To/References name no message of a "
                           "request.")
        registration = located
    return _place(parsed, raw, source, registration, sender=sender,
                  via_list=token is None and _via_list(parsed))


def _place(parsed: ParsedMail, raw: bytes, source: str, registration: RegistrationRequest, *,
           sender: User | None, via_list: bool) -> InboundMessage:
    """Add a message to its request's timeline as the comment ``mail_placement`` says,
    or hold it for staff with the reason."""
    Outcome = InboundMessage.Outcome
    registration = (RegistrationRequest.objects.select_for_update(of=("self",))
                    .select_related("registrant").get(pk=registration.pk))
    if InboundMessage.objects.filter(message_id=parsed.message_id,
                                     outcome=Outcome.PLACED).exists():
        return _record(parsed, raw, source, Outcome.DUPLICATE,
                       f"Already added to request #{registration.pk}.", registration=registration)
    audience, refusal = mail_placement(
        registration, via_list=via_list, sender=sender,
        answered_audience=_answered_audience(parsed, registration))
    refusal = refusal or mail_limit_refusal(registration, sender)
    if audience is None or refusal:
        return _record(parsed, raw, source, Outcome.HELD, refusal, registration=registration,
                       verified_sender=sender)
    via = Comment.Via.MAIL if sender is not None else Comment.Via.LIST
    comment = _mail_comment(parsed, registration, sender=sender, audience=audience, via=via)
    told = _placed_summary(parsed, registration, comment, sender)
    if audience != Comment.Audience.EXPERTS:  # internal comments leave no public trace
        RequestEvent.objects.create(
            registration=registration, actor=sender,
            kind=(RequestEvent.Kind.LIST_COMMENT if via == Comment.Via.LIST
                  else RequestEvent.Kind.MAIL_REPLY),
            from_state=registration.state, to_state=registration.state, comment=told)
    registration.last_activity_at = timezone.now()
    registration.save(update_fields=["last_activity_at", "updated_at"])
    if audience == Comment.Audience.PUBLIC:
        registry_changed(exports=False)  # the public review page shows the discussion
    record = _record(parsed, raw, source, Outcome.PLACED, "", registration=registration,
                     comment=comment, verified_sender=sender)
    _queue_comment_mails(comment, registration)
    return record


def _placed_summary(parsed: ParsedMail, registration: RegistrationRequest, comment: Comment,
                    sender: User | None) -> str:
    """What the timeline says of a message placed on it."""
    if sender is None:
        return f"{comment.author_label} (sender not verified) wrote on the review list."
    if sender.pk == registration.registrant_id and _answers_requested_changes(parsed,
                                                                              registration):
        return ("The registrant answered the request for changes by mail, from their reply "
                "address.")
    if sender.pk == registration.registrant_id:
        return "The registrant wrote by mail, from their reply address."
    return f"{sender.display_name} answered by mail, from their reply address."


def _mail_comment(parsed: ParsedMail, registration: RegistrationRequest, *, sender: User | None,
                  audience: str, via: str) -> Comment:
    """The comment a message becomes: credited to ``sender`` (verified by their reply
    address) or to nobody, with the name and address as the mail gave them."""
    body = _safe_text(parsed.text).strip() or "(The message had no text.)"
    if len(body) > MAX_COMMENT_CHARS:
        body = body[:MAX_COMMENT_CHARS] + "\n\n(Cut here; IANA staff keep the whole message.)"
    if parsed.attachments:
        body += "\n\n" + "\n".join(f"[Attachment kept by IANA staff: {name}]"
                                    for name in parsed.attachments)
    return Comment.objects.create(
        registration=registration, author=sender, author_name=_safe_text(parsed.from_name).strip(),
        author_email=parsed.from_address, audience=audience, via=via, body=body,
        round=registration.submitted_round, sent_at=parsed.sent_at)


def _receive_bounce(parsed: ParsedMail, raw: bytes, source: str,
                    row_pk: int | None) -> InboundMessage:
    """A delivery failure report. Believed only when it came back to the message's
    own return address (VERP): then it marks that message failed, for staff to see
    on the request and resend. One that only quotes a Message-ID (anyone can read
    those in the list's archive) changes nothing."""
    bounce = parsed.bounce
    row = (OutboundMessage.objects.select_for_update(of=("self",)).select_related("registration")
           .filter(pk=row_pk).first() if row_pk is not None else None)
    if row is None:
        return _record(parsed, raw, source, InboundMessage.Outcome.BOUNCE,
                       "A delivery failure report not sent to the return address of one of "
                       "our messages: believed about nothing.")
    failed = bounce.failed if bounce is not None else True
    detail = (bounce.detail if bounce is not None else "") or parsed.subject
    if failed:
        row.state = OutboundMessage.Delivery.FAILED
        row.last_error = f"Bounced: {detail}"[:2000]
        row.save(update_fields=["state", "last_error"])
    if failed and row.registration is not None:
        RequestEvent.objects.create(
            registration=row.registration, actor=None, kind=RequestEvent.Kind.MAIL_BOUNCED,
            from_state=row.registration.state, to_state=row.registration.state,
            comment=f"“{row.summary}” bounced: {detail}"[:2000])
    return _record(parsed, raw, source, InboundMessage.Outcome.BOUNCE,
                   "Delivery failed for good." if failed
                   else "A delay notice; delivery is still being tried.",
                   registration=row.registration, bounced_message=row)


def _return_path(parsed: ParsedMail) -> int | None:
    """The outbox row whose return address the message was delivered to, if any."""
    for address in parsed.recipients:
        row_pk = read_return_address(address)
        if row_pk is not None:
            return row_pk
    return None


def _reply_token(parsed: ParsedMail) -> tuple[RegistrationRequest, User] | None:
    """The request and person of a current reply address the message was sent to:
    genuine (its HMAC), not revoked (its key version), of an active account."""
    for address in parsed.recipients:
        token = read_reply_address(address)
        if token is None:
            continue
        user = User.objects.filter(pk=token.user_pk, is_active=True).first()
        registration = RegistrationRequest.objects.filter(pk=token.registration_pk).first()
        current = (ReplyKey.objects.filter(user_id=token.user_pk)
                   .values_list("version", flat=True).first() or 0)
        if user is not None and registration is not None and token.version == current:
            return registration, user
    return None


def _locate(parsed: ParsedMail) -> RegistrationRequest | None:
    """The request a message is about: by the messages it answers (ours, or list
    mail already placed), else by the ticket in its subject."""
    ids = parsed.thread_ids[:100]
    if ids:
        found = dict(OutboundMessage.objects.filter(message_id__in=ids)
                     .values_list("message_id", "registration_id"))
        found.update({k: v for k, v in InboundMessage.objects
                      .filter(message_id__in=ids, registration__isnull=False)
                      .values_list("message_id", "registration_id") if k not in found})
        for message_id in ids:
            if message_id in found:
                return RegistrationRequest.objects.filter(pk=found[message_id]).first()
    if parsed.ticket is not None:
        return RegistrationRequest.objects.filter(pk=parsed.ticket).first()
    return None


def _via_list(parsed: ParsedMail) -> bool:
    """Sent to the review list: the list's copy (List-Id), or a copy of a message
    addressed to it. Anyone can write either header: it makes mail public list mail,
    credited to nobody, never the words of an account."""
    return (parsed.list_id == settings.REVIEW_LIST_ID.lower()
            or settings.REVIEW_LIST_ADDRESS.lower() in parsed.to)


def _answered_audience(parsed: ParsedMail, registration: RegistrationRequest) -> str:
    """Who the message of ours that this one answers was written to ('' if none)."""
    for message_id in parsed.thread_ids[:100]:
        audience = (OutboundMessage.objects.filter(registration=registration, message_id=message_id)
                    .values_list("audience", flat=True).first())
        if audience:
            return audience
    return ""


@transaction.atomic
def inbound_message_attach(*, message: InboundMessage, registration: RegistrationRequest,
                           audience: str, actor: User) -> InboundPlacement:
    """IANA staff attach a quarantined message to a request by hand: it becomes a
    comment credited to nobody (the sender as the mail gave it, not verified), with
    an event naming who attached it. Nobody is mailed: staff attach what was sent."""
    message = InboundMessage.objects.select_for_update().get(pk=message.pk)
    registration = RegistrationRequest.objects.select_for_update(of=("self",
                                                                     )).get(pk=registration.pk)
    problem = workflow.attach_refusal(message, registration, actor, audience)
    if problem is not None:
        raise problem
    parsed = ParsedMail(message_id=message.message_id, from_name=message.from_name,
                        from_address=message.from_address, text=message.text,
                        sent_at=message.sent_at)
    via = Comment.Via.LIST if audience == Comment.Audience.PUBLIC else Comment.Via.MAIL
    comment = _mail_comment(parsed, registration, sender=None, audience=audience, via=via)
    sender = message.from_address or "an unknown sender"
    RequestEvent.objects.create(
        registration=registration, actor=actor, kind=RequestEvent.Kind.MAIL_ATTACHED,
        from_state=registration.state, to_state=registration.state,
        comment=f"Mail from {sender} (not verified) attached by IANA staff: "
                f"“{message.subject[:200]}”.")
    registration.last_activity_at = timezone.now()
    registration.save(update_fields=["last_activity_at", "updated_at"])
    if audience == Comment.Audience.PUBLIC:
        registry_changed(exports=False)  # the public review page shows the discussion
    return InboundPlacement.objects.create(message=message, registration=registration,
                                           comment=comment,
                                           actor=actor)


@transaction.atomic
def person_withdraw(*, user: User, why: str, actor: User | None) -> list[int]:
    """A person's role ended or their account was deactivated (the accounts actions
    call this in their transaction, after the change): the requests assigned to them
    and no longer assignable to them are unassigned, each with an event; every reply
    address given to them is revoked; and the mail not yet sent stops going to them
    (``workflow.still_addressed``, asked when each copy is made). Returns the
    requests unassigned."""
    unassigned = []
    for registration in (RegistrationRequest.objects.select_for_update()
                         .filter(assigned_expert=user).order_by("pk")):
        if is_expert(user) and user.is_active:
            continue  # still a designated expert (another role of theirs ended)
        registration.assigned_expert = None
        registration.save(update_fields=["assigned_expert", "updated_at"])
        RequestEvent.objects.create(
            registration=registration, actor=actor, kind=RequestEvent.Kind.ASSIGN,
            from_state=registration.state, to_state=registration.state,
            comment=f"Unassigned: {user.display_name} {why}.")
        unassigned.append(registration.pk)
    reply_addresses_revoke(user=user, actor=actor, reason=f"{user.display_name} {why}.")
    return unassigned


@transaction.atomic
def reply_addresses_revoke(*, user: User, actor: User | None, reason: str = "") -> int:
    """Revoke every reply address given to ``user`` so far (a leaked one, a person
    leaving): raises their key version; mail to an old address goes to quarantine.
    The account's history says so (who, why). Returns the new version."""
    key, _created = ReplyKey.objects.select_for_update().get_or_create(user=user)
    key.version += 1
    key.save(update_fields=["version", "changed_at"])
    AccountEvent.objects.create(user=user, actor=actor,
                                kind=AccountEvent.Kind.REPLY_ADDRESSES_REVOKED,
                                reason=reason or "Every reply address given so far revoked.")
    logger.info("Reply addresses of user %s revoked by %s (version %s).", user.pk,
                actor.pk if actor else "a command", key.version)
    return key.version


def _answers_requested_changes(parsed: ParsedMail, registration: RegistrationRequest) -> bool:
    if workflow.answered_by_mail(registration):
        return True
    return OutboundMessage.objects.filter(
        registration=registration, message_id__in=parsed.thread_ids[:100],
        event__transition__in=workflow.moves_answered_by_mail()).exists()
