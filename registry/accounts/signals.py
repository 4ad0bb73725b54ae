"""A change of role moves the registry generation: the registry page and registry.xml
name the designated experts (``exports.experts``).

The role actions (``role_grant``, ``role_revoke``) are the registry's writers of roles,
but a role is a Django group, whose membership can also be changed from the group's
side (``Group.user_set``: a shell, a test, a data migration); this receiver of every
membership change moves the generation in the transaction of the change (or right
after it, when there is none). Everything else of an account that the public
pages show (a name, the active flag) changes only through ``user_update_profile``,
which moves the generation itself."""

from __future__ import annotations

from django.db import transaction


def _moved() -> None:
    from registry.namespaces.actions import registry_changed

    with transaction.atomic():
        registry_changed()


def roles_changed(sender, instance, action: str, **kwargs) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        _moved()
