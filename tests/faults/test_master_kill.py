"""The gunicorn master killed (kill -9) under load, and a new one started on the port.

Its workers die with it (gunicorn.conf.py: PR_SET_PDEATHSIG), finishing the request in
hand, so the new master binds the port at once instead of failing "Connection in use"
while orphaned workers keep it. Clients see connections refused for the moment no
process listens, never a 500 and never an answer without the security headers."""

from __future__ import annotations

import itertools
import signal
import time
from pathlib import Path

import pytest

from tests.faults.conftest import (
    Call,
    Load,
    assert_never_500_and_always_headed,
    by_label,
    report,
    server_environment,
    statuses,
    wait_until,
)

pytestmark = pytest.mark.postgres


def gone(pid: int) -> bool:
    """Exited (a zombie waiting for its new parent to reap it counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def test_the_master_killed_under_load_and_restarted(
        test_database_url, redis_servers, gunicorn_servers, tmp_path):
    environment = server_environment(database_url=test_database_url,
                                     redis_url=redis_servers().url,
                                     export_root=tmp_path / "exports")
    first = gunicorn_servers(environment)
    wait_until(lambda: len(first.workers()) == 2, 10, "two workers")
    workers = first.workers()
    calls = [Call("/", "/"), Call("review list", "/requests/review/"),
             Call("API", "/api/namespaces/"), Call("liveness", "/healthz/live")]
    with Load(first.port, calls, clients=6) as load:
        time.sleep(2)
        killed_at = load.now()
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(5)
        # At once, as a supervisor would (systemd: RestartSec=1).
        second = gunicorn_servers(environment, first.port, start=False)
        second.start(wait=False)
        workers_exited = wait_until(lambda: all(gone(pid) for pid in workers), 10,
                                    "the orphaned workers exited")
        wait_until(lambda: second.answers("/healthz/live") == 200 or second.exited(), 40,
                   "the new master answering")
        started_at = load.now()
        time.sleep(2)
    assert not second.exited(), second.output()
    assert "Connection in use" not in second.output()
    assert len(second.workers()) == 2
    answers = load.answers
    assert_never_500_and_always_headed(answers)
    answered = sorted(a.at for a in answers if a.status is not None)
    silence = max(later - earlier for earlier, later in itertools.pairwise(answered))
    assert {a.status for a in answers if a.status is not None} == {200}, by_label(answers)
    assert len([at for at in answered if at > started_at]) > 20
    report("gunicorn master killed -9 and restarted", {
        "requests": len(answers), "statuses": statuses(answers),
        "workers exited after the kill (s)": round(workers_exited, 2),
        "new master answering after the kill (s)": round(started_at - killed_at, 2),
        "longest time without an answer (s)": round(silence, 2)})
