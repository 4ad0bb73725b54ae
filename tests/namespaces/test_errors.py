"""Error answers: a 404 tells nothing about the code or about what exists privately, and
hostile input anywhere (JSON depth, path and query parameters, NUL) is never a 500."""

import json
import re

import pytest
from django.urls import reverse

from tests.factories import make_registration
from tests.html import main_text


@pytest.fixture
def production_errors(client, settings):
    settings.DEBUG = False
    client.raise_request_exception = False
    return client


@pytest.mark.parametrize("path", ["/no/such/page/", "/requests/abc/x/", "/static-nothing",
                                  "/requests/1/do/"])
def test_a_404_shows_no_resolver_internals_or_paths(production_errors, db, path):
    response = production_errors.get(path)
    assert response.status_code == 404
    for leak in ("tried", "URLResolver", "URLPattern", "registry.urls", "namespaces/urls",
                 ".py", "<str:", "<int:", "path"):
        assert leak not in main_text(response), leak
    assert "There is no page at this address." in main_text(response)
    # Not only the visible text: a traceback in a comment or an attribute leaks as much.
    assert b"Traceback" not in response.content


def _without_tokens(response) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


@pytest.mark.parametrize("suffix", ["", "edit/", "rounds/1/template.txt"])
def test_a_private_draft_and_a_missing_id_answer_the_same_404(production_errors, registrant,
                                                              other_registrant, suffix):
    draft = make_registration(registrant, nid="secretdraft", submit=False)
    production_errors.force_login(other_registrant)
    private = production_errors.get(f"/requests/{draft.pk}/{suffix}")
    missing = production_errors.get(f"/requests/{draft.pk + 1000}/{suffix}")
    assert private.status_code == missing.status_code == 404
    assert _without_tokens(private) == _without_tokens(missing)
    production_errors.logout()
    assert (_without_tokens(production_errors.get(f"/requests/{draft.pk}/{suffix}"))
            == _without_tokens(production_errors.get(f"/requests/{draft.pk + 1000}/{suffix}")))


@pytest.mark.parametrize("body", ["[" * 100_000, "{\"urns\": " + "[" * 100_000,
                                  "[" * 50_000 + "]" * 50_000, '{"a":' * 100_000])
def test_json_of_any_depth_is_a_400(production_errors, db, body):
    response = production_errors.post("/api/check", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]


def test_the_check_api_caps_urns_per_call(client, db):
    from registry.namespaces.checker import MAX_URNS

    response = client.post("/api/check", json.dumps([f"urn:example:{n}" for n in range(1000)]),
                           content_type="application/json")
    assert response.status_code == 400 and f"at most {MAX_URNS}" in response.json()["error"]
    assert MAX_URNS <= 100


def test_odd_revises_values_are_never_500(production_errors, registrant, registry):
    production_errors.force_login(registrant)
    for value in ["a/b", "../../admin", "x" * 500, "\x00", "isbn\x00", "%2F", "urn:isbn:1",
                  "\u202eevil", "<script>"]:
        _revises(production_errors, value)


def _revises(production_errors, value):
    response = production_errors.get(reverse("review:new"), {"revises": value})
    assert response.status_code in (302, 404)
    response = production_errors.post(reverse("review:new"), {"revises": value})
    assert response.status_code in (302, 403, 404)


def test_revises_a_registered_namespace_points_at_it(client, registrant, registry):
    client.force_login(registrant)
    response = client.get(reverse("review:new"), {"revises": "ISBN"})
    assert response.status_code == 302 and response["Location"] == "/namespaces/isbn/"


HOSTILE_VALUES = ["a/b", "\x00", "\x00" * 3, "\u202e", "[" * 5000, "x" * 5000, "%00",
                  "-1", "99999999999999999999999999", "<script>alert(1)</script>", "\ud7ff"]
GET_PAGES = ["/", "/search/", "/check/", "/api/check", "/api/nid-check", "/api/namespaces/",
             "/api/namespaces/isbn/", "/namespaces/isbn/", "/namespaces/isbn/diff/",
             "/namespaces/isbn/template.txt", "/registry.xml", "/registry.csv", "/feed.atom",
             "/requests/review/", "/requests/new/", "/requests/", "/requests/dashboard/",
             "/requests/iana/", "/accounts/login/", "/accounts/signup/",
             "/accounts/password/reset/"]


def test_any_query_parameter_on_any_page_is_never_500(production_errors, registry, expert):
    production_errors.force_login(expert)
    names = ["q", "a", "b", "page", "fpage", "ipage", "sort", "letter", "status", "kind",
             "nid", "urn", "revises", "next", "mine"]
    for path in GET_PAGES:
        for value in HOSTILE_VALUES:
            response = production_errors.get(path, {name: value for name in names})
            assert response.status_code < 500, (path, value)


def test_any_path_parameter_is_never_500(production_errors, registry, registrant):
    from urllib.parse import quote

    production_errors.force_login(registrant)
    for value in ["\x00", "a\x00b", "%00", "\u202e", "x" * 300, "..", "%2F"]:
        _path_parameter(production_errors, quote(value, safe=""))


def _path_parameter(client, segment):
    for pattern in ("/namespaces/{}/", "/namespaces/{}/diff/", "/namespaces/{}/template.txt",
                    "/namespaces/{}/v/1/", "/api/namespaces/{}/", "/requests/1/do/{}/"):
        response = client.get(pattern.format(segment))
        assert response.status_code < 500, (pattern, segment)
