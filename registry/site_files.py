"""Files browsers and crawlers ask for at the site's root, outside /static/."""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

FAVICON = settings.BASE_DIR / "static" / "registry" / "favicon.ico"


@cache
def _favicon_bytes() -> bytes:
    return FAVICON.read_bytes()


@require_safe
@cache_control(public=True, max_age=86_400)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``: browsers ask for it on every site, whatever the pages link."""
    return HttpResponse(_favicon_bytes(), content_type="image/x-icon")
