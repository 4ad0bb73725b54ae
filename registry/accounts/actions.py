"""Every write to an account that is not the person's own sign-up or password goes
through one function here: recognition as a standards body, the designated expert
and IANA staff roles, profile corrections by staff, and an expert's own availability.

Each locks the user row (``select_for_update``), checks who is acting, writes the
AccountEvent in the same transaction as the change, and needs a reason. ``actor``
None means a command run on the server (seed_demo, a shell); the web pages and the
admin always pass the person signed in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import Group
from django.db import transaction

from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import (
    GROUP_PERMISSIONS,
    ROLE_GROUPS,
    STAFF_GROUP,
    forget_roles,
    is_expert,
    roles_of,
)

PROFILE_FIELDS = ("first_name", "last_name", "organisation", "is_active")


class AccountRefused(Exception):
    """A change to an account that is not allowed; the message says why. ``field``
    names the form field the answer is about, when it is about one (the admin's account
    form and the staff pages' profile form show it there)."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


def account_change_refusal(*, actor: User | None, user: User,
                           changes: Mapping[str, Any]) -> AccountRefused | None:
    """Why ``actor`` may not make ``changes`` to ``user``'s account now, else None.
    ``changes`` names fields as they would be after the change: the profile fields
    (``PROFILE_FIELDS``), ``recognized_standards_body``, and ``roles`` (every role held
    after it); a field not named stays as it is. The actions ask it before they write
    and the admin's account form at each changed field, so the two refuse alike and in
    the same words."""
    own = actor is not None and actor.pk == user.pk
    if own and user.is_active and changes.get("is_active") is False:
        return AccountRefused("You cannot deactivate your own account.", field="is_active")
    if (own and "roles" in changes and STAFF_GROUP in roles_of(user)
            and STAFF_GROUP not in changes["roles"]):
        return AccountRefused("Ask another member of IANA staff to end your own staff role.",
                              field="roles")
    if (changes.get("recognized_standards_body") and not user.recognized_standards_body
            and not address_verified(user)):
        return AccountRefused(f"{user.email} is not verified yet: recognize the account once "
                              "its owner has confirmed the address, so the fast track goes "
                              "to them.", field="recognized_standards_body")
    return None


def _refuse(actor: User | None, user: User, changes: Mapping[str, Any]) -> None:
    problem = account_change_refusal(actor=actor, user=user, changes=changes)
    if problem is not None:
        raise problem


def _check_actor(actor: User | None, permission: str) -> None:
    """Whether ``actor`` may manage accounts, asked as Django asks it: the permission
    (``has_perm``), which the admin asks too before it shows a form that calls these
    actions. The registry's own pages ask the workflow instead
    (``workflow.can_use_staff_pages``: membership of the IANA staff group). The two
    agree for everyone but a superuser outside that group: the IANA staff group holds
    every accounts permission (``GROUP_PERMISSIONS``) and the admin gives no one a
    permission of their own, so a non-superuser has them exactly when they are IANA
    staff. A superuser holds every permission without the role. They keep the admin
    (a deployment's superuser must be able to repair an account there), so the actions
    cannot ask the role; and the pages cannot ask the permission, for the staff pages
    are the IANA staff role's workplace (its queue, its transitions), which a superuser
    without the role does not hold."""
    if actor is None:
        return  # a command on the server
    if not actor.is_active or not actor.has_perm(permission):
        raise AccountRefused("Only IANA staff can change other people's accounts and roles.")


def reason_refusal(reason: str) -> AccountRefused | None:
    """Every change of an account needs a reason, kept in the account's history."""
    if (reason or "").strip():
        return None
    return AccountRefused("Give a reason; it is kept in the account's history.", field="reason")


def _reason(reason: str) -> str:
    problem = reason_refusal(reason)
    if problem is not None:
        raise problem
    return reason.strip()


def address_verified(user: User) -> bool:
    """Whether the account's owner has confirmed its address (allauth)."""
    from allauth.account.models import EmailAddress

    verified: bool = EmailAddress.objects.filter(user=user, email__iexact=user.email,
                                                 verified=True).exists()
    return verified


def _locked(user: User) -> User:
    locked: User = User.objects.select_for_update().get(pk=user.pk)
    return locked


def _record(user: User, actor: User | None, kind: str, reason: str, **extra: Any) -> AccountEvent:
    return AccountEvent.objects.create(user=user, actor=actor, kind=kind, reason=reason, **extra)


@transaction.atomic
def user_create(*, email: str, password: str | None, first_name: str = "",
                last_name: str = "", organisation: str = "", verified: bool = False,
                reason: str, actor: User | None) -> User:
    """Create an account (staff or a command; people sign themselves up through allauth)."""
    from allauth.account.models import EmailAddress

    _check_actor(actor, "accounts.change_user")
    reason = _reason(reason)
    if User.objects.filter(email__iexact=email).exists():
        raise AccountRefused(f"An account for {email} exists already.")
    user = User.objects.create_user(email=email, password=password, first_name=first_name,
                                    last_name=last_name, organisation=organisation)
    EmailAddress.objects.create(user=user, email=email, verified=verified, primary=True)
    _record(user, actor, AccountEvent.Kind.CREATED, reason)
    return user


def user_signed_up(*, user: User) -> AccountEvent:
    """The event of a person's own sign-up (called by the sign-up form)."""
    return _record(user, user, AccountEvent.Kind.SIGNED_UP, "")


@transaction.atomic
def user_update_profile(*, user: User, changes: dict[str, Any], reason: str,
                        actor: User | None) -> User:
    """Correct a person's name, organisation or active flag. Fields that do not
    change are ignored; nothing changing writes nothing."""
    _check_actor(actor, "accounts.change_user")
    unknown = set(changes) - set(PROFILE_FIELDS)
    if unknown:
        raise AccountRefused(f"Not a profile field: {', '.join(sorted(unknown))}.")
    user = _locked(user)
    diff = {name: [getattr(user, name), value] for name, value in changes.items()
            if getattr(user, name) != value}
    if not diff:
        return user
    reason = _reason(reason)
    _refuse(actor, user, {name: value for name, (_, value) in diff.items()})
    for name, (_, value) in diff.items():
        setattr(user, name, value)
    user.save(update_fields=list(diff))
    _record(user, actor, AccountEvent.Kind.PROFILE_CHANGED, reason, changes=diff)
    _public_pages_changed(user)
    if diff.get("is_active") == [True, False]:
        _withdraw(user, "was deactivated", actor)
    return user


def _public_pages_changed(user: User) -> None:
    """A profile change moves the registry generation, whoever the account is: the
    cached public pages name people by their account (``display_name``, through
    ``workflow.public_name``): IANA staff and experts by the decisions they took on a
    namespace's page, anyone signed in by their public comments in the review, and the
    designated experts (the active ones) on the registry page. The exports name only
    those experts (``exports.experts``), so only an expert's change moves theirs. Any
    changed field moves it, the organisation too (no public page shows it today): a
    correction is rare, and a list of the shown fields here could fall behind the
    templates."""
    from registry.namespaces.actions import registry_changed

    registry_changed(exports=is_expert(user))


@transaction.atomic
def user_recognize(*, user: User, reason: str, actor: User | None) -> User:
    """Record that the IESG recognizes this registrant's organisation as a standards
    body (RFC 8141 section 6.3): it may then use the fast track."""
    return _set_recognition(user, True, reason, actor)


@transaction.atomic
def user_unrecognize(*, user: User, reason: str, actor: User | None) -> User:
    """Withdraw the recognition; open fast-track requests keep their path."""
    return _set_recognition(user, False, reason, actor)


def _set_recognition(user: User, recognized: bool, reason: str, actor: User | None) -> User:
    _check_actor(actor, "accounts.recognize_standards_body")
    reason = _reason(reason)
    user = _locked(user)
    if user.recognized_standards_body == recognized:
        raise AccountRefused(f"{user.display_name} is "
                             f"{'already' if recognized else 'not'} a recognized standards body.")
    _refuse(actor, user, {"recognized_standards_body": recognized})
    kind = AccountEvent.Kind.RECOGNIZED if recognized else AccountEvent.Kind.UNRECOGNIZED
    _record(user, actor, kind, reason)
    user.recognized_standards_body = recognized
    user.save_with_event(update_fields=["recognized_standards_body"])
    return user


def _group(role: str) -> Group:
    if role not in ROLE_GROUPS:
        raise AccountRefused(f"There is no role called {role!r}.")
    group, created = Group.objects.get_or_create(name=role)
    if created and GROUP_PERMISSIONS.get(role):
        from registry.accounts.roles import sync_role_groups

        sync_role_groups()
    return group


@transaction.atomic
def role_grant(*, user: User, role: str, reason: str, actor: User | None) -> User:
    """Make someone a designated expert or IANA staff. IANA staff reach the admin
    (``is_staff``) with their group's permissions, never as superusers."""
    _check_actor(actor, "accounts.grant_role")
    reason = _reason(reason)
    group = _group(role)
    user = _locked(user)
    if user.groups.filter(pk=group.pk).exists():
        raise AccountRefused(f"{user.display_name} is already {role}.")
    _refuse(actor, user, {"roles": roles_of(user) | {role}})
    user.groups.add(group)
    if role == STAFF_GROUP and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    _record(user, actor, AccountEvent.Kind.ROLE_GRANTED, reason, role=role)
    forget_roles(user)
    return user


@transaction.atomic
def role_revoke(*, user: User, role: str, reason: str, actor: User | None) -> User:
    """End a role. Leaving IANA staff also ends access to the admin (but for superusers).
    Their assignments, unsent mail and reply addresses end with it (``_withdraw``)."""
    _check_actor(actor, "accounts.grant_role")
    reason = _reason(reason)
    group = _group(role)
    user = _locked(user)
    if not user.groups.filter(pk=group.pk).exists():
        raise AccountRefused(f"{user.display_name} is not {role}.")
    _refuse(actor, user, {"roles": roles_of(user) - {role}})
    user.groups.remove(group)
    if role == STAFF_GROUP and user.is_staff and not user.is_superuser:
        user.is_staff = False
        user.save(update_fields=["is_staff"])
    _record(user, actor, AccountEvent.Kind.ROLE_REVOKED, reason, role=role)
    forget_roles(user)
    _withdraw(user, f"is no longer {role}", actor)
    return user


def _withdraw(user: User, why: str, actor: User | None) -> None:
    """What a person held because of a role or an active account ends with it: their
    assignments, the mail not yet sent to them, their reply addresses."""
    from registry.review.actions import person_withdraw

    person_withdraw(user=user, why=why, actor=actor)


@transaction.atomic
def expert_set_availability(*, expert: User, unavailable_until: dt.date | None,
                            max_open_assignments: int | None, actor: User | None) -> User:
    """A designated expert says until when they are away and how many open requests
    they take at most (read by registry.review.workflow when it suggests an assignee
    or reminds). Their own choice: only they (or a command) set it. Nothing changing
    writes nothing."""
    from registry.review import workflow

    expert = _locked(expert)
    if actor is not None and actor.pk != expert.pk:
        raise AccountRefused("Only the expert themselves sets their availability.")
    if not workflow.can_set_availability(expert):
        raise AccountRefused("Availability is for designated experts.")
    wanted = {"unavailable_until": unavailable_until,
              "max_open_assignments": max_open_assignments}
    diff = {name: [getattr(expert, name), value] for name, value in wanted.items()
            if getattr(expert, name) != value}
    if not diff:
        return expert
    for name, (_, value) in diff.items():
        setattr(expert, name, value)
    expert.save(update_fields=list(diff))
    _record(expert, actor, AccountEvent.Kind.AVAILABILITY_CHANGED, "",
            changes={name: [_plain(before), _plain(after)]
                     for name, (before, after) in diff.items()})
    return expert


def _plain(value: Any) -> Any:
    """A value as the event's JSON keeps it."""
    return value.isoformat() if isinstance(value, dt.date) else value
