"""Search finds what the registry shows (organisation, references, every template
field), ranks the NID first, and reads each rank from its index."""

import datetime as dt

import pytest
from django.core.paginator import Paginator
from lxml import html as lxml_html

from registry.namespaces.actions import namespace_register, search_text_of
from registry.namespaces.models import Namespace
from registry.namespaces.querysets import normalize_rfc_numbers
from tests.factories import complete_values


def results(client, q: str) -> list[str]:
    tree = lxml_html.fromstring(client.get("/search/", {"q": q}).content)
    return [a.text_content() for a in tree.xpath('//*[@id="results"]//a[contains(@class, "nid")]')]


@pytest.fixture
def isbn_like(db, staff):
    """A namespace registered here whose documentation is RFC 3187 and whose
    template mentions libraries only in its assignment field."""
    return namespace_register(
        kind="formal", nid="bookish", date=dt.date(2026, 1, 5), actor=staff,
        values=complete_values(registrant_organisation="Book Numbering Office",
                               documentation="RFC 3187",
                               assignment="Numbers go to publishers and each national library."))


@pytest.mark.parametrize(("q", "nid"), [
    ("DOI Foundation", "doi"),
    ("OWASP", "cdx"),
    ("International ISBN Agency", "isbn"),
    ("RFC8458", "nbn"),
    ("rfc 8458", "nbn"),
])
def test_the_reference_column_is_searched(client, registry, q, nid):
    assert nid in results(client, q)


@pytest.mark.parametrize("q", ["RFC3187", "RFC 3187", "rfc3187", "rfc-3187", "library",
                               "Book Numbering Office", "publishers"])
def test_references_as_typed_and_every_template_field_are_searched(client, isbn_like, q):
    assert results(client, q) == ["bookish"]


@pytest.mark.parametrize(("text", "normal"), [
    ("RFC 3187", "RFC3187"), ("rfc3187", "RFC3187"),
    ("RFC-3187 and rfc 8141", "RFC3187 and RFC8141"),
    ("RFCs 3187", "RFCs 3187"), ("XRFC 1", "XRFC 1"), ("", ""),
])
def test_rfc_numbers_are_written_one_way(text, normal):
    assert normalize_rfc_numbers(text) == normal


def test_the_searched_text_holds_every_field():
    values = complete_values(contact_name="Pat Example", security="No secrets. See RFC 6973.")
    text = search_text_of(values)
    assert "Pat Example" in text and "RFC6973" in text and "archive records" in text


def test_ranks_exact_nid_then_prefix_then_substring_then_row_then_text(client, db, staff):
    def register(nid, **values):
        namespace_register(kind="formal", nid=nid, date=dt.date(2026, 1, 5), actor=staff,
                           values=complete_values(**values))

    register("zztext", purpose="All about the widget family.")
    register("aarow", registrant_organisation="Widget Makers")
    register("widget-sub")  # a NID prefix of the query's word
    register("mywidget")  # a NID substring
    register("widget")
    assert results(client, "widget") == ["widget", "widget-sub", "mywidget", "aarow", "zztext"]


@pytest.mark.postgres
def test_pages_of_a_ranked_search_follow_each_other(db, staff):
    for i in range(12):
        namespace_register(kind="formal", nid=f"page{i:02d}", date=dt.date(2026, 1, 5),
                           actor=staff, values=complete_values(
                               purpose="Shared words." if i % 2 else "Other words.",
                               registrant_organisation="Shared Org" if i % 3 == 0 else "Org"))
    everything = [ns.nid for ns in Namespace.objects.search("shared")[0:100]]
    paginator = Paginator(Namespace.objects.search("shared"), 3)
    paged = [ns.nid for number in paginator.page_range for ns in paginator.page(number)]
    assert paged == everything
    assert paginator.count == len(everything) == 8  # 4 by organisation, 4 more by purpose
    by_row = [f"page{i:02d}" for i in range(12) if i % 3 == 0]
    assert everything[:4] == by_row


@pytest.mark.postgres
def test_each_rank_is_read_from_its_index(db):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'namespaces_namespace'")
        indexes = {row[0] for row in cursor.fetchall()}
    assert {"namespace_search_head", "namespace_search_vector",
            "namespace_nid_trigram"} <= indexes


@pytest.mark.postgres
def test_the_count_adds_nid_matches_whose_text_does_not_match(db, staff):
    namespace_register(kind="formal", nid="zebrafish", date=dt.date(2026, 1, 5), actor=staff,
                       values=complete_values(purpose="About fish."))
    namespace_register(kind="formal", nid="other", date=dt.date(2026, 1, 5), actor=staff,
                       values=complete_values(purpose="Mentions zebra stripes."))
    assert Namespace.objects.search("zebra").count() == 2  # NID substring + text
    assert [ns.nid for ns in Namespace.objects.search("zebra")[0:10]] == ["zebrafish", "other"]


@pytest.mark.postgres
def test_a_common_word_is_counted_up_to_the_limit_and_said_to_be_more(client, db, staff,
                                                                       monkeypatch):
    from registry.namespaces.querysets import RankedSearch
    from tests.html import one, page, text

    monkeypatch.setattr(RankedSearch, "COUNT_LIMIT", 3)
    for i in range(5):
        namespace_register(kind="formal", nid=f"common{i}", date=dt.date(2026, 1, 5),
                           actor=staff, values=complete_values(purpose="Common words."))
    search = Namespace.objects.search("common")
    assert (search.count(), search.more) == (3, True)
    narrow = Namespace.objects.search("common4")
    assert (narrow.count(), narrow.more) == (1, False)
    doc = page(client.get("/search/", {"q": "common"}))
    assert text(one(doc, "//*[@id='result-count']")) == (
        "More than 3 results for “common”; the first 3 are shown. Add words to narrow the "
        "search.")
    assert text(one(page(client.get("/search/", {"q": "common4"})),
                    "//*[@id='result-count']")) == "1 result for “common4”."
