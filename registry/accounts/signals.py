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


# The account cache (registry/accounts/signed_in.py): a user's cached entry holds their
# columns, groups, session hash and navigation, so any change of those forgets it.


def account_saved(sender, instance, created: bool, update_fields=None, **kwargs) -> None:
    from registry.accounts.signed_in import forget_account

    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return  # nothing cached yet; a log-in's time is not in the entry
    forget_account(instance.pk)


def account_deleted(sender, instance, **kwargs) -> None:
    from registry.accounts.signed_in import forget_account

    forget_account(instance.pk)


def account_groups_changed(sender, instance, action: str, reverse: bool, pk_set=None,
                           **kwargs) -> None:
    """A user's groups (``user.groups``) or a group's users (``group.user_set``) changed."""
    from registry.accounts.signed_in import forget_account

    if not reverse:
        if action in ("post_add", "post_remove", "post_clear"):
            forget_account(instance.pk)
        return
    if action == "pre_clear":  # the members are gone after it, and pk_set is None
        pk_set = set(instance.user_set.values_list("pk", flat=True))
    elif action not in ("post_add", "post_remove"):
        return
    for user_id in pk_set or ():
        forget_account(user_id)


def group_changed(sender, instance, **kwargs) -> None:
    """A group renamed or deleted: its members' role labels and links change."""
    from registry.accounts.signed_in import forget_account

    if instance.pk is None or kwargs.get("created"):
        return
    for user_id in instance.user_set.values_list("pk", flat=True):
        forget_account(user_id)
