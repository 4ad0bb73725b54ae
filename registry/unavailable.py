"""503 with Retry-After, never a 500, when a part a request needs is away.

- **The database away** (PostgreSQL stopped, restarting, unreachable; a connection
  cut; a lock or serialization failure that outlived its retries): any
  ``OperationalError`` or ``InterfaceError`` a view or a middleware meets becomes a
  503 with ``Retry-After: 5``: the site's 503 page, JSON under ``/api/``. Nothing of the
  request was committed (its transaction failed with it). A visitor without a session
  may still get the public pages already in the cache (public_cache.py).
- **Counts that cannot be kept** (the cache away, registry/cache.py): the rate limits
  that fail closed raise ``ServiceUnavailable`` (protection.py); so does a form of the
  accounts (log-in, sign-up, password reset, ...: django-allauth counts each in the
  cache to throttle guessing) posted while the cache does not answer. Log-out is not
  counted and always works.

``UnavailableMiddleware`` answers both for views; ``server_error`` (``handler500``)
answers a database failure met outside a view (a session saved after the view) the
same way, and anything else with the site's 500 page. The security headers are set
around all of them by the outermost middleware (protection.py). A failure is logged
once per ``LOG_SECONDS`` per process, not once per request.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

from django.core.cache import caches
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.cache import add_never_cache_headers
from django.views import defaults

from registry.cache import cache_available
from registry.http_semantics import is_api

logger = logging.getLogger(__name__)

# What the database raises when it is away (psycopg's connection and server errors,
# mapped by Django), as opposed to a query that is wrong.
DATABASE_AWAY = (OperationalError, InterfaceError)
DATABASE_RETRY_AFTER = 5
COUNTS_RETRY_AFTER = 10  # the cache's retry is a second; its return may take longer
LOG_SECONDS = 60.0
_logged = {"at": float("-inf"), "since": 0}


class ServiceUnavailable(Exception):
    """A part the request needs is away: answered 503 with Retry-After."""

    def __init__(self, what: str, *, retry_after: int):
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


def unavailable(request: HttpRequest, what: str, retry_after: int) -> HttpResponse:
    """The 503: the site's page (which needs neither the database nor the session) or,
    under /api/, JSON; never stored by a cache."""
    if is_api(request):
        response: HttpResponse = JsonResponse(
            {"error": f"temporarily unavailable ({what}); try again",
             "retry_after": retry_after}, status=503)
    else:
        response = HttpResponse(render_to_string("503.html", {"retry_after": retry_after}),
                                status=503)
    response["Retry-After"] = str(retry_after)
    add_never_cache_headers(response)
    # Logged by what noticed the outage, once per interval, not by Django once per request.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def _database_away(request: HttpRequest, error: BaseException) -> HttpResponse:
    now = time.monotonic()
    _logged["since"] += 1
    if now - _logged["at"] >= LOG_SECONDS:
        logger.warning("The database is unavailable (%s: %s); answering 503 (%d requests "
                       "since the last report).", type(error).__name__, error,
                       _logged["since"])
        _logged["at"], _logged["since"] = now, 0
    return unavailable(request, "database", DATABASE_RETRY_AFTER)


def counts_needed(request: HttpRequest, view: Callable) -> bool:
    """A form of django-allauth's (each is rate limited in the cache) being posted; not
    log-out, which counts nothing."""
    module = getattr(view, "__module__", "") or ""
    return (request.method == "POST" and module.startswith("allauth.")
            and getattr(request.resolver_match, "url_name", "") != "account_logout")


class UnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable, args: tuple,
                     kwargs: dict) -> HttpResponse | None:
        if counts_needed(request, view) and not cache_available(caches["default"]):
            return unavailable(request, "log-in throttling", COUNTS_RETRY_AFTER)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if isinstance(exception, ServiceUnavailable):
            return unavailable(request, exception.what, exception.retry_after)
        if isinstance(exception, DATABASE_AWAY):
            return _database_away(request, exception)
        return None


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a failure outside any view. The database away is a 503 there too."""
    error = sys.exc_info()[1]
    if isinstance(error, ServiceUnavailable):
        return unavailable(request, error.what, error.retry_after)
    if isinstance(error, DATABASE_AWAY):
        return _database_away(request, error)
    return defaults.server_error(request)
