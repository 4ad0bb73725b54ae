"""Celery tasks of the accounts app: thin wrappers taking ids."""

from __future__ import annotations

from celery import shared_task


@shared_task(bind=True, acks_late=True)
def send_account_mail_task(self, mail_pk: int) -> str:
    from registry.accounts.mail import account_mail_deliver

    delivery = account_mail_deliver(mail_pk=mail_pk)
    if delivery.retry_in is not None:
        raise self.retry(countdown=delivery.retry_in, max_retries=None)
    return delivery.state


@shared_task
def clear_expired_sessions_task() -> None:
    """Delete the sessions past their expiry, as Django's ``clearsessions`` (daily)."""
    from registry.accounts.sessions import SessionStore

    SessionStore.clear_expired()
