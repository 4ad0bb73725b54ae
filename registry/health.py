"""Health checks for load balancers, supervisors and monitors. None reads registry data
or sets a cookie, and each is cheap enough to be probed every few seconds.

- ``/healthz/live``, liveness: the process answers. It asks nothing else, so a
  supervisor restarts the process only when the process itself is stuck, never because
  the database or a Redis is away (restarting would not bring them back).
- ``/healthz/ready``, readiness: this process can serve the registry and its exports:
  the database answers (one ``SELECT 1``) and the exports can be served
  (``export_files.exports_ready``). 200 with what it checked, or 503 naming what failed:
  a load balancer sends no traffic here until it is 200. The cache and the Celery broker
  are not part of it: without them the site is slower and queues its work for later, but
  serves (taking every node out because a Redis is away would stop the whole site).
- ``/healthz``, for monitors: the database and the Celery broker, 200 or 503.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from registry.namespaces import export_files
from registry.unavailable import DATABASE_RETRY_AFTER

BROKER_TIMEOUT_SECONDS = 2


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return False


def broker_state() -> str:
    """"ok", "eager" (no broker: tasks run in-process, development only) or "down"."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    from registry.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
        return "ok"
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return "down"


def _answer(checks: dict[str, str], healthy: bool) -> JsonResponse:
    response = JsonResponse({"status": "ok" if healthy else "unavailable", **checks},
                            status=200 if healthy else 503)
    if not healthy:  # as every 503 of the site
        response["Retry-After"] = str(DATABASE_RETRY_AFTER)
    return response


@never_cache
@require_GET
def live(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def ready(request):
    database = database_ok()
    checks = {"database": "ok" if database else "down",
              # The exports read the generation from the database: not ready without it.
              "exports": "ok" if database and export_files.exports_ready() else "not ready"}
    return _answer(checks, all(state == "ok" for state in checks.values()))


@never_cache
@require_GET
def healthz(request):
    checks = {"database": "ok" if database_ok() else "down", "broker": broker_state()}
    return _answer(checks, all(state in ("ok", "eager") for state in checks.values()))
