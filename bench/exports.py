"""The exports' build and their first answers after a publish, on a seeded database:

    .venv/bin/python bench/exports.py --database postgres://postgres@127.0.0.1:5432/NAME

The database is one ``seed_load`` filled (bench/load.py --keep leaves one). It measures

- a build **from scratch** (every stored generation deleted, an empty EXPORT_ROOT:
  every record serialised and compressed, as the first build after a deploy), and an
  **incremental** build after each of --publishes publishes (one namespace row
  changed and the generation moved, as bench/load.py publishes), both through
  ``manage.py build_exports`` (the command the worker's task runs);
- with gunicorn as in production (gunicorn.conf.py, 3 workers, a Redis of its own on a
  free port as cache and broker) and one Celery worker: for each whole-registry export,
  right after a publish, the slowest of 16 clients asking at once (what they get is the
  newest built generation; a request never builds) and how long after the publish's
  commit the first answer carries the new generation (the worker's build, then this
  machine's copy filled from the database by the request that first needs it).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import (  # noqa: E402 - the path above first
    PYTHON,
    ROOT,
    Publisher,
    fetch,
    first_answers,
    free_port,
    production_env,
    start_cache_redis,
)

EXPORTS = ("/registry.xml", "/registry.csv", "/urn-namespaces-1.csv")


def build(env: dict) -> float:
    """The build's own seconds, as its log line says (the command's start-up aside)."""
    done = subprocess.run([PYTHON, "manage.py", "build_exports"], cwd=ROOT,
                          env={**env, "LOG_LEVEL": "INFO"}, check=True, capture_output=True,
                          text=True)
    found = re.search(r"exports: built \S+ in ([\d.]+) s", done.stdout + done.stderr)
    assert found, done.stdout + done.stderr
    return float(found.group(1))


def wait_for(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if fetch(url, {})[0] < 500:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--publishes", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-exports-"))
    redis_port = free_port()
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    cache_url, cache_server = start_cache_redis()  # the public cache's own, as production's
    env = production_env("exports", args.database, scratch, redis_url, cache_url)
    processes: list[subprocess.Popen] = []
    try:
        processes.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, start_new_session=True))
        count = Publisher(args.database)
        namespaces = count.conn.execute("SELECT count(*) FROM namespaces_namespace").fetchone()[0]
        count.conn.execute("DELETE FROM namespaces_exportchunk")
        count.conn.execute("DELETE FROM namespaces_exportgeneration")
        count.conn.commit()
        scratch_build = build(env)
        incremental = []
        for _ in range(args.publishes):
            count.publish()
            incremental.append(build(env))
        load = os.getloadavg()[0]
        print(f"{namespaces} namespaces (load {load:.1f}): from scratch {scratch_build:.2f} s; "
              f"incremental "
              f"{', '.join(f'{s:.2f}' for s in incremental)} s", flush=True)

        port = free_port()
        web = {**env, "PORT": str(port), "WEB_CONCURRENCY": "3"}
        processes.append(subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "-c", "gunicorn.conf.py"], cwd=ROOT, env=web,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        processes.append(subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "registry.celery", "worker", "--concurrency", "1"],
            cwd=ROOT, env={**env, "EXPORT_ROOT": str(scratch / "worker-exports")},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        base = f"http://127.0.0.1:{port}"
        headers = {"X-Forwarded-Proto": "https", "Accept-Encoding": "gzip"}
        wait_for(base + "/healthz")
        rows = []
        for path in EXPORTS:
            tag = fetch(base + path, headers)[2].get("ETag")
            count.publish()
            published = time.monotonic()
            slowest, statuses = first_answers(base + path, headers, 16)
            while fetch(base + path, headers)[2].get("ETag") == tag:
                time.sleep(0.02)
            rows.append((path, slowest, statuses, time.monotonic() - published))
        print(f"\n{time.strftime('%Y-%m-%d')}, {platform.node()}: {os.cpu_count()} cores, "
              f"{namespaces} namespaces; gunicorn 3 sync workers, one Celery worker\n")
        print("| export | slowest of 16 first answers after a publish, ms | statuses | "
              "publish to the new generation served, s |")
        print("| --- | --- | --- | --- |")
        for path, slowest, statuses, served in rows:
            print(f"| {path} | {slowest:.0f} | {sorted(set(statuses))} | {served:.2f} |")
        count.close()
    finally:
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        cache_server.terminate()
        cache_server.wait(timeout=20)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
