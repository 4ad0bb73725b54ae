"""Role and name changes that the public pages show move the registry generation.

Users are edited in the admin and by allauth, not through the registry's actions,
so these receivers stand in for an action: they move the generation in the
transaction of the change (or right after it, when there is none)."""

from __future__ import annotations

from django.db import transaction

from registry.accounts.roles import is_expert


def _moved() -> None:
    from registry.namespaces.actions import registry_changed

    with transaction.atomic():
        registry_changed()


def roles_changed(sender, instance, action: str, **kwargs) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        _moved()


def expert_changed(sender, instance, created: bool, update_fields=None, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login", "password"}:
        return  # a log-in or a new password shows nowhere
    if not created and is_expert(instance):
        _moved()
