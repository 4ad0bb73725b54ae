"""The signed-in person of a request, read once from the cache with their navigation.

A signed-in request reads its session from the cache (``cached_db``) and then, from
the same cache, one small entry per account (``account:...:<user id>``): the user's
columns (never the password hash), their role groups, the session auth hash of
their password and their navigation bar rendered once (``_nav.html``, with marks
where the request's CSRF token and the page's search text go). So a warm signed-in
page costs no SQL query of its own and renders no template for the navigation.

Security is Django's: the session's auth hash must equal the account's, compared in
constant time; anything else (no entry, an inactive or deleted account, a hash that
differs, a session of another backend) is decided by ``django.contrib.auth.get_user``
from the database, and a session whose account cannot sign in is flushed. The
password column is deferred on the cached user: reading it (a password form) loads
it from the database, and saving the user never writes it back unread.

Every write that changes what the entry holds forgets it (``forget_account``, called
by the receivers in signals.py on a user's save, a change of their groups, a group's
rename or deletion): at once, and again at commit, as a *tombstone* kept for
``QUIET_SECONDS`` (longer than a request may run) during which the account is read
from the database and not cached. So a request that read the old row before the
change committed cannot put it back. A write that bypasses the model's signals
(``QuerySet.update``) must call ``forget_account`` itself.

An entry lives ``ACCOUNT_SECONDS`` (five minutes) at most. Forgetting it can fail: a
delete missed while the Redis is away is owed only in the memory of the process that
missed it (registry/cache.py), and lost if that process dies; a role taken away then
still shows, and still lets in, until the entry expires. The price of the bound is one
SQL read per signed-in account every five minutes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.core.cache import caches
from django.db import transaction
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.connection import ConnectionProxy
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject
from django.utils.html import escape

from registry.accounts.roles import can_use_staff_pages, role_label
from registry.release import current_release

cache: Any = ConnectionProxy(caches, "default")  # where the sessions are

# How long an entry lives: the bound on a change whose forgetting was lost (above).
ACCOUNT_SECONDS = 5 * 60
# After a change the account is not cached for this long: more than a request may
# take (gunicorn's timeout), so no request that read the row before the change
# committed can store it afterwards.
QUIET_SECONDS = 60
_TOMBSTONE = "changed"
# Where the request's parts go in a cached navigation. A NUL cannot reach the page
# from any field (Django's form fields refuse it) and escaping leaves it alone.
CSRF_MARK = "\x00csrf\x00"
QUERY_MARK = "\x00q\x00"
NAV_TEMPLATE = "_nav.html"


@dataclass
class Account:
    user: Any  # registry.accounts.models.User, its password deferred
    session_hash: str
    navigation: str


def _key(user_id: object) -> str:
    # The release: a deploy renders the navigation anew. The secret key's digest: a
    # new SECRET_KEY makes new session hashes, never compared with the old ones.
    secret = hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest()[:8]
    return f"account:{secret}:{current_release()}:{user_id}"


def _columns() -> list[str]:
    from registry.accounts.models import User

    return [field.attname for field in User._meta.concrete_fields if field.attname != "password"]


def _entry(user: Any) -> dict[str, Any]:
    groups = sorted(user.groups.values_list("name", flat=True))
    user._role_cache = set(groups)
    return {"columns": _columns(), "values": [getattr(user, name) for name in _columns()],
            "groups": groups, "session_hash": user.get_session_auth_hash(),
            "navigation": render_navigation(user)}


def _account(entry: dict[str, Any]) -> Account:
    from registry.accounts.models import User

    user = User.from_db("default", entry["columns"], entry["values"])  # password deferred
    user._role_cache = set(entry["groups"])
    return Account(user, entry["session_hash"], entry["navigation"])


def account_of(user_id: object) -> Account | None:
    """The active account ``user_id`` from the cache, else from the database (and then
    cached, unless it changed within QUIET_SECONDS); None if it cannot sign in."""
    from registry.accounts.models import User

    key = _key(user_id)
    found = cache.get(key)
    if isinstance(found, dict):
        return _account(found)
    user = User._default_manager.filter(pk=user_id, is_active=True).first()
    if user is None:
        return None
    entry = _entry(user)
    if found is None:
        cache.add(key, entry, ACCOUNT_SECONDS)  # never over a tombstone
    return _account(entry)


def forget_account(user_id: object) -> None:
    """The account changed: its entry is dropped now and again when the change commits."""
    key = _key(user_id)

    def bury() -> None:
        cache.set(key, _TOMBSTONE, QUIET_SECONDS)

    bury()
    transaction.on_commit(bury, robust=True)


def signed_in_user(request: HttpRequest) -> Any:
    """``request.user``: from the account cache when the session's hash matches, else
    as ``django.contrib.auth.get_user`` decides (and a session it refuses is flushed)."""
    from registry.accounts.models import User

    session = request.session
    try:
        user_id = User._meta.pk.to_python(session[SESSION_KEY])
        backend = session[BACKEND_SESSION_KEY]
        session_hash = session[HASH_SESSION_KEY]
    except KeyError:
        return auth.get_user(request)
    if backend in settings.AUTHENTICATION_BACKENDS:
        account = account_of(user_id)
        if account is not None and constant_time_compare(session_hash, account.session_hash):
            account.user._navigation = account.navigation
            return account.user
    user = auth.get_user(request)
    if not user.is_authenticated and SESSION_KEY in session:
        session.flush()  # an account deactivated or deleted: signed out
    return user


class CachedAuthenticationMiddleware(AuthenticationMiddleware):
    """Django's AuthenticationMiddleware, with ``request.user`` from ``signed_in_user``
    (a subclass: the admin's checks ask for Django's)."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)

        def user() -> Any:
            if not hasattr(request, "_cached_user"):
                request._cached_user = signed_in_user(request)  # type: ignore[attr-defined]
            return request._cached_user  # type: ignore[attr-defined]

        request.user = SimpleLazyObject(user)  # type: ignore[assignment]  # as Django's


# --- the navigation ---------------------------------------------------------------------

_anonymous_navigation: dict[str, str] = {}  # by release, in this process


def navigation_context(user: Any) -> dict[str, Any]:
    """What the navigation offers ``user`` (signed in or not), as the policy answers it:
    the pages of the workflow (registry.review.workflow) and the staff pages (roles.py).
    ``_nav.html`` asks these values and decides nothing; the cached navigation and the
    context processor both build them here."""
    from registry.review import workflow

    signed_in = bool(getattr(user, "is_authenticated", False))
    return {
        "can_see_dashboard": workflow.can_see_dashboard(user),
        "can_see_staff_queue": workflow.can_see_staff_queue(user),
        "can_use_staff_pages": can_use_staff_pages(user),
        "role_label": role_label(user) if signed_in else "",
    }


def render_navigation(user: Any) -> str:
    """The navigation bar of ``user`` (signed in or not), with the request's marks."""
    return render_to_string(NAV_TEMPLATE, {
        "user": user, **navigation_context(user),
        "csrf_token": CSRF_MARK, "search_query": QUERY_MARK,
    })


def navigation(request: HttpRequest, search_query: str = "") -> str:
    """The navigation bar for this request: the account's cached one (or, for a visitor
    not signed in, this process's), with the request's CSRF token and the search text."""
    user = request.user
    if user.is_authenticated:
        html = getattr(user, "_navigation", None)
        if html is None:  # a user not read through the account cache (a test's)
            html = render_navigation(user)
    else:
        release = current_release()
        html = _anonymous_navigation.get(release)
        if html is None:
            html = _anonymous_navigation[release] = render_navigation(user)
    if CSRF_MARK in html:
        html = html.replace(CSRF_MARK, get_token(request))
    return html.replace(QUERY_MARK, escape(search_query or ""))
