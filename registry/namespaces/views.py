"""Public pages of the registry: browse, search, namespace pages, history, checker."""

from __future__ import annotations

import string

from django.core.paginator import Paginator
from django.db.models import Count, Max, Q, Subquery
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from registry.namespaces.checker import MAX_URNS, check_urns, split_lines
from registry.namespaces.forms import SearchForm
from registry.namespaces.models import Namespace, NamespaceEvent, RegistryEvent
from registry.namespaces.presentation import field_diffs, highlight, pick_pair
from registry.namespaces.querysets import nid_from_query
from registry.namespaces.template import SECTIONS, render_text, template_values
from registry.protection import limited

PAGE_SIZE = 250
LETTERS = list(string.ascii_lowercase) + ["0-9"]


def _registry_stamp(request) -> dict:
    """When the registry last changed and how many rows it has, once per request."""
    if not hasattr(request, "_registry_stamp"):
        # Experts, people and IANA's date are in the exports too: their last change
        # (an uncorrelated subquery, so still one query).
        last_metadata = RegistryEvent.objects.order_by("-created_at").values("created_at")[:1]
        stamp = Namespace.objects.aggregate(
            changed=Max("updated_at"), count=Count("pk"),
            formal=Count("pk", filter=Q(kind="formal")),
            informal=Count("pk", filter=Q(kind="informal")),
            metadata=Max(Subquery(last_metadata)),
        )
        metadata = stamp.pop("metadata")
        if metadata and (stamp["changed"] is None or metadata > stamp["changed"]):
            stamp["changed"] = metadata
        request._registry_stamp = stamp
    return request._registry_stamp


def registry_last_modified(request, *args, **kwargs):
    return _registry_stamp(request)["changed"]


def registry_etag(request, *args, **kwargs):
    stamp = _registry_stamp(request)
    changed = stamp["changed"].timestamp() if stamp["changed"] else 0
    return f"{stamp['count']}-{changed}-{request.GET.urlencode()}"


def designated_experts() -> list[str]:
    """The designated experts, as the registry page lists them (RFC 8141 section 6.2)."""
    from django.contrib.auth import get_user_model

    from registry.accounts.roles import EXPERT

    users = get_user_model().objects.filter(groups__name=EXPERT, is_active=True)
    return [user.display_name for user in users.order_by("last_name", "first_name", "email")]


def namespace_or_404(nid: str) -> Namespace:
    namespace = Namespace.objects.by_nid(nid).select_related("holder", "replaced_by").first()
    if namespace is None:
        raise UnknownNID(nid)
    return namespace


class UnknownNID(Http404):
    def __init__(self, nid: str):
        super().__init__(f"No namespace {nid!r} is registered.")
        self.nid = nid


def _table(request, queryset, prefix: str, sort: str):
    rows = queryset.sorted_by(sort).with_version_count()
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get(f"{prefix}page"))


@require_GET
def registry_page(request):
    # No ETag here: the page carries the visitor's own navigation and messages, so a
    # 304 would show a signed-in person the page they saw before. The exports and the
    # API, which are the same for everyone, answer conditional requests.
    status = request.GET.get("status", "")
    sort = request.GET.get("sort", "nid")
    letter = request.GET.get("letter", "")
    namespaces = Namespace.objects.all()
    if status in Namespace.Status.values:
        namespaces = namespaces.filter(status=status)
    formal = namespaces.formal()
    if letter in LETTERS:
        formal = (formal.filter(nid__regex=r"^[0-9]") if letter == "0-9"
                  else formal.filter(nid__istartswith=letter))
    informal_sort = {"nid": "number", "-nid": "-number"}.get(sort, sort)
    context = {
        "formal": _table(request, formal, "f", sort),
        "informal": _table(request, namespaces.informal(), "i", informal_sort),
        "status": status,
        "sort": sort,
        "letter": letter,
        "letters": LETTERS,
        "statuses": Namespace.Status.choices,
        "counts": _registry_stamp(request),
        "experts": designated_experts(),
        "last_change": NamespaceEvent.objects.last_real_change(),
    }
    return render(request, "namespaces/registry.html", context)


@require_GET
@limited("search")
def search(request):
    form = SearchForm(request.GET)
    # Refused text (a control or bidi character, too long) stays in the box with the reason.
    q = form.cleaned_data["q"] if form.is_valid() else ""
    nid = nid_from_query(q)
    if nid:
        namespace = Namespace.objects.by_nid(nid).first()
        if namespace:
            return redirect(namespace)
    results = Namespace.objects.search(q) if q else Namespace.objects.none()
    page = Paginator(results, 50).get_page(request.GET.get("page"))
    for namespace in page:
        namespace.snippet = highlight(
            " · ".join(filter(None, [namespace.organisation, namespace.search_text])), q
        )
        namespace.nid_html = highlight(namespace.nid, q)
    suggestions = Namespace.objects.similar_to(q) if q and not page.paginator.count else []
    return render(request, "namespaces/search.html", {
        "q": q, "search_query": q, "page": page, "suggestions": suggestions, "urn_nid": nid,
        "typed": request.GET.get("q", "")[:1000], "error": next(iter(form.errors.get("q", [])), ""),
    })


def _versions(namespace):
    return list(namespace.versions.select_related("published_by").order_by("-number"))


@require_GET
def detail(request, nid):
    try:
        namespace = namespace_or_404(nid)
    except UnknownNID:
        return not_found(request, nid)
    versions = _versions(namespace)
    return render(request, "namespaces/detail.html", {
        "namespace": namespace,
        "version": versions[0] if versions else None,
        "versions": versions,
        "sections": SECTIONS,
        "events": namespace.events.select_related("version")[:50],
        "pending": namespace.revision_requests.filter(state="in_review"),
    })


@require_GET
def version(request, nid, number):
    namespace = namespace_or_404(nid)
    versions = _versions(namespace)
    chosen = next((v for v in versions if v.number == number), None)
    if chosen is None:
        raise Http404(f"{namespace.nid} has no version {number}.")
    return render(request, "namespaces/detail.html", {
        "namespace": namespace, "version": chosen, "versions": versions,
        "sections": SECTIONS, "old_version": chosen.number != versions[0].number,
        "events": namespace.events.select_related("version")[:50],
    })


@require_GET
def diff(request, nid):
    namespace = namespace_or_404(nid)
    versions = _versions(namespace)
    if len(versions) < 2:
        return render(request, "namespaces/diff.html", {"namespace": namespace,
                                                        "versions": versions})
    a, b = pick_pair(request.GET, versions)
    return render(request, "namespaces/diff.html", {
        "namespace": namespace, "versions": versions, "a": a, "b": b,
        "diffs": field_diffs(template_values(a), template_values(b)),
        "left_label": f"Version {a.number} ({a.date:%Y-%m-%d})",
        "right_label": f"Version {b.number} ({b.date:%Y-%m-%d})",
        "downloads": [(f"version {v.number}", reverse("namespaces:version-txt",
                                                      args=[namespace.nid, v.number]))
                      for v in (a, b)],
    })


@require_GET
def template_txt(request, nid, number=None):
    namespace = namespace_or_404(nid)
    versions = namespace.versions.order_by("-number")
    chosen = versions.filter(number=number).first() if number else versions.first()
    if chosen is None:
        if number:
            raise Http404(f"{namespace.nid} has no version {number}.")
        text = (f"Namespace Identifier:\n   {namespace.nid}\n\nThe registration template of "
                f"{namespace.nid} is not held in this registry.\n")
        if namespace.template_url:
            text += f"IANA publishes it at {namespace.template_url}\n"
        if namespace.references:
            text += "Reference: " + "; ".join(namespace.reference_labels) + "\n"
    else:
        text = render_text(nid=chosen.nid, version=chosen.number, date=chosen.date,
                           values=template_values(chosen), fast_track=chosen.fast_track)
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


def not_found(request, nid: str):
    suggestions = Namespace.objects.similar_to(nid)
    return render(request, "404.html", {
        "nid": nid[:64], "suggestions": suggestions,
    }, status=404)


def handler404(request, exception=None):
    """One page for every other 404. The exception's text is never shown: with DEBUG off
    Django's resolver puts its URL patterns and source paths there, and a different text
    for "private" and "missing" would tell a visitor which ids exist."""
    nid = getattr(exception, "nid", None)
    if nid:
        return not_found(request, nid)
    return render(request, "404.html", {}, status=404)


@limited("api_check")
def check(request):
    text = request.POST.get("urns", "") if request.method == "POST" else request.GET.get("urn", "")
    lines = split_lines(text)
    results = check_urns(lines) if lines else []
    for result in results:
        if not result["valid"]:
            offset = result["error"]["offset"]
            result["before"] = result["urn"][:offset]
            result["bad"] = result["urn"][offset:offset + 1] or "␄"
            result["after"] = result["urn"][offset + 1:offset + 200]
    return render(request, "namespaces/check.html", {
        "text": text, "results": results, "truncated": len(lines) > MAX_URNS,
        "max_urns": MAX_URNS,
    })

