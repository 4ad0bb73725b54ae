"""Fault tests: the registry as production runs it (gunicorn with gunicorn.conf.py, DEBUG
off, Redis as cache and broker, PostgreSQL), one part taken away under load.

Each test starts what it breaks itself, on free ports: its own ``redis-server``, its own
PostgreSQL cluster (initdb/pg_ctl as the postgres user) when the database is what stops,
its own gunicorn. The machine's PostgreSQL and Redis are never stopped or flushed. Each
test is bounded in time (well under a minute) and stops whatever it started, by pid.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings

HEADERS = ("Content-Security-Policy", "Permissions-Policy", "X-Content-Type-Options")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, timeout: float, what: str, step: float = 0.05) -> float:
    """Seconds until ``condition()`` is true; fails the test after ``timeout``."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(step)
    return time.monotonic() - start


def signed_in_session(user) -> str:
    """The key of a new signed-in session of ``user``, written by the site's own session
    engine."""
    from importlib import import_module

    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return str(session.session_key)


# --- Redis --------------------------------------------------------------------------------


class RedisServer:
    """A redis-server of the test's own, without persistence: killed, it comes back empty."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self.answers, 10, "redis-server started")

    def answers(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", self.port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
        return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def redis_servers(tmp_path):
    """Make redis-servers of the test's own; every one is killed at the end."""
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    made: list[RedisServer] = []

    def make() -> RedisServer:
        server = RedisServer(tmp_path)
        server.start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.kill()


# --- PostgreSQL -----------------------------------------------------------------------------


def _database_url(database: dict) -> str:
    credentials = quote(database.get("USER") or "postgres", safe="")
    if database.get("PASSWORD"):
        credentials += ":" + quote(database["PASSWORD"], safe="")
    return (f"postgres://{credentials}@{database.get('HOST') or '127.0.0.1'}:"
            f"{database.get('PORT') or 5432}/{database['NAME']}")


@pytest.fixture
def test_database_url(transactional_db):
    """This run's test database (committed rows are visible to the servers started)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: a server in another process shares the database")
    return _database_url(connection.settings_dict)


class PrivateCluster:
    """A PostgreSQL cluster of the test's own, under /tmp, run as the postgres user."""

    def __init__(self) -> None:
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="registry-fault-pg-"))
        self.data = self.root / "data"

    def _as_postgres(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = ["runuser", "-u", "postgres", "--", *args] if os.getuid() == 0 else list(args)
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=60)

    def init(self) -> None:
        if os.getuid() == 0:
            shutil.chown(self.root, "postgres")
        self._as_postgres("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                          "--no-sync")
        self.start()

    def start(self) -> None:
        self._as_postgres(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "30",
            "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                  "-c fsync=off -c synchronous_commit=off", "start")

    def stop(self, mode: str = "fast") -> None:
        self._as_postgres("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop",
                          check=False)

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_cluster():
    if not (shutil.which("initdb") and shutil.which("pg_ctl")):
        pytest.skip("needs PostgreSQL's initdb and pg_ctl")
    if os.getuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("needs runuser to run PostgreSQL as the postgres user")
    cluster = PrivateCluster()
    try:
        cluster.init()
        yield cluster
    finally:
        cluster.remove()


# --- gunicorn -------------------------------------------------------------------------------


def server_environment(*, database_url: str, redis_url: str, cache_url: str | None = None,
                       export_root: Path, **extra: str) -> dict[str, str]:
    """gunicorn's environment: as production runs it (DEBUG off, Redis, a broker), over
    plain HTTP on the loopback (no TLS proxy in front)."""
    clean = {name: value for name, value in os.environ.items()
             if not name.startswith(("DJANGO_", "CELERY_", "REDIS", "CACHE", "GUNICORN"))
             and name not in ("DATABASE_URL", "REGISTRY_ENV", "DEBUG", "PORT", "BIND",
                              "WEB_CONCURRENCY", "RUNTIME_DIRECTORY")}
    return {
        **clean,
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "SECRET_KEY": settings.SECRET_KEY,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CACHE_URL": cache_url or redis_url,
        "CELERY_BROKER_URL": redis_url,
        "EXPORT_ROOT": str(export_root),
        "WEB_CONCURRENCY": "2",
        "LOG_LEVEL": "WARNING",
        **extra,
    }


class Gunicorn:
    """``gunicorn -c gunicorn.conf.py`` in a session of its own; its output in a file."""

    def __init__(self, environment: dict[str, str], port: int, log: Path):
        self.environment = {**environment, "PORT": str(port)}
        self.port = port
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self, *, wait: bool = True) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"],
                cwd=settings.BASE_DIR, env=self.environment, stdout=out, stderr=out,
                start_new_session=True)
        if wait:
            wait_until(lambda: self.answers("/healthz/live") == 200 or self.exited(), 40,
                       "gunicorn answering")
            assert not self.exited(), self.output()

    def request(self, call: Call) -> Answer:
        response = request("127.0.0.1", self.port, call.method, call.path,
                           headers=call.headers, body=call.body)
        return Answer(call.label, 0.0, response.status, dict(response.getheaders()))

    def answers(self, path: str) -> int | None:
        try:
            return request("127.0.0.1", self.port, "GET", path, timeout=2).status
        except OSError:
            return None

    def exited(self) -> bool:
        return self.process is None or self.process.poll() is not None

    @property
    def master(self) -> int:
        assert self.process is not None
        return self.process.pid

    def workers(self) -> list[int]:
        """The pids of this master's workers (its children), from /proc."""
        children = Path(f"/proc/{self.master}/task/{self.master}/children")
        with contextlib.suppress(OSError):
            return [int(pid) for pid in children.read_text().split()]
        return []

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """The master, gracefully, then whatever is left of its session (by its id)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


@pytest.fixture
def gunicorn_servers(tmp_path):
    """Make gunicorn servers; each is stopped at the end."""
    made: list[Gunicorn] = []

    def make(environment: dict[str, str], port: int | None = None, *,
             start: bool = True) -> Gunicorn:
        server = Gunicorn(environment, port or free_port(),
                          tmp_path / f"gunicorn-{len(made)}.log")
        made.append(server)
        if start:
            server.start()
        return server

    yield make
    for server in made:
        server.stop()


# --- load -----------------------------------------------------------------------------------


@dataclass
class Call:
    """One request of the load: a label for the figures, and what to send."""

    label: str
    path: str  # or, with ``paths``, the first of them
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    paths: tuple[str, ...] = ()  # taken in turn, each time the call comes round

    @classmethod
    def rotating(cls, label: str, paths: list[str], **kwargs) -> Call:
        return cls(label, paths[0], paths=tuple(paths), **kwargs)


@dataclass
class Answer:
    label: str
    at: float  # seconds since the load started
    status: int | None  # None: no HTTP answer (error says why)
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""


def request(host: str, port: int, method: str, path: str, *, headers=None, body=None,
            timeout: float = 10) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response
    finally:
        conn.close()


class Load:
    """Clients requesting ``calls`` in turn, each on a new connection (sync workers close
    every connection), recording every answer, for as long as it runs."""

    def __init__(self, port: int, calls: list[Call], clients: int = 4):
        self.port = port
        self.calls = calls
        self.clients = clients
        self.answers: list[Answer] = []
        self.started = 0.0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Load:
        self.started = time.monotonic()
        for index in range(self.clients):
            thread = threading.Thread(target=self._run, args=(index,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(20)

    def now(self) -> float:
        return time.monotonic() - self.started

    def _run(self, index: int) -> None:
        turn = index
        while not self._stop.is_set():
            call = self.calls[turn % len(self.calls)]
            path = call.paths[(turn // len(self.calls)) % len(call.paths)] if call.paths \
                else call.path
            turn += self.clients
            at = self.now()
            try:
                response = request("127.0.0.1", self.port, call.method, path,
                                   headers=call.headers, body=call.body)
                answer = Answer(call.label, at, response.status, dict(response.getheaders()))
            except OSError as error:
                answer = Answer(call.label, at, None, error=type(error).__name__)
                time.sleep(0.02)  # nothing listening: do not spin
            with self._lock:
                self.answers.append(answer)

    def between(self, start: float, end: float) -> list[Answer]:
        return [a for a in self.answers if start <= a.at < end]


def statuses(answers: list[Answer]) -> dict[str, int]:
    return dict(Counter(str(a.status or a.error) for a in answers))


def by_label(answers: list[Answer]) -> dict[str, dict[str, int]]:
    labels = sorted({a.label for a in answers})
    return {label: statuses([a for a in answers if a.label == label]) for label in labels}


def assert_never_500_and_always_headed(answers: list[Answer]) -> None:
    """No 500 (nor any 5xx but 503), every 503 with Retry-After, every answer with the
    security headers."""
    bad = [a for a in answers if a.status is not None and a.status >= 500 and a.status != 503]
    assert not bad, f"{len(bad)} answers 5xx: {statuses(bad)} {by_label(bad)}"
    unheaded = [a for a in answers if a.status is not None
                and not all(name in a.headers for name in HEADERS)]
    assert not unheaded, f"{len(unheaded)} answers without the security headers: " \
                         f"{by_label(unheaded)}"
    no_retry = [a for a in answers if a.status == 503 and "Retry-After" not in a.headers]
    assert not no_retry, f"{len(no_retry)} 503s without Retry-After: {by_label(no_retry)}"


def report(name: str, figures: dict) -> None:
    """The figures a fault test measured, printed (pytest -s shows them; the docs'
    Faults section records them)."""
    print(f"\n[fault figures] {name}: {figures}")
