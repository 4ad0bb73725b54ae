"""Protection that every page shares: rate limits and the headers no view should forget.

- Rate limits (django-ratelimit, counted in the cache, Redis in production) on the
  inputs that cost the registry work or send mail: comments, the URN check API,
  the live NID check and search. ``limited(group, key)`` decorates a view whose
  every request costs; ``limit(request, group)`` counts where the cost is, for a
  view that answers most requests from the public cache (search, GET /api/check:
  only a cache miss does work, so only a miss counts). The rates come from
  settings.RATE_LIMITS, so an operator can tune them. A visitor over a limit gets a
  429 page (JSON under /api/) with Retry-After. With the cache away, ``FAIL_OPEN``
  says which groups let requests through; the others answer 503.
- ``ProtectionHeadersMiddleware``: Permissions-Policy on every response, and
  ``Cache-Control: private, no-store`` on everything answered to a visitor with a
  session who is, or may be, signed in (their drafts, internal comments and queues must
  not stay in a shared cache or the browser's back-forward history after log-out).
  Content-Security-Policy is django-csp's middleware (settings.CONTENT_SECURITY_POLICY).
  Both are outermost in settings.MIDDLEWARE, so every
  answer carries them, a redirect, a bad Host, a 503 or a 500 too; neither reads
  anything that could fail.
- ``csrf_failure``: the CSRF failure page, the site's own template.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from django_ratelimit.core import _split_rate, is_ratelimited
from django_ratelimit.exceptions import Ratelimited

from registry.cache import cache_available
from registry.unavailable import COUNTS_RETRY_AFTER, ServiceUnavailable

PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in (
    "accelerometer", "autoplay", "camera", "display-capture", "fullscreen", "geolocation",
    "gyroscope", "magnetometer", "microphone", "midi", "payment", "picture-in-picture",
    "publickey-credentials-get", "screen-wake-lock", "serial", "usb", "xr-spatial-tracking",
))


# With the cache away no count can be kept. These groups then let every request through
# (fail open): each request's work is bounded (a search, a URN or NID check) and
# refusing them would take the public registry down with its cache. Every other group
# fails closed, a 503 with Retry-After: comments send mail to people, which cannot be
# taken back. Log-in and the other account forms fail closed too (registry/unavailable.py):
# unthrottled, they would let passwords be guessed.
FAIL_OPEN = frozenset({"search", "api_check", "nid_check"})


def rate_for(group: str, request: HttpRequest) -> str:
    """The rate of a group, read at each request (tests and operators change it)."""
    return settings.RATE_LIMITS[group]


def limited(group: str, key: str = "ip") -> Callable:
    """Refuse a visitor (by ``key``: "ip" or "user") past the group's rate, with a 429:
    ``limit()`` on every request of the view."""
    if group not in settings.RATE_LIMITS:
        raise KeyError(f"no rate for {group!r} in settings.RATE_LIMITS")

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            limit(request, group, key)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def limit(request: HttpRequest, group: str, key: str = "ip") -> None:
    """Count this request against the group's rate; past it, raise Ratelimited (the
    429 of ``too_many_requests``, through django-ratelimit's middleware). For a view
    that does costly work only sometimes, called where that work starts."""
    request.rate_limit_group = group  # type: ignore[attr-defined]
    if is_ratelimited(request, group=group, key=key, rate="registry.protection.rate_for",
                      increment=True):
        if cache_available(caches["default"]):
            raise Ratelimited()
        # No count could be kept (the cache is away): decided by the group.
        if group not in FAIL_OPEN:
            raise ServiceUnavailable("rate limits", retry_after=COUNTS_RETRY_AFTER)


def too_many_requests(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """RATELIMIT_VIEW: what a visitor past a limit sees."""
    rate = settings.RATE_LIMITS.get(getattr(request, "rate_limit_group", ""))
    retry_after = _split_rate(rate)[1] if rate else 60
    message = ("Too many requests in a short time. Please wait a little and try again; "
               "nothing has been lost.")
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"error": "too many requests; wait and try again", "retry_after": retry_after},
            status=429)
    else:
        response = render(request, "429.html", {"message": message,
                                                "retry_after": retry_after}, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the site's own 403 page, inside its CSP (Django's stock page
    carries an inline style). The reason stays in the log, not on the page."""
    from django.middleware.csrf import REASON_NO_CSRF_COOKIE

    if request.path.startswith("/api/"):
        return JsonResponse({"error": "CSRF verification failed"}, status=403)
    return render(request, "403_csrf.html", {"no_cookie": reason == REASON_NO_CSRF_COOKIE},
                  status=403)


class ProtectionHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        if settings.SESSION_COOKIE_NAME in request.COOKIES and _may_be_signed_in(request):
            add_never_cache_headers(response)  # with private: shared caches keep nothing
        return response


def _may_be_signed_in(request: HttpRequest) -> bool:
    """Only a visitor with a session can be signed in. The user is not asked for here:
    after the answer is built, reading the session could fail (the cache or the database
    away) and replace the answer by a bare 500 without these headers. A user the view
    never read is taken as signed in: the answer is kept private, which costs nothing."""
    user = getattr(request, "_cached_user", None)  # set once request.user was read
    return user is None or bool(user.is_authenticated)
