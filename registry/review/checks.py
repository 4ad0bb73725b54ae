"""The demo guard: ``seed_demo``'s accounts have a published password, so a database where
one of them still accepts it must not serve the public.

- ``manage.py check --deploy`` fails (``review.E001``) while an active account with one of
  the demo's addresses accepts the demo's password (its hash is checked, not only the
  address: an account whose password was changed is no longer the demo's).
- In production (``REGISTRY_ENV=production``) ``DemoGuardMiddleware`` (settings.MIDDLEWARE)
  refuses to serve while the check fires: at start-up (gunicorn loads the app, so it does
  not boot, with the message), or, if the database could not be read then, from the first
  request that can read it on: every answer is a 503.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

def demo_accounts_in_use() -> list[str]:
    """The demo's addresses (seed_demo's people) whose active account accepts the demo's
    password, in order; raises DatabaseError when the accounts cannot be read."""
    from django.contrib.auth.hashers import check_password
    from django.db.models.functions import Lower

    from registry.accounts.models import User
    from registry.review.management.commands.seed_demo import DEMO_EMAILS, DEMO_PASSWORD

    rows = (User.objects.annotate(address=Lower("email"))
            .filter(address__in=[email.lower() for email in DEMO_EMAILS], is_active=True)
            .values_list("email", "password"))
    # hashers.check_password, not User.check_password: a check never rewrites a hash.
    return sorted(email for email, hashed in rows if check_password(DEMO_PASSWORD, hashed))


def _demo_error(found: list[str]) -> Error:
    return Error(
        f"Demo accounts still accept the published demo password: {', '.join(found)}.",
        hint="This database was seeded with seed_demo. Delete or deactivate these accounts, "
             "or give each a new password (admin, or manage.py changepassword), before it "
             "serves the public; production refuses to serve until then.",
        id="review.E001",
    )


@register(Tags.security, deploy=True)
def demo_accounts_check(app_configs: Any = None, databases: Any = None,
                        **kwargs: Any) -> list[CheckMessage]:
    try:
        found = demo_accounts_in_use()
    except DatabaseError:  # no accounts table yet (an empty database): no accounts at all
        return []
    return [_demo_error(found)] if found else []


class DemoGuardMiddleware:
    """Production only: no answer but a 503 while a demo account accepts its password."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        self.refusal: str | None = None
        self.decided = self._decide()
        if self.refusal:
            raise ImproperlyConfigured(self.refusal)

    def _decide(self) -> bool:
        """Read the accounts; False when the database cannot be read now."""
        try:
            found = demo_accounts_in_use()
        except DatabaseError:
            return False
        if found:
            error = _demo_error(found)
            self.refusal = f"{error.msg} {error.hint} ({error.id})"
        return True

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not self.decided:
            self.decided = self._decide()
            if self.refusal:
                logger.error("%s", self.refusal)
        if self.refusal:
            return HttpResponse("This registry is not serving: accounts with the published "
                                "demo password exist (manage.py check --deploy names them).\n",
                                status=503, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
