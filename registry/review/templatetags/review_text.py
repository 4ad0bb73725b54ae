"""Words of the review inside sentences, in pages and mail."""

from __future__ import annotations

from django import template

from registry.review.mailtext import in_sentence as _in_sentence

register = template.Library()


@register.filter
def in_sentence(label: object) -> str:
    """``{{ registration.get_state_display|in_sentence }}``: "ready for IANA to register"."""
    return _in_sentence(str(label))
