"""Reads of the published registry, as QuerySet methods."""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Any

from django.db import connection, models
from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    Max,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Lower

from registry.history import EventGuardedQuerySet
from registry.urns import URNSyntaxError, nid_key, parse


def search_document():
    """The weighted full-text document of a namespace: NID (A), registrant
    organisation (B), purpose and syntax (C). Migration 0004 indexes exactly
    this expression on PostgreSQL; change both together."""
    from django.contrib.postgres.search import SearchVector

    return (
        SearchVector("nid", weight="A", config="simple")
        + SearchVector("organisation", weight="B", config="english")
        + SearchVector("search_text", weight="C", config="english")
    )


class NamespaceEventQuerySet(models.QuerySet[Any]):
    # Events that only mirror IANA's registry: their date is when this copy caught
    # up, not when the registry changed (IANA's own date says that).
    MIRRORED = ("imported", "synced")

    def real_changes(self) -> NamespaceEventQuerySet:
        """Changes made in this registry, not copied from IANA's."""
        return self.exclude(kind__in=self.MIRRORED)

    def last_real_change(self) -> dt.datetime | None:
        """When this registry last really changed (a datetime), or None."""
        last: dt.datetime | None = self.real_changes().aggregate(m=Max("created_at"))["m"]
        return last


class NamespaceQuerySet(EventGuardedQuerySet):
    def active(self):
        return self.filter(status="active")

    def formal(self):
        return self.filter(kind="formal")

    def informal(self):
        return self.filter(kind="informal")

    def by_nid(self, nid: str):
        """Case-insensitive NID match (section 2.1), through the LOWER(nid) index."""
        if not plausible_text(nid, 64):
            return self.none()
        return self.filter(nid__lower=nid_key(nid))

    def with_version_count(self):
        """Annotate ``version_count`` as a subquery, which count() can leave out."""
        from registry.namespaces.models import TemplateVersion

        versions = (TemplateVersion.objects.filter(namespace=OuterRef("pk")).order_by()
                    .values("namespace").annotate(n=Count("pk")).values("n"))
        return self.annotate(version_count=Coalesce(Subquery(versions), 0))

    def with_version_facts(self) -> NamespaceQuerySet:
        """``version_count`` and ``last_version_date`` (the exports' record dates), as
        subqueries: computed only for the rows a page returns, and no GROUP BY."""
        from registry.namespaces.models import TemplateVersion

        last = (TemplateVersion.objects.filter(namespace=OuterRef("pk")).order_by("-number")
                .values("date")[:1])
        return self.with_version_count().annotate(last_version_date=Subquery(last))

    def sorted_by(self, key: str):
        """Order for the registry tables: 'nid', '-nid', 'date', '-date'."""
        orders = {
            "nid": [Lower("nid")],
            "-nid": [Lower("nid").desc()],
            "date": [F("registered_on").asc(nulls_last=True), Lower("nid")],
            "-date": [F("registered_on").desc(nulls_last=True), Lower("nid")],
            "number": ["informal_number"],
            "-number": ["-informal_number"],
        }
        return self.order_by(*orders.get(key, orders["nid"]))

    def search(self, q: str):
        """Namespaces matching ``q`` in NID, registrant organisation, purpose or
        syntax, best first: an exact NID, then NID prefix, then the rest by rank."""
        q = clean_query(q)
        if not q:
            return self.none()
        key = q.lower()
        nid_rank = Case(
            When(nid__lower=key, then=Value(300)),
            When(nid__istartswith=q, then=Value(200)),
            When(nid__icontains=q, then=Value(100)),
            default=Value(0),
            output_field=IntegerField(),
        )
        if connection.vendor == "postgresql":
            from django.contrib.postgres.search import SearchQuery, SearchRank

            query = SearchQuery(q, search_type="websearch", config="english")
            # "document @@ query" and the trigram-indexed icontains: each branch of the
            # OR has its own index (migration 0004), so no row is scanned in vain.
            return (
                self.annotate(document=search_document())
                .filter(Q(document=query) | Q(nid__icontains=q))
                .annotate(nid_rank=nid_rank, text_rank=SearchRank(F("document"), query))
                .order_by("-nid_rank", "-text_rank", Lower("nid"))
            )
        words = [w for w in q.split() if w]
        text_match = Q()
        for word in words:
            text_match &= (Q(organisation__icontains=word) | Q(search_text__icontains=word)
                           | Q(nid__icontains=word))
        return (
            self.annotate(nid_rank=nid_rank)
            .filter(Q(nid_rank__gt=0) | text_match)
            .order_by("-nid_rank", Lower("nid"))
        )

    def similar_to(self, nid: str, limit: int = 5) -> list[str]:
        """NIDs that look like ``nid``, for "did you mean" (trigrams on PostgreSQL)."""
        nid = clean_query(nid)[:64]
        if not nid:
            return []
        if connection.vendor == "postgresql":
            from django.contrib.postgres.search import TrigramSimilarity

            return list(
                self.annotate(similarity=TrigramSimilarity("nid", nid))
                .filter(similarity__gt=0.2)
                .order_by("-similarity", Lower("nid"))
                .values_list("nid", flat=True)[:limit]
            )
        names = list(self.values_list("nid", flat=True))
        by_key = {n.lower(): n for n in names}
        close = difflib.get_close_matches(nid.lower(), list(by_key), n=limit, cutoff=0.6)
        return [by_key[c] for c in close]


def plausible_text(text: str, limit: int) -> bool:
    """Text that can safely reach a lookup: a str, not too long, no NUL (PostgreSQL
    refuses NUL bytes in text; such input can match nothing anyway)."""
    return isinstance(text, str) and 0 < len(text) <= limit and "\x00" not in text


def clean_query(q: str | None, limit: int = 200) -> str:
    """A user's search text, trimmed, with NUL and other control characters removed."""
    return "".join(ch for ch in (q or "")[: limit * 2] if ch >= " " or ch in "\t").strip()[:limit]


def nid_from_query(q: str) -> str | None:
    """If ``q`` is a URN, the NID it names (so a search for a URN jumps there)."""
    q = (q or "").strip()
    if not q.lower().startswith("urn:"):
        return None
    try:
        return parse(q).nid
    except URNSyntaxError:
        head = q[4:].split(":", 1)[0]
        return head or None
