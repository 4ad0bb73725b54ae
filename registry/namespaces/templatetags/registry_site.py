"""The site's own absolute address in pages (rel=canonical), from SITE_URL: never from
the Host a request names, since public pages are cached and shared (public_cache);
and the navigation bar, kept per account in each process."""

from __future__ import annotations

from typing import Any, cast

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def site_root() -> str:
    return settings.SITE_URL.rstrip("/")


@register.simple_tag(takes_context=True)
def navigation(context: template.Context) -> str:
    """The navigation bar: the visitor's, kept per process for a request
    (registry/accounts/signed_in.py), else ``_nav.html`` rendered in this context."""
    from django.template.loader import render_to_string
    from django.utils.safestring import mark_safe

    from registry.accounts.signed_in import NAV_TEMPLATE
    from registry.accounts.signed_in import navigation as visitor_navigation

    request = context.get("request")
    if request is None or not hasattr(request, "user"):  # a page rendered without one
        return render_to_string(NAV_TEMPLATE, cast("dict[str, Any]", context.flatten()))
    return mark_safe(visitor_navigation(request, context.get("search_query") or ""))  # noqa: S308


@register.filter
def as_change(value: Any) -> str:
    """One side of a registry record change as staff wrote it: references by their labels
    (RFC5279, Name), one after another; anything else as it is."""
    from registry.namespaces import xrefs

    if isinstance(value, list):
        return "; ".join(xrefs.label(cast(xrefs.Xref, v)) if isinstance(v, dict) else str(v)
                         for v in value)
    return "" if value is None else str(value)
