"""What a speed mechanism buys: the registry with it and without it, in one run.

    .venv/bin/python bench/mechanisms.py --database NAME [--without visitor-query local-store]
        [--repeat 5] [--duration 2] [--port 8361]

On a database ``bench/load.py --keep`` (or ``--database``) seeded, it starts two gunicorn
servers as bench/load.py does (production settings, 3 sync workers, each with a public
cache Redis of its own), one as shipped and one with a mechanism off (BENCH_WITHOUT, read
by bench/settings.py and bench/wsgi.py), side by side on the same database. For each page
of that mechanism it runs wrk (16 connections) against the floor and the page of the first,
then of the second, --repeat times (A B A B): each side's ratio to its floor is the median
of its runs, so a load that moves during the run reaches both. It also reads, from /proc,
the CPU each request cost the server (its workers, their PostgreSQL backends, its cache
Redis), which other processes on a shared machine do not inflate. Prints one JSON line per
page and a Markdown table.

- ``visitor-query``: the generation read alone and Django's AuthenticationMiddleware in
  place of the visitor query's (registry/accounts/signed_in.py): signed-in pages.
- ``local-store``: no per-process store in front of the shared public cache
  (``public_cache.local_store``): anonymous and signed-in pages.
- ``navigation-store``: each signed-in visitor's navigation rendered on every request
  (``signed_in.NAVIGATIONS_KEPT`` 0): signed-in pages.
The other mechanisms are measured where they live: the C URN check with bench/urns.py
(``URN_SPEEDUPS=0`` is the Python path), the spliced exports with bench/exports.py (a build
from scratch against builds after a publish).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import (  # noqa: E402 - the path above first
    PREFIX,
    PYTHON,
    ROOT,
    fetch,
    free_port,
    production_env,
    server_url,
    signed_in_cookie,
    start_cache_redis,
    worker_pids,
    wrk,
)
from registry.namespaces.sample_text import seed_nid  # noqa: E402

PAGES = {  # mechanism -> (page, signed in)
    "visitor-query": [("registry page", True), ("namespace page", True)],
    "local-store": [("registry page", False), ("namespace page", False),
                    ("namespace page", True)],
    "navigation-store": [("registry page", True), ("namespace page", True)],
}
HEADERS = {"X-Forwarded-Proto": "https", "Accept-Encoding": "gzip"}


def paths(namespaces: int) -> dict[str, str]:
    nid = seed_nid(PREFIX, max(1, namespaces // 2))
    return {"registry page": "/", "namespace page": f"/namespaces/{nid}/"}


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    """gunicorn as bench/load.py starts it, with one mechanism off (or none)."""

    def __init__(self, tag: str, without: str, database_url: str, port: int, scratch: Path,
                 redis: str, secret: str):
        self.tag, self.database_url = tag, database_url
        self.cache_url, self.cache = start_cache_redis()
        env = {**production_env(tag, f"{database_url}?application_name=bench-{tag}",
                                scratch, redis, self.cache_url),
               "EXPORT_ROOT": str(scratch / tag / "exports"), "WEB_CONCURRENCY": "3",
               "BENCH_WITHOUT": without, "SECRET_KEY": secret,
               **{f"RATE_LIMIT_{group}": "1000000/m"
                  for group in ("SEARCH", "API_CHECK", "NID_CHECK")}}
        self.env = env
        self.log = open(scratch / f"{tag}.log", "w")  # noqa: SIM115 - open while it runs
        self.process = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind",
             f"127.0.0.1:{port}", "bench.wsgi:application"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.base = f"http://127.0.0.1:{port}"
        for _ in range(150):
            try:
                if fetch(self.base + "/healthz", HEADERS)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        sys.exit(f"gunicorn {tag} did not answer; see {scratch / (tag + '.log')}")

    def pids(self) -> list[int]:
        """The processes that serve this server's requests."""
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            backends = [row[0] for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                [f"bench-{self.tag}"])]
        return [*worker_pids(self.process.pid), *backends, self.cache.pid]

    def measure(self, path: str, headers: dict, duration: int) -> dict:
        pids = self.pids()
        before = sum(map(cpu_seconds, pids))
        found = wrk(self.base + path, connections=16, duration=duration, headers=headers)
        used = sum(map(cpu_seconds, pids)) - before
        found["cpu_ms"] = 1000 * used / max(1.0, found["rps"] * duration)
        return found

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)
        self.cache.terminate()
        self.cache.wait(timeout=30)
        self.log.close()


def compare(without: str, args, scratch: Path, redis: str, database_url: str) -> list[dict]:
    secret = "bench-mechanisms-" + "k" * 50  # one key: the session cookie is valid on both
    port = args.port or free_port()
    servers = [Server("with", "", database_url, port, scratch, redis, secret)]
    try:
        servers.append(Server(f"without-{without}", without, database_url,
                              args.port + 1 if args.port else free_port(), scratch, redis,
                              secret))
        cookie = signed_in_cookie(servers[0].env)
        rows = []
        for page, signed_in in PAGES[without]:
            path = paths(args.namespaces)[page]
            headers = {**HEADERS, **({"Cookie": cookie} if signed_in else {})}
            for server in servers:  # each page built and every worker warm
                status = fetch(server.base + path, headers)[0]
                if status != 200:
                    sys.exit(f"{server.tag} answered {status} for {path}")
                wrk(server.base + path, connections=16, duration=1, headers=headers)
            runs: dict[str, list[tuple[float, float, float]]] = {s.tag: [] for s in servers}
            for _ in range(args.repeat):
                for server in servers:
                    floor = server.measure("/bench-floor/", headers, args.duration)
                    got = server.measure(path, headers, args.duration)
                    runs[server.tag].append((got["rps"] / floor["rps"], got["cpu_ms"],
                                             got["p99"]))
            on, off = (runs[s.tag] for s in servers)
            row = {"without": without, "page": page + (", signed in" if signed_in else ""),
                   "ratio_with": statistics.median(r[0] for r in on),
                   "ratio_without": statistics.median(r[0] for r in off),
                   "cpu_ms_with": statistics.median(r[1] for r in on),
                   "cpu_ms_without": statistics.median(r[1] for r in off),
                   "p99_with": statistics.median(r[2] for r in on),
                   "p99_without": statistics.median(r[2] for r in off),
                   "load": os.getloadavg()[0]}
            print(json.dumps(row), flush=True)
            rows.append(row)
        return rows
    finally:
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a seeded database (bench/load.py)")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--namespaces", type=int, default=10_000,
                        help="how many the database was seeded with (picks the NID)")
    parser.add_argument("--without", nargs="+", choices=sorted(PAGES), default=sorted(PAGES))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--duration", type=int, default=2, help="seconds per wrk run")
    parser.add_argument("--port", type=int, default=0,
                        help="the first server's port, the second's the next (default: free)")
    args = parser.parse_args()
    database_url = server_url(args.server, args.database)
    scratch = Path(tempfile.mkdtemp(prefix="urn-bench-mechanisms-"))
    started = time.strftime("%Y-%m-%d %H:%M")
    try:
        # The static files both servers serve (their names are in the pages).
        subprocess.run([PYTHON, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
                       cwd=ROOT, check=True, env=production_env(
                           "collect", database_url, scratch, args.redis,
                           "redis://127.0.0.1:1/0"))
        rows = [row for without in args.without
                for row in compare(without, args, scratch, args.redis, database_url)]
    except BaseException:
        print(f"the servers' logs are kept in {scratch}", file=sys.stderr)
        raise
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{started} to {time.strftime('%H:%M')}, {os.cpu_count()} cores; "
          f"wrk 16 connections, {args.repeat} x {args.duration} s a side, in turns\n")
    print("| without | page | ratio with / without | CPU ms a request with / without "
          "| p99 ms with / without | load |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['without']} | {row['page']} | {row['ratio_with']:.2f} / "
              f"{row['ratio_without']:.2f} | {row['cpu_ms_with']:.2f} / "
              f"{row['cpu_ms_without']:.2f} | {row['p99_with']:.0f} / "
              f"{row['p99_without']:.0f} | {row['load']:.1f} |")


if __name__ == "__main__":
    main()
