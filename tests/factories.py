"""Factories for the tests: users with roles, complete templates, requests in any state."""

from __future__ import annotations

import factory
from allauth.account.models import EmailAddress

from registry.accounts.actions import role_grant, user_recognize
from registry.accounts.models import User

PASSWORD = "correct horse battery staple 8141"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("email",)

    email = factory.Sequence(lambda n: f"person{n}@example.org")
    username = factory.LazyAttribute(lambda o: o.email)
    first_name = "Pat"
    last_name = factory.Sequence(lambda n: f"Person{n}")
    password = factory.django.Password(PASSWORD)


def make_user(email: str, *, roles=(), organisation: str = "", recognized: bool = False) -> User:
    user = UserFactory(email=email, organisation=organisation)
    EmailAddress.objects.get_or_create(user=user, email=email,
                                       defaults={"verified": True, "primary": True})
    for role in roles:
        user = role_grant(user=user, role=role, reason="Test persona.", actor=None)
    if recognized:
        user = user_recognize(user=user, reason="Test persona.", actor=None)
    return user


def complete_values(user=None, **extra) -> dict[str, str]:
    values = {
        "registrant_organisation": getattr(user, "organisation", "") or "Example Org",
        "registrant_address": "1 Example Street",
        "contact_name": "Pat Example",
        "contact_email": getattr(user, "email", "pat@example.org"),
        "contact_phone": "+1 555 0100",
        "contact_postal": "",
        "purpose": "Names archive records persistently.",
        "syntax": 'NSS = 1*DIGIT "-" 1*DIGIT',
        "assignment": "Sequential, never reused.",
        "security": "No personal data in names.",
        "interoperability": "None known.",
        "resolution": "An HTTPS resolver is run by the archive.",
        "documentation": "https://archive.example/spec",
        "additional_information": "",
        "revision_information": "",
    }
    values.update(extra)
    return values


def make_registration(user, *, nid="racefoo", kind="formal", fast_track=False, submit=True,
                      **extra):
    from registry.review import actions

    registration = actions.registration_create(actor=user, kind=kind, proposed_nid=nid,
                                               fast_track=fast_track,
                                               values=complete_values(user, **extra))
    if submit:
        registration = actions.registration_transition(registration=registration,
                                                       transition="submit", actor=user)
    return registration


def approve(registration, expert, staff=None, *, register=False):
    from registry.review import actions

    registration = actions.registration_transition(registration=registration, transition="approve",
                                                   actor=expert,
                                                   comment="Looks right.", early_reason="Test.")
    if register:
        registration = actions.registration_transition(registration=registration,
                                                       transition="register",
                                                       actor=staff)
    return registration
