"""Mail in counts against the rate of comments on the page (``RATE_LIMITS["comment"]``).

A person's mail replies (sent to their own reply address) and their comments on the
site share one count, django-ratelimit's own for the comment view (keyed by the
person). List mail proves nothing of its sender (anyone can write its From line, or
send from a thousand addresses), so it is counted per request. Past the rate, or when
no count can be kept (the cache is away: comments fail closed, as on the site), the
message is held in the staff quarantine with the reason: nothing is lost, and nobody
is mailed about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth.models import AnonymousUser
from django.core.cache import caches
from django.http import HttpRequest
from django_ratelimit.core import is_ratelimited

from registry.cache import cache_available

if TYPE_CHECKING:
    from registry.accounts.models import User
    from registry.review.models import RegistrationRequest

GROUP = "comment"  # the comment view's group: the same count, the same rate


def mail_limit_refusal(registration: RegistrationRequest, sender: User | None) -> str:
    """Count one message about ``registration`` from ``sender`` (None: list mail);
    the reason to hold it for staff, or '' to place it."""
    request = HttpRequest()
    request.method = "POST"
    request.user = sender if sender is not None else AnonymousUser()
    key = "user" if sender is not None else (lambda group, request: f"list:{registration.pk}")
    if not is_ratelimited(request, group=GROUP, key=key, rate="registry.protection.rate_for",
                          increment=True):
        return ""
    if not cache_available(caches["default"]):
        return ("Held: the rate of comments could not be counted (the cache was away), so "
                "it was not added or passed on; attach it if it belongs on the request.")
    who = "this person's comments and mail" if sender is not None else \
        "list mail about this request"
    return (f"Held: past the rate of comments ({who}), so it was not added or passed on; "
            "attach it if it belongs on the request.")
