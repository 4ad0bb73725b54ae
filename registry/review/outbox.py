"""The outbox: every message about a request is a row, written inside the
transaction of the action that causes it, and sent by the worker afterwards.

``queue_message`` is called by the actions (never on its own): it gives the
message its ticket, its Message-ID and the threading headers that chain it to
the request's first message, stores it, and asks for it to be sent once the
transaction commits. Asking can fail (the broker is down): that is logged and
the row stays unqueued (``queued_at`` empty); ``tasks.requeue_undelivered_mail_task``
queues it again within a minute, and the worker sends a request's mail in order.

``as_emails`` makes the copies that go out: the envelope sender of each is the
row's return address (VERP, ``mailaddress.return_address``), and a message written
to people (not to the list) goes to each person with an account as their own copy,
whose Reply-To is their reply address for the request: a reply to it is theirs.

Each copy goes out exactly once, a worker killed mid-conversation included. Before
each step that matters the copy's state is committed to the row (``copies``):
``sending`` before the SMTP conversation of a copy, ``data`` just before the line
"." that ends the message (the only moment a server takes a message: a connection
lost before it leaves nothing delivered), ``sent`` once the server's 250 is read.
The attempt owns the row by a ``claim`` token with a lease (``MAIL_SENDING_LEASE``)
renewed at each step; a worker that dies stops renewing it, and the periodic requeue
(or a worker starting) hands the row to a new attempt, which sends again the copies
still ``sending`` and never a ``data`` one: the server may have it, so it is
``uncertain`` and the row is shown to staff as "Perhaps sent" (their "Send again" is
a decision, with the same Message-ID). Every step is fenced by the claim: an attempt
that lost its row (its lease ran out while it was slow) stops before the ".".
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import secrets
import smtplib
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.core.mail.backends.smtp import EmailBackend as SMTPBackend
from django.db import transaction
from django.utils import timezone

from registry.accounts.roles import load_roles
from registry.review.mailaddress import reply_address, return_address
from registry.review.models import (
    Comment,
    OutboundMessage,
    RegistrationRequest,
    ReplyKey,
    RequestEvent,
)
from registry.review.workflow.mail import still_addressed

logger = logging.getLogger(__name__)


def ticket(registration: RegistrationRequest) -> str:
    """The ticket every subject carries, as IANA's tracker does: ``[URN #42]``."""
    return f"[URN #{registration.pk}]"


def thread_title(registration: RegistrationRequest) -> str:
    """What the thread of a request is called (fixed by its first message)."""
    if registration.revises is not None:
        return f"Revision of URN NID {registration.revises.nid}"
    kind = "Fast-track registration" if registration.shown_fast_track else "Registration"
    if registration.shown_kind == "informal":
        organisation = registration.shown_organisation.strip()
        return (f"{kind} request for an informal URN namespace"
                + (f" ({organisation})" if organisation else ""))
    return f"{kind} request for URN NID {registration.shown_nid or '(no NID yet)'}"


def new_message_id(registration: RegistrationRequest) -> str:
    return f"<urn-{registration.pk}.{secrets.token_hex(8)}@{settings.MAIL_DOMAIN}>"


def is_our_message_id(message_id: str) -> bool:
    return message_id.lower().endswith(f"@{settings.MAIL_DOMAIN.lower()}>") and \
        message_id.lower().startswith("<urn-")


def queue_message(message: EmailMessage | None, *, registration: RegistrationRequest,
                  audience: str, event: RequestEvent | None = None,
                  comment: Comment | None = None) -> OutboundMessage | None:
    """Store ``message`` (built by ``mails.py``) in the outbox and have it sent after
    commit. Call inside the action's transaction, with the request row locked (the
    first message of a request is then decided once)."""
    if message is None or not (message.to or message.cc):
        return None
    if (comment is not None and comment.via != Comment.Via.WEB
            and settings.REVIEW_LIST_ADDRESS.lower()
            in {a.lower() for a in [*message.to, *message.cc]}):
        # What came from the list (or by mail) is never posted back to it: no loops.
        return None
    root = OutboundMessage.objects.about(registration).first()
    message_id = new_message_id(registration)
    headers = {
        "Message-ID": message_id,
        "Auto-Submitted": "auto-generated",  # RFC 3834: vacation responders stay quiet
        "X-Auto-Response-Suppress": "All",
        "X-URN-Request": str(registration.pk),
    }
    if root is None:
        subject = header_text(f"{ticket(registration)} {thread_title(registration)}")
    else:
        base = root.subject.removeprefix("Re: ")
        subject = f"Re: {base}"
        headers["In-Reply-To"] = root.message_id
        headers["References"] = root.message_id
    row = OutboundMessage.objects.create(
        registration=registration, event=event, comment=comment, audience=audience,
        summary=header_text(str(message.subject))[:300], message_id=message_id,
        from_email=message.from_email or settings.DEFAULT_FROM_EMAIL,
        to=list(message.to), cc=list(message.cc), reply_to=list(message.reply_to),
        subject=subject[:400], body=str(message.body), headers=headers,
    )
    transaction.on_commit(partial(enqueue, row.pk), robust=True)
    return row


def queue_notice(message: EmailMessage, *, audience: str) -> OutboundMessage | None:
    """Store a notice about no request (a namespace's holder changed) in the outbox and
    have it sent after commit, like the review's mail: written in the action's
    transaction, so it is sent once that commits and never lost to a broker outage."""
    if not (message.to or message.cc):
        return None
    message_id = f"<urn-notice.{secrets.token_hex(8)}@{settings.MAIL_DOMAIN}>"
    row = OutboundMessage.objects.create(
        audience=audience, summary=header_text(str(message.subject))[:300],
        message_id=message_id, from_email=message.from_email or settings.DEFAULT_FROM_EMAIL,
        to=list(message.to), cc=list(message.cc), subject=header_text(str(message.subject))[:400],
        body=str(message.body), headers={"Message-ID": message_id,
                                         "Auto-Submitted": "auto-generated",
                                         "X-Auto-Response-Suppress": "All"})
    transaction.on_commit(partial(enqueue, row.pk), robust=True)
    return row


def enqueue(message_pk: int) -> bool:
    """Hand the row to the worker. Never raises: with the broker unreachable the
    row stays unqueued and the periodic requeue sends it when the broker is back."""
    from registry.review.tasks import send_message_task

    try:
        send_message_task.delay(message_pk)
    except Exception:  # any broker or network failure: the row is safe in the database
        logger.warning("Could not queue outbound message %s; it stays pending and will be "
                       "queued again by requeue_undelivered_mail_task.", message_pk,
                       exc_info=True)
        return False
    OutboundMessage.objects.filter(pk=message_pk, queued_at__isnull=True).update(
        queued_at=timezone.now())
    return True


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_WORD_CHARS = 10  # characters per encoded word: at most 40 bytes, 56 in base64


def header_text(text: str) -> str:
    """Outside text (an organisation, a NID, a name) made fit for a header line:
    every control character, CR and LF included, one space."""
    return " ".join(_CONTROL.sub(" ", text).split())


def _subject_header(subject: str) -> str:
    """The Subject as sent. Text that looks like an RFC 2047 encoded word ("=?") is
    itself sent encoded, so a mail reader shows it as the characters typed and never
    decodes an organisation's "=?utf-8?b?...?=" into text of its author's choosing."""
    subject = header_text(subject)
    if "=?" not in subject:
        return subject
    from email.header import Header

    words = [subject[i:i + _WORD_CHARS] for i in range(0, len(subject), _WORD_CHARS)]
    return " ".join(Header(word, "utf-8").encode() for word in words)


class _Copy(EmailMessage):
    """One copy of a row: the To and Cc it shows are the row's, the envelope
    recipients (who it is delivered to) are this copy's."""

    def __init__(self, *args, envelope_to: list[str], key: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.envelope_to = envelope_to
        self.key = key  # its name in the row's delivery record, the same on every try

    def recipients(self) -> list[str]:
        return list(self.envelope_to)


def as_emails(row: OutboundMessage) -> list[EmailMessage]:
    """The copies of the row to send, the same Message-ID in each. Written to the
    list (the row has a Reply-To): one copy, answered on the list. Written to people:
    a copy for each person with an account, answered at their reply address; one
    more for the other addresses (the IESG's), with no reply address. A person whose
    account was deactivated, or whose role ended, since it was written gets none."""
    headers = {**row.headers, "From": row.from_email}
    recipients = list(dict.fromkeys(row.recipients))
    base = {"subject": _subject_header(row.subject), "body": row.body,
            "from_email": return_address(row.pk), "to": row.to, "cc": row.cc,
            "headers": headers}
    registration = row.registration
    if registration is None:  # a notice: each its own copy, no reply address
        return [_Copy(**base, envelope_to=[address], key=address.lower())
                for address in recipients]
    people = {user.email.lower(): user for user in get_user_model().objects
              .filter(email__in=recipients)}
    load_roles(people.values())  # still_addressed asks each person's roles
    if row.reply_to:
        listed = [a for a in recipients if a.lower() not in people
                  or still_addressed(row.audience, people[a.lower()], registration)]
        return [_Copy(**base, reply_to=row.reply_to, envelope_to=listed, key="list")]
    versions = dict(ReplyKey.objects.filter(user__in=people.values())
                    .values_list("user_id", "version"))
    copies: list[EmailMessage] = []
    others = []
    for address in recipients:
        person = people.get(address.lower())
        if person is None:
            others.append(address)
            continue
        if not still_addressed(row.audience, person, registration):
            continue  # deactivated, or their role ended since it was written
        reply = reply_address(registration_pk=registration.pk, user_pk=person.pk,
                              version=versions.get(person.pk, 0))
        copies.append(_Copy(**base, reply_to=[reply], envelope_to=[address],
                            key=address.lower()))
    if others:
        copies.append(_Copy(**base, envelope_to=others, key="others"))
    return copies


# --- Each copy exactly once -----------------------------------------------------------------


class ClaimLost(Exception):
    """Another attempt owns the row now (this one's lease ran out): stop before the
    server can accept anything more from this one."""


def copy_key(copy: EmailMessage) -> str:
    """A copy's name in ``OutboundMessage.copies``: the person's address, or "list" or
    "others" (whose recipients may shrink between tries, when someone leaves)."""
    return getattr(copy, "key", None) or ",".join(sorted(a.lower() for a in copy.recipients()))


def lease_end() -> dt.datetime:
    return timezone.now() + dt.timedelta(seconds=settings.MAIL_SENDING_LEASE)


def mark_copy(message_pk: int, claim: str, key: str, phase: str) -> None:
    """Record, committed, where a copy is before the next SMTP step, renewing the
    lease. Only the attempt holding the claim may move a copy towards the server
    (``ClaimLost`` otherwise); a server's acceptance is recorded whoever holds it."""
    Copy = OutboundMessage.Copy
    with transaction.atomic():
        row = (OutboundMessage.objects.select_for_update()
               .only("pk", "copies", "claim", "state", "lease_until").get(pk=message_pk))
        ours = row.claim == claim and row.state == OutboundMessage.Delivery.SENDING
        if not ours and phase not in (Copy.SENT, Copy.UNCERTAIN):
            raise ClaimLost(f"Outbound message {message_pk} was taken over by another attempt.")
        row.copies = {**row.copies, key: {"state": phase, "at": timezone.now().isoformat()}}
        fields = ["copies"]
        if ours:
            row.lease_until = lease_end()
            fields.append("lease_until")
        row.save(update_fields=fields)


def _data_in_two_steps(smtp: smtplib.SMTP, msg: bytes | str, *,
                       before_end: Callable[[], None]) -> tuple[int, bytes]:
    """``smtplib.SMTP.data`` with ``before_end()`` called after the message and before
    the "." line that makes the server take it: what ``before_end`` records is true
    whether or not the process survives the next instant."""
    smtp.putcmd("data")
    code, reply = smtp.getreply()
    if code != 354:
        raise smtplib.SMTPDataError(code, reply)
    if isinstance(msg, str):
        msg = smtplib._fix_eols(msg).encode("ascii")  # type: ignore[attr-defined]
    quoted = smtplib._quote_periods(msg)  # type: ignore[attr-defined]
    if not quoted.endswith(b"\r\n"):
        quoted += b"\r\n"
    smtp.send(quoted)
    before_end()
    smtp.send(b".\r\n")
    return smtp.getreply()


def send_copies(row: OutboundMessage, claim: str) -> Exception | None:
    """Send the row's copies not yet sent nor uncertain, each step recorded first
    (``mark_copy``). Returns the error that stopped it (the copies after it wait for
    the next attempt), or None. With Django's SMTP backend the moment of acceptance is
    known (the "."); with any other backend it is not, so a copy is ``data`` for the
    whole call and a death during it leaves the copy uncertain, never sent twice."""
    Copy = OutboundMessage.Copy
    connection = get_connection()
    smtp_backend = connection if isinstance(connection, SMTPBackend) else None
    smtp = smtp_backend is not None
    done = {key for key, value in row.copies.items()
            if value.get("state") in (Copy.SENT, Copy.UNCERTAIN)}
    try:
        for copy in as_emails(row):
            key = copy_key(copy)
            if key in done:
                continue
            phase = {"now": Copy.SENDING if smtp else Copy.DATA}
            mark_copy(row.pk, claim, key, phase["now"])
            if smtp_backend is not None:
                smtp_backend.open()  # kept open for the next copy (send_messages leaves it)

                def before_end(key: str = key, phase: dict = phase) -> None:
                    mark_copy(row.pk, claim, key, Copy.DATA)
                    phase["now"] = Copy.DATA

                session = smtp_backend.connection
                assert session is not None  # open() made it
                session.data = partial(  # type: ignore[method-assign]
                    _data_in_two_steps, session, before_end=before_end)
            try:
                if not connection.send_messages([copy]):
                    raise smtplib.SMTPException("The mail backend sent nothing.")
            except Exception as exc:
                if smtp and phase["now"] == Copy.DATA and not isinstance(
                        exc, smtplib.SMTPResponseException):
                    # The end went out and no answer came back: it may be delivered.
                    mark_copy(row.pk, claim, key, Copy.UNCERTAIN)
                elif phase["now"] == Copy.DATA:
                    # The server answered "no", or a backend raised: not taken.
                    mark_copy(row.pk, claim, key, Copy.SENDING)
                return exc
            mark_copy(row.pk, claim, key, Copy.SENT)
    except ClaimLost as exc:
        return exc
    except Exception as exc:  # connecting, a refused address, the database: all recorded
        return exc
    finally:
        if smtp:
            with contextlib.suppress(Exception):  # QUIT to a server gone away
                connection.close()
    return None
