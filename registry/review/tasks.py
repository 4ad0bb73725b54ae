"""Celery tasks: thin wrappers that take ids, reload, and call mails.py.

Sending is retried with backoff; a failure never touches the decision that
queued it (the action committed before the task was sent)."""

from __future__ import annotations

import datetime as dt
import smtplib

from celery import shared_task
from django.conf import settings
from django.utils import timezone

RETRY = {
    "autoretry_for": (smtplib.SMTPException, OSError),
    "retry_backoff": 30,
    "retry_backoff_max": 3600,
    "max_retries": 8,
}


@shared_task(**RETRY)
def send_event_mail_task(event_id: int, audience: str) -> None:
    from registry.review import mails
    from registry.review.models import RequestEvent

    event = RequestEvent.objects.select_related("request__registrant").get(pk=event_id)
    message = mails.event_message(event, audience)
    if message is not None:
        message.send()


@shared_task(**RETRY)
def send_comment_mail_task(comment_id: int, audience: str) -> None:
    from registry.review import mails
    from registry.review.models import Comment

    comment = Comment.objects.select_related("request__registrant", "author").get(pk=comment_id)
    message = mails.comment_message(comment, audience)
    if message is not None:
        message.send()


@shared_task(**RETRY)
def send_reminder_task(request_id: int) -> None:
    from registry.review import mails
    from registry.review.models import RegistrationRequest

    message = mails.reminder_message(RegistrationRequest.objects.get(pk=request_id))
    if message is not None:
        message.send()


@shared_task
def remind_idle_requests_task() -> int:
    """Periodic (celery beat): remind the experts of requests idle past the configured
    time, once per idle period (request_remind records each reminder)."""
    from registry.review.actions import request_remind
    from registry.review.models import RegistrationRequest

    idle = dt.timedelta(days=settings.REVIEW_IDLE_REMINDER_DAYS)
    candidates = RegistrationRequest.objects.needing_reminder(now=timezone.now(), idle=idle)
    return sum(request_remind(request=request, idle=idle) for request in candidates)
