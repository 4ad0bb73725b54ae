"""Who asks, and the roles they hold on one registration request: its registrant,
a designated expert, IANA staff."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from registry.accounts.roles import (
    EXPERT_ROLE,
    REGISTRANT_ROLE,
    STAFF_ROLE,
    is_expert,
    is_iana_staff,
)
from registry.review.models import RegistrationRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser

    from registry.accounts.models import User

# Whoever asks: a signed-in user or an anonymous visitor.
Visitor = Union["User", "AnonymousUser"]

ROLE_NAMES = {REGISTRANT_ROLE: "the registrant", EXPERT_ROLE: "a designated expert",
              STAFF_ROLE: "IANA staff"}


def is_signed_in(user: Visitor) -> bool:
    return bool(getattr(user, "is_authenticated", False))


def is_registrant(user: Visitor, registration: RegistrationRequest) -> bool:
    return is_signed_in(user) and user.pk == registration.registrant_id


def roles_on(user: Visitor, registration: RegistrationRequest) -> set[str]:
    """The roles ``user`` acts in on this registration: its registrant only on their own
    (the site-wide roles of an account are registry.accounts.roles.roles_of)."""
    roles = set()
    if is_registrant(user, registration):
        roles.add(REGISTRANT_ROLE)
    if is_expert(user):
        roles.add(EXPERT_ROLE)
    if is_iana_staff(user):
        roles.add(STAFF_ROLE)
    return roles
