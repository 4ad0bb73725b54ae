"""PostgreSQL stopped under load (a restart, a crash): 503 with Retry-After, never 500.

The server runs on a PostgreSQL cluster of the test's own, stopped and started again
while clients read. Anonymous pages already cached stay 200 (the generation this
process read last, registry/namespaces/public_cache.py); anything that needs the
database is a 503 with Retry-After (JSON under /api/); liveness stays 200 and readiness
turns 503; once PostgreSQL is back everything answers 200 again without a hand step."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from django.conf import settings

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

SEED = """
import django, json
django.setup()
from tests.factories import make_user
from tests.faults.conftest import signed_in_session
print(json.dumps(signed_in_session(make_user("reader@example.org"))))
"""

WARM = ["/", "/requests/review/", "/api/namespaces/"]


def django_run(environment: dict[str, str], *args: str) -> str:
    result = subprocess.run([sys.executable, *args], cwd=settings.BASE_DIR, env=environment,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("mode", ["fast", "immediate"], ids=["restart", "crash"])
def test_the_database_stopped_under_load(mode, private_cluster, redis_servers, gunicorn_servers,
                                         tmp_path):
    environment = server_environment(
        database_url=private_cluster.create_database("registry_fault"),
        redis_url=redis_servers().url, export_root=tmp_path / "exports",
        DJANGO_SETTINGS_MODULE="registry.settings",
        RATE_LIMIT_SEARCH="100000/m")  # every search a new one, each counted
    django_run(environment, "manage.py", "migrate", "--noinput", "-v", "0")
    session = json.loads(django_run(environment, "-c", SEED).strip().splitlines()[-1])
    django_run(environment, "manage.py", "build_exports")  # as after a deploy: ready
    signed_in = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"}
    server = gunicorn_servers(environment)
    for path in WARM:
        assert server.answers(path) == 200, path
    calls = [*(Call(f"cached {path}", path) for path in WARM),
             Call.rotating("not cached: search", [f"/search/?q=word{n}" for n in range(5000)]),
             Call.rotating("not cached: API", [f"/api/namespaces/nope{n}/" for n in range(25)]),
             Call("signed in: my requests", "/requests/", headers=signed_in),
             Call("liveness", "/healthz/live"),
             Call("readiness", "/healthz/ready")]
    with Load(server.port, calls) as load:
        time.sleep(2)
        stopped_at = load.now()
        private_cluster.stop(mode)
        time.sleep(4)
        restarted_at = load.now()
        private_cluster.start()
        started_at = load.now()

        def ready() -> bool:
            answered = load.between(load.now() - 0.3, load.now())
            return bool(answered) and all(a.status is not None and a.status < 500
                                          for a in answered)
        wait_until(ready, 20, "every page answered again")
        recovered_at = load.now()
        time.sleep(1)
    answers = load.answers
    assert_never_500_and_always_headed(answers)
    outage = load.between(stopped_at + 0.3, restarted_at)
    during = by_label(outage)
    for path in WARM:  # served from the cache, by the generation read before the outage
        assert during[f"cached {path}"] == {"200": len(
            [a for a in outage if a.label == f"cached {path}"])}, during
    for label in ("not cached: search", "not cached: API", "signed in: my requests"):
        assert set(during[label]) == {"503"}, (label, during)
    assert set(during["liveness"]) == {"200"} and set(during["readiness"]) == {"503"}, during
    assert all(a.headers["Content-Type"] == "application/json" and
               int(a.headers["Retry-After"]) > 0 for a in outage
               if a.label == "not cached: API"), "a JSON 503 under /api/"
    after = load.between(recovered_at, load.now())
    assert after and all(a.status == (404 if a.label == "not cached: API" else 200)
                         for a in after), by_label(after)
    report(f"PostgreSQL stopped ({mode}) 4 s", {
        "requests": len(answers), "statuses": statuses(answers),
        "during the outage": during,
        "every page answered again after PostgreSQL started (s)": round(
            recovered_at - started_at, 2),
        "pg_ctl start took (s)": round(started_at - restarted_at, 2)})
