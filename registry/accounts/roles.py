"""Roles are Django groups. A registrant is anyone who has signed up."""

from __future__ import annotations

from django.contrib.auth.models import Group

EXPERT = "designated expert"
STAFF = "IANA staff"

REGISTRANT_ROLE = "registrant"
EXPERT_ROLE = "expert"
STAFF_ROLE = "staff"


def is_expert(user) -> bool:
    return _in_group(user, EXPERT)


def is_iana_staff(user) -> bool:
    return _in_group(user, STAFF)


def _in_group(user, name: str) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    cache = getattr(user, "_role_cache", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._role_cache = cache
    return name in cache


def add_role(user, name: str) -> None:
    group, _ = Group.objects.get_or_create(name=name)
    user.groups.add(group)
    user.__dict__.pop("_role_cache", None)
