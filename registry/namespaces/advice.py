"""The conflict warnings of sections 5.1 and 6.2 (urn8141.confusion), fed
from the database: registered NIDs and their organisations, NIDs proposed in
open requests, IANA's URI scheme names (fixtures/uri-schemes.txt, from
shared/data) and ISO 3166-1 (pycountry). Warnings inform applicants and
experts; they never refuse a NID.

The index is built once per process and rebuilt when the registry changes (a
fingerprint of an aggregate query); when only the open requests change (every
submission does), the requests that came or went are indexed or dropped in place
(``ConfusionIndex.set_requested``), so a submission does not make each process
index the whole registry again. A warning costs a few milliseconds, and the live
check can run on every keystroke.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache

import pycountry
from django.conf import settings
from django.db.models import Count, Max
from django.urls import reverse

from registry.namespaces.models import Namespace, Person
from registry.namespaces.xrefs import organisation_named
from urn8141 import Problem
from urn8141.confusion import ConfusionIndex, Holder

URI_SCHEMES_FILE = settings.BASE_DIR / "fixtures" / "uri-schemes.txt"
_lock = threading.Lock()
_cache: dict[str, tuple[tuple, tuple, ConfusionIndex]] = {}


@lru_cache(maxsize=1)
def uri_schemes() -> frozenset[str]:
    lines = URI_SCHEMES_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines
                     if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def country_codes() -> frozenset[str]:
    return frozenset(code.lower() for country in pycountry.countries
                     for code in (country.alpha_2, country.alpha_3))


@lru_cache(maxsize=1)
def country_names() -> frozenset[str]:
    return frozenset(name for country in pycountry.countries
                     for name in (country.name, getattr(country, "common_name", ""),
                                  getattr(country, "official_name", "")) if name)


def _open_requests():
    from registry.review.models import RegistrationRequest

    # As submitted: a working copy's NID is its registrant's until resubmitted.
    return (RegistrationRequest.objects.open().filter(revises__isnull=True)
            .exclude(submitted_round__nid=""))


def _fingerprints() -> tuple[tuple, tuple]:
    """What the registered part and what the requested part of the index were made of.
    The registered part: the exports' generation, which every write to a namespace
    moves (one indexed row, read once per request; an aggregate over the namespaces
    cost 29 ms of the database's time per request page at 100,000). The requested part:
    the open requests themselves, a few rows."""
    from registry.namespaces.public_cache import current_generation

    requested = _open_requests().aggregate(n=Count("pk"), at=Max("updated_at"))
    return ((current_generation().exports_key,), (requested["n"], requested["at"]))


def _links(viewname: str) -> Callable[[object], str]:
    """``reverse(viewname, args=[x])`` for many x (NIDs, ids: nothing to quote) at the
    cost of one reverse."""
    marker = "8141"
    head, tail = reverse(viewname, args=[marker]).rsplit(marker, 1)
    return lambda value: f"{head}{value}{tail}"


def _requested() -> list[Holder]:
    link = _links("review:request")
    return [Holder(nid, link(pk), organisation, True, f"request:{pk}")
            for pk, nid, organisation in _open_requests().values_list(
                "pk", "submitted_round__nid", "submitted_round__registrant_organisation")
            .order_by("pk")]


def confusion_index() -> ConfusionIndex:
    """The index of everything a proposed NID can be confused with, as of now."""
    registered_print, requested_print = _fingerprints()
    with _lock:  # one thread of a process builds or updates; the others then use it
        cached = _cache.get("index")
        if cached is not None and cached[0] == registered_print:
            index = cached[2]
            if cached[1] != requested_print:
                index.set_requested(_requested())
                _cache["index"] = (registered_print, requested_print, index)
            return index
        # A row imported from IANA has no template here, so no organisation: the body its
        # references name stands in, so "same organisation" fires for it too.
        people = dict(Person.objects.exclude(org="").values_list("person_id", "org"))
        link = _links("namespaces:detail")
        registered = [
            Holder(nid, link(nid), organisation or organisation_named(references, people))
            for nid, organisation, references in Namespace.objects.values_list(
                "nid", "organisation", "references")
        ]
        index = ConfusionIndex(registered=registered, requested=_requested(),
                               uri_schemes=uri_schemes(), country_codes=country_codes(),
                               country_names=country_names())
        _cache["index"] = (registered_print, requested_print, index)
        return index


def forget_index() -> None:
    """Drop this process's index (the next check builds it again)."""
    with _lock:
        _cache.clear()


def nid_warnings(nid: str, *, organisation: str = "", registration_id: int | None = None,
                 index: ConfusionIndex | None = None) -> list[Problem]:
    """Every warning for a proposed formal NID; ``registration_id`` is the request
    that proposes it, not to be compared with itself."""
    if not nid:
        return []
    index = index or confusion_index()
    return index.warnings(nid, organisation=organisation,
                          exclude=[f"request:{registration_id}"] if registration_id else [])


def warning_json(problem: Problem) -> dict[str, str]:
    """A warning as the live check's JSON gives it."""
    return {"code": problem.code, "message": problem.message, "matched": problem.matched,
            "link": problem.link, "rule": f"RFC 8141 section {problem.section}",
            "rule_link": problem.rule_link}
