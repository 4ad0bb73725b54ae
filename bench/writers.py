"""Concurrent registrants submitting requests, as in production. One command:

    .venv/bin/python bench/writers.py                   # 1 client, then 20, 10 s each
    .venv/bin/python bench/writers.py --clients 1 20 --duration 10 --celery none --keep

Creates a PostgreSQL database of its own (``urn_writers_<pid>``, dropped at the end
unless --keep), migrates it, imports IANA's registry and seeds a modest registry
(``seed_load``, 1,000 namespaces x 2 versions by default), creates one registrant
account per client through ``accounts.actions.user_create`` (verified address) with
a session made server-side (as bench/load.py does for its signed-in visitor), then
starts gunicorn exactly as bench/load.py does (gunicorn.conf.py, REGISTRY_ENV=production,
Redis cache and broker, its own CACHE_KEY_PREFIX, an https SITE_URL, loopback as the
trusted proxy, X-Forwarded-Proto: https) on a free port of 127.0.0.1.

Each client is a thread with its own session and its own keep-alive connection, doing
what a registrant does to submit: GET the new-request form (taking its CSRF token),
POST a complete Appendix A template (``sample_text.template_values``, about 2 KB) with
a new formal NID unique per run, client and iteration and "submit", and follow the
redirect to the request's page. A submission counts when the POST answers 302 to the
request page and that page answers 200; anything else (any non-2xx/3xx, any 5xx, a
transport error) is an error. For each number of clients (--clients, default 1 then
20) it runs for --duration seconds after a warm-up (--warmup seconds, with at least as
many clients as gunicorn has workers, so each has built its conflict index), and reports
submissions/s, p50/p99 of a whole submission (the three requests) and of the POST alone,
errors, the CPU each part spent per submission (from /proc), the cores the run had, and
what the database backends waited on (pg_stat_activity sampled every 50 ms). At the end
it checks in the database that every counted submission is there, in public review,
with exactly its two event rows (draft started, submitted) and its outbox mail, that no
NID is there twice (case-insensitively), and reads pg_stat_database.deadlocks and the
gunicorn log.

Celery (--celery): ``worker`` (the default) runs one as production does (Procfile:
``celery -A registry.celery worker``), so every submission's mail and the export
build it queues are really done, on the same 2 cores; ``none`` leaves the tasks queued
in Redis, measuring the web tier alone. Mail goes to Django's dummy backend (no MTA
here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import platform
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))

from bench.load import (  # noqa: E402
    database_exists,
    free_port,
    prepare_database,
    production_env,
    psql,
    server_url,
    start_cache_redis,
)
from registry.namespaces.sample_text import template_values  # noqa: E402

ACCOUNT_DOMAIN = "writers.example"
_CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
_REQUEST_PAGE = re.compile(r"^/requests/(\d+)/$")


# --- set-up (runs inside Django: ``manage.py shell -c``) -----------------------------------


def make_accounts(count: int) -> None:
    """``count`` registrant accounts (verified addresses) and a session for each;
    prints the session cookies as JSON. Called by main() through ``manage.py shell``."""
    from django.conf import settings
    from django.test import Client

    from registry.accounts.actions import user_create
    from registry.accounts.models import User

    cookies = []
    for number in range(count):
        email = f"registrant{number}@{ACCOUNT_DOMAIN}"
        user = User.objects.filter(email=email).first() or user_create(
            email=email, password=None, first_name="Writer", last_name=str(number),
            organisation=f"Writers Bench {number}", verified=True,
            reason="bench/writers.py: a concurrent registrant.", actor=None)
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
    print(json.dumps({"name": settings.SESSION_COOKIE_NAME, "values": cookies}))


# --- the clients -------------------------------------------------------------------------


class Refused(Exception):
    """An answer a registrant should not get."""


@dataclass
class Tally:
    done: list[tuple[float, float]] = field(default_factory=list)  # (submission ms, POST ms)
    pks: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Registrant:
    """One signed-in registrant on one keep-alive connection (reopened when gunicorn
    closes it), with the cookies the site sets."""

    def __init__(self, port: int, number: int, session: tuple[str, str], run_tag: str):
        self.port, self.number, self.run_tag = port, number, run_tag
        self.origin = f"https://127.0.0.1:{port}"
        self.cookies = {session[0]: session[1]}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.iteration = 0

    def _send(self, method: str, path: str, body: bytes | None = None) -> tuple[int, dict, bytes]:
        headers = {"Host": f"127.0.0.1:{self.port}", "X-Forwarded-Proto": "https",
                   "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers |= {"Content-Type": "application/x-www-form-urlencoded",
                        "Origin": self.origin, "Referer": self.origin + path}
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the server had closed: once more, on a new one.
                self.conn.close()
                if attempt == 2:
                    raise
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def nid(self) -> str:
        # Formal (section 5.1): letters, digits, hyphens, 3 to 32 characters; unique per
        # run, client and iteration; never "urn-", "x-" or two letters and a hyphen.
        return f"wr{self.run_tag}-c{self.number}-n{self.iteration}"

    def submit(self) -> tuple[int, float]:
        """One submission; its request's pk and the POST's ms."""
        self.iteration += 1
        status, _, page = self._send("GET", "/requests/new/")
        if status != 200:
            raise Refused(f"GET /requests/new/ answered {status}")
        token = _CSRF.search(page)
        if token is None:
            raise Refused("the form has no CSRF token")
        nid = self.nid()
        values = template_values(random.Random(nid), nid, self.iteration)  # noqa: S311
        values |= {"registrant_organisation": f"Writers Bench {self.number}",
                   "private_contact_name": f"Writer {self.number}",
                   "private_contact_email": f"registrant{self.number}@{ACCOUNT_DOMAIN}"}
        form = {"csrfmiddlewaretoken": token.group(1).decode(), "edit_version": "0",
                "kind": "formal", "proposed_nid": nid, **values, "submit": "1"}
        started = time.perf_counter()
        status, headers, body = self._send("POST", "/requests/new/",
                                           urllib.parse.urlencode(form).encode())
        post_ms = (time.perf_counter() - started) * 1000
        location = urllib.parse.urlsplit(headers.get("location", "")).path
        found = _REQUEST_PAGE.match(location)
        if status != 302 or found is None:
            reason = re.search(rb'class="invalid-feedback[^>]*>(.*?)<', body or b"")
            raise Refused(f"POST answered {status} {location!r}"
                          + (f": {reason.group(1).decode()[:80]}" if reason else ""))
        status, _, _ = self._send("GET", location)
        if status != 200:
            raise Refused(f"GET {location} answered {status}")
        return int(found.group(1)), post_ms

    def work(self, deadline: float, tally: Tally, lock: threading.Lock) -> None:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                pk, post_ms = self.submit()
            except (Refused, OSError, http.client.HTTPException) as exc:
                with lock:
                    tally.errors.append(f"client {self.number}: {exc}")
                self.conn.close()
                continue
            with lock:
                tally.done.append(((time.perf_counter() - started) * 1000, post_ms))
                tally.pks.append(pk)


# --- what the machine and the database did meanwhile ---------------------------------------


def process_cpu(pids: list[int]) -> dict[int, float]:
    """Each process's CPU seconds (user + system) so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        found[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return found


def cpu_snapshot(roles: dict[str, int], server: str, name: str) -> dict[str, dict[int, float]]:
    """CPU so far of each part: the web workers, the Celery worker, the database
    backends of this database, and this process (the clients)."""
    found = {role: process_cpu(family(pid)) for role, pid in roles.items()}
    found["database"] = process_cpu(backends(server, name))
    found["clients"] = {os.getpid(): time.process_time()}
    return found


def cpu_spent(before: dict, after: dict) -> dict[str, float]:
    return {role: sum(seconds - before.get(role, {}).get(pid, 0.0)
                      for pid, seconds in pids.items())
            for role, pids in after.items()}


def family(pid: int) -> list[int]:
    """A process and its descendants."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        children = Path(f"/proc/{current}/task/{current}/children")
        if children.exists():
            queue += [int(child) for child in children.read_text().split()]
    return found


def backends(server: str, name: str) -> list[int]:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        return [pid for (pid,) in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name])]


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


class WaitSampler:
    """pg_stat_activity of the benchmark's database every 50 ms: how many backends were
    active, and on what they waited (Lock:transactionid, LWLock:WALWrite, IO:WALSync...)."""

    def __init__(self, database_url: str, name: str):
        self.database_url, self.name = database_url, name
        self.samples = 0
        self.active = 0
        self.waits: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.stop.wait(0.05):
                rows = conn.execute(
                    "SELECT wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE datname = %s AND state = 'active' AND pid <> pg_backend_pid()",
                    [self.name]).fetchall()
                self.samples += 1
                self.active += len(rows)
                for kind, event in rows:
                    if kind and kind != "Client":
                        label = f"{kind}:{event}"
                        self.waits[label] = self.waits.get(label, 0) + 1

    def __enter__(self) -> WaitSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def summary(self) -> str:
        if not self.samples:
            return "-"
        top = sorted(self.waits.items(), key=lambda item: -item[1])[:3]
        waits = ", ".join(f"{label} {count / self.samples:.2f}" for label, count in top)
        return f"{self.active / self.samples:.2f} active" + (f"; {waits}" if waits else "")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def measure(port: int, sessions: list[tuple[str, str]], clients: int, duration: float,
            warmup: float, run_tag: str, server: str, name: str, roles: dict[str, int],
            workers: int) -> dict:
    """``clients`` registrants submitting for ``duration`` s, after ``warmup`` s of at
    least as many clients as gunicorn has workers (each worker's first submission builds
    its conflict index: a worker's start, not the steady state measured)."""
    registrants = [Registrant(port, number, sessions[number], f"{run_tag}{clients}")
                   for number in range(max(clients, min(workers, len(sessions))))]
    lock = threading.Lock()
    warm = Tally()
    threads = [threading.Thread(target=r.work, args=(time.monotonic() + warmup, warm, lock))
               for r in registrants]
    registrants = registrants[:clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally = Tally()
    busy0, total0 = cpu_times()
    spent_before = cpu_snapshot(roles, server, name)
    with WaitSampler(server, name) as waits:
        started = time.monotonic()
        deadline = started + duration
        threads = [threading.Thread(target=r.work, args=(deadline, tally, lock))
                   for r in registrants]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    busy1, total1 = cpu_times()
    spent = cpu_spent(spent_before, cpu_snapshot(roles, server, name))
    for registrant in registrants:
        registrant.conn.close()
    whole = [ms for ms, _ in tally.done]
    posts = [ms for _, ms in tally.done]
    return {
        "clients": clients, "elapsed": elapsed, "count": len(whole),
        "rate": len(whole) / elapsed,
        "p50": percentile(whole, 50) if whole else 0, "p99": percentile(whole, 99) if whole else 0,
        "post_p50": percentile(posts, 50) if posts else 0,
        "post_p99": percentile(posts, 99) if posts else 0,
        "errors": tally.errors + warm.errors, "pks": tally.pks + warm.pks,
        "cpu": (busy1 - busy0) / max(1, total1 - total0), "waits": waits.summary(),
        "spent": {role: seconds * 1000 / max(1, len(whole)) for role, seconds in spent.items()},
    }


# --- checking what was written --------------------------------------------------------------


def verify(database_url: str, pks: list[int]) -> list[str]:
    """Every counted submission in the database as the workflow says it must be."""
    import psycopg

    problems = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT r.id, r.state, lower(r.proposed_nid), "
            "count(e.id) FILTER (WHERE e.kind = 'create'), "
            "count(e.id) FILTER (WHERE e.kind = 'transition' AND e.transition = 'submit'), "
            "count(e.id), "
            "(SELECT count(*) FROM review_outboundmessage m WHERE m.registration_id = r.id) "
            "FROM review_registrationrequest r LEFT JOIN review_requestevent e "
            "ON e.registration_id = r.id WHERE r.id = ANY(%s) GROUP BY r.id", [pks]).fetchall()
        if len(rows) != len(set(pks)) or len(set(pks)) != len(pks):
            problems.append(f"{len(pks)} submissions counted, {len(set(pks))} distinct, "
                            f"{len(rows)} in the database")
        for pk, state, _nid, created, submitted, events, mail in rows:
            if state != "in_review" or (created, submitted, events) != (1, 1, 2) or not mail:
                problems.append(f"request {pk}: {state}, events create {created} submit "
                                f"{submitted} of {events}, {mail} mails")
        twice = conn.execute(
            "SELECT lower(proposed_nid), count(*) FROM review_registrationrequest "
            "WHERE proposed_nid <> '' GROUP BY 1 HAVING count(*) > 1").fetchall()
        problems += [f"NID {nid} proposed {count} times" for nid, count in twice]
    return problems[:10]


def deadlocks(database_url: str, name: str) -> int:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        return conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = %s",
                            [name]).fetchone()[0]


# --- the run ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 20],
                        help="numbers of concurrent clients to measure, in turn (default 1 20)")
    parser.add_argument("--duration", type=float, default=10, help="seconds per measurement")
    parser.add_argument("--warmup", type=float, default=3,
                        help="seconds of submissions before each measurement, not counted")
    parser.add_argument("--namespaces", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--celery", choices=("worker", "none"), default="worker")
    parser.add_argument("--keep", action="store_true", help="keep the database it creates")
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL URL of the server (any database on it)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--workers", type=int, default=0,
                        help="WEB_CONCURRENCY for gunicorn (default: gunicorn.conf.py's own)")
    args = parser.parse_args()

    name = f"urn_writers_{os.getpid()}"
    database_url = server_url(args.server, name)
    if database_exists(args.server, name):
        sys.exit(f"database {name} exists already")
    psql(args.server, f'CREATE DATABASE "{name}"')
    port = args.port or free_port()
    scratch = Path(tempfile.mkdtemp(prefix="urn-writers-"))
    cache_redis, cache_server = start_cache_redis()
    env = {
        **production_env(name, database_url, scratch, args.redis, cache_redis),
        "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
        **({"WEB_CONCURRENCY": str(args.workers)} if args.workers else {}),
    }
    processes: list[subprocess.Popen] = []
    results = []
    try:
        started = time.monotonic()
        manage = [PYTHON, "manage.py"]
        prepare_database(env, args.namespaces, args.versions)
        out = subprocess.run(
            [*manage, "shell", "-c",
             f"from bench.writers import make_accounts; make_accounts({max(args.clients)})"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
        cookies = json.loads(out.strip().splitlines()[-1])
        sessions = [(cookies["name"], value) for value in cookies["values"]]
        print(f"database {name} ready in {time.monotonic() - started:.0f} s", flush=True)
        log = open(scratch / "gunicorn.log", "w")  # noqa: SIM115 - open while the server runs
        processes.append(subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}",
             "--access-logfile", str(scratch / "access.log")],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        if args.celery == "worker":
            processes.append(subprocess.Popen(
                [PYTHON, "-m", "celery", "-A", "registry.celery", "worker", "--loglevel",
                 "WARNING"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))
        wait_for(port, scratch)
        time.sleep(1)  # every worker forked
        workers = len(subprocess.run(["pgrep", "-P", str(processes[0].pid)],
                                     capture_output=True, text=True).stdout.split())
        before = deadlocks(args.server, name)
        run_tag = secrets.token_hex(2)
        for clients in args.clients:
            roles = {"web": processes[0].pid}
            if args.celery == "worker":
                roles["celery"] = processes[1].pid
            result = measure(port, sessions, clients, args.duration, args.warmup, run_tag,
                             args.server, name, roles, workers)
            results.append(result)
            print(f"  {clients} clients: {result['rate']:.1f} submissions/s, "
                  f"{len(result['errors'])} errors", flush=True)
        problems = verify(database_url, [pk for r in results for pk in r["pks"]])
        after = deadlocks(args.server, name)
        logged = (scratch / "gunicorn.log").read_text(errors="replace")
        failures = len(re.findall(r"Traceback|deadlock detected|WORKER TIMEOUT", logged))
        load = os.getloadavg()
    finally:
        for process in reversed(processes):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
        cache_server.terminate()
        cache_server.wait(timeout=30)
        if not args.keep:
            psql(args.server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(scratch, ignore_errors=True)
    report(args, results, problems, after - before, failures, load, workers)


def wait_for(port: int, scratch: Path) -> None:
    for _ in range(150):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz", headers={"X-Forwarded-Proto": "https"})
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gunicorn did not answer; see {scratch / 'gunicorn.log'}")


def report(args, results: list[dict], problems: list[str], new_deadlocks: int, failures: int,
           load: tuple[float, float, float], workers: int) -> None:
    celery = ("a Celery worker ran (as in production: each submission's mail sent to a dummy "
              "backend, and the export build its commit queues, on the same cores)"
              if args.celery == "worker" else
              "no Celery worker: the tasks stayed queued in Redis (the web tier alone)")
    print()
    print(f"{dt.date.today()}, {platform.node()}: {os.cpu_count()} cores, "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"{args.namespaces:,} namespaces x {args.versions} versions; gunicorn.conf.py with "
          f"{workers} workers; {args.duration:g} s per row after {args.warmup:g} s of warm-up; "
          f"{celery}")
    print()
    print("| clients | submissions/s | x 1 client | p50 ms | p99 ms | POST p50 / p99 ms "
          "| errors | CPU busy | database backends (mean per sample) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    one = next((r["rate"] for r in results if r["clients"] == 1), results[0]["rate"])
    for r in results:
        print(f"| {r['clients']} | {r['rate']:.1f} ({r['count']} in {r['elapsed']:.1f} s) "
              f"| {r['rate'] / one if one else 0:.2f} | {r['p50']:.0f} | {r['p99']:.0f} "
              f"| {r['post_p50']:.0f} / {r['post_p99']:.0f} | {len(r['errors'])} "
              f"| {r['cpu']:.0%} | {r['waits']} |")
    print()
    print("CPU ms per submission, by part (from /proc: the machine's other processes "
          "excluded); the cores this run had (CPU spent / time), and the submissions/s the "
          f"machine's {os.cpu_count()} cores would allow at that cost if the run had them all:")
    print()
    roles = list(results[0]["spent"])
    print("| clients | " + " | ".join(roles) + " | all | cores used | ceiling /s |")
    print("| --- | " + " | ".join("---" for _ in roles) + " | --- | --- | --- |")
    for r in results:
        cost = sum(r["spent"].values())
        print(f"| {r['clients']} | " + " | ".join(f"{r['spent'][role]:.0f}" for role in roles)
              + f" | {cost:.0f} | {cost * r['rate'] / 1000:.2f} "
              f"| {(os.cpu_count() or 1) * 1000 / cost if cost else 0:.1f} |")
    print()
    errors = [e for r in results for e in r["errors"]]
    print(f"Errors: {len(errors)}" + (f" (first: {errors[:3]})" if errors else "")
          + f"; deadlocks (pg_stat_database): {new_deadlocks}; tracebacks, deadlocks or "
          f"worker timeouts in the gunicorn/Celery log: {failures}")
    print("Database check of every counted submission (in review, events create + submit, "
          "its mail, no NID twice): " + ("all right" if not problems else "; ".join(problems)))
    print(f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if len(results) > 1:
        print(f"Ratio, {results[-1]['clients']} clients to {results[0]['clients']}: "
              f"{results[-1]['rate'] / results[0]['rate']:.2f}")


if __name__ == "__main__":
    main()
