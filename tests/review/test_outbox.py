"""The outbox: mail is a row written with the action, sent by the worker, retried,
resent by staff; every message of a request threads under its first; and a
broker outage costs no request a 500 and loses no mail."""

import datetime as dt
import email
from email import policy

import pytest
from django.core import mail
from django.core.mail import EmailMessage
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from lxml import html as lxml_html

from registry.celery import app
from registry.review import actions
from registry.review.models import OutboundMessage, RegistrationRequest, RequestEvent, State
from registry.review.outbox import queue_message
from registry.review.tasks import requeue_undelivered_mail_task
from tests.factories import approve, make_registration, make_user
from tests.review.test_request_form import form_data


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def wire(message) -> email.message.EmailMessage:
    """The message as it went on the wire, parsed back."""
    return email.message_from_bytes(message.message().as_bytes(), policy=policy.default)


def test_every_message_of_a_request_threads_under_its_first(
        registrant, other_registrant, expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="threaded")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
        actions.registration_comment(registration=registration, actor=other_registrant,
                                     audience="public",
                                     body="Why this NID?")
        registration = actions.registration_transition(registration=registration,
                                                       transition="request_changes",
                                                       actor=expert, comment="Explain the NSS.")
        actions.registration_comment(registration=registration, actor=registrant, audience="public",
                                     body="Because the archive is called that.")
        registration = actions.registration_transition(registration=registration,
                                                       transition="resubmit",
                                                       actor=registrant)
        registration = approve(registration, expert, staff, register=True)
    sent = [wire(m) for m in mail.outbox]
    # Submission, acknowledgement, two comments, changes requested, resubmission and its
    # acknowledgement, approval (registrant, staff), registration (registrant, list).
    assert len(sent) == 11
    first, rest = sent[0], sent[1:]
    root_id = first["Message-ID"]
    assert first["Subject"] == f"[URN #{registration.pk}] Registration request for URN NID threaded"
    assert first["In-Reply-To"] is None and first["References"] is None
    for message in rest:
        assert message["In-Reply-To"] == root_id
        assert message["References"] == root_id
        assert message["Subject"] == f"Re: {first['Subject']}"
    ids = [m["Message-ID"] for m in sent]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith(f"<urn-{registration.pk}.") and i.endswith("@iana.example>")
               for i in ids)
    assert all(m["Auto-Submitted"] == "auto-generated" for m in sent)
    rows = OutboundMessage.objects.about(registration)
    assert [r.message_id for r in rows] == ids
    assert {r.state for r in rows} == {OutboundMessage.Delivery.SENT}


def test_a_second_request_starts_its_own_thread(registrant, expert,
                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        one = make_registration(registrant, nid="threadone")
        two = make_registration(registrant, nid="threadtwo")
    # Each submission: the list posting, then the registrant's acknowledgement.
    first, _, second, _ = (wire(m) for m in mail.outbox)
    assert first["Subject"].startswith(f"[URN #{one.pk}]")
    assert second["Subject"].startswith(f"[URN #{two.pk}]")
    assert second["In-Reply-To"] is None


def test_list_posting_is_wrapped_and_quotes_the_template_verbatim(
        registrant, expert, django_capture_on_commit_callbacks):
    long_purpose = ("Names the records of a national archive " * 6).strip()
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="wrapped", purpose=long_purpose)
    body = mail.outbox[0].body
    assert f"Purpose:\n   {long_purpose}\n" in body  # the template, not wrapped
    template_start = body.index("Namespace Identifier:")
    prose = body[:template_start].split("\n")
    assert all(len(line) <= 72 for line in prose)
    assert len(max(prose, key=len)) > 60  # wrapped, not cut short
    assert body.rstrip().endswith(f"-- \nhttp://127.0.0.1:8000/requests/{registration.pk}/")


def test_a_failed_send_is_recorded_retried_and_given_up_for_staff(
        registrant, expert, staff, settings, client, django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "tests.review.failing_backend.EmailBackend"
    settings.MAIL_MAX_ATTEMPTS = 3
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="downsmtp")
    row = OutboundMessage.objects.get(registration=registration, audience="review_list")
    assert row.state == "pending" and row.attempts == 1
    assert row.last_error == "SMTPServerDisconnected: the test SMTP server is down"
    assert row.next_attempt_at > timezone.now()
    for _ in range(2):  # the worker's retries, when due
        OutboundMessage.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now())
        actions.message_deliver(message_pk=row.pk)
    row.refresh_from_db()
    assert row.state == "failed" and row.attempts == 3
    failed = RequestEvent.objects.get(registration=registration, kind="mail_failed")
    assert "could not be sent after 3 attempts" in failed.comment
    # Staff see it on the request page, and send it again once the server is back.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client.force_login(staff)
    page = lxml_html.fromstring(client.get(registration.get_absolute_url()).content)
    (cell,) = page.xpath('//table[@id="mail-log"]//tr[contains(@class, "mail-failed")]')
    assert "SMTPServerDisconnected" in cell.text_content()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("review:resend-mail", args=[registration.pk, row.pk]))
    assert response.status_code == 302
    row.refresh_from_db()
    assert row.state == "sent"
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == [row.message_id]
    assert RequestEvent.objects.filter(registration=registration, kind="resend_mail",
                                       actor=staff).count() == 1


def test_only_staff_resend_and_only_what_failed(registrant, expert, staff,
                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="resendrule")
    row = OutboundMessage.objects.get(registration=registration, audience="review_list")
    with pytest.raises(actions.TransitionRefused, match="was sent"):
        actions.message_resend(message=row, actor=staff)
    OutboundMessage.objects.filter(pk=row.pk).update(state="failed")
    with pytest.raises(actions.NotAllowed, match="Only IANA staff"):
        actions.message_resend(message=row, actor=expert)
    assert not RequestEvent.objects.filter(kind="resend_mail").exists()


def test_mail_log_is_for_experts_and_staff_and_its_events_too(
        client, registrant, other_registrant, expert, settings,
        django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "tests.review.failing_backend.EmailBackend"
    settings.MAIL_MAX_ATTEMPTS = 1
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="mailseen")
    for user, sees in ((None, False), (other_registrant, False), (registrant, False),
                       (expert, True)):
        if user is None:
            client.logout()
        else:
            client.force_login(user)
        page = lxml_html.fromstring(client.get(registration.get_absolute_url()).content)
        assert bool(page.xpath('//table[@id="mail-log"]')) is sees
        timeline = page.get_element_by_id("timeline").text_content()
        assert ("Mail could not be sent" in timeline) is sees


def test_a_broker_outage_answers_302_and_loses_no_mail(
        client, registrant, expert, django_capture_on_commit_callbacks, caplog):
    """Issue 11: with the broker unreachable, the submission commits and redirects;
    the row waits, and once the broker is back the requeue sends it once."""
    client.force_login(registrant)
    draft = make_registration(registrant, nid="brokerdown", submit=False)
    with broker_down(), django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("review:edit", args=[draft.pk]),
                               form_data(submit="1", proposed_nid="brokerdown",
                                         edit_version=draft.edit_version))
    assert response.status_code == 302
    assert response["Location"] == draft.get_absolute_url()
    draft.refresh_from_db()
    assert draft.state == State.IN_REVIEW
    row = OutboundMessage.objects.get(registration=draft, audience="review_list")
    assert (row.state, row.attempts) == ("pending", 0)
    assert mail.outbox == []
    assert "Could not queue outbound message" in caplog.text
    # The broker is back (eager again here): the next requeue (every minute, and when a
    # worker starts) takes at once every row the broker never took, oldest first.
    waiting = list(OutboundMessage.objects.about(draft).values_list("message_id", flat=True))
    assert OutboundMessage.objects.filter(registration=draft, queued_at__isnull=True).count() == \
        len(waiting) == 2
    assert requeue_undelivered_mail_task() == len(waiting)
    assert requeue_undelivered_mail_task() == 0
    row.refresh_from_db()
    assert row.state == "sent"
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == waiting  # in order


def test_every_action_that_mails_survives_the_broker_being_down(
        registrant, other_registrant, expert, staff, django_capture_on_commit_callbacks):
    with broker_down(), django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="allsurvive")
        actions.registration_comment(registration=registration, actor=other_registrant,
                                     audience="public",
                                     body="A question.")
        registration = approve(registration, expert, staff, register=True)
    assert registration.state == State.REGISTERED
    # Submission (list, acknowledgement), the comment, approval (registrant, staff),
    # registration (registrant, list).
    assert OutboundMessage.objects.filter(registration=registration, state="pending").count() == 7
    assert mail.outbox == []


class broker_down:
    """Point Celery at a port where no broker answers, with tasks really sent."""

    def __enter__(self):
        from tests.review.test_celery_worker import reset_pool

        self.saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager")}
        app.conf.update(broker_url="redis://127.0.0.1:1/0", task_always_eager=False)
        reset_pool()
        return self

    def __exit__(self, *exc):
        from tests.review.test_celery_worker import reset_pool

        app.conf.update(self.saved)
        reset_pool()
        return False


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_row_being_sent_is_not_sent_twice(registrant, expert, settings):
    """Two workers on one row (a retry and the requeue): the second skips it."""
    import threading

    from django.db import connection, transaction

    with broker_down():  # the row stays pending, its task unsent
        registration = make_registration(registrant, nid="oncealone")
    row = OutboundMessage.objects.get(registration=registration, audience="review_list")
    results = []
    with transaction.atomic():
        OutboundMessage.objects.select_for_update().get(pk=row.pk)  # a worker holds it

        def second_worker():
            results.append(actions.message_deliver(message_pk=row.pk).state)
            connection.close()

        thread = threading.Thread(target=second_worker)
        thread.start()
        thread.join()
    assert results == ["busy"]
    assert mail.outbox == []


def test_a_row_abandoned_mid_send_is_reconciled_and_its_perhaps_sent_copy_left_to_staff(
        registrant, staff, settings, client, django_capture_on_commit_callbacks):
    """A worker died while sending (its lease ran out): the copy whose end had gone to
    the server ("data") is never sent again by the worker; the copy not yet handed over
    ("sending") is; staff see "Perhaps sent" and their "Send again" sends that copy."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    people = [make_user(f"copy{i}@example.org") for i in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="abandoned")
    with transaction.atomic():
        locked = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
        row = queue_message(EmailMessage(subject="Three copies", body="Hi.\n",
                                         to=[p.email for p in people]),
                            registration=locked, audience="people")
    mail.outbox.clear()
    OutboundMessage.objects.filter(pk=row.pk).update(
        state="sending", claim="deadworker", attempts=1,
        lease_until=timezone.now() - dt.timedelta(seconds=1),
        copies={"copy0@example.org": {"state": "sent"}, "copy1@example.org": {"state": "data"},
                "copy2@example.org": {"state": "sending"}})
    # Not yet abandoned while its lease runs: nobody touches it.
    OutboundMessage.objects.filter(pk=row.pk).update(
        lease_until=timezone.now() + dt.timedelta(minutes=1))
    assert actions.message_deliver(message_pk=row.pk).state == "busy"
    assert row.pk not in OutboundMessage.objects.overdue(now=timezone.now(), grace=dt.timedelta())
    OutboundMessage.objects.filter(pk=row.pk).update(
        lease_until=timezone.now() - dt.timedelta(seconds=1))
    assert OutboundMessage.objects.overdue(now=timezone.now(), grace=dt.timedelta(minutes=2)) \
        .filter(pk=row.pk).exists()
    with django_capture_on_commit_callbacks(execute=True):
        requeue_undelivered_mail_task()
    assert [m.to for m in mail.outbox] == [[p.email for p in people]]
    assert [m.recipients() for m in mail.outbox] == [["copy2@example.org"]]
    assert {m.extra_headers["Message-ID"] for m in mail.outbox} == {row.message_id}
    row.refresh_from_db()
    assert row.state == "uncertain" and row.claim == "" and row.lease_until is None
    assert {k: v["state"] for k, v in row.copies.items()} == {
        "copy0@example.org": "sent", "copy1@example.org": "uncertain",
        "copy2@example.org": "sent"}
    assert "copy1@example.org" in RequestEvent.objects.get(
        registration=registration, kind="mail_failed").comment
    client.force_login(staff)
    page = lxml_html.fromstring(client.get(registration.get_absolute_url()).content)
    (cell,) = page.xpath('//table[@id="mail-log"]//tr[contains(@class, "mail-uncertain")]')
    assert "Perhaps sent" in cell.text_content()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("review:resend-mail", args=[registration.pk, row.pk]))
    assert response.status_code == 302
    assert [m.recipients() for m in mail.outbox] == [["copy1@example.org"]]
    row.refresh_from_db()
    assert row.state == "sent"


def test_a_row_being_sent_is_not_sent_again_by_staff(registrant, staff,
                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="beingsent")
    row = OutboundMessage.objects.get(registration=registration, audience="review_list")
    OutboundMessage.objects.filter(pk=row.pk).update(state="sending", attempts=1)
    row.refresh_from_db()
    with pytest.raises(actions.TransitionRefused, match="being sent"):
        actions.message_resend(message=row, actor=staff)


def test_making_a_messages_copies_asks_the_database_the_same_for_any_number_of_people(
        registrant, expert, second_expert, django_capture_on_commit_callbacks):
    """Each copy asks whether its person is still addressed (their roles): read for
    all recipients at once, not once a person."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from registry.accounts.roles import EXPERT_GROUP
    from registry.review.outbox import as_emails

    registration = make_registration(registrant, nid="manycopies")

    def copies_and_queries(body: str) -> tuple[int, int]:
        with django_capture_on_commit_callbacks(execute=False):
            actions.registration_comment(registration=registration, actor=expert,
                                         audience="experts", body=body)
        row = OutboundMessage.objects.filter(audience="experts").latest("id")
        row = OutboundMessage.objects.select_related("registration").get(pk=row.pk)
        with CaptureQueriesContext(connection) as queries:
            copies = as_emails(row)
        return len(copies), len(queries)

    few, few_queries = copies_and_queries("Two of us.")
    for n in range(4):
        make_user(f"panel{n}@example.org", roles=[EXPERT_GROUP])
    many, many_queries = copies_and_queries("Six of us.")
    assert many == few + 4
    assert many_queries == few_queries
