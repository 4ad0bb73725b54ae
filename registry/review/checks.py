"""System checks of the review app: ``manage.py check --deploy`` fails while the demo
accounts of ``seed_demo`` (a published password) exist in the database."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.db import DatabaseError


@register(Tags.security, deploy=True)
def demo_accounts_check(app_configs: Any = None, databases: Any = None,
                        **kwargs: Any) -> list[CheckMessage]:
    from registry.accounts.models import User
    from registry.review.management.commands.seed_demo import DEMO_EMAILS

    try:
        found = sorted(User.objects.filter(email__in=DEMO_EMAILS, is_active=True)
                       .values_list("email", flat=True))
    except DatabaseError:  # no accounts table yet (an empty database): no accounts at all
        return []
    if not found:
        return []
    return [Error(
        f"Demo accounts with the published password exist: {', '.join(found)}.",
        hint="This database was seeded with seed_demo. Deactivate or delete these accounts "
             "(admin, or User.is_active=False) before it serves the public, or start from a "
             "database that was never seeded.",
        id="review.E001",
    )]
