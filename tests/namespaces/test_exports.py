"""Machine-readable exports: CSV, XML, the JSON API, the Atom feed, cache headers."""

import csv
import datetime as dt
import io

import feedparser
import pytest
from lxml import etree

from registry.namespaces.actions import (
    namespace_register,
    namespace_update_record,
    version_publish,
)
from registry.namespaces.models import Namespace
from tests.factories import complete_values
from tests.html import page, texts


@pytest.fixture
def registered(registry, staff, registrant):
    ns = namespace_register(kind="formal", nid="feedtest", values=complete_values(registrant),
                            date=dt.date(2026, 11, 1), actor=staff, holder=registrant)
    version_publish(namespace=ns, date=dt.date(2026, 11, 2), actor=staff,
                    values=complete_values(registrant, revision_information="Second."))
    namespace_register(kind="informal", nid=None, values=complete_values(registrant),
                       date=dt.date(2026, 11, 3), actor=staff)
    return ns


def test_csv_opens_in_pythons_csv_module(client, registered):
    response = client.get("/registry.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert len(rows) == 90
    nbn = next(r for r in rows if r["nid"] == "nbn")
    assert nbn["kind"] == "formal" and nbn["references"] == "[RFC8458]"
    assert nbn["template_url"] == "https://www.iana.org/assignments/urn-formal/nbn"
    ucode = next(r for r in rows if r["nid"] == "ucode")
    assert ucode["references"] == "[RFC6588][RFC Errata 3188][RFC Errata 3189]"
    assert any(r["nid"] == "urn-8" and r["kind"] == "informal" for r in rows)


def test_xml_is_well_formed_with_both_registries(client, registered):
    root = etree.fromstring(client.get("/registry.xml").getvalue())
    ns = {"i": "http://www.iana.org/assignments"}
    formal = root.findall("i:registry[@id='urn-namespaces-1']/i:record", ns)
    informal = root.findall("i:registry[@id='urn-namespaces-2']/i:record", ns)
    assert len(formal) == 82 and len(informal) == 8
    assert root.find("i:registry/i:record[i:name='nbn']/i:xref", ns).get("data") == "rfc8458"


def test_atom_feed_has_every_registry_change(client, registered):
    response = client.get("/feed.atom")
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.get("bozo_exception")
    titles = [e.title for e in feed.entries]
    assert "New formal namespace: feedtest" in titles
    assert "feedtest: version 2" in titles
    assert "New informal namespace: urn-8" in titles
    assert all(e.link.startswith("http://testserver/namespaces/") for e in feed.entries)
    assert len(feed.entries) == 3  # the import itself is not news


def test_the_feed_names_what_a_record_change_changed(client, registered, staff,
                                                    other_registrant):
    namespace_update_record(namespace=registered, changes={"holder": other_registrant},
                            reason="The archive moved to its new owner.", actor=staff)
    feed = feedparser.parse(client.get("/feed.atom").content)
    newest = feed.entries[0]
    assert newest.title == f"feedtest: {Namespace._meta.get_field('holder').verbose_name} changed"
    assert newest.summary == "The archive moved to its new owner."
    assert not any(e.title.startswith("feedtest is now") for e in feed.entries)


def test_api_lists_namespaces_with_paging(client, registered):
    data = client.get("/api/namespaces/").json()
    assert data["count"] == 90 and data["pages"] == 1 and data["next"] is None
    informal = client.get("/api/namespaces/?kind=informal").json()
    assert [r["nid"] for r in informal["results"]][:2] == ["urn-1", "urn-2"]
    past = client.get("/api/namespaces/?page=99")
    assert past.status_code == 404 and past.json()["parameter"] == "page"  # as the schema says


def test_api_shows_one_namespace_with_its_versions(client, registered):
    data = client.get("/api/namespaces/FEEDTEST/").json()
    assert data["nid"] == "feedtest"
    assert [v["version"] for v in data["versions"]] == [1, 2]
    assert data["versions"][1]["template"]["revision_information"] == "Second."
    missing = client.get("/api/namespaces/feedtesst/")
    assert missing.status_code == 404 and "feedtest" in missing.json()["did_you_mean"]


@pytest.mark.parametrize("url", ["/registry.xml", "/registry.csv", "/api/namespaces/",
                                 "/api/namespaces/isbn/", "/feed.atom"])
def test_responses_carry_etag_and_last_modified_and_answer_304(client, registered, url):
    first = client.get(url)
    assert first["Last-Modified"]
    if url != "/feed.atom":
        assert first["ETag"]
        assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    again = client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert again.status_code == 304


def test_the_html_registry_page_is_never_a_stale_304(client, registered, registrant):
    first = client.get("/")
    assert "ETag" not in first
    client.force_login(registrant)
    response = client.get("/", HTTP_IF_MODIFIED_SINCE="Sun, 01 Jan 2090 00:00:00 GMT")
    assert response.status_code == 200
    assert "My requests" in texts(page(response), "//ul[@aria-labelledby='who']//a")


def test_etag_changes_when_the_registry_changes(client, registered, staff):
    etag = client.get("/registry.csv")["ETag"]
    namespace_register(kind="formal", nid="brandnew", values=complete_values(), actor=staff,
                       date=dt.date(2026, 11, 22))
    response = client.get("/registry.csv", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and b"brandnew" in response.getvalue()


def csv_rows(client, url):
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.getvalue().decode())))


@pytest.fixture
def iana_registry(db):
    from django.conf import settings
    from django.core.management import call_command

    call_command("import_registry", str(settings.BASE_DIR / "fixtures" / "iana" /
                                        "urn-namespaces.xml"), verbosity=0)


def test_one_csv_per_sub_registry_with_ianas_columns(client, iana_registry):
    formal = csv_rows(client, "/urn-namespaces-1.csv")
    assert formal[0] == ["URN Namespace", "Template", "Reference", "Date", "Updated"]
    rows = {row[0]: row for row in formal[1:]}
    assert len(rows) == 94
    assert rows["3gpp"] == ["3gpp", "", "[RFC5279]", "", ""]
    assert rows["3gpp2"] == ["3gpp2", "3gpp2-template", "[RFC8464]", "2018-06-19", ""]
    assert rows["ucode"][2] == "[RFC6588][RFC Errata 3188][RFC Errata 3189]"
    assert rows["meta"][2] == "[Juha_Hakala]"
    assert rows["eic"][3:] == ["2021-12-31", "2022-03-21"]
    informal = csv_rows(client, "/urn-namespaces-2.csv")
    assert informal[0] == formal[0]
    assert [r[0] for r in informal[1:]] == [f"urn-{n}" for n in range(1, 9)]
    assert informal[1][:3] == ["urn-1", "urn-1", "[Michael_Mealling]"]
    assert informal[7][:3] == ["urn-7", "", "[RFC6050]"]


def test_the_combined_csv_has_a_kind_column_and_the_deprecation_note(client, iana_registry,
                                                                      staff):
    from registry.namespaces.actions import namespace_set_status
    from registry.namespaces.models import Namespace

    namespace_set_status(namespace=Namespace.objects.by_nid("xmlorg").get(),
                         status="deprecated", comment="Use oasis instead.", actor=staff)
    rows = list(csv.DictReader(io.StringIO(client.get("/registry.csv").getvalue().decode())))
    assert len(rows) == 102 and {r["kind"] for r in rows} == {"formal", "informal"}
    xmlorg = next(r for r in rows if r["nid"] == "xmlorg")
    assert (xmlorg["status"], xmlorg["status_note"]) == ("deprecated", "Use oasis instead.")
    urn8 = next(r for r in rows if r["nid"] == "urn-8")
    assert urn8["informal_number"] == "8" and urn8["contact"] == "[Juanma_Garcia]"


@pytest.mark.parametrize("value, cell", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tTAB", "'\tTAB"), ("\rCR", "'\rCR"), ("RFC5279", "RFC5279"), ("", ""), (None, ""),
    ("a=b", "a=b"), (7, "7"),
])
def test_csv_cell_neutralises_formula_starts(value, cell):
    from registry.namespaces.exports import csv_cell

    assert csv_cell(value) == cell


@pytest.mark.parametrize("organisation", ["=HYPERLINK(\"http://evil\")", "+1+1", "-2+3",
                                          "@SUM(A1)"])
def test_csv_cells_never_start_a_formula(client, registry, staff, organisation):
    namespace_register(kind="informal", nid=None, date=dt.date(2026, 11, 1), actor=staff,
                       values=complete_values(None, registrant_organisation=organisation,
                                              documentation="", contact_name="",
                                              contact_email=""))
    for url in ("/registry.csv", "/urn-namespaces-2.csv"):
        rows = csv_rows(client, url)
        cells = [cell for row in rows[1:] for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], url
    combined = csv_rows(client, "/registry.csv")
    urn8 = next(row for row in combined if row[1] == "urn-8")
    assert urn8[7] == "'" + organisation  # contact, neutralised but kept


def test_atom_entries_have_an_author_text_summaries_and_host_independent_ids(
        client, registered, staff):
    from registry.namespaces.actions import namespace_set_status

    namespace_set_status(namespace=registered, status="deprecated", actor=staff,
                         comment="<script>alert(1)</script> use urn:other")
    first = client.get("/feed.atom")
    second = client.get("/feed.atom", HTTP_HOST="localhost")
    root = etree.fromstring(first.content)
    atom = {"a": "http://www.w3.org/2005/Atom"}
    entries = root.findall("a:entry", atom)
    assert len(entries) == 4
    for entry in entries:
        assert entry.findtext("a:author/a:name", namespaces=atom)
        assert entry.findtext("a:id", namespaces=atom).startswith("tag:")
        summary = entry.find("a:summary", atom)
        assert summary is None or summary.get("type") == "text"
    assert root.findtext("a:id", namespaces=atom).startswith("tag:")
    ids = [e.findtext("a:id", namespaces=atom) for e in entries]
    other = etree.fromstring(second.content)
    assert ids == [e.findtext("a:id", namespaces=atom) for e in other.findall("a:entry", atom)]
    assert root.findtext("a:id", namespaces=atom) == other.findtext("a:id", namespaces=atom)
    feed = feedparser.parse(first.content)
    assert not feed.bozo, feed.get("bozo_exception")
    deprecated = next(e for e in feed.entries if e.title.endswith("is now deprecated"))
    assert deprecated.summary_detail.type == "text/plain"
    assert deprecated.summary == "<script>alert(1)</script> use urn:other"
    assert all(e.author for e in feed.entries)


def test_stored_control_characters_never_break_the_feed(client, registered, staff,
                                                        registrant):
    version_publish(namespace=registered, date=dt.date(2026, 11, 4), actor=staff,
                    values=complete_values(registrant, revision_information="Bad\x01\x0b text"))
    response = client.get("/feed.atom")
    assert response.status_code == 200
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.get("bozo_exception")
    assert "Bad text" in [e.summary for e in feed.entries]
