"""The site's own absolute address in pages (rel=canonical), from SITE_URL: never from
the Host a request names, since public pages are cached and shared (public_cache)."""

from __future__ import annotations

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def site_root() -> str:
    return settings.SITE_URL.rstrip("/")
