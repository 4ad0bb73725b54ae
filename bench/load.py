"""The public pages and exports under load, as in production. One command:

    .venv/bin/python bench/load.py                      # 10,000 x 5, a database of its own
    .venv/bin/python bench/load.py --namespaces 1000 --duration 2 --repeat 1 --keep
    .venv/bin/python bench/load.py --front nginx        # behind nginx, as production runs

Creates (or, with --database, reuses) a PostgreSQL database, migrates it, imports
IANA's registry and seeds N namespaces x V versions (``seed_load``), collects the
static files, then starts gunicorn as in production (gunicorn.conf.py,
REGISTRY_ENV=production, DEBUG off, Redis as cache and broker) on a free port of
127.0.0.1 (or --port). For each page it then measures, with wrk (16 connections,
bounded in time), the floor, a trivial view (``/bench-floor/``, only in
bench/settings.py) through the same middleware on the same server, and the page,
in turns (3 x 4 s each by default; medians reported); and one request alone
right after the registry generation moves (as a publish moves it), the cold
page. It prints requests/s, p50, p99, the ratio to the floor, SQL queries per
request (warm and cold) and the cold time, as a Markdown table, then medians.
Requests carry ``X-Forwarded-Proto: https``, as behind the TLS proxy production
has, and ask for gzip, as browsers, feed readers and harvesters do. The cold
time is the first request after the generation moves, on a server whose workers
have each served that page before (as on a running site after a publish).

Then (unless --no-extras): the HTML pages again for a signed-in visitor (a session
cookie of a seeded account); each whole-registry export against nginx serving the
very bytes our server sent, in turns (when nginx is installed: the ceiling for those
bytes on this machine); for each whole-registry export, the slowest of 16
clients asking at once right after a publish; the registry page and registry.csv
during a publish storm (one publish every 100 ms, --storm-interval) against their
quiet rate; and at the end each gunicorn worker's RSS and the Redis memory of this
run's keys. A "publish" here is what one makes in the database: one namespace row
changed and the registry generation moved at commit (the deferred bump), in one
transaction; no Celery worker runs, so the exports stay at the generation built at the
start (a request never builds one): their first answers after a publish are that
generation's (bench/exports.py times the worker's builds and the new generation's
arrival).

It stops gunicorn when done and drops the database it created (not with --keep
or --database). Needs wrk, PostgreSQL and Redis on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))

from devtools.services import nginx_binary, nginx_temp_paths  # noqa: E402
from registry.namespaces.sample_text import seed_nid  # noqa: E402

PREFIX = "load"


def pages(sample: int) -> list[tuple[str, str, bool]]:
    """(label, path, is_export) for every public page and export."""
    nid = seed_nid(PREFIX, sample)
    return [
        ("registry page (250 rows)", "/", False),
        ("namespace page", f"/namespaces/{nid}/", False),
        ("version page", f"/namespaces/{nid}/v/2/", False),
        ("diff v1..v5", f"/namespaces/{nid}/diff/?a=1&b=5", False),
        ("namespace history", f"/namespaces/{nid}/history/", False),
        ("search, NID prefix", f"/search/?q={PREFIX}-archive-1", False),
        ("search, two words", "/search/?q=digital+archive", False),
        ("public review list", "/requests/review/", False),
        ("API list page", f"/api/namespaces/?page={max(1, min(50, sample // 100))}", True),
        ("API detail", f"/api/namespaces/{nid}/", True),
        ("URN check API", "/api/check?urn=urn:isbn:0451450523", True),
        ("Atom feed", "/feed.atom", True),
        ("registry.csv", "/registry.csv", True),
        ("registry.xml", "/registry.xml", True),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cache_redis() -> tuple[str, subprocess.Popen]:
    """The public cache's Redis, apart from the broker's as production requires
    (CACHE_URL): a redis-server of this run's own on a free port, evicting as
    docs/operations.md says (maxmemory, allkeys-lru). Stop it with ``.terminate()``."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is needed for the public cache's own Redis "
                 "(Debian: apt-get install redis-server).")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no", "--maxmemory", "1gb",
                                "--maxmemory-policy", "allkeys-lru"],
                               stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return f"redis://127.0.0.1:{port}/0", process


def run(*args: str, env: dict) -> None:
    subprocess.run([*args], cwd=ROOT, env=env, check=True)


def psql(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def server_url(database_url: str, name: str) -> str:
    return database_url.rsplit("/", 1)[0] + "/" + name


def production_env(name: str, database_url: str, scratch: Path, redis: str,
                   cache_redis: str) -> dict[str, str]:
    """The environment of a server run as production runs it, on its own database, cache
    prefix, static and export directories (bench/load.py and bench/writers.py), the public
    cache in a Redis apart from the broker's (``cache_redis``)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))},
        "REGISTRY_ENV": "production",
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "127.0.0.1",
        # As production requires: the site's own https origin for links, and the client on
        # loopback playing the TLS proxy whose X-Forwarded-Proto is believed.
        "SITE_URL": "https://registry.example",
        "TRUSTED_PROXIES": "127.0.0.1",
        "REDIS_URL": redis,
        "CELERY_BROKER_URL": redis,
        "CACHE_URL": cache_redis,
        "CACHE_KEY_PREFIX": f"bench-{name}",
        "STATIC_ROOT": str(scratch / "static"),
        "EXPORT_ROOT": str(scratch / "exports"),
    }


def prepare_database(env: dict[str, str], namespaces: int, versions: int) -> None:
    """Migrate, import IANA's registry, seed ``namespaces`` x ``versions``, collect the
    static files and build the exports (as after a deploy: every fragment made)."""
    manage = [PYTHON, "manage.py"]
    run(*manage, "migrate", "--verbosity", "0", env=env)
    run(*manage, "import_registry", "--verbosity", "0", env=env)
    run(*manage, "seed_load", "--namespaces", str(namespaces), "--versions", str(versions),
        "--prefix", PREFIX, env=env)
    run(*manage, "collectstatic", "--noinput", "--verbosity", "0", env=env)
    run(*manage, "build_exports", env=env)
    # As a database that has been running a while is (autovacuum): the visibility map
    # set, so the registry page's counts are index-only scans (57 ms at 100,000 on a
    # freshly seeded database, 11 ms after this).
    psql(env["DATABASE_URL"], "VACUUM (ANALYZE)")


def database_exists(admin_url: str, name: str) -> bool:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() \
            is not None


def fetch(url: str, headers: dict) -> tuple[int, float, dict]:
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - our server
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - our server
            response.read()
            status, got = response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        exc.read()
        status, got = exc.code, dict(exc.headers)
    return status, (time.perf_counter() - started) * 1000, got


_LATENCY = re.compile(r"^\s+(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)


def wrk(url: str, *, connections: int, duration: int, headers: dict) -> dict:
    args = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{duration}s",
            "--latency", "--timeout", "5s"]
    for name, value in headers.items():
        args += ["-H", f"{name}: {value}"]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    latency = {}
    for pct, value, unit in _LATENCY.findall(out):
        latency[pct] = float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    timeouts = re.search(r"timeout (\d+)", out)
    return {"rps": rps, "p50": latency.get("50"), "p99": latency.get("99"),
            "errors": int(errors.group(1)) if errors else 0,
            "timeouts": int(timeouts.group(1)) if timeouts else 0}


class Publisher:
    """Publishes as the database sees one: a namespace row changed and the registry
    generation moved, in one transaction (the generation moves at its commit)."""

    def __init__(self, database_url: str):
        import psycopg

        self.conn = psycopg.connect(database_url, autocommit=False)
        low, high = self.conn.execute(
            "SELECT min(id), max(id) FROM namespaces_namespace").fetchone()
        self.conn.commit()
        self.ids = (low, high)
        self.count = 0

    def publish(self) -> None:
        low, high = self.ids
        self.count += 1
        target = low + (self.count * 7919) % (high - low + 1)
        self.conn.execute("UPDATE namespaces_namespace SET updated_at = now() WHERE id = %s",
                          [target])
        self.conn.execute("INSERT INTO namespaces_generationbump (real_change_at) "
                          "VALUES (now())")
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def storm(publisher: Publisher, interval: float, stop: threading.Event) -> None:
    while not stop.wait(interval):
        publisher.publish()


def first_answers(url: str, headers: dict, clients: int) -> tuple[float, list[int]]:
    """``clients`` requests sent at once; the slowest one's ms and every status."""
    start = threading.Barrier(clients)
    results: list[tuple[int, float]] = []

    def one() -> None:
        start.wait()
        status, ms, _ = fetch(url, headers)
        results.append((status, ms))

    threads = [threading.Thread(target=one) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return max(ms for _, ms in results), sorted(status for status, _ in results)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def worker_pids(master: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def redis_bytes(redis_url: str, prefix: str) -> tuple[int, int]:
    """This run's keys in Redis: how many, and their memory (MEMORY USAGE)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    count = total = 0
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        count += 1
        total += client.memory_usage(key) or 0
    return count, total


def signed_in_cookie(env: dict) -> str:
    """A session of a seeded account and a CSRF cookie, as a signed-in browser sends them
    back (the log-in form set the CSRF cookie)."""
    code = (
        "from django.conf import settings; from django.test import Client; "
        "from registry.accounts.models import User; "
        "u = User.objects.filter(email='bench@example.org').first() or "
        "User.objects.create_user(email='bench@example.org', password=None); "
        "c = Client(); c.force_login(u); "
        "from django.middleware.csrf import CSRF_ALLOWED_CHARS; "
        "from django.utils.crypto import get_random_string; "
        "print(settings.SESSION_COOKIE_NAME + '=' + c.cookies[settings.SESSION_COOKIE_NAME].value"
        " + '; ' + settings.CSRF_COOKIE_NAME + '=' + get_random_string(32, CSRF_ALLOWED_CHARS))"
    )
    out = subprocess.run([PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def median_run(results: list[dict]) -> dict:
    """Each figure of several wrk runs as its median (errors and timeouts summed)."""
    return {"rps": statistics.median(r["rps"] for r in results),
            "p50": statistics.median(r["p50"] for r in results),
            "p99": statistics.median(r["p99"] for r in results),
            "errors": sum(r["errors"] for r in results),
            "timeouts": sum(r["timeouts"] for r in results)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--versions", type=int, default=5)
    parser.add_argument("--database", help="reuse (and keep) this database")
    parser.add_argument("--keep", action="store_true", help="keep the database it creates")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL URL of the server (any database on it)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=int, default=4, help="seconds per wrk run")
    parser.add_argument("--repeat", type=int, default=3,
                        help="floor and page runs, in turns, per page (medians are reported)")
    parser.add_argument("--only", help="measure only pages whose label contains this")
    parser.add_argument("--no-extras", action="store_true",
                        help="skip signed-in pages, the publish tests and the memory figures")
    parser.add_argument("--front", choices=("gunicorn", "nginx"), default="gunicorn",
                        help="what clients talk to: gunicorn itself, or nginx in front with "
                             "deploy/nginx-registry.conf (exports by X-Accel-Redirect)")
    parser.add_argument("--storm-interval", type=float, default=0.1,
                        help="seconds between publishes in the storm (default 0.1)")
    return parser.parse_args()


def measure_pages(args: argparse.Namespace, base: str, database_url: str,
                  proxy: dict[str, str], env: dict[str, str]) -> list[tuple]:
    """Each page (and, unless --no-extras, each HTML page signed in): its cold time, its
    SQL queries warm and cold, then floor and page in turns; one row each."""
    rows = []
    measured = [(label, path, export, {}) for label, path, export
                in pages(sample=max(1, args.namespaces // 2))]
    if not args.no_extras:
        cookie = {"Cookie": signed_in_cookie(env)}
        measured += [(f"{label}, signed in", path, False, cookie)
                     for label, path, export, _ in measured[:]
                     if not export]
        # What reading the visitor alone costs, against the same floor.
        measured.append(("trivial view reading its visitor, signed in",
                         "/bench-floor/visitor/", False, cookie))
    for label, path, export, extra in measured:
        if args.only and args.only not in label:
            continue
        # What a browser, a feed reader or a harvester sends: each asks for gzip.
        headers = {**proxy, "Accept-Encoding": "gzip", **extra}
        # Cold is the first request after a publish, in a worker that has served
        # the page before (its code and templates loaded, as in a running site):
        # a second of load reaches every worker, then the generation moves.
        wrk(base + path, connections=args.connections, duration=1, headers=headers)
        time.sleep(1)  # the requests wrk left queued are served before the publish
        psql(database_url, "UPDATE namespaces_registrygeneration "
                           "SET number = number + 1, changed_at = now()")
        status, cold_ms, got = fetch(base + path, headers)
        cold_queries = got.get("X-SQL-Queries", "?")
        if status != 200:
            sys.exit(f"{path} answered {status}")
        # Warm: the fewest over a few requests, as each worker's first request also
        # opens its database connection (and django.contrib.postgres asks for types).
        warm = [fetch(base + path, headers) for _ in range(2 * args.workers)]
        warm_ms = min(ms for _, ms, _ in warm)
        warm_queries = min(int(got.get("X-SQL-Queries", 0)) for _, _, got in warm)
        # Floor and page in turns, --repeat times: a drift of the machine between
        # two runs (the floor moved by 20% between runs on the quiet machine)
        # reaches both sides; each figure is the median of its runs.
        floors, runs = [], []
        for _ in range(args.repeat):
            floors.append(wrk(base + "/bench-floor/", connections=args.connections,
                              duration=args.duration, headers=headers))
            runs.append(wrk(base + path, connections=args.connections,
                            duration=args.duration, headers=headers))
        floor, page = median_run(floors), median_run(runs)
        rows.append((label, page, floor, warm_queries, cold_queries,
                     cold_ms, warm_ms, export))
        print(f"  {label}: {page['rps']:.0f} req/s, floor {floor['rps']:.0f}", flush=True)
    return rows


def print_report(args: argparse.Namespace, rows: list[tuple]) -> None:
    """The run's conditions, the Markdown table of every page and the medians."""
    print()
    print(f"{dt.date.today()}, {platform.node()}: {os.cpu_count()} cores, "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"{args.namespaces:,} namespaces x {args.versions} versions; gunicorn "
          f"{args.workers} sync workers; wrk {args.connections} connections, {args.repeat} x "
          f"{args.duration} s, floor and page in turns (medians)"
          + ("; nginx in front (deploy/nginx-registry.conf, exports by X-Accel-Redirect)"
             if args.front == "nginx" else ""))
    print()
    print("| page | req/s | floor req/s | ratio | p50 ms | p99 ms | floor p50 / p99 ms "
          "| SQL warm / cold | cold ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, page, floor, queries, cold_queries, cold_ms, _warm_ms, _export in rows:
        bad = f" ({page['errors']} errors)" if page["errors"] else ""
        bad += f" ({page['timeouts']} timeouts)" if page["timeouts"] else ""
        print(f"| {label} | {page['rps']:.0f}{bad} | {floor['rps']:.0f} "
              f"| {page['rps'] / floor['rps']:.2f} | {page['p50']:.1f} | {page['p99']:.1f} "
              f"| {floor['p50']:.1f} / {floor['p99']:.1f} "
              f"| {queries} / {cold_queries} | {cold_ms:.0f} |")
    print()
    pages_rows = [r for r in rows if not r[7] and not r[0].startswith("trivial view")]
    for kind, chosen in (("pages", pages_rows),
                         ("exports and API", [r for r in rows if r[7]])):
        if not chosen:
            continue
        print(f"Medians over the {len(chosen)} {kind}: ratio "
              f"{statistics.median(r[1]['rps'] / r[2]['rps'] for r in chosen):.2f}, "
              f"p50 {statistics.median(r[1]['p50'] for r in chosen):.1f} ms, "
              f"p99 {statistics.median(r[1]['p99'] for r in chosen):.1f} ms, "
              f"cold {statistics.median(r[5] for r in chosen):.0f} ms; worst ratio "
              f"{min(r[1]['rps'] / r[2]['rps'] for r in chosen):.2f}, worst p99 "
              f"{max(r[1]['p99'] for r in chosen):.1f} ms, worst cold "
              f"{max(r[5] for r in chosen):.0f} ms")


def main() -> None:
    args = parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed (Debian: apt-get install wrk).")

    name = args.database or f"urn_bench_{os.getpid()}"
    database_url = server_url(args.server, name)
    created = False
    if not database_exists(args.server, name):
        psql(args.server, f'CREATE DATABASE "{name}"')
        created = True
    drop = created and not args.keep and not args.database
    port = args.port or free_port()
    scratch = Path(tempfile.mkdtemp(prefix="urn-bench-"))
    cache_redis, cache_server = start_cache_redis()
    env = {
        **production_env(name, database_url, scratch, args.redis, cache_redis),
        "WEB_CONCURRENCY": str(args.workers),
        # One client on loopback asks thousands of times a second: the limits that would
        # refuse it (429) are lifted so the page itself is measured. They are still counted
        # in Redis on every request, as in production.
        **{f"RATE_LIMIT_{group}": "1000000/m" for group in ("SEARCH", "API_CHECK", "NID_CHECK")},
    }
    if args.front == "nginx":
        env["EXPORT_ACCEL_REDIRECT"] = "/_exports/"
    nginx = nginx_binary() if args.front == "nginx" else None
    if args.front == "nginx" and nginx is None:
        sys.exit("--front nginx needs nginx (Debian: apt-get install nginx-light).")
    app_port = free_port() if args.front == "nginx" else port
    server = front = None
    extras: dict = {}
    try:
        started = time.monotonic()
        prepare_database(env, args.namespaces, args.versions)
        print(f"database {name} ready in {time.monotonic() - started:.0f} s", flush=True)
        log = open(scratch / "gunicorn.log", "w")  # noqa: SIM115 - open while the server runs
        server = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind",
             f"127.0.0.1:{app_port}",
             "--access-logfile", str(scratch / "access.log")],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if nginx is not None:
            exports_dir = Path(env["EXPORT_ROOT"])
            exports_dir.mkdir(parents=True, exist_ok=True)
            front = nginx_start(nginx, nginx_home(scratch), port, args.workers,
                                front_snippet(app_port, exports_dir))
        base = f"http://127.0.0.1:{port}"
        proxy = {"X-Forwarded-Proto": "https"}
        for _ in range(100):
            try:
                if fetch(base + "/healthz", proxy)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)  # refused, or nginx's 502 while gunicorn starts
        else:
            sys.exit(f"gunicorn did not answer; see {scratch / 'gunicorn.log'}")
        rows = measure_pages(args, base, database_url, proxy, env)
        extras = {} if args.no_extras else measure_extras(args, base, database_url, proxy, scratch)
        if not args.no_extras:
            extras["rss"] = [rss_mb(pid) for pid in worker_pids(server.pid)]
            extras["redis"] = tuple(map(sum, zip(
                redis_bytes(args.redis, f"bench-{name}"),
                redis_bytes(cache_redis, f"bench-{name}"), strict=True)))
            extras["load"] = os.getloadavg()
    finally:
        for process in (front, server):
            if process is not None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
        cache_server.terminate()
        cache_server.wait(timeout=30)
        if drop:
            psql(args.server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(scratch, ignore_errors=True)

    print_report(args, rows)
    if extras:
        print_extras(args, extras)


EXPORT_FILES = ("/registry.xml", "/registry.csv", "/urn-namespaces-1.csv")

NGINX_CONF = """daemon off;
worker_processes {workers};
pid {home}/nginx.pid;
error_log {home}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
{body}
    }}
}}
"""
NGINX_SNIPPET = ROOT / "deploy" / "nginx-registry.conf"


def nginx_home(scratch: Path) -> Path:
    """A directory of its own, readable by nginx's workers (which drop root; the scratch
    directory is private)."""
    home = Path(tempfile.mkdtemp(prefix="urn-bench-nginx-", dir=scratch))
    (home / "tmp").mkdir()
    for folder in (scratch, home):
        folder.chmod(0o755)
    return home


def nginx_start(nginx: str, home: Path, port: int, workers: int, body: str) -> subprocess.Popen:
    (home / "nginx.conf").write_text(NGINX_CONF.format(
        workers=workers, home=home, port=port, body=body, temp_paths=nginx_temp_paths(home)))
    return subprocess.Popen([nginx, "-p", str(home), "-c", str(home / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)


def front_snippet(app_port: int, export_root: Path) -> str:
    """deploy/nginx-registry.conf as production includes it, with this run's gunicorn
    address (on TCP: the benchmark's client plays the proxy too) and EXPORT_ROOT in place
    of the deployment's two values."""
    text = NGINX_SNIPPET.read_text()
    for value, ours in (("http://urn_registry;", f"http://127.0.0.1:{app_port};"),
                        ("/var/lib/urn-registry/exports/;", f"{export_root}/;")):
        if text.count(value) != 1:
            sys.exit(f"{NGINX_SNIPPET} no longer has {value!r} once: update bench/load.py")
        text = text.replace(value, ours)
    # The benchmark's own header (bench/middleware.py), carried over like the app's.
    return text.replace("    internal;\n", "    internal;\n    add_header X-SQL-Queries "
                                             "$upstream_http_x_sql_queries always;\n", 1)


def download(url: str, headers: dict) -> tuple[bytes, dict]:
    """The body exactly as sent (urllib does not undo the gzip) and the headers."""
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - our server
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - our server
        return response.read(), dict(response.headers)


def static_reference(args, base: str, headers: dict, scratch: Path) -> list[tuple]:
    """Each whole-registry export against nginx serving the very bytes our server sent
    (same gzip body, type and encoding, ``sendfile`` on, as many worker processes as
    gunicorn has), in turns with wrk: the ceiling a static file server reaches for
    those bytes on this machine, which the export's ratio to the (tiny) floor cannot
    show. Skipped when nginx is not installed (Debian: apt-get install nginx-light)."""
    nginx = nginx_binary()
    if nginx is None:
        print("  nginx is not installed: no static-file reference", flush=True)
        return []
    home = nginx_home(scratch)
    (home / "files").mkdir()
    (home / "files").chmod(0o755)
    locations, sizes = [], {}
    for path in EXPORT_FILES:
        body, got = download(base + path, headers)
        (home / "files" / path.lstrip("/")).write_bytes(body)
        (home / "files" / path.lstrip("/")).chmod(0o644)
        sizes[path] = len(body)
        encoding = got.get("Content-Encoding")
        locations.append(
            f'        location = {path} {{ types {{ }} default_type "{got["Content-Type"]}";'
            + (f" add_header Content-Encoding {encoding};" if encoding else "") + " }")
    port = free_port()
    server = nginx_start(nginx, home, port, args.workers,
                         f"        root {home}/files;\n" + "\n".join(locations))
    found = []
    try:
        static = f"http://127.0.0.1:{port}"
        for _ in range(50):
            try:
                status = fetch(static + EXPORT_FILES[0], headers)[0]
                break
            except OSError:
                time.sleep(0.1)
        else:
            status = 0
        if status != 200:
            print(f"  nginx answered {status}: no static-file reference "
                  f"(see {home / 'error.log'})", flush=True)
            return []
        for path in EXPORT_FILES:
            theirs, ours = [], []
            for _ in range(args.repeat):
                theirs.append(wrk(static + path, connections=args.connections,
                                  duration=args.duration, headers=headers))
                ours.append(wrk(base + path, connections=args.connections,
                                duration=args.duration, headers=headers))
            found.append((path, sizes[path], median_run(ours), median_run(theirs)))
            print(f"  {path}: {found[-1][2]['rps']:.0f} req/s, nginx with the same "
                  f"{sizes[path]:,} bytes {found[-1][3]['rps']:.0f}", flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return found


def measure_extras(args, base: str, database_url: str, proxy: dict, scratch: Path) -> dict:
    headers = {**proxy, "Accept-Encoding": "gzip"}
    publisher = Publisher(database_url)
    found: dict = {"after_publish": [], "storm": [],
                   "static": static_reference(args, base, headers, scratch)}
    try:
        for path in EXPORT_FILES:
            fetch(base + path, headers)  # this generation built and served once
            publisher.publish()
            slowest, statuses = first_answers(base + path, headers, args.connections)
            found["after_publish"].append((path, slowest, statuses))
            print(f"  {path} after a publish: slowest of {args.connections} "
                  f"{slowest:.0f} ms", flush=True)
        for path in ("/", "/registry.csv"):
            quiet = wrk(base + path, connections=args.connections, duration=args.duration,
                        headers=headers)
            stop = threading.Event()
            thread = threading.Thread(target=storm, args=(publisher, args.storm_interval, stop))
            before = publisher.count
            thread.start()
            try:
                stormy = wrk(base + path, connections=args.connections,
                             duration=args.duration, headers=headers)
            finally:
                stop.set()
                thread.join()
            found["storm"].append((path, quiet, stormy, publisher.count - before))
            print(f"  {path} in a storm: {stormy['rps']:.0f} req/s against {quiet['rps']:.0f} "
                  "quiet", flush=True)
    finally:
        publisher.close()
    return found


def print_extras(args, extras: dict) -> None:
    print()
    load = extras["load"]
    print(f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    if extras["static"]:
        print("| export | bytes (gzip) | req/s | nginx, same bytes, req/s | x nginx "
              "| p50 / p99 ms | nginx p50 / p99 ms |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for path, size, ours, theirs in extras["static"]:
            bad = sum(run["errors"] + run["timeouts"] for run in (ours, theirs))
            print(f"| {path} | {size:,} | {ours['rps']:.0f}"
                  + (f" ({bad} errors)" if bad else "") + f" | {theirs['rps']:.0f} "
                  f"| {ours['rps'] / theirs['rps']:.2f} | {ours['p50']:.1f} / {ours['p99']:.1f} "
                  f"| {theirs['p50']:.1f} / {theirs['p99']:.1f} |")
        print()
    print(f"| after a publish | slowest of {args.connections} first answers ms | statuses |")
    print("| --- | --- | --- |")
    for path, slowest, statuses in extras["after_publish"]:
        counts = {code: statuses.count(code) for code in sorted(set(statuses))}
        print(f"| {path} | {slowest:.0f} | {', '.join(f'{n} x {c}' for c, n in counts.items())} |")
    print()
    print("| publish storm | publishes | quiet req/s | storm req/s | ratio | storm p50 / p99 ms "
          "| errors |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path, quiet, stormy, count in extras["storm"]:
        ratio = f"{stormy['rps'] / quiet['rps']:.2f}" if quiet["rps"] else "-"
        latency = (f"{stormy['p50']:.1f} / {stormy['p99']:.1f}" if stormy["p50"] is not None
                   else "-")
        print(f"| {path} | {count} | {quiet['rps']:.0f} | {stormy['rps']:.0f} | {ratio} "
              f"| {latency} | {stormy['errors'] + stormy['timeouts']} |")
    print()
    keys, used = extras["redis"]
    print("Worker RSS at the end: " + ", ".join(f"{mb:.0f} MB" for mb in extras["rss"])
          + f"; Redis: {keys} keys of this run, {used / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
