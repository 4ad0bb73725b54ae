"""Public pages of the registry: browse, search, namespace pages, history, checker."""

from __future__ import annotations

import string
from typing import Any, cast
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from registry.namespaces import exports
from registry.namespaces.checker import (
    MAX_QUERY_URN_LENGTH,
    MAX_URN_LENGTH,
    MAX_URNS,
    check_urns,
    split_lines,
)
from registry.namespaces.forms import SearchForm
from registry.namespaces.models import Namespace, RegistryMetadata
from registry.namespaces.presentation import (
    field_diffs,
    highlight,
    missing_numbers,
    pick_pair,
    registry_rows,
)
from registry.namespaces.profiles import compiled, profile_presentation
from registry.namespaces.public_cache import current_generation, public_document, public_page
from registry.namespaces.query_params import (
    BadParameter,
    Param,
    Query,
    canonical_query,
    choice,
    page_of,
    page_param,
    positive_integer,
)
from registry.namespaces.querysets import nid_from_query
from registry.namespaces.template import SECTIONS, render_text, template_values
from registry.protection import limit, limited
from urn8141 import URNSyntaxError, parse

PAGE_SIZE = 250
HISTORY_ON_PAGE = 20
HISTORY_PAGE_SIZE = 100
SEARCH_PAGE_SIZE = 50
LETTERS = list(string.ascii_lowercase) + ["0-9"]


def registry_counts(status: str = "", letter: str = "") -> dict:
    """Every count the registry page shows, in one query: the totals by kind and
    the rows of each table under the chosen status and first character."""
    formal = Q(kind="formal")
    informal = Q(kind="informal")
    if status in Namespace.Status.values:
        formal &= Q(status=status)
        informal &= Q(status=status)
    if letter in LETTERS:
        formal &= Q(nid__regex=r"^[0-9]") if letter == "0-9" else Q(nid__istartswith=letter)
    # Counting "kind" (never null), not the id: a column of the (kind, status) index, so
    # PostgreSQL answers from the index alone (3 ms at 10,000 namespaces, not 11).
    return Namespace.objects.aggregate(
        formal=Count("kind", filter=Q(kind="formal")),
        informal=Count("kind", filter=Q(kind="informal")),
        formal_rows=Count("kind", filter=formal),
        informal_rows=Count("kind", filter=informal),
    )


def designated_experts() -> list[str]:
    """The designated experts, as the registry page lists them (RFC 8141 section 6.2)."""
    from django.contrib.auth import get_user_model

    return [user.display_name for user in get_user_model().objects.designated_experts()]


def sub_registry_experts(metadata: dict[str, RegistryMetadata]) -> dict[str, str]:
    """Each sub-registry's designated experts as registry.xml names them
    (exports.experts: IANA's list, else the expert accounts), the accounts read once."""
    kinds = Namespace.Kind.values
    listed = {kind: exports.experts(kind, metadata) for kind in kinds
              if kind in metadata and metadata[kind].experts}
    accounts = exports.experts("", {}) if len(listed) < len(kinds) else ""
    return {kind: listed.get(kind, accounts) for kind in kinds}


def namespace_or_404(nid: str) -> Namespace:
    namespace = (Namespace.objects.by_nid(nid).select_related("holder", "replaced_by")
                 .with_added_from_iana().first())
    if namespace is None:
        raise UnknownNID(nid)
    return namespace


class UnknownNID(Http404):
    def __init__(self, nid: str):
        super().__init__(f"No namespace {nid!r} is registered.")
        self.nid = nid


def _table(query: Query, queryset, prefix: str, sort: str, count: int):
    rows = queryset.sorted_by(sort).table_rows()
    paginator = Paginator(rows, PAGE_SIZE)
    paginator.count = count  # counted with the others in registry_counts()
    return page_of(paginator, f"{prefix}page", query[f"{prefix}page"])


def _keep(params: dict[str, str]) -> str:
    """The parameters a pager link keeps, urlencoded, each followed by "&" (none when empty)."""
    kept = urlencode({name: value for name, value in params.items() if value})
    return f"{kept}&" if kept else ""


SORTS = ("nid", "-nid", "date", "-date")  # NamespaceQuerySet.sorted_by's, for the tables
REGISTRY_PARAMS = (
    Param("status", choice(Namespace.Status.values)),
    Param("sort", choice(SORTS), default="nid"),
    Param("letter", choice(LETTERS)),
    page_param("fpage"),
    page_param("ipage"),
)
HISTORY_PARAMS = (page_param(),)
DIFF_PARAMS = (Param("a", positive_integer), Param("b", positive_integer))


@require_GET
def registry_page(request):
    # Cached per registry generation, with each visitor's navigation rendered per
    # request (public_cache.py). No ETag here: the page carries that navigation.
    query = canonical_query(request, REGISTRY_PARAMS)

    def build() -> dict:
        status, sort, letter = query["status"], query["sort"], query["letter"]
        namespaces = Namespace.objects.all()
        if status in Namespace.Status.values:
            namespaces = namespaces.filter(status=status)
        formal = namespaces.formal()
        if letter in LETTERS:
            formal = (formal.filter(nid__regex=r"^[0-9]") if letter == "0-9"
                      else formal.filter(nid__istartswith=letter))
        informal_sort = {"nid": "number", "-nid": "-number"}.get(sort, sort)
        counts = registry_counts(status, letter)
        metadata = {m.key: m for m in RegistryMetadata.objects.all()}
        formal_page = _table(query, formal, "f", sort, counts["formal_rows"])
        informal_page = _table(query, namespaces.informal(), "i", informal_sort,
                               counts["informal_rows"])
        return {
            "formal": formal_page,
            "informal": informal_page,
            "formal_rows": registry_rows(formal_page),
            "informal_rows": registry_rows(informal_page, informal=True),
            "status": status,
            "sort": sort,
            "letter": letter,
            "letters": LETTERS,
            "statuses": Namespace.Status.choices,
            "counts": counts,
            "table_query": _keep({"sort": sort, "status": status, "letter": letter}),
            "experts": sub_registry_experts(metadata),
            "last_change": current_generation(request).real_change_at,
        }

    return public_page(request, "namespaces/registry.html", build, query=query)


def _search_query(request) -> tuple[str, str]:
    """The query as searched, and the error to show at the box: refused text (a control
    or bidi character, too long) stays in the box with the reason."""
    form = SearchForm(request.GET)
    q = form.cleaned_data["q"] if form.is_valid() else ""
    return q, str(next(iter(form.errors.get("q", [])), ""))


def _search_text(value: str) -> str:
    """The canonical search text: as SearchForm cleans it (stripped), or refused."""
    form = SearchForm({"q": value})
    if not form.is_valid():
        raise ValueError(str(next(iter(form.errors.get("q", [])), "not a search")))
    return form.cleaned_data["q"]


SEARCH_PARAMS = (Param("q", _search_text, free_text=True), page_param())


@require_GET
def search(request):
    # A URN jumps to its namespace when that is registered. Anything else is answered
    # from the public cache when it can be: the form is read only to build the page.
    if request.GET.get("q", "").strip().lower().startswith("urn:"):
        nid = nid_from_query(_search_query(request)[0])
        namespace = Namespace.objects.by_nid(nid).first() if nid else None
        if namespace:
            return redirect(namespace)
    try:
        query: Query | None = canonical_query(request, SEARCH_PARAMS)
    except BadParameter as exc:
        if exc.name != "q":
            raise
        query = None  # refused text: shown in the box with the reason, never cached

    def build() -> dict:
        # Only a search the cache cannot answer costs the database: only it is counted.
        limit(request, "search")
        q, error = _search_query(request)
        nid = nid_from_query(q)
        results = Namespace.objects.search(q) if q else Namespace.objects.none()
        # A RankedSearch offers what Paginator uses (count() and slices), not the
        # len() and iteration the stubs' protocol also asks for.
        page = page_of(Paginator(cast(Any, results), SEARCH_PAGE_SIZE), "page",
                       query["page"] if query else "1")
        for namespace in page:
            namespace.snippet = highlight(
                " · ".join(filter(None, [namespace.organisation, namespace.search_text])), q
            )
            namespace.nid_html = highlight(namespace.nid, q)
        suggestions = Namespace.objects.similar_to(q) if q and not page.paginator.count else []
        return {"q": q, "page": page, "suggestions": suggestions, "urn_nid": nid,
                "page_query": _keep({"q": q}),
                "more": getattr(results, "more", False),
                "typed": q if query else request.GET.get("q", "")[:1000],
                "error": error,
                "slots": {"nav": {"search_query": q}}}

    return public_page(request, "namespaces/search.html", build, query=query)


def _versions(namespace):
    return list(namespace.versions.select_related("published_by").order_by("-number"))


def _namespace_context(namespace: Namespace) -> dict:
    """What the namespace page and a version page show alike: the same for every
    visitor, so cached; the holder's actions are a slot rendered per visitor."""
    return {
        "namespace": namespace,
        "profile": profile_presentation(namespace.profile, namespace.nid),
        "sections": SECTIONS,
        "events": namespace.events.select_related("version")[:HISTORY_ON_PAGE],
        **_review_context(namespace),
        "slots": {"holder": {"holder_id": namespace.holder_id, "nid": namespace.nid,
                             "namespace_id": namespace.pk}},
    }


@require_GET
def detail(request, nid):
    def build() -> dict:
        namespace = namespace_or_404(nid)
        versions = _versions(namespace)
        return {
            **_namespace_context(namespace),
            "version": versions[0] if versions else None,
            "versions": versions,
        }

    try:
        return public_page(request, "namespaces/detail.html", build)
    except UnknownNID:
        return not_found(request, nid)


def _review_context(namespace: Namespace) -> dict:
    """What the review app says about this namespace, publicly: its review record (the
    requests that published its versions, their rounds and decisions) and the new
    version under review. Who may start one is asked per visitor (the holder slot)."""
    from registry.review.models import RegistrationRequest

    record: list[RegistrationRequest] = []
    pending: list[RegistrationRequest] = []
    from registry.review.workflow import public_name

    for registration in RegistrationRequest.objects.review_record_of(namespace):
        for decision in getattr(registration, "decisions"):  # noqa: B009 (review_record_of)
            decision.who = public_name(decision.actor, registration)
        if registration.published_version_id:
            record.append(registration)  # .decisions: RequestEvent.objects.decisions()
        else:
            pending.append(registration)
    return {"review_record": record, "pending": pending}


@require_GET
def version(request, nid, number):
    def build() -> dict:
        namespace = namespace_or_404(nid)
        versions = _versions(namespace)
        chosen = next((v for v in versions if v.number == number), None)
        if chosen is None:
            raise Http404(f"{namespace.nid} has no version {number}.")
        return {**_namespace_context(namespace), "version": chosen, "versions": versions,
                "old_version": chosen.number != versions[0].number}

    return public_page(request, "namespaces/detail.html", build)


@require_GET
def history(request, nid):
    """Everything that happened to a namespace, newest first, in pages."""
    query = canonical_query(request, HISTORY_PARAMS)

    def build() -> dict:
        namespace = namespace_or_404(nid)
        events = namespace.events.select_related("version")
        return {"namespace": namespace,
                "page": page_of(Paginator(events, HISTORY_PAGE_SIZE), "page", query["page"])}

    return public_page(request, "namespaces/history.html", build, query=query)


@require_GET
def diff(request, nid):
    query = canonical_query(request, DIFF_PARAMS)

    def build() -> dict:
        namespace = namespace_or_404(nid)
        versions = _versions(namespace)
        missing = missing_numbers(query.values, versions)
        if missing:
            raise Http404(f"{namespace.nid} has no version {missing[0][:20]}; it has versions "
                          f"{', '.join(str(v.number) for v in reversed(versions)) or 'none'}.")
        if len(versions) < 2:
            return {"namespace": namespace, "versions": versions}
        a, b = pick_pair(query.values, versions)
        return {
            "namespace": namespace, "versions": versions, "a": a, "b": b,
            "diffs": field_diffs(template_values(a), template_values(b)),
            "left_label": f"Version {a.number} ({a.date:%Y-%m-%d})",
            "right_label": f"Version {b.number} ({b.date:%Y-%m-%d})",
            "downloads": [(f"version {v.number}", reverse("namespaces:version-txt",
                                                          args=[namespace.nid, v.number]))
                          for v in (a, b)],
        }

    return public_page(request, "namespaces/diff.html", build, query=query)


@require_GET
def template_txt(request, nid, number=None):
    return public_document(request, lambda: _template_txt(nid, number))


def _template_txt(nid: str, number: int | None) -> HttpResponse:
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
def check_page(request):
    text = request.POST.get("urns", "") if request.method == "POST" else request.GET.get("urn", "")
    lines = split_lines(text)
    results = check_urns(lines) if lines else []
    for result in results:
        if not result["valid"]:
            offset = result["error"]["offset"]
            result["before"] = result["urn"][:offset]
            result["bad"] = result["urn"][offset:offset + 1] or "␄"
            result["after"] = result["urn"][offset + 1:offset + 200]
        for error in result.get("nss_errors", []):
            offset = error["offset"]
            error["before"] = result["urn"][:offset]
            error["bad"] = result["urn"][offset:offset + 1] or "␄"
            error["after"] = result["urn"][offset + 1:offset + 200]
    return render(request, "namespaces/check.html", {
        "text": text, "results": results, "truncated": len(lines) > MAX_URNS,
        "max_urns": MAX_URNS,
    })



@csrf_exempt  # GET only: any other method is a 405 (not a CSRF 403), as the API's
@require_GET
@limited("api_check")
def resolve(request, urn: str = ""):
    """/resolve/<urn> or /resolve/?urn=: 303 to the one resolver the namespace's
    published profile gives for this URN, a page listing them when it gives several,
    404 when it gives none. Only URLs built from a published profile are ever a
    Location (https, a fixed host, the NSS percent-encoded): never an open redirect."""
    text = urn or request.GET.get("urn", "")
    context: dict[str, Any] = {"urn": text[:MAX_URN_LENGTH], "resolvers": []}
    if not text.strip():
        # The form itself: asked for, or sent empty (then it says what it needs).
        context["empty"] = bool(urn) or "urn" in request.GET
        return render(request, "namespaces/resolve.html", context)
    try:  # in a request line: the bound the API's schema states (openapi.QUERY_URN)
        parsed = parse(text) if len(text) <= MAX_QUERY_URN_LENGTH else None
    except URNSyntaxError as exc:
        parsed = None
        context["error"] = f"{exc.reason} (at character {exc.offset + 1})"
    if parsed is None:
        context.setdefault("error", f"longer than {MAX_QUERY_URN_LENGTH} characters")
        return render(request, "namespaces/resolve.html", context, status=400)
    namespace = Namespace.objects.by_nid(parsed.nid).first()
    context["namespace"] = namespace
    profile = compiled(namespace.profile, namespace.nid) if namespace else None
    errors = profile.check_nss(parsed.nss) if profile and profile.judges_validity else []
    if errors:  # a resolver is for the namespace's URNs, not for anything after its NID
        context["invalid"] = errors[0]
        return render(request, "namespaces/resolve.html", context, status=404)
    resolvers = profile.resolve(parsed) if profile else []
    context["resolvers"] = resolvers
    context["declares_any"] = bool(profile and profile.resolvers)
    if len(resolvers) == 1:
        response = HttpResponse(status=303)
        response["Location"] = resolvers[0][1]
        return response
    return render(request, "namespaces/resolve.html", context,
                  status=200 if resolvers else 404)
