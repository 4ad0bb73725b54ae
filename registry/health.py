"""``/healthz``: is this process able to serve? For load balancers and monitors.

Checks the database (one ``SELECT 1``) and the Celery broker (a connection),
and answers 200 with what it checked, or 503 naming what failed. Cheap enough
to be probed every few seconds; it reads no registry data and sets no cookie."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

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


@never_cache
@require_GET
def healthz(request):
    checks = {"database": "ok" if database_ok() else "down", "broker": broker_state()}
    healthy = all(state in ("ok", "eager") for state in checks.values())
    return JsonResponse({"status": "ok" if healthy else "unavailable", **checks},
                        status=200 if healthy else 503)
