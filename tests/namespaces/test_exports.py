"""Machine-readable exports: CSV, XML, the JSON API, the Atom feed, cache headers."""

import csv
import datetime as dt
import io

import feedparser
import pytest
from lxml import etree

from registry.namespaces.actions import namespace_register, version_publish
from tests.factories import complete_values


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
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 90
    nbn = next(r for r in rows if r["nid"] == "nbn")
    assert nbn["kind"] == "formal" and nbn["references"] == "[RFC8458]"
    assert nbn["template_url"] == "https://www.iana.org/assignments/urn-formal/nbn"
    ucode = next(r for r in rows if r["nid"] == "ucode")
    assert ucode["references"] == "[RFC6588][RFC Errata 3188][RFC Errata 3189]"
    assert any(r["nid"] == "urn-8" and r["kind"] == "informal" for r in rows)


def test_xml_is_well_formed_with_both_registries(client, registered):
    root = etree.fromstring(client.get("/registry.xml").content)
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


def test_api_lists_namespaces_with_paging(client, registered):
    data = client.get("/api/namespaces/").json()
    assert data["count"] == 90 and data["pages"] == 1 and data["next"] is None
    informal = client.get("/api/namespaces/?kind=informal").json()
    assert [r["nid"] for r in informal["results"]][:2] == ["urn-1", "urn-2"]
    assert client.get("/api/namespaces/?page=99").status_code == 400


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
    page = client.get("/", HTTP_IF_MODIFIED_SINCE="Sun, 01 Jan 2090 00:00:00 GMT")
    assert page.status_code == 200 and "My requests" in page.content.decode()


def test_etag_changes_when_the_registry_changes(client, registered, staff):
    etag = client.get("/registry.csv")["ETag"]
    namespace_register(kind="formal", nid="brandnew", values=complete_values(), actor=staff,
                       date=dt.date(2026, 11, 22))
    response = client.get("/registry.csv", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and b"brandnew" in response.content
