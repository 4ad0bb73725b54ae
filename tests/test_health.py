"""registry/health.py: liveness (the process), readiness (the registry and its exports can
be served), and /healthz for monitors (the database and the broker)."""

import json
import subprocess
import sys

import pytest
from django.conf import settings
from django.urls import get_resolver

from registry import health
from registry.namespaces import export_files
from tests.test_settings import PRODUCTION


def test_liveness_asks_nothing_else(client):
    response = client.get("/healthz/live")  # no database here: any query would fail
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]
    assert client.head("/healthz/live").status_code == 200


def test_liveness_answers_with_the_database_away(client, monkeypatch):
    monkeypatch.setattr(health, "database_ok", lambda: pytest.fail("asked the database"))
    assert client.get("/healthz/live").status_code == 200


def test_readiness_checks_the_database_and_the_exports(client, registry):
    from registry.namespaces.export_build import build_current_exports

    build_current_exports()
    response = client.get("/healthz/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "exports": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.parametrize("module, failing, shown", [
    (health, "database_ok", {"database": "down", "exports": "not ready"}),
    (export_files, "exports_ready", {"database": "ok", "exports": "not ready"}),
])
def test_readiness_is_503_naming_what_failed(client, db, monkeypatch, module, failing, shown):
    monkeypatch.setattr(module, failing, lambda: False)
    response = client.get("/healthz/ready")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json() == {"status": "unavailable", **shown}


def test_exports_are_ready_once_a_generation_is_built(registry, monkeypatch):
    from registry.namespaces import tasks
    from registry.namespaces.export_build import build_current_exports

    monkeypatch.setattr(tasks.build_exports_task, "delay", lambda: None)
    assert not export_files.exports_ready()  # none stored yet
    build_current_exports()
    assert export_files.exports_ready()


def test_healthz_checks_the_database_and_the_broker(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    # The test settings run Celery eagerly: there is no broker to reach.
    assert response.json() == {"status": "ok", "database": "ok", "broker": "eager"}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_is_503_when_the_broker_is_down(client, db, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from registry.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["broker"] == "down"


REDIRECT_EXEMPT = """
import django, json
django.setup()
from django.conf import settings
print(json.dumps(settings.SECURE_REDIRECT_EXEMPT))
"""


def test_every_health_check_is_probed_over_plain_http_in_production():
    """Load balancers probe over HTTP: no check is redirected to HTTPS."""
    import os
    import re

    checks = [str(pattern.pattern) for pattern in get_resolver().url_patterns
              if str(pattern.pattern).startswith("healthz")]
    assert len(checks) == 3
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "SECRET_KEY", "REGISTRY_ENV", "DEBUG")}
    env.update(PRODUCTION, DJANGO_SETTINGS_MODULE="registry.settings")
    result = subprocess.run([sys.executable, "-c", REDIRECT_EXEMPT], cwd=settings.BASE_DIR,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    exempt = json.loads(result.stdout.strip().splitlines()[-1])
    assert all(any(re.search(rule, check) for rule in exempt) for check in checks)
