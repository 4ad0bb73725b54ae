"""registry/http_semantics.py and the header middleware order: HEAD wherever GET, the
API's 405 before CSRF, 413 and JSON for every status, the site's own CSRF page, and the
security headers on every class of answer (redirects, bad Host, static files, 304)."""

import pytest
from django.test import Client

from registry.http_semantics import api_methods
from registry.protection import PERMISSIONS_POLICY
from tests.html import page, texts

SECURITY_HEADERS = ("Content-Security-Policy", "Permissions-Policy", "X-Frame-Options",
                    "X-Content-Type-Options")
PUBLIC_URLS = ["/", "/?status=active", "/search/?q=isbn", "/check/", "/namespaces/isbn/",
               "/namespaces/isbn/history/", "/namespaces/isbn/template.txt",
               "/requests/review/", "/registry.xml", "/registry.csv", "/urn-namespaces-1.csv",
               "/urn-namespaces-2.csv", "/feed.atom", "/api/namespaces/",
               "/api/namespaces/isbn/", "/api/check?urn=urn:isbn:1", "/api/schema", "/healthz",
               "/accounts/login/", "/accounts/signup/"]


def body(response) -> bytes:
    """What a client reads: the exports are files, streamed."""
    return response.getvalue() if response.streaming else response.content


@pytest.mark.parametrize("url", PUBLIC_URLS)
def test_head_is_answered_wherever_get_is(client, registry, url):
    got = client.get(url)
    head = client.head(url)
    assert got.status_code == head.status_code == 200
    assert body(head) == b""
    assert head["Content-Length"] == str(len(body(got)))
    for name in ("Content-Type", *SECURITY_HEADERS, "ETag", "Last-Modified"):
        assert head.get(name) == got.get(name), name


def test_an_undeclared_api_method_is_a_405_before_csrf(db):
    client = Client(enforce_csrf_checks=True)
    for path, allowed in api_methods().items():
        url = path.replace("{nid}", "isbn")
        for method in ("post", "put", "patch", "delete"):
            if method.upper() in allowed:
                continue
            response = getattr(client, method)(url, "{}", content_type="application/json")
            assert response.status_code == 405, (method, url)
            assert response["Allow"] == ", ".join(allowed)
            if url.startswith("/api/"):  # /resolve/ answers pages; /profiles.json is a file
                assert "error" in response.json()
    assert "HEAD" in api_methods()["/api/namespaces/"]


def test_every_api_error_is_json(client, db, settings, monkeypatch):
    settings.DEBUG = False
    client.raise_request_exception = False
    assert client.get("/api/no/such/thing/").json()["error"] == "not found"
    big = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    too_large = client.post("/api/check", big, content_type="text/plain")
    assert too_large.status_code == 413 and "bytes" in too_large.json()["error"]

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("registry.namespaces.api.check_urns", broken)
    failed = client.post("/api/check", ["urn:isbn:1"], content_type="application/json")
    assert failed.status_code == 500
    assert failed.json() == {"error": "internal server error"}


@pytest.mark.parametrize("name", ["status", "kind"])
def test_a_bogus_filter_is_a_400_naming_it(client, db, name):
    response = client.get("/api/namespaces/", {name: "bogus"})
    assert response.status_code == 400
    assert response.json()["parameter"] == name and "bogus" in response.json()["error"]


def test_a_bogus_value_on_a_page_is_the_site_400_page(client, db):
    response = client.get("/", {"sort": "junk"})
    assert response.status_code == 400
    assert texts(page(response), "//h1") == ["That request could not be read"]
    assert "sort" in texts(page(response), "//main//code")


def test_the_csrf_failure_page_is_the_sites_own_within_its_csp(db):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/requests/new/", {"template_text": "x"})
    assert response.status_code == 403
    doc = page(response)
    assert texts(doc, "//h1") == ["That form could not be accepted"]
    assert not doc.xpath("//style | //*[@style]")
    assert "style-src 'self'" in response["Content-Security-Policy"]


def _assert_security_headers(response) -> None:
    for name in SECURITY_HEADERS:
        assert response.has_header(name), (response.status_code, name)
    assert response["Permissions-Policy"] == PERMISSIONS_POLICY


def test_a_redirect_and_the_https_redirect_carry_the_security_headers(client, registry,
                                                                      settings):
    found = client.get("/search/", {"q": "urn:isbn:1"})
    assert found.status_code == 302
    _assert_security_headers(found)
    settings.SECURE_SSL_REDIRECT = True
    moved = Client().get("/")
    assert moved.status_code == 301 and moved["Location"].startswith("https://")
    _assert_security_headers(moved)


def test_a_bad_host_answer_carries_the_security_headers(client, db, settings):
    settings.DEBUG = False
    client.raise_request_exception = False
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    _assert_security_headers(response)


def test_a_not_modified_answer_carries_the_security_headers(client, registry):
    first = client.get("/registry.csv")
    again = client.get("/registry.csv", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    _assert_security_headers(again)


def test_a_static_file_carries_the_security_headers(client, db, settings):
    middleware = list(settings.MIDDLEWARE)
    middleware.insert(middleware.index("django.middleware.security.SecurityMiddleware") + 1,
                      "whitenoise.middleware.WhiteNoiseMiddleware")
    settings.MIDDLEWARE = middleware  # as production runs (registry/settings.py)
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    response = Client().get("/static/registry/registry.css")
    assert response.status_code == 200
    _assert_security_headers(response)
