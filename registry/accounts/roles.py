"""Roles are Django groups. A registrant is anyone who has signed up.

The question "what role is this person in?" is answered here, and nowhere else; what
a role may see or do, the IANA staff pages included, is answered by
registry.review.workflow."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import Group, Permission

EXPERT_GROUP = "designated expert"
STAFF_GROUP = "IANA staff"
ROLE_GROUPS = (EXPERT_GROUP, STAFF_GROUP)

REGISTRANT_ROLE = "registrant"
EXPERT_ROLE = "expert"
STAFF_ROLE = "staff"

# What each role's group may do in the admin ("app_label.codename"). IANA staff keep
# the registry row and the accounts; history is view-only for everyone.
GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    STAFF_GROUP: (
        "accounts.view_user", "accounts.change_user", "accounts.recognize_standards_body",
        "accounts.grant_role", "accounts.view_accountevent",
        "namespaces.view_namespace", "namespaces.change_namespace",
        "namespaces.set_namespace_status", "namespaces.view_templateversion",
        "namespaces.view_namespaceevent", "namespaces.view_person",
        "namespaces.view_registrymetadata", "namespaces.view_registryevent",
        "review.view_registrationrequest", "review.view_round", "review.view_requestevent",
        "review.view_comment", "review.view_outboundmessage", "review.view_inboundmessage",
    ),
    EXPERT_GROUP: (),
}


def sync_role_groups(**signal_kwargs: Any) -> None:
    """Create the role groups and give each exactly its permissions (run after every
    migrate, so a new database and a flushed test database are both ready)."""
    for name, wanted in GROUP_PERMISSIONS.items():
        group = Group.objects.get_or_create(name=name)[0]
        permissions = []
        for dotted in wanted:
            app_label, codename = dotted.split(".")
            permission = Permission.objects.filter(content_type__app_label=app_label,
                                                   codename=codename).first()
            if permission is not None:
                permissions.append(permission)
        group.permissions.set(permissions)


def is_expert(user: Any) -> bool:
    return _in_group(user, EXPERT_GROUP)


def is_iana_staff(user: Any) -> bool:
    return _in_group(user, STAFF_GROUP)


def role_label(user: Any) -> str:
    """The role a signed-in person acts in, as the navigation names it."""
    if is_iana_staff(user):
        return "IANA staff"
    if is_expert(user):
        return "designated expert"
    if getattr(user, "recognized_standards_body", False):
        return "standards body"
    return "registrant"


def home_url_name(user: Any) -> str:
    """Where a person lands after logging in: their own queue."""
    if is_iana_staff(user):
        return "review:staff-queue"
    if is_expert(user):
        return "review:dashboard"
    return "review:my-requests"


def _in_group(user: Any, name: str) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    cache = getattr(user, "_role_cache", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._role_cache = cache
    return name in cache


def load_roles(users: Iterable[Any]) -> None:
    """Read the roles of many accounts in one query, for what asks each of them next
    (a message's recipients): otherwise each asks the database for its own."""
    users = [user for user in users if getattr(user, "_role_cache", None) is None]
    if not users:
        return
    from django.contrib.auth import get_user_model

    links = get_user_model().groups.through.objects.filter(
        user_id__in=[user.pk for user in users]).values_list("user_id", "group__name")
    held: dict[int, set[str]] = {user.pk: set() for user in users}
    for user_id, name in links:
        held[user_id].add(name)
    for user in users:
        user._role_cache = held[user.pk]


def roles_of(user: Any) -> set[str]:
    """The role groups ``user`` belongs to."""
    return {name for name in ROLE_GROUPS if _in_group(user, name)}


def forget_roles(user: Any) -> None:
    user.__dict__.pop("_role_cache", None)
