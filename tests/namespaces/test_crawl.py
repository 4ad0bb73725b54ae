"""Every public page, reached the way a visitor reaches it: by following links.

A crawl from the registry page (and the pages of a namespace with history and a
request in public review) must find no broken internal link and no error, and
the list pages must not grow a query per row."""

import datetime as dt
from urllib.parse import urldefrag, urlsplit

import pytest

from registry.namespaces.actions import namespace_register, version_publish
from registry.namespaces.export_build import build_current_exports
from tests.factories import complete_values, make_registration
from tests.html import links, one, page, text
from tests.namespaces.test_query_counts import EXPORT_BUILD_LIMIT

SKIP_PREFIXES = ("/admin/", "/accounts/logout/", "/static/")


@pytest.fixture
def populated(registry, registrant, staff):
    namespace = namespace_register(kind="formal", nid="crawlme", values=complete_values(),
                                   date=dt.date(2026, 1, 1), actor=staff, holder=registrant)
    version_publish(namespace=namespace, date=dt.date(2026, 2, 1), actor=staff,
                    values=complete_values(revision_information="Second version."))
    make_registration(registrant, nid="inreview")


def test_no_public_page_or_internal_link_is_broken(client, populated):
    seen, queue, failures = set(), ["/"], []
    extra = ["/search/?q=archive", "/check/?urn=urn:isbn:1", "/requests/review/",
             "/namespaces/crawlme/diff/", "/feed.atom", "/registry.xml", "/registry.csv",
             "/api/namespaces/", "/api/namespaces/crawlme/"]
    queue += extra
    while queue and len(seen) < 400:
        url = urldefrag(queue.pop(0))[0]
        if url in seen or url.startswith(SKIP_PREFIXES) or urlsplit(url).netloc:
            continue
        seen.add(url)
        response = client.get(url)
        if response.status_code not in (200, 302):
            failures.append((url, response.status_code))
            continue
        if response.get("Content-Type", "").startswith("text/html") and response.content:
            queue += [link for link in links(page(response)) if link
                      and link.startswith(("/", "?")) and not link.startswith("?")]
    assert not failures, failures
    assert len(seen) > 100  # the registry page links every namespace


def test_list_pages_do_not_query_per_row(client, populated, django_assert_max_num_queries,
                                          expert):
    with django_assert_max_num_queries(7):  # stamp, experts, last change, 2 counts, 2 pages
        client.get("/")
    with django_assert_max_num_queries(4):
        client.get("/api/namespaces/")
    with django_assert_max_num_queries(EXPORT_BUILD_LIMIT):  # the worker's, after the commit
        build_current_exports()
    with django_assert_max_num_queries(3):  # the generation, then the file copied here
        client.get("/registry.xml")
    with django_assert_max_num_queries(10):
        client.get("/search/?q=a")
    client.force_login(expert)
    with django_assert_max_num_queries(16):
        client.get("/requests/dashboard/")


def test_an_oversized_post_is_a_400_page_not_a_500(client, db):
    body = "urn:example:" + "a" * 3_000_000
    response = client.post("/check/", {"urns": body})
    assert response.status_code == 400
    assert "too large" in text(one(page(response), "//main/p[@class='lead']"))
    api = client.post("/api/check", body, content_type="text/plain")
    assert api.status_code == 413 and "error" in api.json()  # refused before it is read


def test_registration_fills_the_reference_column(staff):
    from registry.namespaces.actions import registry_references

    assert registry_references({"documentation": "RFC 8458"}) == [
        {"type": "rfc", "data": "rfc8458"}]
    assert registry_references({"documentation": "See https://sdo.example/spec.",
                                "registrant_organisation": "SDO"}) == [
        {"type": "uri", "data": "https://sdo.example/spec", "text": "SDO"}]
    assert registry_references({"documentation": "", "registrant_organisation": "Org"}) == [
        {"type": "text", "text": "Org"}]
    assert registry_references({"documentation": "javascript:alert(1)",
                                "registrant_organisation": "Org"}) == [
        {"type": "text", "text": "Org"}]
