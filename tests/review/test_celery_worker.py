"""With a real Celery worker and the Redis broker, a submission's mails go out
exactly once each (CI runs this against the machine's Redis)."""

import contextlib
import os
import time

import pytest
from django.core import mail

from registry.celery import app
from registry.review import actions
from registry.review.models import OutboundMessage
from registry.review.tasks import requeue_undelivered_mail_task
from tests.factories import make_registration
from tests.review.helpers import sent_summaries

REDIS = os.environ.get("TEST_REDIS_URL", "")

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not REDIS, reason="needs Redis: set TEST_REDIS_URL (python3 dev.py test "
                                         "does when Redis answers on 127.0.0.1:6379)"),
]


@contextlib.contextmanager
def worker_on_redis():
    from celery.contrib.testing.worker import start_worker

    # The broker as given, with a queue of this run's own: nothing is flushed, and a
    # second run on the same Redis consumes only its own tasks.
    from tests.conftest import RUN_ID

    keys = ("broker_url", "task_always_eager", "task_default_queue")
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(broker_url=REDIS, task_always_eager=False,
                    task_default_queue=f"registry-test-{RUN_ID}")
    reset_pool()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING",
                          shutdown_timeout=10):
            yield
    finally:
        app.conf.update(saved)
        reset_pool()


@pytest.fixture
def worker():
    with worker_on_redis():
        yield


def reset_pool():
    """Producers connect again with the current broker_url, and queues and routes are
    built again from the current configuration (the AMQP object caches them)."""
    import kombu.pools

    kombu.pools.reset()
    app._pool = None
    app.__dict__.pop("amqp", None)


def wait_for(count, timeout=90.0):
    deadline = time.monotonic() + timeout
    while len(mail.outbox) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # long enough for a duplicate to show up, if there were one


def test_submission_and_decision_mails_go_out_once_each(worker, registrant, expert, staff):
    mail.outbox.clear()
    registration = make_registration(registrant, nid="workermail")
    wait_for(2)
    received = f"Received: your URN namespace request #{registration.pk} is in public review"
    assert sorted(sent_summaries(mail.outbox)) == sorted([
        "[urn] Registration request for URN NID workermail", received]), \
        list(OutboundMessage.objects.values_list("state", "attempts", "last_error"))
    actions.registration_transition(registration=registration, transition="approve", actor=expert,
                                    comment="Good.", early_reason="Worker test.")
    wait_for(4)
    assert sorted(sent_summaries(mail.outbox)) == sorted([
        "[urn] Registration request for URN NID workermail", received,
        f"Your URN namespace request #{registration.pk}: Ready for IANA to register",
        "[IANA] workermail: Ready for IANA to register",
    ])
    assert set(OutboundMessage.objects.values_list("state", flat=True)) == {"sent"}


def test_broker_down_during_a_submission_then_back(client, registrant, expert):
    """Issue 11's acceptance: the broker stopped during a submission answers 302 and
    keeps the mail; with the broker and a worker back, it arrives once."""
    from tests.review.test_outbox import broker_down
    from tests.review.test_request_form import form_data

    mail.outbox.clear()
    draft = make_registration(registrant, nid="brokerback", submit=False)
    client.force_login(registrant)
    with broker_down():
        response = client.post(f"/requests/{draft.pk}/edit/",
                               form_data(submit="1", proposed_nid="brokerback",
                                         edit_version=draft.edit_version))
    assert response.status_code == 302
    waiting = list(OutboundMessage.objects.about(draft))
    assert {r.state for r in waiting} == {"pending"} and mail.outbox == []
    # Never taken by the broker: the next requeue (every minute, and when a worker
    # starts) takes them at once, and the worker sends them in the order written.
    with worker_on_redis():
        assert requeue_undelivered_mail_task() == len(waiting)
        wait_for(len(waiting))
        assert requeue_undelivered_mail_task() in range(len(waiting) + 1)  # in the worker
        wait_for(len(waiting))
    for row in waiting:
        row.refresh_from_db()
        assert row.state == "sent", (row.attempts, row.last_error)
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == \
        [r.message_id for r in waiting]


@pytest.mark.django_db
def test_tasks_sent_from_any_thread_use_the_registry_app():
    import threading

    from registry.review.tasks import send_message_task

    seen = []
    thread = threading.Thread(target=lambda: seen.append(send_message_task.app.main))
    thread.start()
    thread.join()
    assert seen == ["registry"]
