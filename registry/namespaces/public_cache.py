"""The public side, served from a cache keyed by the registry generation.

Pages and exports that are the same for every visitor are built once per
generation (``RegistryGeneration``, moved by every writer in actions.py in the
same transaction as its change) and kept in the cache under a key that carries
it. A change is visible with the next request, and nothing stale is served: the
old generation's entries are simply never asked for again.

- ``public_page`` caches a page's HTML with slots (``<!--slot:NAME-->``) where the
  visitor's own parts go: the navigation, the messages, the holder's button. Each
  request renders only those, so a signed-in visitor gets the same cached body
  with their own navigation, sent as it is: never compressed (BREACH), since their
  part would be compressed beside text an attacker may put in the page.
- ``public_document`` caches a whole export or API response, with its gzip form,
  and answers with ETag / Last-Modified and 304 Not Modified.

Which form a client gets (gzip, identity, or a 406 when it refuses both), each form's
ETag and If-None-Match are registry/http_semantics.py's, by RFC 9110.

Entries live in Django's "public" cache (a Redis of its own in production, CACHE_URL,
shared by every process) and, for the current generation, in a small per-process
store in front of it. An answer keyed by free text (a search, a URN to check: a
query that is not ``shared``, query_params.py) never reaches the shared cache: it is
kept in a store of its own in the process (``free_text_store``, 8 MB), where a flood
of new values evicts only its own kind, and costs the shared Redis nothing
(docs/benchmarks.md: what that keeps and what it gives up).

A key carries the release (registry/release.py: a deploy never serves an old page),
the generation, and only canonical values: the host, the view with its path
arguments (a NID in lower case, a number as a number) and the canonical query
(query_params.py; anything else in the query is never read). A request that has no
canonical key is answered without the cache. Each entry is filed under its release
and generation, and a process that sees a new one drops every other's entries
(registry/cache.py), so superseded entries do not wait a day to expire.
A visitor with no session gets, from that store, the whole page as bytes and in
gzip, the same for every such visitor: no slot to render, nothing to compress.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.messages import get_messages
from django.core.cache import caches
from django.db import connection
from django.db.models import Field
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.connection import ConnectionProxy
from django.utils.http import http_date, parse_http_date_safe

from registry.accounts.signed_in import navigation, read_visitor
from registry.http_semantics import (
    GZIP,
    negotiate_encoding,
    none_match,
    not_acceptable,
    representation_etag,
)
from registry.namespaces.models import RegistryGeneration
from registry.namespaces.query_params import NO_QUERY, Query
from registry.release import current_release
from registry.unavailable import DATABASE_AWAY

if TYPE_CHECKING:
    from registry.namespaces.models import Namespace

shared_cache: Any = ConnectionProxy(caches, "public")

# Slots every page has (the navigation, kept per account: accounts/signed_in.py, and
# these); a page adds its own with build()["slots"].
SLOT_TEMPLATES = {
    "messages": "_messages.html",
    "holder": "namespaces/_holder_actions.html",
    "workload": "review/_stats_workload.html",
}
CACHE_SECONDS = 24 * 60 * 60  # an entry is useless after the next change anyway
LOCAL_MAX_BYTES = 64 * 1024 * 1024  # per process
FREE_TEXT_MAX_BYTES = 8 * 1024 * 1024  # per process, for answers keyed by free text
FREE_TEXT_KIND = "-free"  # what a free-text key's kind ends with ("public:page-free:...")
# Response headers kept with a cached document.
_KEPT_HEADERS = ("Content-Type", "Content-Disposition")


# RegistryGeneration's one row, read with a raw cursor (no ORM compilation on every
# request): its table and columns are the model's, in the order Generation reads them.
_GENERATION_META = RegistryGeneration._meta


def _generation_column(name: str) -> str:
    """The column of RegistryGeneration's field ``name`` (every concrete field has one)."""
    return cast(str, cast("Field[Any, Any]", _GENERATION_META.get_field(name)).column)


GENERATION_TABLE = _GENERATION_META.db_table
GENERATION_COLUMNS = tuple(_generation_column(name) for name in (
    "token", "number", "changed_at", "real_change_at", "exports_number"))
_GENERATION_SQL = (f"SELECT {', '.join(GENERATION_COLUMNS)} FROM {GENERATION_TABLE} "  # noqa: S608
                   f"WHERE {_GENERATION_META.pk.column} = 1")


@dataclass(frozen=True)
class Generation:
    key: str
    changed_at: datetime | None
    real_change_at: datetime | None  # RegistryGeneration.real_change_at
    # What the exports' files are named by: moved only by changes the exports show.
    exports_key: str = "none-0"


def current_generation(request: HttpRequest | None = None) -> Generation:
    """The registry generation: one indexed one-row query, once per request; for a
    request with a session, the query that also reads its session and account
    (registry/accounts/signed_in.py). While the database is away, for a visitor who
    only reads, the one remembered (``_remembered``)."""
    memo = getattr(request, "_registry_generation", None)
    if memo is not None:
        return memo
    try:
        row = None
        if (request is not None and hasattr(request, "session")
                and settings.SESSION_COOKIE_NAME in request.COOKIES):
            row = read_visitor(request, GENERATION_TABLE, GENERATION_COLUMNS)
        if row is None:
            with connection.cursor() as cursor:  # on every request: no ORM compilation
                cursor.execute(_GENERATION_SQL)
                row = cursor.fetchone()
        elif row[0] is None:
            row = None  # an empty registry: no generation row to join
    except DATABASE_AWAY:
        remembered = _remembered(request)
        if remembered is None:
            raise
        generation = remembered
    else:
        generation = (Generation(f"{row[0]}-{row[1]}", _aware(row[2]), _aware(row[3]),
                                 f"{row[0]}-{row[4]}") if row
                      else Generation("none-0", None, None))
        _last_read.update(generation=generation, at=time.monotonic(), away_since=None)
    if request is not None:
        setattr(request, "_registry_generation", generation)  # noqa: B010
    return generation


# While the database is away nothing can change the registry, so the generation this
# process read last is still the current one, unless a change committed between that
# read and the outage. Pages already cached for it are served to visitors without a
# session who only read, if it was read at most this long before the database went away:
# a change that committed in those seconds shows when the database is back, as it would
# to a page read a moment before. Anything else (a page not cached, a signed-in visitor,
# a form) is a 503 (registry/unavailable.py).
REMEMBERED_GENERATION_SECONDS = 5.0
_last_read: dict[str, Any] = {"generation": None, "at": float("-inf"), "away_since": None}


def _remembered(request: HttpRequest | None) -> Generation | None:
    now = time.monotonic()
    if _last_read["away_since"] is None:
        _last_read["away_since"] = now
    if (request is None or request.method not in ("GET", "HEAD")
            or settings.SESSION_COOKIE_NAME in request.COOKIES
            or _last_read["away_since"] - _last_read["at"] > REMEMBERED_GENERATION_SECONDS):
        return None
    return cast("Generation | None", _last_read["generation"])


def _aware(value: datetime | None) -> datetime | None:
    """SQLite's raw cursor gives naive datetimes (stored in UTC); PostgreSQL's are aware."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


class _LocalStore:
    """A per-process LRU of the newest entries, bounded in bytes."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.used = 0
        self.entries: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> object | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None:
                return None
            self.entries.move_to_end(key)
            return found[0]

    def put(self, key: str, value: object, size: int) -> None:
        if size > self.max_bytes // 4:
            return
        with self.lock:
            if key in self.entries:
                return
            self.entries[key] = (value, size)
            self.used += size
            while self.used > self.max_bytes:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.used -= dropped

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.used = 0


local_store = _LocalStore(LOCAL_MAX_BYTES)
free_text_store = _LocalStore(FREE_TEXT_MAX_BYTES)


def _is_free_text(key: str) -> bool:
    return key.split(":", 2)[1].endswith(FREE_TEXT_KIND)


def _local(key: str) -> _LocalStore:
    """The store of this process an entry (and what is made from it) is kept in."""
    return free_text_store if _is_free_text(key) else local_store


def _get(key: str) -> dict[str, Any] | None:
    if _is_free_text(key):
        return cast("dict[str, Any] | None", free_text_store.get(key))
    value = cast("dict[str, Any] | None", local_store.get(key))
    if value is None:
        value = shared_cache.get(key)
        if value is not None:
            local_store.put(key, value, value["size"])
    return value


def _put(key: str, value: dict) -> None:
    if _is_free_text(key):  # never in the shared cache
        free_text_store.put(key, value, value["size"] + len(key))
        return
    shared_cache.set(key, value, CACHE_SECONDS)
    remember = getattr(shared_cache, "remember", None)  # the Redis cache's; a local one is bounded
    if remember is not None:
        remember(key.split(":", 3)[2], key, CACHE_SECONDS)
    local_store.put(key, value, value["size"])


BUILD_WAIT_SECONDS = 2.0


def _built_once(key: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The entry, made by one process at a time: after a publish every process asks
    for the new generation's pages at once, and during a storm of publishes that
    would be every process rebuilding every page. The first takes a lock in the
    cache and builds; the others wait (at most BUILD_WAIT_SECONDS) for its entry,
    and build it themselves if the builder is gone without one (its page was a 404).
    An answer keyed by free text is cheap and asked for once: built here, no lock."""
    if _is_free_text(key):
        made = make()
        _put(key, made)
        return made
    lock = key + ":building"
    owner = shared_cache.add(lock, 1, timeout=int(BUILD_WAIT_SECONDS) + 8)
    if not owner:
        deadline = time.monotonic() + BUILD_WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(0.005)
            entry = _get(key)
            if entry is not None:
                return entry
            if shared_cache.get(lock) is None:
                break
    try:
        entry = make()
        _put(key, entry)
        return entry
    finally:
        if owner:
            shared_cache.delete(lock)


_seen = {"group": ""}  # the release and generation this process saw last
# A host as a client writes it canonically: lower case, a port with no leading zero.
_CANONICAL_HOST = re.compile(r"(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[1-9][0-9]{0,4})?")


def _observe(group: str) -> None:
    """On a new release or generation: drop every other one's entries, here and in
    the shared cache (once per change and process)."""
    if _seen["group"] == group:
        return
    _seen["group"] = group
    local_store.clear()
    free_text_store.clear()
    forget = getattr(shared_cache, "forget_groups_except", None)
    if forget is not None:
        forget(group)


def cache_key(kind: str, request: HttpRequest, query: Query | None = NO_QUERY) -> str | None:
    """The entry of this release and generation for this host, view, path arguments
    and canonical query; None (no caching) for a query the view did not make
    canonical (None) or a host not written canonically (upper case, a port "0443").
    A query with free text in it (not ``shared``) gets a key of the process's own
    store (its kind ends with FREE_TEXT_KIND), never one of the shared cache."""
    group = f"{current_release()}.{current_generation(request).key}"
    _observe(group)
    host = request.get_host()
    match = request.resolver_match
    if query is None or not _CANONICAL_HOST.fullmatch(host) or match is None:
        return None
    arguments = sorted((name, value.lower() if isinstance(value, str) else value)
                       for name, value in match.kwargs.items())
    raw = repr((request.scheme, host, match.view_name, arguments, query.key))
    digest = hashlib.sha256(raw.encode()).hexdigest()[:32]
    if not query.shared:
        kind += FREE_TEXT_KIND
    return f"public:{kind}:{group}:{digest}"


def public_page(request: HttpRequest, template_name: str, build: Callable[[], dict], *,
                query: Query | None = NO_QUERY) -> HttpResponse:
    """The page from the cache, or built, rendered and cached; then the visitor's slots.

    ``build`` returns the template context; its optional "slots" entry maps a slot
    name to the plain values (ids, strings) its per-visitor template needs. It may
    raise (Http404, BadParameter ...): nothing is cached then. ``query``: the
    canonical query the page is built from (query_params.canonical_query), or None
    for a page that must not be cached."""
    key = cache_key("page", request, query)
    anonymous = settings.SESSION_COOKIE_NAME not in request.COOKIES
    if anonymous and key is not None:
        whole = cast("dict[str, Any] | None", _local(key).get(key + ":anonymous"))
        if whole is not None:
            return _anonymous_response(request, whole)
    def render() -> dict[str, Any]:
        context = build()
        slots = context.pop("slots", {})
        context.update(personal_slots=True, REVIEW_LIST_ADDRESS=settings.REVIEW_LIST_ADDRESS)
        body = render_to_string(template_name, context)
        return {"body": body, "slots": slots, "size": len(body)}

    # A query the view did not make canonical (no key): built, never kept.
    entry = render() if key is None else _get(key) or _built_once(key, render)
    if not anonymous and negotiate_encoding(request, offered=()) is None:
        return _refused(["Cookie", "Accept-Encoding"])
    body = entry["body"]
    for name, slot_context in {"nav": {}, "messages": {}, **entry["slots"]}.items():
        body = body.replace(f"<!--slot:{name}-->", _render_slot(request, name, slot_context), 1)
    if not anonymous:
        # The visitor's own part (their name and address, the masked CSRF token) is never
        # compressed beside text an attacker may put in the page, a search query (BREACH):
        # a page with a session is sent as it is.
        response = HttpResponse(body)
        patch_vary_headers(response, ["Cookie", "Accept-Encoding"])
        return response
    if key is None:
        response = HttpResponse(body)
        patch_vary_headers(response, ["Cookie"])
        return response
    # Every visitor without a session gets these very bytes: keep them, and their
    # gzip form, in this process for the rest of the generation. (Compressing is
    # safe here: such a page holds no secret, no CSRF token, nothing of a session.)
    content = body.encode()
    whole = {"content": content, "gzip": gzip.compress(content, compresslevel=6, mtime=0)}
    whole["size"] = len(whole["content"]) + len(whole["gzip"])
    _local(key).put(key + ":anonymous", whole, whole["size"])
    return _anonymous_response(request, whole)


def _refused(vary: list[str]) -> HttpResponse:
    response = not_acceptable()
    patch_vary_headers(response, vary)
    return response


def _anonymous_response(request: HttpRequest, whole: dict[str, Any]) -> HttpResponse:
    coding = negotiate_encoding(request)
    if coding is None:
        return _refused(["Cookie", "Accept-Encoding"])
    gzipped = coding == GZIP
    response = HttpResponse(whole["gzip"] if gzipped else whole["content"])
    if gzipped:
        response["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ["Cookie", "Accept-Encoding"])
    return response


def _render_slot(request: HttpRequest, name: str, context: dict) -> str:
    # A visitor without a session reaches this once per page and generation in a
    # process: public_page keeps the finished page for the next such visitor.
    if name == "nav":  # the visitor's navigation (registry/accounts/signed_in.py)
        return navigation(request, context.get("search_query", ""))
    if name == "messages" and not len(get_messages(request)):
        return ""  # nothing to say: no template to render
    if name == "holder":
        # The template offers the staff pages and, to the holder, a new version: for any
        # other visitor it is empty, so it is not rendered.
        from registry.namespaces.models import Namespace
        from registry.review import workflow

        user = request.user
        namespace = Namespace(pk=context.get("namespace_id"), nid=context.get("nid", ""),
                              holder_id=context.get("holder_id"))
        staff = workflow.can_use_staff_pages(user)
        is_holder = workflow.is_holder(namespace, user)
        if not (staff or is_holder):
            return ""
        context = {**context, "can_use_staff_pages": staff, "csrf_token": get_token(request),
                   **(_holder_context(request, namespace) if is_holder else {})}
        return render_to_string(SLOT_TEMPLATES[name], context)
    if name == "workload":
        from django.utils import timezone

        from registry.review.stats import workload_slot

        workload = workload_slot(request.user, timezone.localdate())
        if workload is None:
            return ""
        context = {**context, **workload}
    return render_to_string(SLOT_TEMPLATES[name], context, request=request)


def _holder_context(request: HttpRequest, namespace: Namespace) -> dict:
    """For the holder only: may they start a new version now (the workflow decides)?"""
    from registry.review.workflow import revise_refusal

    refusal = revise_refusal(namespace, request.user)
    return {"can_revise": refusal is None, "revise_refusal": str(refusal or ""),
            "is_holder": True}


def public_document(request: HttpRequest, build: Callable[[], HttpResponse], *,
                    query: Query | None = NO_QUERY) -> HttpResponse:
    """A response that is the same for everyone, built once per generation and kept
    with its gzip form; conditional requests get 304. Only a 200 is cached."""
    key = cache_key("doc", request, query)
    if key is None:
        return build()
    generation = current_generation(request)
    coding = negotiate_encoding(request)
    if coding is None:
        return _refused(["Accept-Encoding"])
    gzipped = coding == GZIP
    etag = representation_etag(hashlib.sha256(key.encode()).hexdigest()[:24], coding)
    if not_modified(request, etag, generation.changed_at):
        response: HttpResponse = HttpResponseNotModified()
        patch_vary_headers(response, ["Accept-Encoding"])
        response["Cache-Control"] = "public, no-cache"
        _validators(response, etag, generation.changed_at)
        return response
    entry = _get(key)
    if entry is None:
        built = build()
        if built.status_code != 200:
            return built
        content = built.content
        entry = {
            "headers": {name: built[name] for name in _KEPT_HEADERS if built.has_header(name)},
            "content": content,
            "gzip": gzip.compress(content, compresslevel=6, mtime=0),
        }
        entry["size"] = len(entry["content"]) + len(entry["gzip"])
        _put(key, entry)
    response = HttpResponse(entry["gzip"] if gzipped else entry["content"])
    for name, value in entry["headers"].items():
        response[name] = value
    if gzipped:
        response["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ["Accept-Encoding"])
    response["Cache-Control"] = "public, no-cache"
    _validators(response, etag, generation.changed_at)
    return response


def _validators(response: HttpResponse, etag: str, changed_at: datetime | None) -> None:
    response["ETag"] = etag
    if changed_at is not None:
        response["Last-Modified"] = http_date(changed_at.timestamp())


def not_modified(request: HttpRequest, etag: str, changed_at: datetime | None) -> bool:
    """Does the client hold the selected representation (``etag``)? If-None-Match
    decides when it is there (RFC 9110 section 13.1.2), else If-Modified-Since."""
    matched = none_match(request, etag)
    if matched is not None:
        return matched
    since = parse_http_date_safe(request.META.get("HTTP_IF_MODIFIED_SINCE", ""))
    return bool(since and changed_at and int(changed_at.timestamp()) <= since)
