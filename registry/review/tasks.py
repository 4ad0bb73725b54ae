"""Celery tasks: thin wrappers that take ids and call the actions.

Mail is an outbox: each message is a row written in the transaction of the action
that caused it (``outbox.queue_message``). ``send_message_task`` sends one row and
retries it with backoff; ``requeue_undelivered_mail_task`` (celery beat, every
minute, and when a worker starts) queues again every row the broker never took
(at once) or whose task was lost (after ``REQUEUE_GRACE``). A
failure never touches the decision that caused the message."""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.utils import timezone

# A row is overdue (its task presumably lost) this long after its attempt was due.
REQUEUE_GRACE = dt.timedelta(minutes=2)


@shared_task(bind=True, acks_late=True)
def send_message_task(self, message_pk: int) -> str:
    from registry.review.actions import message_deliver

    delivery = message_deliver(message_pk=message_pk)
    if delivery.retry_in is not None:
        raise self.retry(countdown=delivery.retry_in, max_retries=None)
    return delivery.state


@shared_task
def requeue_undelivered_mail_task() -> int:
    """Periodic (celery beat): queue again the outbox rows still waiting past their
    time, and the rows whose sender died mid-conversation (their lease ran out: the
    next attempt reconciles their copies, outbox.py). Sending is idempotent (a row is
    claimed before any SMTP, each copy's step recorded), so a row queued twice is sent
    once."""
    from registry.accounts.mail import account_mail_requeue
    from registry.review.models import OutboundMessage
    from registry.review.outbox import enqueue

    now = timezone.now()
    overdue = OutboundMessage.objects.overdue(now=now, grace=REQUEUE_GRACE)
    # Oldest first; the worker also sends a request's earlier mail before later mail.
    queued = sum(enqueue(pk) for pk in overdue.values_list("pk", flat=True)[:500])
    # allauth's mail (address confirmations, password resets) has its own outbox.
    return queued + account_mail_requeue(now=now, grace=REQUEUE_GRACE)


@shared_task
def poll_imap_mailbox_task() -> int:
    """Periodic (celery beat, when MAIL_IMAP_HOST is set): take in the unread mail of
    the IMAP mailbox, for sites that cannot pipe mail to ``receive_mail``."""
    from registry.review.imap import poll_mailbox

    return poll_mailbox()


@shared_task
def remind_idle_requests_task(idle_days: int | None = None) -> int:
    """Periodic (celery beat): bring up the requests idle past the configured time
    (``idle_days`` overrides it), once per idle period, escalating each time
    (registration_remind records each step). Returns how many steps were taken."""
    from registry.review.actions import registration_remind
    from registry.review.models import RegistrationRequest

    idle = dt.timedelta(days=settings.REVIEW_IDLE_REMINDER_DAYS if idle_days is None
                        else idle_days)
    candidates = RegistrationRequest.objects.needing_reminder(now=timezone.now(), idle=idle)
    return sum(registration_remind(registration=registration,
                                   idle=idle) for registration in candidates)


@worker_ready.connect
def _send_what_waited(**kwargs) -> None:
    """A worker starting (after an outage, a deploy) queues at once the mail that
    waited, instead of at the next beat."""
    requeue_undelivered_mail_task.delay()
