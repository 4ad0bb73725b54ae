"""The outbox: every message about a request is a row, written inside the
transaction of the action that causes it, and sent by the worker afterwards.

``queue_message`` is called by the actions (never on its own): it gives the
message its ticket, its Message-ID and the threading headers that chain it to
the request's first message, stores it, and asks for it to be sent once the
transaction commits. Asking can fail (the broker is down): that is logged and
the request goes on; ``tasks.requeue_undelivered_mail_task`` finds the row later.
"""

from __future__ import annotations

import logging
import secrets
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction

from registry.review.models import (
    Comment,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
)

logger = logging.getLogger(__name__)


def ticket(request: RegistrationRequest) -> str:
    """The ticket every subject carries, as IANA's tracker does: ``[URN #42]``."""
    return f"[URN #{request.pk}]"


def thread_title(request: RegistrationRequest) -> str:
    """What the thread of a request is called (fixed by its first message)."""
    if request.revises is not None:
        return f"Revision of URN NID {request.revises.nid}"
    kind = "Fast-track registration" if request.fast_track else "Registration"
    if request.kind == "informal":
        organisation = request.registrant_organisation.strip()
        return (f"{kind} request for an informal URN namespace"
                + (f" ({organisation})" if organisation else ""))
    return f"{kind} request for URN NID {request.proposed_nid or '(no NID yet)'}"


def new_message_id(request: RegistrationRequest) -> str:
    return f"<urn-{request.pk}.{secrets.token_hex(8)}@{settings.MAIL_DOMAIN}>"


def is_our_message_id(message_id: str) -> bool:
    return message_id.lower().endswith(f"@{settings.MAIL_DOMAIN.lower()}>") and \
        message_id.lower().startswith("<urn-")


def queue_message(message: EmailMessage | None, *, request: RegistrationRequest,
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
    root = OutboundMessage.objects.about(request).first()
    message_id = new_message_id(request)
    headers = {
        "Message-ID": message_id,
        "Auto-Submitted": "auto-generated",  # RFC 3834: vacation responders stay quiet
        "X-Auto-Response-Suppress": "All",
        "X-URN-Request": str(request.pk),
    }
    if root is None:
        subject = f"{ticket(request)} {thread_title(request)}"
    else:
        base = root.subject.removeprefix("Re: ")
        subject = f"Re: {base}"
        headers["In-Reply-To"] = root.message_id
        headers["References"] = root.message_id
    row = OutboundMessage.objects.create(
        request=request, event=event, comment=comment, audience=audience,
        summary=message.subject[:300], message_id=message_id,
        from_email=message.from_email or settings.DEFAULT_FROM_EMAIL,
        to=list(message.to), cc=list(message.cc), reply_to=list(message.reply_to),
        subject=subject[:400], body=str(message.body), headers=headers,
    )
    transaction.on_commit(partial(enqueue, row.pk), robust=True)
    return row


def enqueue(message_pk: int) -> bool:
    """Hand the row to the worker. Never raises: with the broker unreachable the
    row stays pending and the periodic requeue sends it when the broker is back."""
    from registry.review.tasks import send_message_task

    try:
        send_message_task.delay(message_pk)
    except Exception:  # any broker or network failure: the row is safe in the database
        logger.warning("Could not queue outbound message %s; it stays pending and will be "
                       "queued again by requeue_undelivered_mail_task.", message_pk,
                       exc_info=True)
        return False
    return True


def as_email(row: OutboundMessage) -> EmailMessage:
    """The row as a message ready to send: the same Message-ID every time."""
    return EmailMessage(subject=row.subject, body=row.body, from_email=row.from_email,
                        to=row.to, cc=row.cc, reply_to=row.reply_to,
                        headers=dict(row.headers))
