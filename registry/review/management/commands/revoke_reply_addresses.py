"""Revoke every reply address the registry gave a person (a leaked address, a
person leaving a role): mail sent to an old one is no longer credited to them and
waits in the staff quarantine. Their next messages carry new addresses.

    manage.py revoke_reply_addresses expert@example.org
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Revoke every reply address given so far to the account with this email address."

    def add_arguments(self, parser):
        parser.add_argument("email", help="the account's email address")

    def handle(self, *args, email: str, **options) -> None:
        from registry.review.actions import reply_addresses_revoke

        user = get_user_model().objects.filter(email__iexact=email.strip()).first()
        if user is None:
            raise CommandError(f"No account has the address {email!r}.")
        version = reply_addresses_revoke(
            user=user, actor=None,
            reason="Revoked with manage.py revoke_reply_addresses.")
        self.stdout.write(f"Reply addresses of {user.email} revoked (key version {version}).")
