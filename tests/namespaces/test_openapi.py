"""/api/schema: a valid OpenAPI 3.1 document, and every endpoint's real responses
valid against the schema it declares."""

import datetime as dt

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from registry.namespaces.actions import namespace_register, version_publish
from tests.factories import complete_values


@pytest.fixture
def document(client, db):
    response = client.get("/api/schema")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()


def assert_valid(document, response, status, content="application/json"):
    """The response body against the schema the document gives for that status."""
    path = response.wsgi_request.path
    template = "/api/namespaces/{nid}/" if path.startswith("/api/namespaces/") and \
        path != "/api/namespaces/" else path
    method = response.wsgi_request.method.lower()
    declared = document["paths"][template][method]["responses"][str(status)]
    assert response.status_code == status
    schema = {**document, **declared["content"][content]["schema"]}
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in
              validator.iter_errors(response.json())]
    assert not errors, errors


def test_the_schema_is_a_valid_openapi_31_document(document):
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises on any error against the OpenAPI 3.1 meta-schema
    # Every API route of the site is documented (derived from its URL patterns).
    from django.urls import URLResolver, get_resolver

    from registry.http_semantics import path_template

    def routes(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from routes(pattern.url_patterns, route)
            else:
                yield route

    api = {path_template(route) for route in routes(get_resolver().url_patterns)
           if route.startswith("api/")}
    # and the JSON documents outside /api/ that the profiles give.
    assert set(document["paths"]) == api | {"/profiles.json", "/resolve/{urn}"}


@pytest.fixture
def registered(registry, staff, registrant):
    ns = namespace_register(kind="formal", nid="apitest", values=complete_values(registrant),
                            date=dt.date(2026, 11, 1), actor=staff)
    version_publish(namespace=ns, date=dt.date(2026, 11, 2), actor=staff,
                    values=complete_values(registrant, revision_information="Second."))
    namespace_register(kind="informal", nid=None, values=complete_values(registrant),
                       date=dt.date(2026, 11, 3), actor=staff)


@pytest.mark.parametrize("url, status", [
    ("/api/namespaces/", 200),
    ("/api/namespaces/?kind=informal", 200),
    ("/api/namespaces/?status=deprecated", 200),
    ("/api/namespaces/?page=9", 404),
    ("/api/namespaces/apitest/", 200),
    ("/api/namespaces/ucode/", 200),
    ("/api/namespaces/urn-8/", 200),
    ("/api/namespaces/isbm/", 404),
    ("/api/check?urn=urn:isbn:0451450523&urn=urn:x:&urn=URN:APITEST:a?=q#f", 200),
    ("/api/check", 400),
    ("/api/namespaces/isbn/", 200),
    ("/api/check?urn=urn:isbn:0451450524&urn=urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", 200),
    ("/api/equivalent?a=urn:isbn:0-395-36341-1&b=URN:ISBN:0395363411", 200),
    ("/api/equivalent?a=urn:isbn:0-395-36341-1&b=isbn", 400),
    ("/api/equivalent?a=urn:isbn:1", 400),
    ("/profiles.json", 200),
])
def test_real_responses_match_the_schema(client, document, registered, url, status):
    assert_valid(document, client.get(url), status)


def test_posted_checks_match_the_schema(client, document, registered):
    assert_valid(document, client.post("/api/check", ["urn:apitest:1", "nope"],
                                       content_type="application/json"), 200)
    assert_valid(document, client.post("/api/check", "[1, 2]",
                                       content_type="application/json"), 400)


def test_the_api_types_references_as_iana_does(client, registered):
    ucode = client.get("/api/namespaces/ucode/").json()
    assert [(r["type"], r["label"]) for r in ucode["references"]] == [
        ("rfc", "RFC6588"), ("rfc-errata", "RFC Errata 3188"), ("rfc-errata", "RFC Errata 3189")]
    assert ucode["references"][1]["url"] == "https://www.rfc-editor.org/errata/eid3188"


def test_each_namespace_links_to_its_page_and_its_api_document(client, registered):
    listed = client.get("/api/namespaces/", {"kind": "informal"}, secure=True).json()["results"]
    assert listed and all(
        (row["url"], row["api_url"]) == (f"https://testserver/namespaces/{row['nid']}/",
                                         f"https://testserver/api/namespaces/{row['nid']}/")
        for row in listed)
    for row in listed[:2]:
        assert client.get(row["api_url"]).json()["url"] == row["url"].replace("https", "http")
