"""With a real Celery worker and the Redis broker, a submission's mails go out
exactly once each (CI runs this against the machine's Redis)."""

import os
import time

import pytest
from django.core import mail

from registry.celery import app
from registry.review import actions
from tests.factories import make_request

REDIS = os.environ.get("TEST_REDIS_URL", "")

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not REDIS, reason="needs Redis: set TEST_REDIS_URL (python3 dev.py test "
                                         "does when Redis answers on 127.0.0.1:6379)"),
]


@pytest.fixture
def worker():
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


def reset_pool():
    """Producers connect again with the current broker_url."""
    import kombu.pools

    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def wait_for(count, timeout=30.0):
    deadline = time.monotonic() + timeout
    while len(mail.outbox) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # long enough for a duplicate to show up, if there were one


def test_submission_and_decision_mails_go_out_once_each(worker, registrant, expert, staff):
    mail.outbox.clear()
    request = make_request(registrant, nid="workermail")
    wait_for(2)
    received = f"Received: your URN namespace request #{request.pk} is in public review"
    assert sorted(m.subject for m in mail.outbox) == sorted([
        "[urn] Registration request for URN NID workermail", received])
    actions.request_transition(request=request, transition="approve", actor=expert,
                               comment="Good.", early_reason="Worker test.")
    wait_for(4)
    subjects = sorted(m.subject for m in mail.outbox)
    assert subjects == sorted([
        "[urn] Registration request for URN NID workermail", received,
        f"Your URN namespace request #{request.pk}: Ready for IANA to register",
        "[IANA] workermail: Ready for IANA to register",
    ])


@pytest.mark.django_db
def test_tasks_sent_from_any_thread_use_the_registry_app():
    import threading

    from registry.review.tasks import send_event_mail_task

    seen = []
    thread = threading.Thread(target=lambda: seen.append(send_event_mail_task.app.main))
    thread.start()
    thread.join()
    assert seen == ["registry"]
