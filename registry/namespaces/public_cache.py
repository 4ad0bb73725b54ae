"""The public side, served from a cache keyed by the registry generation.

Pages and exports that are the same for every visitor are built once per
generation (``RegistryGeneration``, moved by every writer in actions.py in the
same transaction as its change) and kept in the cache under a key that carries
it. A change is visible with the next request, and nothing stale is served: the
old generation's entries are simply never asked for again.

- ``public_page`` caches a page's HTML with slots (``<!--slot:NAME-->``) where the
  visitor's own parts go: the navigation, the messages, the holder's button. Each
  request renders only those, so a signed-in visitor gets the same cached body
  with their own navigation.
- ``public_document`` caches a whole export or API response, with its gzip form,
  and answers with ETag / Last-Modified and 304 Not Modified.

Entries live in Django's cache (Redis in production, shared by every process)
and, for the current generation, in a small per-process store in front of it.
A visitor with no session gets, from that store, the whole page as bytes and in
gzip, the same for every such visitor: no slot to render, nothing to compress.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date, parse_http_date_safe

# Slots every page has; a page adds its own with build()["slots"].
SLOT_TEMPLATES = {
    "nav": "_nav.html",
    "messages": "_messages.html",
    "holder": "namespaces/_holder_actions.html",
    "workload": "review/_stats_workload.html",
}
CACHE_SECONDS = 24 * 60 * 60  # an entry is useless after the next change anyway
LOCAL_MAX_BYTES = 64 * 1024 * 1024  # per process
_ACCEPTS_GZIP = re.compile(r"\bgzip\b")
# Response headers kept with a cached document.
_KEPT_HEADERS = ("Content-Type", "Content-Disposition")


# RegistryGeneration's one row (its table name is Django's default for the model).
_GENERATION_SQL = (
    "SELECT token, number, changed_at, real_change_at FROM namespaces_registrygeneration "
    "WHERE id = 1"
)


@dataclass(frozen=True)
class Generation:
    key: str
    changed_at: datetime | None
    real_change_at: datetime | None  # RegistryGeneration.real_change_at


def current_generation(request: HttpRequest | None = None) -> Generation:
    """The registry generation: one indexed one-row query, once per request."""
    memo = getattr(request, "_registry_generation", None)
    if memo is not None:
        return memo
    with connection.cursor() as cursor:  # on every request: no ORM compilation
        cursor.execute(_GENERATION_SQL)
        row = cursor.fetchone()
    generation = (Generation(f"{row[0]}-{row[1]}", _aware(row[2]), _aware(row[3])) if row
                  else Generation("none-0", None, None))
    if request is not None:
        setattr(request, "_registry_generation", generation)  # noqa: B010
    return generation


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


def _get(key: str) -> dict[str, Any] | None:
    value = cast("dict[str, Any] | None", local_store.get(key))
    if value is None:
        value = cache.get(key)
        if value is not None:
            local_store.put(key, value, value["size"])
    return value


def _put(key: str, value: dict) -> None:
    cache.set(key, value, CACHE_SECONDS)
    local_store.put(key, value, value["size"])


def cache_key(kind: str, request: HttpRequest, params: Iterable[str]) -> str:
    """The entry of this generation for this host, path and the query parameters
    the view reads (others cannot fill the cache with copies)."""
    generation = current_generation(request)
    query = sorted((name, value) for name in params for value in request.GET.getlist(name))
    raw = f"{request.scheme}://{request.get_host()}{request.path}?{query!r}"
    digest = hashlib.sha256(raw.encode()).hexdigest()[:32]
    return f"public:{kind}:{generation.key}:{digest}"


def public_page(request: HttpRequest, template_name: str, build: Callable[[], dict], *,
                params: Iterable[str] = ()) -> HttpResponse:
    """The page from the cache, or built, rendered and cached; then the visitor's slots.

    ``build`` returns the template context; its optional "slots" entry maps a slot
    name to the plain values (ids, strings) its per-visitor template needs. It may
    raise (Http404 ...): nothing is cached then."""
    key = cache_key("page", request, params)
    anonymous = settings.SESSION_COOKIE_NAME not in request.COOKIES
    if anonymous:
        whole = cast("dict[str, Any] | None", local_store.get(key + ":anonymous"))
        if whole is not None:
            return _anonymous_response(request, whole)
    entry = _get(key)
    if entry is None:
        context = build()
        slots = context.pop("slots", {})
        context.update(personal_slots=True, REVIEW_LIST_ADDRESS=settings.REVIEW_LIST_ADDRESS)
        body = render_to_string(template_name, context)
        entry = {"body": body, "slots": slots, "size": len(body)}
        _put(key, entry)
    body = entry["body"]
    for name, slot_context in {"nav": {}, "messages": {}, **entry["slots"]}.items():
        body = body.replace(f"<!--slot:{name}-->", _render_slot(request, name, slot_context), 1)
    if anonymous:
        # Every visitor without a session gets these very bytes: keep them, and their
        # gzip form, in this process for the rest of the generation. (Compressing is
        # safe here: such a page holds no secret, no CSRF token, nothing of a session.)
        content = body.encode()
        whole = {"content": content, "gzip": gzip.compress(content, compresslevel=6, mtime=0)}
        whole["size"] = len(whole["content"]) + len(whole["gzip"])
        local_store.put(key + ":anonymous", whole, whole["size"])
        return _anonymous_response(request, whole)
    response = HttpResponse(body)
    patch_vary_headers(response, ["Cookie"])
    return response


def _anonymous_response(request: HttpRequest, whole: dict[str, Any]) -> HttpResponse:
    gzipped = bool(_ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")))
    response = HttpResponse(whole["gzip"] if gzipped else whole["content"])
    if gzipped:
        response["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ["Cookie", "Accept-Encoding"])
    return response


def _render_slot(request: HttpRequest, name: str, context: dict) -> str:
    # A visitor without a session reaches this once per page and generation in a
    # process: public_page keeps the finished page for the next such visitor.
    if name == "holder":
        if not request.user.is_authenticated:
            return ""
        if context.get("holder_id") == request.user.pk:
            context = {**context, **_holder_context(request, context)}
    if name == "workload":
        from django.utils import timezone

        from registry.review.stats import workload_slot

        workload = workload_slot(request.user, timezone.localdate())
        if workload is None:
            return ""
        context = {**context, **workload}
    return render_to_string(SLOT_TEMPLATES[name], context, request=request)


def _holder_context(request: HttpRequest, context: dict) -> dict:
    """For the holder only: may they start a new version now (the workflow decides)?"""
    from registry.namespaces.models import Namespace
    from registry.review.workflow import can_revise

    namespace = Namespace(pk=context["namespace_id"], nid=context["nid"],
                          holder_id=context["holder_id"])
    return {"can_revise": can_revise(namespace, request.user), "is_holder": True}


def public_document(request: HttpRequest, build: Callable[[], HttpResponse], *,
                    params: Iterable[str] = ()) -> HttpResponse:
    """A response that is the same for everyone, built once per generation and kept
    with its gzip form; conditional requests get 304. Only a 200 is cached."""
    key = cache_key("doc", request, params)
    generation = current_generation(request)
    tag = hashlib.sha256(key.encode()).hexdigest()[:24]
    gzipped = bool(_ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")))
    etag = f'"{tag}-gz"' if gzipped else f'"{tag}"'
    if _not_modified(request, tag, generation.changed_at):
        response: HttpResponse = HttpResponseNotModified()
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


def _not_modified(request: HttpRequest, tag: str, changed_at: datetime | None) -> bool:
    if_none_match = request.META.get("HTTP_IF_NONE_MATCH")
    if if_none_match is not None:
        # Either form (plain or gzip, weak or strong) names this generation's document.
        return tag in if_none_match or if_none_match.strip() == "*"
    since = parse_http_date_safe(request.META.get("HTTP_IF_MODIFIED_SINCE", ""))
    return bool(since and changed_at and int(changed_at.timestamp()) <= since)
