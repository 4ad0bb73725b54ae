"""The URN checker page and its JSON twin."""

import json

import pytest

from registry.http_semantics import MAX_QUERY_BYTES
from tests.html import find, links, one, page, terms, text, texts

CARDS = "//main/div[contains(@class, 'card')]"


def test_checker_page_shows_parts_normal_form_and_registration(client, registry):
    doc = page(client.post("/check/",
                           {"urns": "URN:ISBN:0451450523\nurn:nosuch:x\nurn:ex ample"}))
    isbn, nosuch, bad = find(doc, CARDS)
    assert text(terms(one(isbn, ".//dl"))["Normal form"]) == "urn:isbn:0451450523"
    nid = terms(one(isbn, ".//dl"))["NID"]
    assert texts(nid, "a") == ["registered: isbn"] and links(nid) == ["/namespaces/isbn/"]
    assert texts(terms(one(nosuch, ".//dl"))["NID"], "span") == ["not registered here"]
    [error] = texts(bad, ".//p[contains(@class, 'text-danger')]")
    assert error.startswith("Not a URN") and error.endswith("(character 7).")


def test_checker_points_at_the_offending_character(client, registry):
    title = one(page(client.get("/check/", {"urn": "urn:example:a b"})), f"{CARDS}//h2")
    caret = one(title, "span")
    assert (title.text, caret.text, caret.tail) == ("urn:example:a", " ", "b")
    assert caret.get("class") == "urn-error-caret text-decoration-underline"


def test_api_check_get(client, registry):
    data = client.get("/api/check", {"urn": "urn:isbn:0451450523?=x#y"}).json()
    result = data["results"][0]
    assert result["valid"] and result["registered"] and result["nid"] == "isbn"
    assert result["normalized"] == "urn:isbn:0451450523"
    assert result["q_component"] == "x" and result["f_component"] == "y"


def test_api_check_post_many(client, registry):
    response = client.post("/api/check", json.dumps({"urns": ["urn:isbn:1", "nope"]}),
                           content_type="application/json")
    results = response.json()["results"]
    assert [r["valid"] for r in results] == [True, False]
    assert results[1]["error"]["offset"] == 0


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"\xff\xfe\x00", "text/plain"),
        (b"{", "application/json"),
        (b'{"urns": [1, 2]}', "application/json"),
        (b"", "text/plain"),
        (("urn:a:b\n" * 2000).encode(), "text/plain"),
    ],
)
def test_api_check_bad_bodies_are_400s(client, db, body, content_type):
    response = client.post("/api/check", body, content_type=content_type)
    assert response.status_code == 400
    assert "error" in response.json()


@pytest.mark.parametrize("urn", ["\x00", "urn:" + "a" * 100_000, "urn:é:x", "%%%", "urn:a:%"])
def test_checker_never_crashes(client, db, urn):
    assert client.post("/check/", {"urns": urn}).status_code == 200
    assert client.post("/api/check", [urn], content_type="application/json").status_code == 200
    # In a query string a URN is printable ASCII of a bounded length (the schema's bound):
    # anything else is a 400 naming the parameter, and the POST above checks it.
    fits = urn.isascii() and urn.isprintable() and " " not in urn and len(urn) <= 256
    response = client.get("/api/check", {"urn": urn})
    if len(urn) > MAX_QUERY_BYTES:  # past what the API reads of a query string at all
        assert response.status_code == 414 and "POST" in response.json()["error"]
        return
    assert response.status_code == (200 if fits else 400)
    if not fits:
        assert response.json()["parameter"] == "urn"


def test_request_page_shows_the_section_5_1_warnings(client, registrant):
    from tests.factories import make_registration

    registration = make_registration(registrant, nid="fra")
    warnings = one(page(client.get(registration.get_absolute_url())), "//*[@id='nid-warnings']")
    assert "ISO 3166-1 country code" in text(one(warnings, ".//li[@data-code='country_code']"))
