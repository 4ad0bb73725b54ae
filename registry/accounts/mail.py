"""allauth's mail through an outbox: the request that causes a message (a sign-up's
address confirmation, a password reset) writes one ``AccountMail`` row and asks the
worker to send it once the transaction commits; it never talks to the SMTP relay, so
a stalled relay never holds a web worker for its timeout.

The worker's task (``tasks.send_account_mail_task``) claims the row (committed, before
any SMTP), sends it, and erases its text (a one-time link) once it is sent. A row the
broker never took is queued again by ``review.tasks.requeue_undelivered_mail_task``
(every minute, and when a worker starts); a failure is retried with backoff, then
given up. A row whose worker died while sending it is never sent again: it may have
gone, and a person who did not get it asks again (a new link)."""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from registry.accounts.models import AccountMail

logger = logging.getLogger(__name__)

ERASED = ""  # what is left of a message's text once it is sent or given up
MAX_ATTEMPTS = 6


def backoff(attempts: int) -> dt.timedelta:
    """How long a message waits after its ``attempts``-th failed try: 30 s, doubling,
    at most an hour (the review's outbox waits the same)."""
    return dt.timedelta(seconds=min(30 * 2 ** max(attempts - 1, 0), 3600))


def account_mail_queue(message: EmailMessage, *, template: str) -> AccountMail:
    """Store allauth's rendered ``message`` and have the worker send it after commit."""
    html = ""
    if isinstance(message, EmailMultiAlternatives):
        html = next((str(content) for content, mimetype in message.alternatives
                     if mimetype == "text/html"), "")
    domain = settings.MAIL_DOMAIN
    with transaction.atomic():
        row = AccountMail.objects.create(
            template=template[:100], message_id=f"<account.{secrets.token_hex(12)}@{domain}>",
            from_email=message.from_email or settings.DEFAULT_FROM_EMAIL,
            to=", ".join(message.to)[:320], subject=str(message.subject)[:400],
            body=str(message.body), html=html)
        after_commit(partial(account_mail_enqueue, row.pk))
    return row


def after_commit(callback: Callable[[], object]) -> None:
    """Run ``callback`` once the transaction commits (at once outside of one, as in a
    request: allauth's views do not hold one open)."""
    transaction.on_commit(callback, robust=True)


def account_mail_enqueue(mail_pk: int) -> bool:
    """Hand the row to the worker; never raises (the requeue retries it)."""
    from registry.accounts.tasks import send_account_mail_task

    try:
        send_account_mail_task.delay(mail_pk)
    except Exception:  # the broker is away: the row waits in the database
        logger.warning("Could not queue account mail %s; the requeue will.", mail_pk,
                       exc_info=True)
        return False
    AccountMail.objects.filter(pk=mail_pk, queued_at__isnull=True).update(
        queued_at=timezone.now())
    return True


def account_mail_requeue(*, now: dt.datetime, grace: dt.timedelta) -> int:
    """Queue again the rows the broker never took, or whose task was lost; give up
    (erased, failed) those whose worker died while sending them."""
    AccountMail.objects.filter(state=AccountMail.Delivery.SENDING, lease_until__lte=now).update(
        state=AccountMail.Delivery.FAILED, body=ERASED, html=ERASED,
        last_error="Its worker stopped while sending it: perhaps sent, never sent twice.")
    overdue = AccountMail.objects.filter(state=AccountMail.Delivery.PENDING).filter(
        Q(queued_at__isnull=True, next_attempt_at__lte=now)
        | Q(next_attempt_at__lte=now - grace)).order_by("created_at", "id")
    return sum(account_mail_enqueue(pk) for pk in overdue.values_list("pk", flat=True)[:500])


@dataclass(frozen=True)
class AccountDelivery:
    state: str
    retry_in: float | None = None


def account_mail_deliver(*, mail_pk: int) -> AccountDelivery:
    """Send one row: claimed (committed) before the SMTP conversation, erased after."""
    now = timezone.now()
    with transaction.atomic():
        row = (AccountMail.objects.select_for_update(skip_locked=True)
               .filter(pk=mail_pk).first())
        if row is None:
            return AccountDelivery("busy")
        if row.state != AccountMail.Delivery.PENDING:
            return AccountDelivery(row.state)
        if row.next_attempt_at > now + dt.timedelta(seconds=5):
            return AccountDelivery("not_due")
        row.state = AccountMail.Delivery.SENDING
        row.attempts += 1
        row.lease_until = now + dt.timedelta(seconds=settings.MAIL_SENDING_LEASE)
        row.save(update_fields=["state", "attempts", "lease_until"])
    message = EmailMultiAlternatives(
        subject=row.subject, body=row.body, from_email=row.from_email,
        to=[a.strip() for a in row.to.split(",") if a.strip()],
        headers={"Message-ID": row.message_id, "Auto-Submitted": "auto-generated"},
        connection=get_connection())
    if row.html:
        message.attach_alternative(row.html, "text/html")
    try:
        message.send()
    except Exception as exc:  # SMTP, network: not sent (the server refused or never took it)
        row.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        if row.attempts >= MAX_ATTEMPTS:
            row.state, row.body, row.html = AccountMail.Delivery.FAILED, ERASED, ERASED
            row.save(update_fields=["state", "body", "html", "last_error"])
            return AccountDelivery(row.state)
        delay = backoff(row.attempts)
        row.state = AccountMail.Delivery.PENDING
        row.next_attempt_at = timezone.now() + delay
        row.save(update_fields=["state", "last_error", "next_attempt_at"])
        return AccountDelivery(row.state, retry_in=delay.total_seconds())
    row.state, row.body, row.html = AccountMail.Delivery.SENT, ERASED, ERASED
    row.sent_at = timezone.now()
    row.last_error = ""
    row.save(update_fields=["state", "body", "html", "sent_at", "last_error"])
    return AccountDelivery(row.state)
