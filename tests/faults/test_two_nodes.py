"""Faults: two app machines without a shared disk, and a machine whose disk fails.

Real processes, as production runs them: two gunicorn nodes (gunicorn.conf.py, two sync
workers each), each with an EXPORT_ROOT of its own, the same PostgreSQL (this run's test
database) and a Redis of this test's own (broker and cache, on a free port), and one
Celery worker (two processes) that builds the exports. Registrations are published
concurrently through the actions while clients read every export from both nodes, in
both codings. Expected: no answer but 200, both nodes serve the newest generation's
bytes, builds never overlap (one builder: the advisory lock), and what they serve is
byte-identical to a build from scratch.

Then a node whose EXPORT_ROOT is a small tmpfs in a mount namespace of its own: filled
up, then remounted read-only, while a generation is published: every answer is still
the newest generation (streamed from the database), no temporary file is left, the
node logs one line, and readiness says why.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import os
import random
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
from django.db import connection, transaction

from registry.celery import app
from registry.namespaces import export_build, export_cache, export_files
from registry.namespaces.models import ExportGeneration
from registry.namespaces.public_cache import current_generation
from tests.namespaces.test_export_files import register

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
NAMES = list(export_files.EXPORTS)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing answers on {port}")


def database_url() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s["PASSWORD"] else ""
    return (f"postgres://{s['USER']}{password}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}"
            f"/{s['NAME']}")


class Cluster:
    """The processes of one test, stopped (their process groups) at the end."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.processes: list[subprocess.Popen] = []
        self.redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.start(["redis-server", "--port", str(self.redis_port), "--save", "",
                    "--appendonly", "no"], "redis", {})
        wait_for_port(self.redis_port, self.processes[-1])

    def env(self, export_root: Path, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("CELERY_", "REDIS_", "CACHE_", "REGISTRY_"))}
        env.update(DATABASE_URL=database_url(), REDIS_URL=self.redis_url,
                   EXPORT_ROOT=str(export_root), LOG_LEVEL="INFO",
                   SITE_URL="http://127.0.0.1:8000", DJANGO_SETTINGS_MODULE="registry.settings")
        env.update(extra)
        return env

    def start(self, argv: list[str], name: str, env: dict) -> subprocess.Popen:
        log = open(self.scratch / f"{name}.log", "wb")  # noqa: SIM115 - closed by the OS
        process = subprocess.Popen(argv, cwd=ROOT, env=env or None, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        return process

    def node(self, name: str, export_root: Path, *, wrap: list[str] | None = None,
             workers: int = 2) -> tuple[int, subprocess.Popen]:
        port = free_port()
        gunicorn = [PYTHON, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
        process = self.start([*(wrap or []), *gunicorn], name,
                             self.env(export_root, PORT=str(port), WEB_CONCURRENCY=str(workers)))
        return port, process

    def worker(self) -> subprocess.Popen:
        return self.start([PYTHON, "-m", "celery", "-A", "registry.celery", "worker",
                           "--concurrency", "2", "--loglevel", "INFO"], "worker",
                          self.env(self.scratch / "worker-exports"))

    def log(self, name: str) -> str:
        return (self.scratch / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def tasks_to(broker_url: str):
    """This process's publishes queue their build on the cluster's broker (the worker
    builds), as a web node's would."""
    import kombu.pools

    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager")}
    def reset() -> None:  # producers and queues made again from the configuration
        kombu.pools.reset()
        app._pool = None
        app.__dict__.pop("amqp", None)

    app.conf.update(broker_url=broker_url, task_always_eager=False)
    reset()
    try:
        yield
    finally:
        app.conf.update(saved)
        reset()


def fetch(port: int, path: str, gzipped: bool) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzipped else {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def from_scratch(directory: Path) -> dict[str, bytes]:
    """The current generation built with nothing to splice from."""
    directory.mkdir()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        export_build._write_documents(directory, None, export_build._salt())
    return {name: (directory / name).read_bytes() for name in NAMES}


def served(port: int) -> dict[str, tuple[str, bytes]]:
    """Each export as the node serves it (ETag, plain bytes), the gzip form checked."""
    found = {}
    for name in NAMES:
        status, headers, body = fetch(port, f"/{name}", False)
        zipped_status, zipped_headers, zipped = fetch(port, f"/{name}", True)
        assert status == zipped_status == 200, (port, name, status, zipped_status)
        assert gzip.decompress(zipped) == body
        found[name] = (headers["ETag"], body)
    return found


@pytest.fixture
def cluster(tmp_path, registry):
    cluster = Cluster(tmp_path)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_two_nodes_without_a_shared_disk_under_concurrent_publishes(cluster, staff,
                                                                    tmp_path):
    started = time.monotonic()
    export_build.build_current_exports()  # as after a deploy: build_exports once
    nodes = [cluster.node(f"node{i}", tmp_path / f"node{i}-exports") for i in (1, 2)]
    cluster.worker()
    for port, process in nodes:
        wait_for_port(port, process)
    ports = [port for port, _ in nodes]

    statuses: Counter = Counter()
    failures: list[str] = []
    builds: dict[str, tuple] = {}
    stop = threading.Event()

    def read(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            port, name = rng.choice(ports), rng.choice(NAMES)
            try:
                status, _, _ = fetch(port, f"/{name}", rng.random() < 0.5)
                statuses[status] += 1
            except Exception as exc:  # noqa: BLE001 - counted as an error
                failures.append(f"{port} /{name}: {exc!r}")

    def watch_builds() -> None:
        while not stop.is_set():
            for row in ExportGeneration.objects.values_list("key", "built_at",
                                                             "build_seconds", "built_by"):
                builds.setdefault(row[0], row[1:])
            time.sleep(0.02)
        connection.close()

    def publish(prefix: str) -> None:
        try:
            for n in range(7):
                register(f"{prefix}{n}", staff)
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"publish {prefix}: {exc!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(seed,)) for seed in range(4)]
    threads.append(threading.Thread(target=watch_builds))
    for thread in threads:
        thread.start()
    try:
        with tasks_to(cluster.redis_url):
            publishers = [threading.Thread(target=publish, args=(p,)) for p in ("pa", "pb")]
            for thread in publishers:
                thread.start()
            for thread in publishers:
                thread.join(60)
        # Both nodes converge on the newest generation, built by the worker.
        key = current_generation().exports_key
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            tags = {fetch(port, f"/{name}", False)[1]["ETag"] for port in ports for name in NAMES}
            if tags == {export_files.etag(key, name, False) for name in NAMES}:
                break
            time.sleep(0.2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)

    scratch = from_scratch(tmp_path / "scratch")
    for port in ports:
        for name, (tag, body) in served(port).items():
            assert tag == export_files.etag(key, name, False), (port, name)
            assert body == scratch[name], (port, name)
    assert not failures, failures[:5]
    assert set(statuses) == {200}, statuses
    # One builder at a time: no two builds overlap (each from its start to its store).
    spans = sorted((built_at.timestamp() - seconds, built_at.timestamp())
                   for built_at, seconds, _ in builds.values())
    assert all(later[0] >= earlier[1]
               for earlier, later in zip(spans, spans[1:], strict=False)), spans
    worker_log = cluster.log("worker")
    assert "Traceback" not in worker_log and "SerializationFailure" not in worker_log
    for i in (1, 2):
        kept = [p for p in (tmp_path / f"node{i}-exports").iterdir()]
        assert len(kept) <= export_cache.KEEP_GENERATIONS
        assert not [p for p in kept if p.name.startswith(".")]
        assert "Traceback" not in cluster.log(f"node{i}")
    assert ExportGeneration.objects.count() == export_cache.KEEP_GENERATIONS
    print(f"\n{sum(statuses.values())} answers {dict(statuses)}, 14 publishes, "
          f"{worker_log.count('exports: built ')} builds by the worker ({len(builds)} seen "
          f"stored, by {len({b[2] for b in builds.values()})} processes), "
          f"{time.monotonic() - started:.1f} s")
    assert time.monotonic() - started < 60


def in_namespace_of(pid: int, path: Path) -> Path:
    """``path`` as the process ``pid`` sees it (its own mount namespace)."""
    return Path(f"/proc/{pid}/root") / path.relative_to("/")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root to give a node a tmpfs of its own (unshare, mount)")
def test_a_node_on_a_full_then_read_only_disk_keeps_serving_the_newest_generation(
        cluster, staff, tmp_path, monkeypatch, settings):
    export_build.build_current_exports()
    root = tmp_path / "small-disk"
    root.mkdir()
    wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c",
            f'mount -t tmpfs -o size=1m tmpfs "{root}" && exec "$0" "$@"']
    port, process = cluster.node("small", root, wrap=wrap, workers=1)
    wait_for_port(port, process)
    seen = in_namespace_of(process.pid, root)
    first = served(port)
    assert any(p.is_dir() for p in seen.iterdir())  # the node's copy is on its tmpfs
    builder_root = settings.EXPORT_ROOT

    with open(seen / "filler", "wb") as filler, contextlib.suppress(OSError):
        filler.write(b"\0" * (2 << 20))  # the tmpfs is full
    for trouble in ("No space left on device", "Read-only file system"):
        if trouble.startswith("Read-only"):
            (seen / "filler").unlink()
            subprocess.run(["nsenter", "-t", str(process.pid), "-m", "mount", "-o",
                            "remount,ro", str(root)], check=True)
        register(f"bad{len(trouble)}", staff)
        export_build.build_current_exports()  # the worker's disk is fine
        key = current_generation().exports_key
        scratch = from_scratch(tmp_path / f"scratch-{len(trouble)}")
        for _ in range(3):
            for name, (tag, body) in served(port).items():
                assert tag == export_files.etag(key, name, False) != first[name][0]
                assert body == scratch[name]
        assert not [p for p in seen.rglob(".*")], list(seen.rglob(".*"))
        log = cluster.log("small")
        assert log.count(f"cannot take a generation ({trouble})") == 1, log
        settings.EXPORT_ROOT = seen  # readiness, asked about that disk
        assert trouble in export_files.exports_readiness()
        assert not export_files.exports_ready()
        settings.EXPORT_ROOT = builder_root
    assert "Traceback" not in cluster.log("small")
