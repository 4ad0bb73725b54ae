"""The read-only JSON API, the machine-readable exports and the Atom feed.

Each is built once per registry generation and served from the cache
(public_cache.public_document), gzip-compressed when the client accepts it, with
ETag and Last-Modified, so clients poll with If-None-Match / If-Modified-Since
and get 304s."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.core.paginator import EmptyPage, Paginator
from django.db.models.functions import Lower
from django.http import JsonResponse
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from registry.namespaces import xrefs
from registry.namespaces.checker import (
    MAX_QUERY_URN_LENGTH,
    MAX_QUERY_URNS,
    MAX_URNS,
    EquivalenceError,
    check_urns,
    equivalence,
    split_lines,
)
from registry.namespaces.export_files import export_response
from registry.namespaces.exports import (
    attach_version_facts,
    exported_namespaces,
    record_updated,
    template_url,
)
from registry.namespaces.models import Namespace, NamespaceEvent, reference_link
from registry.namespaces.openapi import openapi_document
from registry.namespaces.presentation import nid_route
from registry.namespaces.public_cache import public_document
from registry.namespaces.query_params import (
    SHOWN_VALUE_CHARS,
    BadParameter,
    Param,
    Query,
    canonical_query,
    choice,
    positive_integer,
)
from registry.namespaces.template import TEXT_FIELDS
from registry.namespaces.xrefs import xml_safe
from registry.protection import limit

API_PAGE_SIZE = 100
QUERY_URN = re.compile(f"[!-~]{{1,{MAX_QUERY_URN_LENGTH}}}")  # openapi.py states it


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path)


def _reference(xref) -> dict:
    """A typed reference as IANA types it, with the label and link the pages show."""
    typed = xrefs.from_label(xref) if isinstance(xref, str) else xref
    text, url = reference_link(typed)
    return {"type": typed.get("type", "text"), "data": typed.get("data"),
            "label": text, "url": url or None}


def _with_version_facts(page) -> list[Namespace]:
    namespaces = list(page)
    attach_version_facts(namespaces)
    return namespaces


def _nid_url(request, name: str) -> Callable[[str], str]:
    """The absolute URL of a per-NID route, for a whole list (presentation.nid_route)."""
    origin = _absolute(request, "/").removesuffix("/")
    path = nid_route(name)
    return lambda nid: origin + path(nid)


def summary_links(request) -> dict[str, Callable[[str], str]]:
    return {"url": _nid_url(request, "namespaces:detail"),
            "api_url": _nid_url(request, "namespaces:api-detail")}


def namespace_summary(request, ns: Namespace,
                      links: dict[str, Callable[[str], str]] | None = None) -> dict:
    links = links or summary_links(request)
    return {
        "nid": ns.nid,
        "kind": ns.kind,
        "informal_number": ns.informal_number,
        "status": ns.status,
        "status_note": ns.status_note,
        "replaced_by": ns.replaced_by.nid if ns.replaced_by else None,
        "registration_date": ns.registered_on.isoformat() if ns.registered_on else None,
        "updated": updated.isoformat() if (updated := record_updated(ns)) else None,
        "references": [_reference(x) for x in ns.references],
        "contact": [_reference(x) for x in ns.contact],
        "organisation": ns.organisation,
        "template_url": template_url(ns) or None,
        "has_profile": bool(ns.profile),
        "url": links["url"](ns.nid),
        "api_url": links["api_url"](ns.nid),
    }


# The list's filters: a value given must be one of these (an empty one too), and a
# refused value is a 400 naming the filter, never the whole registry.
LIST_PARAMS = (
    Param("kind", choice(Namespace.Kind.values), empty_is_default=False),
    Param("status", choice(Namespace.Status.values), empty_is_default=False),
    Param("page", positive_integer, default="1", empty_is_default=False),
)
CHECK_PARAMS = (Param("urn", str, many=True, free_text=True),)
EQUIVALENT_PARAMS = (Param("a", str, free_text=True), Param("b", str, free_text=True))


@require_GET
def namespaces_list(request):
    query = canonical_query(request, LIST_PARAMS)
    return public_document(request, lambda: _namespaces_list(request, query), query=query)


def _namespaces_list(request, query: Query):
    queryset = Namespace.objects.sorted_by("nid")
    if query["kind"]:
        queryset = queryset.filter(kind=query["kind"])
    if query["status"]:
        queryset = queryset.filter(status=query["status"])
    # Paged over the ids alone (a deep page skips thousands of narrow rows, not of
    # whole ones), then the page's rows read by id in a subquery: one query.
    paginator = Paginator(queryset.values("pk"), API_PAGE_SIZE)
    try:
        page = paginator.page(int(query["page"]))
    except EmptyPage:  # a page that does not exist (the schema's 404), never cached
        return JsonResponse({"error": f"no page {query['page']}: the pages are 1 to "
                                      f"{paginator.num_pages}", "parameter": "page"},
                            status=404)
    rows = (Namespace.objects.filter(pk__in=cast(Any, page.object_list)).sorted_by("nid")
            .select_related("replaced_by"))

    links = summary_links(request)

    def link(number):
        # From the canonical filters alone: nothing else a client sent reaches a link
        # that later visitors get from the cache.
        params = {name: value for name, value in query.key if name != "page"}
        params["page"] = number
        return _absolute(request, f"{request.path}?{urlencode(params)}")

    return JsonResponse({
        "count": paginator.count,
        "page": page.number,
        "pages": paginator.num_pages,
        "next": link(page.next_page_number()) if page.has_next() else None,
        "previous": link(page.previous_page_number()) if page.has_previous() else None,
        "results": [namespace_summary(request, ns, links) for ns in _with_version_facts(rows)],
    })


@require_GET
def namespace_detail(request, nid):
    return public_document(request, lambda: _namespace_detail(request, nid))


def _namespace_detail(request, nid):
    ns = exported_namespaces().by_nid(nid).select_related("replaced_by").first()
    if ns is None:
        return JsonResponse({"error": f"no namespace {nid[:64]!r}",
                             "did_you_mean": Namespace.objects.similar_to(nid)}, status=404)
    data = namespace_summary(request, ns)
    data["profile"] = ns.profile or None
    data["versions"] = [
        {
            "version": v.number,
            "date": v.date.isoformat(),
            "nid": v.nid,
            "fast_track": v.fast_track,
            "published_at": v.published_at.isoformat(),
            "url": _absolute(request, v.get_absolute_url()),
            "template": {name: getattr(v, name) for name in TEXT_FIELDS},
            "profile": json.loads(v.profile) if v.profile else None,
        }
        for v in ns.versions.order_by("number")
    ]
    return JsonResponse(data)


@csrf_exempt  # a read-only computation with no side effects or session use
@require_http_methods(["GET", "POST"])
def check_json(request):
    """GET ?urn=... (repeatable) or POST a JSON list / {"urns": [...]} / plain lines.

    A GET's answer depends only on its URNs and the registry: it is kept per registry
    generation in the process that built it (free text: never in the shared cache), and
    only the computation is rate-limited."""
    if request.method in ("GET", "HEAD"):
        urns = query_urns(canonical_query(request, CHECK_PARAMS).many("urn"))
        query = Query({"urn": tuple(urns)}, (("urn", tuple(urns)),))

        def build() -> JsonResponse:
            limit(request, "api_check")  # only a check the cache cannot answer counts
            return _check(urns)

        # Keyed by the URNs in their order (the results are in that order); past
        # MAX_URNS the 400 is never cached.
        return public_document(request, build, query=query)
    limit(request, "api_check")
    try:
        urns = _posted_urns(request)
    except ValueError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return _check(urns)


def query_urns(urns: tuple[str, ...]) -> list[str]:
    """The URNs of a GET, within the bounds the schema states for a query string (one
    to MAX_QUERY_URNS, each 1 to MAX_QUERY_URN_LENGTH printable ASCII characters: a
    URN is ASCII, RFC 8141 section 2); anything else is a 400 naming ``urn``. Other
    text, longer URNs and longer lists: POST them."""
    if not urns:
        raise BadParameter("urn", "give one or more URNs: ?urn=urn:example:a")
    if len(urns) > MAX_QUERY_URNS:
        raise BadParameter("urn", f"at most {MAX_QUERY_URNS} in a query string; POST a "
                                  f"longer list (up to {MAX_URNS}) to /api/check")
    for urn in urns:
        if not QUERY_URN.fullmatch(urn):
            raise BadParameter("urn", f"each is 1 to {MAX_QUERY_URN_LENGTH} printable "
                                      f"ASCII characters without spaces in a query string "
                                      f"(not {urn[:SHOWN_VALUE_CHARS]!r}); POST other text "
                                      f"to /api/check")
    return list(urns)


def _check(urns: list[str]) -> JsonResponse:
    if not urns:
        return JsonResponse({"error": "give one or more URNs: ?urn=urn:example:a"}, status=400)
    if len(urns) > MAX_URNS:
        return JsonResponse({"error": f"at most {MAX_URNS} URNs per request"}, status=400)
    return JsonResponse({"results": check_urns(urns)})


@require_GET
def equivalent(request):
    """GET ?a=URN&b=URN: URN-equivalence by RFC 8141 section 3.1 ("rfc8141_equivalent")
    and by the namespace's own published rules too ("equivalent", section 3.2), with
    the steps applied and where the registration states each."""
    query = canonical_query(request, EQUIVALENT_PARAMS)
    a, b = str(query.values["a"]), str(query.values["b"])
    for name, value in (("a", a), ("b", b)):
        if not value:
            raise BadParameter(name, "give two URNs: ?a=urn:isbn:0-395-36341-1"
                                     "&b=URN:ISBN:0395363411")
        if len(value) > MAX_QUERY_URN_LENGTH:
            raise BadParameter(name, f"a URN here has at most {MAX_QUERY_URN_LENGTH} "
                                     f"characters")

    def build() -> JsonResponse:
        limit(request, "api_check")
        try:
            return JsonResponse(equivalence(a, b))
        except EquivalenceError as exc:
            return JsonResponse({"error": str(exc), "which": exc.which}, status=400)

    return public_document(request, build, query=query)


@csrf_exempt  # GET only: any other method is a 405 (not a CSRF 403), as under /api/
@require_GET
def profiles_json(request):
    """Every published machine-readable profile, by NID: the export a validator or a
    resolver loads once."""
    def build() -> JsonResponse:
        rows = Namespace.objects.exclude(profile={}).order_by(Lower("nid")).values_list(
            "nid", "profile")
        return JsonResponse({
            "about": "Machine-readable profiles of URN namespaces (NSS syntax, check digits, "
                     "lexical equivalence, examples, resolvers), each rule cited to the "
                     "registration that states it.",
            "api": _absolute(request, reverse("namespaces:api-schema")),
            "profiles": {nid: profile for nid, profile in rows},
        }, json_dumps_params={"indent": 1})

    return public_document(request, build)


def _posted_urns(request) -> list[str]:
    try:
        body = request.body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    if request.content_type == "application/json":
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the body is not JSON: {exc.msg}") from None
        except RecursionError:  # any nesting depth: the parser's stack, not ours, gives out
            raise ValueError("the body is nested too deeply; send a flat list") from None
        if isinstance(data, dict):
            data = data.get("urns")
        if not isinstance(data, list) or not all(isinstance(u, str) for u in data):
            raise ValueError('send a JSON list of strings, or {"urns": [...]}')
        return data
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return split_lines(request.POST.get("urns", ""))
    return split_lines(body)


@require_GET
def registry_xml_view(request):
    return export_response(request, "registry.xml")


@require_GET
def registry_csv_view(request):
    return export_response(request, "registry.csv")


@require_GET
def formal_csv_view(request):
    return export_response(request, "urn-namespaces-1.csv")


@require_GET
def informal_csv_view(request):
    return export_response(request, "urn-namespaces-2.csv")


class TextAtom1Feed(Atom1Feed):
    """Atom whose entry summaries are plain text (``type="text"``): stored fields are
    never published as HTML a feed reader would render."""

    def add_item_elements(self, handler, item):
        summary = item["description"]
        super().add_item_elements(handler, {**item, "description": None})
        if summary:
            handler.addQuickElement("summary", summary, {"type": "text"})


FEED_AUTHOR = "URN Namespace Registry"


def _tag(specific: str) -> str:
    """A tag: URI (RFC 4151) under SITE_URL's host, whatever Host a request names."""
    host = urlsplit(settings.SITE_URL).hostname or "localhost"
    return f"tag:{host},2026:{specific}"


class RegistryFeed(Feed):
    """Atom feed of registry changes: new namespaces, new versions, status changes,
    and the changes brought over from IANA's registry."""

    feed_type = TextAtom1Feed
    title = "URN Namespace Registry: changes"
    subtitle = "New URN namespaces, new versions of their templates, and status changes."
    author_name = FEED_AUTHOR

    def link(self):
        return reverse("namespaces:registry")

    def feed_guid(self):
        return _tag("feed")

    def items(self):
        return (NamespaceEvent.objects.in_feed()
                .select_related("namespace", "version__namespace")[:50])

    def item_title(self, item):
        ns = item.namespace
        if item.kind == NamespaceEvent.Kind.REGISTERED:
            return xml_safe(f"New {ns.kind} namespace: {ns.nid}")
        if item.kind == NamespaceEvent.Kind.VERSION_PUBLISHED:
            return xml_safe(f"{ns.nid}: version {item.version.number}")
        if item.kind == NamespaceEvent.Kind.ADDED_FROM_IANA:
            return xml_safe(f"New {ns.kind} namespace: {ns.nid} (registered at IANA)")
        if item.kind == NamespaceEvent.Kind.SYNCED:
            return xml_safe(f"{ns.nid}: brought in line with IANA's registry")
        if item.kind == NamespaceEvent.Kind.DROPPED_AT_IANA:
            return xml_safe(f"{ns.nid}: dropped from IANA's registry (kept here)")
        if item.kind == NamespaceEvent.Kind.STATUS_CHANGED:
            return xml_safe(f"{ns.nid} is now {item.to_status}")
        if item.kind == NamespaceEvent.Kind.RECORD_CHANGED and item.changes:
            return xml_safe(f"{ns.nid}: {', '.join(item.changed_fields)} changed")
        return xml_safe(f"{ns.nid}: {item.get_kind_display().lower()}")

    def item_description(self, item):
        if item.version_id:
            return xml_safe(item.version.revision_information or item.version.purpose[:500])
        if item.kind == NamespaceEvent.Kind.ADDED_FROM_IANA:
            # When IANA registered it: the entry's own date is when the sync brought it.
            registered = item.namespace.registered_on
            when = (f"Registered at IANA on {registered:%Y-%m-%d}." if registered
                    else "IANA's registry gives no registration date.")
            return xml_safe(f"{when} {item.comment}".strip())
        return xml_safe(item.comment)

    def item_link(self, item):
        return item.version.get_absolute_url() if item.version_id else (
            item.namespace.get_absolute_url())

    def item_guid(self, item):
        return _tag(f"event-{item.pk}")

    item_guid_is_permalink = False

    def item_author_name(self, item):
        return FEED_AUTHOR

    def item_pubdate(self, item):
        return item.created_at

    def item_updateddate(self, item):
        return item.created_at


_feed = RegistryFeed()


@require_GET
def registry_feed(request):
    return public_document(request, lambda: _feed(request))


@require_GET
def openapi_schema(request):
    """The OpenAPI 3.1 description of the JSON API."""
    return public_document(request, lambda: JsonResponse(
        openapi_document(settings.SITE_URL), json_dumps_params={"indent": 1}))
