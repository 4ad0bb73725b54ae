"""Reads of the published registry, as QuerySet methods."""

from __future__ import annotations

import difflib
import re

from django.db import connection, models
from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce, Lower

from registry.urns import URNSyntaxError, nid_key, parse

_RFC_NUMBER = re.compile(r"\bRFC[\s-]*(\d+)\b", re.IGNORECASE)


def normalize_rfc_numbers(text: str) -> str:
    """"RFC 3187", "rfc-3187" and "RFC3187" all become "RFC3187", as the registry's
    reference column writes them: the searched text and the query both go through
    this, so each way of typing finds the others."""
    return _RFC_NUMBER.sub(lambda m: f"RFC{m.group(1)}", text or "")


def _references_text():
    from django.db.models import TextField
    from django.db.models.functions import Cast

    return Cast("references", TextField())


def search_head():
    """What the registry table shows of a namespace: NID, organisation and the
    reference column. A match here ranks above a match in the template text."""
    from django.contrib.postgres.search import SearchVector

    return (
        SearchVector("nid", weight="A", config="simple")
        + SearchVector("organisation", weight="B", config="english")
        + SearchVector(_references_text(), weight="B", config="english")
    )


def search_document():
    """The weighted full-text document of a namespace: NID (A), organisation and
    references (B), every field of the current template (C, ``search_text``).
    Migration 0006 indexes exactly this expression on PostgreSQL; change both together."""
    from django.contrib.postgres.search import SearchVector

    return search_head() + SearchVector("search_text", weight="C", config="english")


class EventGuardedQuerySet(models.QuerySet):
    """Bulk updates may not change a model's event-guarded field (see
    EventGuardedState): such a change would have no event row."""

    def update(self, **kwargs):
        self._refuse_guarded(kwargs)
        return super().update(**kwargs)

    def bulk_update(self, objs, fields, batch_size=None):
        self._refuse_guarded(fields)
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def _refuse_guarded(self, fields) -> None:
        from registry.namespaces.models import AppendOnlyError

        if self.model.guarded_field in fields:
            raise AppendOnlyError(self.model.guard_message)


class NamespaceQuerySet(EventGuardedQuerySet):
    def active(self):
        return self.filter(status="active")

    def deprecated(self):
        return self.filter(status="deprecated")

    def formal(self):
        return self.filter(kind="formal")

    def informal(self):
        return self.filter(kind="informal")

    def by_nid(self, nid: str):
        """Case-insensitive NID match (section 2.1), through the LOWER(nid) index."""
        if not plausible_text(nid, 64):
            return self.none()
        return self.filter(nid__lower=nid_key(nid))

    def nid_keys(self) -> set[str]:
        return {nid_key(n) for n in self.values_list("nid", flat=True)}

    def with_version_count(self):
        """Annotate ``version_count`` as a subquery, which count() can leave out."""
        from registry.namespaces.models import TemplateVersion

        versions = (TemplateVersion.objects.filter(namespace=OuterRef("pk")).order_by()
                    .values("namespace").annotate(n=Count("pk")).values("n"))
        return self.annotate(version_count=Coalesce(Subquery(versions), 0))

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
        """Namespaces matching ``q`` in NID, organisation, references or any template
        field, best first: an exact NID, then a NID prefix, then a NID substring,
        then a match in what the registry table shows, then a match in the
        template text; by NID within each. The order is computed from the matched
        rows' short columns, never from their template text, and the match itself
        is answered by indexes (migration 0006)."""
        q = clean_query(q)
        if not q:
            return self.none()
        key = q.lower()
        terms = normalize_rfc_numbers(q)
        if connection.vendor == "postgresql":
            from django.contrib.postgres.search import SearchQuery

            query = SearchQuery(terms, search_type="websearch", config="english")
            rank = Case(
                When(nid__lower=key, then=Value(300)),
                When(nid__istartswith=q, then=Value(200)),
                When(nid__icontains=q, then=Value(100)),
                When(head=query, then=Value(50)),
                default=Value(0),
                output_field=IntegerField(),
            )
            # "document @@ query" and the trigram-indexed icontains: each branch of the
            # OR has its own index, so no row is scanned in vain.
            return (
                self.annotate(document=search_document(), head=search_head())
                .filter(Q(document=query) | Q(nid__icontains=q))
                .annotate(nid_rank=rank)
                .order_by("-nid_rank", Lower("nid"))
            )
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
        return (
            self.annotate(nid_rank=rank)
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
