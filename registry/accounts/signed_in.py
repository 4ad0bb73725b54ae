"""The signed-in person of a request, read in the registry generation's query.

Every page reads the registry generation (namespaces/public_cache.py), one indexed row.
For a request with a session cookie that same query (``visitor_sql``) reads the session
row, the account its session names (``AccountSession.account``, sessions.py) and the
account's role groups: a signed-in page makes one round trip to the database, as an
anonymous one does, and reads no cache.

Security is Django's: the session's auth hash must equal the account's, compared in
constant time; anything else (no account, an inactive one, a hash that differs, a
session of another backend) is decided by ``django.contrib.auth.get_user``, and a session
whose account cannot sign in is flushed. Nothing is kept between requests but each
account's navigation bar, rendered once per process for what it shows
(``_navigations``): keyed by the account's columns, groups and the release, so a change
shows at the next request without anyone being told.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.db import DEFAULT_DB_ALIAS, NotSupportedError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject
from django.utils.html import escape

from registry.accounts.roles import role_label
from registry.release import current_release

# Where the search text goes in a kept navigation. A NUL cannot reach the page from any
# field (Django's form fields refuse it) and escaping leaves it alone. The navigation has
# no CSRF token: log out is a link to allauth's page that asks (a form with its token),
# so a page with no form of its own masks no token and sets no cookie.
QUERY_MARK = "\x00q\x00"
NAV_TEMPLATE = "_nav.html"
NAVIGATIONS_KEPT = 1024  # accounts' navigation bars per process (a few KB each)
# Columns a navigation never shows: a change of them keeps the rendered bar.
_NOT_SHOWN = {"password", "last_login"}
_SQL: dict[tuple, str] = {}  # the visitor query, by database vendor and generation row


def visitor_sql(database: BaseDatabaseWrapper, generation_table: str,
                generation_columns: tuple[str, ...]) -> str:
    """The one query of a request with a session: the generation row's columns, then
    the session's data, the account's columns (its password hash too, for the session
    auth hash) and its role groups; parameters: the session key and the time now.
    Left joins: a row comes back (generation NULLs on an empty registry) whatever is
    missing."""
    from django.contrib.auth.models import Group

    from registry.accounts.models import AccountSession, User

    vendor = database.vendor
    key = (vendor, generation_table, generation_columns)
    if key not in _SQL:
        # Identifiers only, from the models' metadata: no value of a request.
        quote = database.ops.quote_name
        member = User.groups.through._meta
        names = (f"SELECT gr.{quote('name')} FROM {quote(member.db_table)} ug "  # noqa: S608
                 f"JOIN {quote(Group._meta.db_table)} gr ON gr.id = ug.{quote('group_id')} "
                 f"WHERE ug.{quote('user_id')} = u.id")
        groups = (f"ARRAY({names})" if vendor == "postgresql"
                  else f"(SELECT json_group_array(n.{quote('name')}) FROM ({names}) n)")  # noqa: S608
        _SQL[key] = (
            "SELECT " + ", ".join(f"g.{quote(name)}" for name in generation_columns)
            + ", s.session_data, "
            + ", ".join(f"u.{quote(str(field.column))}" for field in User._meta.concrete_fields)
            + f", {groups} "
            "FROM (SELECT 1 AS one) AS anchor "
            f"LEFT JOIN {quote(generation_table)} g ON g.id = 1 "
            f"LEFT JOIN {quote(AccountSession._meta.db_table)} s "
            "ON s.session_key = %s AND s.expire_date > %s "
            f"LEFT JOIN {quote(User._meta.db_table)} u "
            "ON u.id = s.account_id AND u.is_active")
    return _SQL[key]


_CONVERTERS: dict[str, tuple[list[str], list[tuple[Any, list]]]] = {}


def _account_columns(database: BaseDatabaseWrapper) -> tuple[list[str], list[tuple[Any, list]]]:
    """The account's attribute names, and each column with the converters the ORM
    applies to it on this database (SQLite's text dates, its integer booleans)."""
    from registry.accounts.models import User

    if database.vendor not in _CONVERTERS:
        fields = User._meta.concrete_fields
        columns = [field.get_col(User._meta.db_table) for field in fields]
        _CONVERTERS[database.vendor] = (
            [field.attname for field in fields],
            [(column, database.ops.get_db_converters(column)
              + column.get_db_converters(database)) for column in columns])
    return _CONVERTERS[database.vendor]


def _prepared_cursor(database: BaseDatabaseWrapper) -> Any:
    """On PostgreSQL a cursor that binds its parameters on the server, so the visitor
    query is prepared on a kept connection (``prepare_threshold`` in settings.py, and
    again after a rollback, which deallocates) instead of planned on every request: 50 us
    instead of 250 (docs/benchmarks.md). Made and wrapped as Django makes and wraps its
    own, so it is checked, logged, counted and its errors are Django's."""
    if database.vendor != "postgresql":
        return database.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor

    database.close_if_health_check_failed()
    database.ensure_connection()
    database.validate_thread_sharing()
    binding: Any = ServerBindingCursor  # psycopg's Cursor, which django-stubs types apart
    cursor = binding(database.connection)
    return (database.make_debug_cursor(cursor) if database.queries_logged
            else database.make_cursor(cursor))


def read_visitor(request: HttpRequest, generation_table: str,
                 generation_columns: tuple[str, ...]) -> tuple | None:
    """Runs the visitor query for ``request`` (whose session key is valid), keeps its
    session and account on the request for ``signed_in_user`` and returns the
    generation's columns (None: no session key to read)."""
    from registry.accounts.models import User

    session = request.session
    key = session.session_key
    if not key:
        return None
    # The default database, looked up once: each use of ``django.db.connection`` is a
    # look-up through a proxy, a dozen of them per request otherwise.
    database = connections[DEFAULT_DB_ALIAS]
    sql = visitor_sql(database, generation_table, generation_columns)

    def run() -> tuple:
        with _prepared_cursor(database) as cursor:
            cursor.execute(sql, [key, timezone.now()])
            return cursor.fetchone()

    try:
        row = run()
    except NotSupportedError:
        # "cached plan must not change result type": a migration changed a column this
        # statement reads while the process served. The connection, and the statement
        # prepared on it, are replaced: now, or when the request ends if in a transaction.
        if database.in_atomic_block:
            database.close_at = 0
            raise
        database.close()
        row = run()
    width = len(generation_columns)
    session.preload(row[width])  # type: ignore[attr-defined]  # sessions.SessionStore
    values = list(row[width + 1:-1])
    account = None
    if values[0] is not None:
        names, columns = _account_columns(database)
        for index, (column, converters) in enumerate(columns):
            for convert in converters:
                values[index] = convert(values[index], column, database)
        account = User.from_db(database.alias, names, values)
        groups = row[-1]
        account._role_cache = set(json.loads(groups) if isinstance(groups, str) else groups)
    request._visitor_account = account  # type: ignore[attr-defined]
    return row[:width]


def signed_in_user(request: HttpRequest) -> Any:
    """``request.user``: the account the visitor query read, when the session names it
    and its auth hash matches; else as ``django.contrib.auth.get_user`` decides (and a
    session it refuses is flushed)."""
    from registry.namespaces.public_cache import current_generation

    session = request.session
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        current_generation(request)  # reads the visitor with it, once per request
    try:
        user_id = session[SESSION_KEY]
        backend = session[BACKEND_SESSION_KEY]
        session_hash = session[HASH_SESSION_KEY]
    except KeyError:
        return auth.get_user(request)
    account = getattr(request, "_visitor_account", None)
    if (account is not None and str(account.pk) == str(user_id)
            and backend in settings.AUTHENTICATION_BACKENDS
            and constant_time_compare(session_hash, account.get_session_auth_hash())):
        return account
    user = auth.get_user(request)
    if not user.is_authenticated and SESSION_KEY in session:
        session.flush()  # an account deactivated or deleted: signed out
    return user


class VisitorAuthenticationMiddleware(AuthenticationMiddleware):
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

_navigations: OrderedDict[tuple, str] = OrderedDict()  # newest last, NAVIGATIONS_KEPT
_navigations_lock = threading.Lock()
_SHOWN_COLUMNS: dict[type, tuple[str, ...]] = {}  # by account model


def navigation_context(user: Any) -> dict[str, Any]:
    """What the navigation offers ``user`` (signed in or not), as the policy answers it
    (registry.review.workflow): the dashboard, the staff queue, the staff pages.
    ``_nav.html`` asks these values and decides nothing; the kept navigation and the
    context processor both build them here."""
    from registry.review import workflow

    signed_in = bool(getattr(user, "is_authenticated", False))
    return {
        "can_see_dashboard": workflow.can_see_dashboard(user),
        "can_see_staff_queue": workflow.can_see_staff_queue(user),
        "can_use_staff_pages": workflow.can_use_staff_pages(user),
        "role_label": role_label(user) if signed_in else "",
    }


def render_navigation(user: Any) -> str:
    """The navigation bar of ``user`` (signed in or not), with the search text's mark."""
    return render_to_string(NAV_TEMPLATE, {
        "user": user, **navigation_context(user),
        "search_query": QUERY_MARK,
    })


def _shown(user: Any) -> tuple:
    """Everything the navigation of ``user`` is made from: the release, the account's
    columns (but those it never shows) and its groups."""
    if not user.is_authenticated:
        return (current_release(),)
    roles = getattr(user, "_role_cache", None)
    if roles is None:
        roles = user._role_cache = set(user.groups.values_list("name", flat=True))
    names = _SHOWN_COLUMNS.get(type(user))
    if names is None:
        names = _SHOWN_COLUMNS[type(user)] = tuple(
            field.attname for field in user._meta.concrete_fields
            if field.attname not in _NOT_SHOWN)
    shown = (current_release(), tuple(sorted(roles)),
             *((name, getattr(user, name)) for name in names))
    try:
        hash(shown)
    except TypeError:  # a column whose value is a list or a dict
        return (repr(shown),)
    return shown


def navigation(request: HttpRequest, search_query: str = "") -> str:
    """The navigation bar for this request: rendered once per process for what it shows,
    with the search text put in."""
    user = request.user
    if user.is_authenticated:  # read: the account itself, not its lazy proxy, from here
        user = getattr(request, "_cached_user", user)
    key = _shown(user)
    with _navigations_lock:
        html = _navigations.get(key)
        if html is not None:
            _navigations.move_to_end(key)
    if html is None:
        html = render_navigation(user)
        with _navigations_lock:
            _navigations[key] = html
            while len(_navigations) > NAVIGATIONS_KEPT:
                _navigations.popitem(last=False)
    return html.replace(QUERY_MARK, escape(search_query or ""))
