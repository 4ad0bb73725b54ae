"""Published contact addresses, written so that address harvesters do not read them.

The page never holds ``user@host`` as one string: the "@" is drawn by the style
sheet, and static/registry/registry.js turns the address into a mailto link with
a copy button for people (the page works, and reads aloud, without it).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def published_email(address: str):
    """``address`` as harvest-resistant HTML; text that is no address, as it is."""
    user, at, domain = (address or "").strip().rpartition("@")
    if not (at and user and domain):
        return address
    return format_html(
        '<span class="email-address" data-email-user="{}" data-email-domain="{}">{}'
        '<span class="email-at" aria-hidden="true"></span>'
        '<span class="visually-hidden"> at </span>{}</span>'
        '<button type="button" class="btn btn-link btn-sm py-0 copy-email" hidden>'
        "Copy address</button>",
        user, domain, user, domain,
    )
