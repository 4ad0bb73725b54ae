"""The registration template's fields on a page, read from ``SECTIONS``: the page asks
``template_entries`` what to show and writes it; it lists no field itself."""

from __future__ import annotations

from django import template

from registry.namespaces.presentation import TemplateEntry
from registry.namespaces.presentation import template_entries as entries_of

register = template.Library()


@register.simple_tag
def template_entries(values: object) -> list[TemplateEntry]:
    return entries_of(values)
