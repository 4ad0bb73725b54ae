"""Reads of the published registry, as QuerySet methods."""

from __future__ import annotations

import difflib
import re
from typing import Any

from django.db import connection, models
from django.db.models import (
    BooleanField,
    Case,
    Count,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Lower

from registry.history import EventGuardedQuerySet
from urn8141 import URNSyntaxError, nid_key, parse

_RFC_NUMBER = re.compile(r"\bRFC[\s-]*(\d+)\b", re.IGNORECASE)


def normalize_rfc_numbers(text: str) -> str:
    """"RFC 3187", "rfc-3187" and "RFC3187" all become "RFC3187", as the registry's
    reference column writes them: the searched text and the query both go through
    this, so each way of typing finds the others."""
    return _RFC_NUMBER.sub(lambda m: f"RFC{m.group(1)}", text or "")


class NamespaceEventQuerySet(models.QuerySet[Any]):
    # No news to a reader of the feed: the first copy of IANA's registry (every NID at
    # once, on the day of the import) and a profile shipped with this software. What
    # IANA's registry brings later (a NID IANA registered, synced or dropped) is news.
    NOT_NEWS = ("imported", "profile_shipped")
    # No change made in this registry: the above, and the events that only mirror IANA's
    # registry, dated when this copy caught up, not when the registry changed (IANA's own
    # date says that).
    MIRRORED = (*NOT_NEWS, "synced", "added_from_iana", "dropped_at_iana")

    def real_changes(self) -> NamespaceEventQuerySet:
        """Changes made in this registry, not copied from IANA's."""
        return self.exclude(kind__in=self.MIRRORED)

    def in_feed(self) -> NamespaceEventQuerySet:
        """The events the Atom feed lists: every one but those that are no news."""
        return self.exclude(kind__in=self.NOT_NEWS)

    def profile_changes(self) -> NamespaceEventQuerySet:
        """Events that changed a namespace's machine-readable profile (newest first):
        shipped, published with a version, or set by IANA staff."""
        return self.filter(changes__has_key="profile")



class NamespaceQuerySet(EventGuardedQuerySet):
    def active(self) -> NamespaceQuerySet:
        return self.filter(status="active")

    def formal(self) -> NamespaceQuerySet:
        return self.filter(kind="formal")

    def informal(self) -> NamespaceQuerySet:
        return self.filter(kind="informal")

    def by_nid(self, nid: str) -> NamespaceQuerySet:
        """Case-insensitive NID match (section 2.1), through the LOWER(nid) index."""
        if not plausible_text(nid, 64):
            return self.none()
        return self.filter(nid__lower=nid_key(nid))

    def with_version_count(self) -> NamespaceQuerySet:
        """Annotate ``version_count`` as a subquery, which count() can leave out."""
        from registry.namespaces.models import TemplateVersion

        # Counting the indexed namespace_id (not the id): an index-only scan per row.
        versions = (TemplateVersion.objects.filter(namespace=OuterRef("pk")).order_by()
                    .values("namespace").annotate(n=Count("namespace")).values("n"))
        counted: NamespaceQuerySet = self.annotate(version_count=Coalesce(Subquery(versions), 0))
        return counted

    # What a row of the registry page's tables shows.
    TABLE_COLUMNS = ("nid", "status", "registered_on", "references", "template_url",
                     "informal_number", "organisation")

    def table_rows(self) -> models.QuerySet[Any, dict[str, Any]]:
        """The registry tables' rows as dicts of TABLE_COLUMNS and ``version_count``:
        a page of 250 rows without building 250 model instances (two thirds of a
        cold page's time went there)."""
        return self.with_version_count().values(*self.TABLE_COLUMNS, "version_count")

    def with_version_facts(self) -> NamespaceQuerySet:
        """``version_count`` and ``last_version_date`` (the exports' record dates), as
        subqueries: computed only for the rows a page returns, and no GROUP BY."""
        from registry.namespaces.models import TemplateVersion

        last = (TemplateVersion.objects.filter(namespace=OuterRef("pk")).order_by("-number")
                .values("date")[:1])
        facts: NamespaceQuerySet = self.with_version_count().annotate(
            last_version_date=Subquery(last))
        return facts

    def with_added_from_iana(self) -> NamespaceQuerySet:
        """``added_from_iana_at``: when a sync brought in a NID that IANA registered after
        this registry began (None for the rest), as a subquery of the same query."""
        from registry.namespaces.models import NamespaceEvent

        added = (NamespaceEvent.objects.filter(namespace=OuterRef("pk"),
                                               kind=NamespaceEvent.Kind.ADDED_FROM_IANA)
                 .values("created_at")[:1])
        annotated: NamespaceQuerySet = self.annotate(added_from_iana_at=Subquery(added))
        return annotated

    def noted_dropped_at_iana(self) -> NamespaceQuerySet:
        """The namespaces whose newest event from IANA's registry notes that IANA no
        longer lists them (a drop is noted once, until IANA lists the NID again)."""
        from registry.namespaces.models import NamespaceEvent

        Kind = NamespaceEvent.Kind
        newest = (NamespaceEvent.objects.filter(
            namespace=OuterRef("pk"),
            kind__in=(Kind.IMPORTED, Kind.ADDED_FROM_IANA, Kind.SYNCED, Kind.DROPPED_AT_IANA))
            .order_by("-created_at", "-id").values("kind")[:1])
        dropped: NamespaceQuerySet = self.annotate(newest_from_iana=Subquery(newest)).filter(
            newest_from_iana=Kind.DROPPED_AT_IANA)
        return dropped

    def sorted_by(self, key: str) -> NamespaceQuerySet:
        """Order for the registry tables: 'nid', '-nid', 'date', '-date'."""
        orders: dict[str, list[Any]] = {
            "nid": [Lower("nid")],
            "-nid": [Lower("nid").desc()],
            "date": [F("registered_on").asc(nulls_last=True), Lower("nid")],
            "-date": [F("registered_on").desc(nulls_last=True), Lower("nid")],
            "number": ["informal_number"],
            "-number": ["-informal_number"],
        }
        return self.order_by(*orders.get(key, orders["nid"]))

    def search(self, q: str) -> NamespaceQuerySet | RankedSearch:
        """Namespaces matching ``q`` in NID, organisation, references or any template
        field, best first: an exact NID, then a NID prefix, then a NID substring,
        then a match in what the registry table shows (NID, organisation,
        references), then a match in the template text; by NID within each.

        On PostgreSQL this is a ``RankedSearch``: each rank is read in NID order
        from its own index and only as far as the page asked for, so ranking never
        reads every matching row."""
        q = clean_query(q)
        if not q:
            return self.none()
        terms = normalize_rfc_numbers(q)
        if connection.vendor == "postgresql":
            return RankedSearch(self, q, terms)
        key = q.lower()
        rank = Case(
            When(nid__lower=key, then=Value(300)),
            When(nid__istartswith=q, then=Value(200)),
            When(nid__icontains=q, then=Value(100)),
            default=Value(0),
            output_field=IntegerField(),
        )
        text_match = Q()
        for word in terms.split():
            text_match &= (Q(organisation__icontains=word) | Q(search_text__icontains=word)
                           | Q(nid__icontains=word) | Q(references__icontains=word))
        ranked: NamespaceQuerySet = (
            self.annotate(nid_rank=rank)
            .filter(Q(nid_rank__gt=0) | text_match)
            .order_by("-nid_rank", Lower("nid"))
        )
        return ranked

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


# The stored, generated tsvector columns of migration 0006 (PostgreSQL only).
_MATCHES = "{column} @@ websearch_to_tsquery('english'::regconfig, %s)"
_NID_CHARACTERS = re.compile(r"[A-Za-z0-9-]+")


class RankedSearch:
    """PostgreSQL search results in rank order, for a Paginator (``count()`` and
    slicing, like a queryset). A slice is one UNION ALL of three ranks, each
    read from its index in NID order and cut at the slice's end:

    1. the NID contains the query (trigram index): exact, prefix, then substring
       (only when the query could be part of a NID);
    2. the registry row (NID, organisation, references) matches (``search_head``);
    3. only the template text matches (``search_vector``)."""

    def __init__(self, queryset: NamespaceQuerySet, q: str, terms: str) -> None:
        self.queryset = queryset
        self.q = q
        self.terms = terms
        # Only letters, digits and hyphens can be part of a NID (section 2).
        self.nid_like = bool(_NID_CHARACTERS.fullmatch(q))
        self.more = False  # set by count()

    def _match(self, column: str, negate: bool = False) -> RawSQL:
        sql = _MATCHES.format(column=column)
        # The column is one of two constants; the visitor's words are a parameter.
        return RawSQL(f"NOT ({sql})" if negate else sql, (self.terms,),  # noqa: S611
                      output_field=BooleanField())

    # Matches counted at most; past it the page says "more than" and pages through
    # these. A common word matches nearly every row, and counting them all would
    # read every row's document (140 ms at 10,000 namespaces; capped: 4 ms).
    COUNT_LIMIT = 1000

    def count(self) -> int:
        """Text matches, plus NID matches whose text does not match, up to
        COUNT_LIMIT (``more`` says whether there are more): two counts, each answered
        by its own index (one count with an OR leads the planner to read every row's
        document), each stopping at the limit."""
        cap = self.COUNT_LIMIT + 1
        found = self.queryset.filter(self._match("search_vector")).order_by()[:cap].count()
        if self.nid_like and found < cap:
            found += (self.queryset.filter(self._match("search_vector", negate=True),
                                           nid__icontains=self.q).order_by()[:cap - found]
                      .count())
        self.more = found > self.COUNT_LIMIT
        return min(found, self.COUNT_LIMIT)

    def __getitem__(self, window: slice) -> list[Any]:
        if not isinstance(window, slice):
            raise TypeError("RankedSearch is read a page (a slice) at a time.")
        start, stop = window.start or 0, window.stop
        if stop is None or stop <= start:
            return []
        by_nid = Lower("nid")
        nid_rank = Case(
            When(nid__lower=self.q.lower(), then=Value(300)),
            When(nid__istartswith=self.q, then=Value(200)),
            default=Value(100),
            output_field=IntegerField(),
        )
        not_nid = ~Q(nid__icontains=self.q) if self.nid_like else Q()
        ranks = [
            self.queryset.filter(self._match("search_head"), not_nid)
            .annotate(nid_rank=Value(50), sort_key=by_nid).order_by("sort_key"),
            self.queryset.filter(self._match("search_vector"),
                                 self._match("search_head", negate=True), not_nid)
            .annotate(nid_rank=Value(0), sort_key=by_nid).order_by("sort_key"),
        ]
        if self.nid_like:
            ranks.insert(0, self.queryset.filter(nid__icontains=self.q)
                         .annotate(nid_rank=nid_rank, sort_key=by_nid)
                         .order_by("-nid_rank", "sort_key"))
        first, *rest = (rank[:stop] for rank in ranks)
        return list(first.union(*rest, all=True).order_by("-nid_rank", "sort_key")[start:stop])


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
