"""allauth's mail goes through the outbox (issue 31 item 8): the request only writes a
row and queues its task; the worker sends it. A stalled SMTP relay never holds the
request, a failing one loses nothing, and the one-time link is erased once sent."""

from __future__ import annotations

import smtplib
import time

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend as LocmemBackend

from registry.accounts.mail import account_mail_deliver
from registry.accounts.models import AccountMail
from registry.accounts.tasks import send_account_mail_task
from registry.review.tasks import requeue_undelivered_mail_task
from tests.factories import PASSWORD

STALL = 3.0


class StallingBackend(LocmemBackend):
    """A relay that takes its time before it takes a message."""

    def send_messages(self, messages):
        time.sleep(STALL)
        return super().send_messages(messages)


class FailingBackend(LocmemBackend):
    def send_messages(self, messages):
        raise smtplib.SMTPServerDisconnected("the relay is down")


@pytest.fixture
def queued(monkeypatch):
    """The broker: tasks are recorded, as a worker elsewhere would receive them."""
    tasks: list[int] = []
    monkeypatch.setattr(send_account_mail_task, "delay", tasks.append)
    return tasks


@pytest.mark.parametrize("flow", ["password reset", "sign-up"])
def test_a_stalled_relay_never_holds_the_request_and_the_worker_sends_the_mail(
        client, registrant, settings, queued, flow):
    settings.EMAIL_BACKEND = "tests.accounts.test_account_mail.StallingBackend"
    started = time.monotonic()
    if flow == "password reset":
        response = client.post("/accounts/password/reset/", {"email": registrant.email})
        to, link = registrant.email, "/accounts/password/reset/key/"
    else:
        response = client.post("/accounts/signup/", {
            "email": "nora@example.org", "password1": PASSWORD, "password2": PASSWORD,
            "first_name": "Nora", "last_name": "New", "organisation": ""})
        to, link = "nora@example.org", "/accounts/confirm-email/"
    elapsed = time.monotonic() - started
    assert response.status_code == 302
    assert elapsed < STALL / 2, f"the request took {elapsed:.1f} s"
    assert mail.outbox == []
    (row,) = AccountMail.objects.all()
    assert queued == [row.pk] and row.state == "pending" and row.queued_at is not None
    assert row.to == to and link in row.body
    # The worker sends it, with its Message-ID, and erases the one-time link.
    assert send_account_mail_task(row.pk) == "sent"
    (sent,) = mail.outbox
    assert sent.to == [to] and link in sent.body
    assert sent.extra_headers["Message-ID"] == row.message_id
    row.refresh_from_db()
    assert row.state == "sent" and row.body == "" and row.html == ""
    assert send_account_mail_task(row.pk) == "sent" and len(mail.outbox) == 1  # never twice


def test_a_failing_relay_loses_no_account_mail(client, registrant, settings, queued):
    settings.EMAIL_BACKEND = "tests.accounts.test_account_mail.FailingBackend"
    response = client.post("/accounts/password/reset/", {"email": registrant.email})
    assert response.status_code == 302
    (row,) = AccountMail.objects.all()
    delivery = account_mail_deliver(mail_pk=row.pk)
    assert delivery.state == "pending" and delivery.retry_in == 30
    row.refresh_from_db()
    assert "SMTPServerDisconnected" in row.last_error and row.body
    # The relay is back; the retry is due (the requeue queues it after its grace).
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    AccountMail.objects.filter(pk=row.pk).update(queued_at=None, next_attempt_at=row.created_at)
    queued.clear()
    requeue_undelivered_mail_task()
    assert queued == [row.pk]
    assert account_mail_deliver(mail_pk=row.pk).state == "sent"
    assert [m.to for m in mail.outbox] == [[registrant.email]]


@pytest.mark.django_db
def test_mail_whose_worker_died_while_sending_is_given_up_never_sent_twice(
        django_assert_max_num_queries, queued):
    """A row still "sending" past its lease: its worker died, perhaps after the relay
    took it. The requeue gives every such row up at once (erased: its link is a secret,
    and the person asks again); none is sent again."""
    import datetime as dt

    from django.utils import timezone

    now = timezone.now()
    rows = [AccountMail.objects.create(
        template="account/email/password_reset_key", message_id=f"<dead.{n}@example.org>",
        from_email="registry@example.org", to=f"person{n}@example.org", subject="Reset",
        body="https://registry.example/reset/secret/", state=AccountMail.Delivery.SENDING,
        attempts=1, lease_until=now - dt.timedelta(seconds=1)) for n in range(5)]
    alive = AccountMail.objects.create(
        template="account/email/password_reset_key", message_id="<alive@example.org>",
        from_email="registry@example.org", to="alive@example.org", subject="Reset",
        body="https://registry.example/reset/other/", state=AccountMail.Delivery.SENDING,
        attempts=1, lease_until=now + dt.timedelta(minutes=1))
    with django_assert_max_num_queries(4):  # the same few queries for any number of rows
        requeue_undelivered_mail_task()
    for row in rows:
        row.refresh_from_db()
        assert (row.state, row.body) == (AccountMail.Delivery.FAILED, "")
        assert "never sent twice" in row.last_error
    alive.refresh_from_db()
    assert alive.state == AccountMail.Delivery.SENDING and alive.body  # its worker is alive
    assert queued == [] and mail.outbox == []
