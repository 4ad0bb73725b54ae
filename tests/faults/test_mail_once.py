"""Faults: the Celery worker killed (kill -9) in the middle of an SMTP conversation, twice,
against a slow SMTP sink of the test's own. Each copy must reach the sink exactly once.

A real worker (``celery worker``, prefork, one process) on a Redis of the test's own and
this run's PostgreSQL database sends the mail of a registration (the list posting, the
registrant's acknowledgement) and a message to six people (six copies, one per person).
The sink answers slowly and stalls twice, and each time the worker is killed:

1. while the server waits for a recipient of a copy (nothing of it accepted): after the
   restart that copy goes out once, the copies accepted before it are not sent again;
2. after the sink took a copy (the "." line) and before it answered 250: nobody can know
   whether the server has it, so it is never sent again; its row is shown to staff as
   "Perhaps sent", with an event, and the sink has it exactly once.

Every copy carries its row's Message-ID, on every try. Bounded: about 20 s.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from django.core.mail import EmailMessage
from django.db import transaction

from registry.review.models import OutboundMessage, RegistrationRequest, RequestEvent
from registry.review.outbox import queue_message
from registry.review.tasks import requeue_undelivered_mail_task
from tests.factories import make_registration, make_user
from tests.faults.conftest import server_environment, wait_until
from tests.faults.test_two_nodes import tasks_to

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


class SlowSink:
    """An SMTP server that takes its time (``delay`` before each answer), records each
    message it accepts (at its "." line, as an MTA queues it) with its Message-ID and
    envelope recipients, and stalls where told: ``stalls[n]`` is "rcpt" (before
    answering the first RCPT of the n-th transaction) or "after_dot" (after taking the
    n-th message, before answering 250). A stalled connection waits until its client
    is gone."""

    def __init__(self, delay: float = 0.03):
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[tuple[str, str]] = []  # (Message-ID, recipient), one per copy
        self.transactions = 0
        self.stalls: dict[int, str] = {}
        self.stalled = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                threading.Thread(target=self._converse, args=(conn,), daemon=True).start()

    def _stall(self, conn: socket.socket) -> None:
        self.stalled.set()
        conn.settimeout(30)
        with contextlib.suppress(OSError):
            while conn.recv(4096):  # until the killed client's socket closes
                pass

    def _converse(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as lines:
            def answer(text: str) -> None:
                time.sleep(self.delay)
                conn.sendall(text.encode() + b"\r\n")

            answer("220 sink ESMTP")
            number, recipients = 0, []
            while line := lines.readline():
                verb = line[:4].upper()
                if verb in (b"EHLO", b"HELO"):
                    answer("250 sink")
                elif verb == b"MAIL":
                    with self.lock:
                        self.transactions += 1
                        number, recipients = self.transactions, []
                    answer("250 OK")
                elif verb == b"RCPT":
                    if self.stalls.get(number) == "rcpt" and not recipients:
                        return self._stall(conn)
                    recipients.append(line.split(b":", 1)[1].strip(b" <>\r\n").decode())
                    answer("250 OK")
                elif verb == b"DATA":
                    answer("354 go ahead")
                    message_id = ""
                    while (data := lines.readline()) not in (b".\r\n", b""):
                        if data.lower().startswith(b"message-id:") and not message_id:
                            message_id = data.split(b":", 1)[1].strip().decode()
                    if data == b"":
                        return None  # the connection ended before the ".": nothing taken
                    with self.lock:
                        self.accepted += [(message_id, rcpt.lower()) for rcpt in recipients]
                    if self.stalls.get(number) == "after_dot":
                        return self._stall(conn)
                    answer("250 queued")
                elif verb == b"QUIT":
                    answer("221 bye")
                    return None
                else:
                    answer("250 OK")
        return None

    def close(self) -> None:
        self.listener.close()


LEASE_SECONDS = 2  # MAIL_SENDING_LEASE: a row claimed this long ago counts as abandoned


def test_each_copy_exactly_once_when_the_worker_dies_mid_conversation(
        redis_servers, test_database_url, tmp_path, registrant):
    started = time.monotonic()
    broker = redis_servers()
    sink = SlowSink()
    environment = server_environment(
        database_url=test_database_url, redis_url=broker.url, export_root=tmp_path / "exports",
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend", EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(sink.port), EMAIL_TIMEOUT="10", MAIL_SENDING_LEASE=str(LEASE_SECONDS),
        LOG_LEVEL="INFO")
    people = [make_user(f"person{i}@example.org") for i in range(6)]
    with tasks_to(broker.url):
        registration = make_registration(registrant, nid="mailonce")
        with transaction.atomic():
            locked = RegistrationRequest.objects.select_for_update().get(pk=registration.pk)
            queue_message(EmailMessage(subject="A note to six people", body="Hello.\n",
                                       to=[person.email for person in people]),
                          registration=locked, audience="people")
    rows = list(OutboundMessage.objects.about(registration))
    expected = Counter((row.message_id, address.lower()) for row in rows
                       for address in row.recipients)
    assert len(rows) == 3 and sum(expected.values()) == 8

    # Transactions 1 and 2: the registration's mail; then the six copies. The 4th (the
    # second person's copy) stalls before its recipient; once the worker is back, that
    # copy is sent again as transaction 5, and the 7th (the fourth person's) stalls
    # after the sink took it.
    sink.stalls = {4: "rcpt", 7: "after_dot"}
    workers: list[subprocess.Popen] = []

    def start_worker() -> subprocess.Popen:
        log = open(tmp_path / f"worker{len(workers)}.log", "wb")  # noqa: SIM115 - the OS closes it
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "registry.celery", "worker",
             "--concurrency", "1", "--prefetch-multiplier", "1", "--loglevel", "INFO"],
            cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        workers.append(worker)
        return worker

    def kill_mid_conversation(worker: subprocess.Popen) -> None:
        wait_until(sink.stalled.is_set, 30, "the worker reached the stall")
        os.killpg(worker.pid, signal.SIGKILL)  # kill -9, the pool child included
        worker.wait(10)
        sink.stalled.clear()
        # The next worker's start queues the rows whose lease ran out (tasks.py); one that
        # started sooner would leave the dead worker's row to the next beat, a minute on.
        time.sleep(LEASE_SECONDS + 0.5)

    def settled() -> bool:
        with tasks_to(broker.url):  # the periodic requeue (celery beat, every minute)
            requeue_undelivered_mail_task.delay()
        time.sleep(0.5)
        return not OutboundMessage.objects.filter(
            registration=registration, state__in=["pending", "sending"]).exists()

    try:
        kill_mid_conversation(start_worker())
        kill_mid_conversation(start_worker())
        start_worker()
        wait_until(settled, 30, "every row sent or set aside", step=0.5)
        time.sleep(1.5)  # time for a duplicate to arrive, if one were coming
    finally:
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
        sink.close()

    received = Counter(sink.accepted)
    assert received == expected, (received - expected, expected - received)
    assert sink.transactions == 9  # 8 copies, one of them begun twice (the first stall)
    people_row = next(row for row in rows if row.audience == "people")
    states = dict(OutboundMessage.objects.filter(registration=registration)
                  .values_list("pk", "state"))
    assert states == {row.pk: "uncertain" if row.pk == people_row.pk else "sent" for row in rows}
    people_row.refresh_from_db()
    copies = {key: value["state"] for key, value in people_row.copies.items()}
    assert copies == {"person3@example.org": "uncertain",
                      **{f"person{i}@example.org": "sent" for i in (0, 1, 2, 4, 5)}}
    event = RequestEvent.objects.get(registration=registration, kind="mail_failed")
    assert "Perhaps sent" in event.comment and "person3@example.org" in event.comment
    assert time.monotonic() - started < 60

