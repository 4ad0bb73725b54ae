"""Visitors without a session: the whole page, bytes and gzip, kept per process for
the generation; nobody with a session ever gets those bytes."""

import datetime as dt
import gzip

from registry.namespaces.actions import namespace_register
from tests.factories import complete_values
from tests.html import page, texts

NIDS = "//*[@id='formal-table']//a[contains(concat(' ', @class, ' '), ' nid ')]"


def test_an_anonymous_page_is_compressed_when_asked_and_the_same_either_way(client, registry):
    plain = client.get("/")
    packed = client.get("/", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    for response in (plain, packed):
        vary = {v.strip() for v in response["Vary"].split(",")}
        assert {"Cookie", "Accept-Encoding"} <= vary


def test_the_second_anonymous_request_reads_only_the_generation(
        client, registry, django_assert_num_queries):
    client.get("/namespaces/isbn/")
    with django_assert_num_queries(1):
        client.get("/namespaces/isbn/", HTTP_ACCEPT_ENCODING="gzip")


def test_a_publish_replaces_the_kept_bytes(client, registry, staff):
    before = texts(page(client.get("/")), NIDS)
    namespace_register(kind="formal", nid="aaa-kept", values=complete_values(),
                       date=dt.date(2026, 1, 5), actor=staff)
    after = texts(page(client.get("/")), NIDS)
    assert "aaa-kept" not in before and "aaa-kept" in after


def test_a_signed_in_visitor_never_gets_the_anonymous_bytes(client, registry, registrant):
    client.get("/", HTTP_ACCEPT_ENCODING="gzip")  # the anonymous bytes are kept now
    client.force_login(registrant)
    response = client.get("/", HTTP_ACCEPT_ENCODING="gzip")
    # Sent as it is (test_public_cache: a page with a session is never compressed).
    assert "Content-Encoding" not in response
    doc = page(response.content)
    assert doc.xpath("//nav//a[@href='/accounts/logout/']")
    assert not doc.xpath("//nav//a[@href='/accounts/login/']")
