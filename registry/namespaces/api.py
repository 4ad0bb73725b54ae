"""The read-only JSON API, the machine-readable exports and the Atom feed.

Every response carries ETag and Last-Modified from the registry's latest change,
so clients poll with If-None-Match / If-Modified-Since and get 304s."""

from __future__ import annotations

import json

from django.contrib.syndication.views import Feed
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db.models import Max
from django.http import HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import condition, require_GET, require_http_methods

from registry.namespaces.checker import MAX_URNS, check_urns, split_lines
from registry.namespaces.exports import registry_csv, registry_xml
from registry.namespaces.models import Namespace, NamespaceEvent
from registry.namespaces.template import TEXT_FIELDS
from registry.namespaces.views import registry_etag, registry_last_modified
from registry.protection import limited

API_PAGE_SIZE = 100
cached = condition(etag_func=registry_etag, last_modified_func=registry_last_modified)


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path)


def namespace_summary(request, ns: Namespace) -> dict:
    return {
        "nid": ns.nid,
        "kind": ns.kind,
        "informal_number": ns.informal_number,
        "status": ns.status,
        "status_note": ns.status_note,
        "replaced_by": ns.replaced_by.nid if ns.replaced_by else None,
        "registration_date": ns.registered_on.isoformat() if ns.registered_on else None,
        "references": ns.references,
        "organisation": ns.organisation,
        "template_url": ns.template_url or None,
        "url": _absolute(request, ns.get_absolute_url()),
        "api_url": _absolute(request, reverse("namespaces:api-detail", args=[ns.nid])),
    }


@require_GET
@cached
def namespaces_list(request):
    queryset = Namespace.objects.sorted_by("nid").select_related("replaced_by")
    kind = request.GET.get("kind")
    if kind in Namespace.Kind.values:
        queryset = queryset.filter(kind=kind)
    status = request.GET.get("status")
    if status in Namespace.Status.values:
        queryset = queryset.filter(status=status)
    paginator = Paginator(queryset, API_PAGE_SIZE)
    try:
        page = paginator.page(request.GET.get("page", 1))
    except (EmptyPage, PageNotAnInteger):
        return JsonResponse({"error": f"page must be 1 to {paginator.num_pages}"}, status=400)

    def link(number):
        params = request.GET.copy()
        params["page"] = number
        return _absolute(request, f"{request.path}?{params.urlencode()}")

    return JsonResponse({
        "count": paginator.count,
        "page": page.number,
        "pages": paginator.num_pages,
        "next": link(page.next_page_number()) if page.has_next() else None,
        "previous": link(page.previous_page_number()) if page.has_previous() else None,
        "results": [namespace_summary(request, ns) for ns in page],
    })


@require_GET
@cached
def namespace_detail(request, nid):
    ns = Namespace.objects.by_nid(nid).select_related("replaced_by").first()
    if ns is None:
        return JsonResponse({"error": f"no namespace {nid[:64]!r}",
                             "did_you_mean": Namespace.objects.similar_to(nid)}, status=404)
    data = namespace_summary(request, ns)
    data["versions"] = [
        {
            "version": v.number,
            "date": v.date.isoformat(),
            "nid": v.nid,
            "fast_track": v.fast_track,
            "published_at": v.published_at.isoformat(),
            "url": _absolute(request, v.get_absolute_url()),
            "template": {name: getattr(v, name) for name in TEXT_FIELDS},
        }
        for v in ns.versions.order_by("number")
    ]
    return JsonResponse(data)


@csrf_exempt  # a read-only computation with no side effects or session use
@require_http_methods(["GET", "POST"])
@limited("api_check")
def check(request):
    """GET ?urn=... (repeatable) or POST a JSON list / {"urns": [...]} / plain lines."""
    if request.method == "GET":
        urns = [u for u in request.GET.getlist("urn") if u.strip()]
    else:
        try:
            urns = _posted_urns(request)
        except ValueError as exc:
            return JsonResponse({"error": str(exc)}, status=400)
    if not urns:
        return JsonResponse({"error": "give one or more URNs: ?urn=urn:example:a"}, status=400)
    if len(urns) > MAX_URNS:
        return JsonResponse({"error": f"at most {MAX_URNS} URNs per request"}, status=400)
    return JsonResponse({"results": check_urns(urns)})


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
@cached
def registry_xml_view(request):
    updated = registry_last_modified(request)
    body = registry_xml(Namespace.objects.sorted_by("nid"),
                        updated=updated.date().isoformat() if updated else "")
    return HttpResponse(body, content_type="application/xml; charset=utf-8")


@require_GET
@cached
def registry_csv_view(request):
    response = HttpResponse(registry_csv(Namespace.objects.sorted_by("nid")),
                            content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'inline; filename="urn-namespaces.csv"'
    return response


class RegistryFeed(Feed):
    """Atom feed of registry changes: new namespaces, new versions, status changes."""

    feed_type = Atom1Feed
    title = "URN Namespace Registry: changes"
    subtitle = "New URN namespaces, new versions of their templates, and status changes."

    def link(self):
        return reverse("namespaces:registry")

    def items(self):
        return (NamespaceEvent.objects.exclude(kind=NamespaceEvent.Kind.IMPORTED)
                .select_related("namespace", "version")[:50])

    def item_title(self, item):
        if item.kind == NamespaceEvent.Kind.REGISTERED:
            return f"New {item.namespace.kind} namespace: {item.namespace.nid}"
        if item.kind == NamespaceEvent.Kind.VERSION_PUBLISHED:
            return f"{item.namespace.nid}: version {item.version.number}"
        return f"{item.namespace.nid} is now {item.to_status}"

    def item_description(self, item):
        if item.version_id:
            return item.version.revision_information or item.version.purpose[:500]
        return item.comment

    def item_link(self, item):
        return item.version.get_absolute_url() if item.version_id else (
            item.namespace.get_absolute_url())

    def item_guid(self, item):
        return f"tag:urn-registry,2026:event-{item.pk}"

    item_guid_is_permalink = False

    def item_pubdate(self, item):
        return item.created_at

    def item_updateddate(self, item):
        return item.created_at


def feed_last_modified(request, *args, **kwargs):
    return NamespaceEvent.objects.aggregate(m=Max("created_at"))["m"]


registry_feed = condition(last_modified_func=feed_last_modified)(RegistryFeed())
