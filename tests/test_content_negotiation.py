"""Content codings by RFC 9110 (registry/http_semantics.py): Accept-Encoding's q-values
(section 12.5.3), an ETag per representation (8.8.3) and If-None-Match compared with the
selected one (13.1.2), on every cached page and document."""

import gzip

import pytest
from django.test import RequestFactory

from registry.http_semantics import negotiate_encoding, none_match, representation_etag

NO_HEADER = None


@pytest.mark.parametrize(("accept", "offered", "sent"), [
    # RFC 9110 section 12.5.3's own examples.
    ("compress, gzip", ("gzip",), "gzip"),
    ("compress, gzip", (), "identity"),
    ("", ("gzip",), "identity"),  # empty: no content coding wanted
    ("*", ("gzip",), "gzip"),
    ("compress;q=0.5, gzip;q=1.0", ("gzip",), "gzip"),
    ("gzip;q=1.0, identity; q=0.5, *;q=0", ("gzip",), "gzip"),
    ("gzip;q=1.0, identity; q=0.5, *;q=0", (), "identity"),
    # No header: no preference; identity is sent.
    (NO_HEADER, ("gzip",), "identity"),
    # q=0 is "not acceptable" (the finding), whatever else is listed.
    ("gzip;q=0", ("gzip",), "identity"),
    ("gzip;q=0.000, br", ("gzip",), "identity"),
    ("gzip;q=0, *", ("gzip",), "identity"),
    # Codings are case-insensitive (8.4.1), so is the "q"; x-gzip is gzip (8.4.1.3).
    ("GZIP", ("gzip",), "gzip"),
    ("Gzip ; Q=0.8", ("gzip",), "gzip"),
    ("x-gzip", ("gzip",), "gzip"),
    # The higher q wins; a tie goes to the compressed form.
    ("gzip;q=0.5, identity", ("gzip",), "identity"),
    ("gzip;q=0.5, identity;q=0.5", ("gzip",), "gzip"),
    ("deflate, gzip;q=0.001", ("gzip",), "gzip"),
    # Not listed and no "*": a coding is refused, identity accepted.
    ("br", ("gzip",), "identity"),
    ("identity;q=0, gzip", ("gzip",), "gzip"),
    ("*;q=0, identity", ("gzip",), "identity"),
    ("*;q=0.3, gzip;q=0.2", ("gzip",), "identity"),
    # Nothing acceptable: None (a 406).
    ("identity;q=0", (), None),
    ("gzip;q=0, identity;q=0", ("gzip",), None),
    ("*;q=0", ("gzip",), None),
    ("br, *;q=0", ("gzip",), None),
    # Malformed members are ignored, not guessed at.
    ("gzip;q=1.5", ("gzip",), "identity"),
    ("gzip;q=0.0001", ("gzip",), "identity"),
    ("gzip;q=", ("gzip",), "identity"),
    ("gzip;level=9", ("gzip",), "identity"),
    ("gz ip", ("gzip",), "identity"),
    (",,gzip,,", ("gzip",), "gzip"),
])
def test_accept_encoding_by_rfc_9110(accept, offered, sent):
    meta = {} if accept is None else {"HTTP_ACCEPT_ENCODING": accept}
    assert negotiate_encoding(RequestFactory().get("/", **meta), offered) == sent


@pytest.mark.parametrize(("if_none_match", "etag", "matched"), [
    ('"abc"', '"abc"', True),
    ('W/"abc"', '"abc"', True),  # weak comparison
    ('"x", W/"abc" , "y"', '"abc"', True),
    ('"abc-gzip"', '"abc"', False),  # another representation's
    ('"abc"', '"abc-gzip"', False),
    ('"ab"', '"abc"', False),  # not a substring match
    ('"abcd"', '"abc"', False),
    ("*", '"abc"', True),
    ("abc", '"abc"', False),  # not an entity-tag
])
def test_if_none_match_names_the_selected_representation(if_none_match, etag, matched):
    request = RequestFactory().get("/", HTTP_IF_NONE_MATCH=if_none_match)
    assert none_match(request, etag) is matched


def test_each_coding_has_its_own_etag():
    assert representation_etag("t", "identity") == '"t"'
    assert representation_etag("t", "gzip") == '"t-gzip"'


DOCUMENTS = ["/api/namespaces/isbn/", "/namespaces/isbn/template.txt", "/registry.csv"]
PAGES = ["/", "/namespaces/isbn/"]


@pytest.mark.parametrize("path", DOCUMENTS + PAGES)
def test_a_refused_gzip_gets_identity_and_upper_case_gets_gzip(client, registry, path):
    plain = client.get(path)
    refused = client.get(path, HTTP_ACCEPT_ENCODING="gzip;q=0")
    upper = client.get(path, HTTP_ACCEPT_ENCODING="GZIP")
    assert "Content-Encoding" not in refused and "Content-Encoding" not in plain
    content = plain.getvalue()  # read once: an export is a file, streamed
    assert refused.getvalue() == content
    assert upper["Content-Encoding"] == "gzip"
    assert gzip.decompress(upper.getvalue()) == content
    for response in (plain, refused, upper):
        assert "Accept-Encoding" in response["Vary"]


@pytest.mark.parametrize("path", DOCUMENTS + PAGES)
def test_refusing_every_coding_is_a_406(client, registry, path):
    for accept in ("identity;q=0, gzip;q=0", "*;q=0"):
        response = client.get(path, HTTP_ACCEPT_ENCODING=accept)
        assert response.status_code == 406
        assert "Accept-Encoding" in response["Vary"]


def test_a_signed_in_page_is_identity_only(client, registry, registrant):
    """Never compressed (BREACH: tests/namespaces/test_public_cache.py), so a client that
    refuses identity gets a 406."""
    client.force_login(registrant)
    assert "Content-Encoding" not in client.get("/", HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert "Content-Encoding" not in client.get("/", HTTP_ACCEPT_ENCODING="GZIP")
    for accept in ("*;q=0", "gzip, identity;q=0"):
        refused = client.get("/", HTTP_ACCEPT_ENCODING=accept)
        assert refused.status_code == 406 and "Accept-Encoding" in refused["Vary"]


@pytest.mark.parametrize("path", DOCUMENTS)
def test_a_304_is_for_the_representation_the_client_holds(client, registry, path):
    zipped = client.get(path, HTTP_ACCEPT_ENCODING="gzip")
    # The finding: the gzip form's ETag earned a 304 for the identity form.
    assert client.get(path, HTTP_IF_NONE_MATCH=zipped["ETag"],
                      HTTP_ACCEPT_ENCODING="gzip;q=0").status_code == 200
    fresh = client.get(path, HTTP_IF_NONE_MATCH=zipped["ETag"], HTTP_ACCEPT_ENCODING="gzip")
    assert fresh.status_code == 304
    assert fresh["ETag"] == zipped["ETag"] and "Accept-Encoding" in fresh["Vary"]
