"""registry/protection.py and the CSP: rate limits with a clear 429, Content-Security-
Policy that no inline script passes, Permissions-Policy, and no-store on private pages."""

import lxml.html
import pytest
from django.core import mail
from django.core.cache import cache
from django.urls import reverse

from registry.review import actions
from registry.review.models import Comment
from tests.factories import make_registration
from tests.html import page, texts


@pytest.fixture
def limits(settings):
    cache.clear()
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "comment": "3/m", "api_check": "3/m",
                            "nid_check": "3/m", "search": "3/m"}
    yield settings.RATE_LIMITS
    cache.clear()


@pytest.mark.rate_limits
def test_comments_are_rate_limited_per_person(client, registrant, other_registrant, limits,
                                              django_capture_on_commit_callbacks):
    registration = make_registration(registrant, nid="chatty")
    client.force_login(other_registrant)
    url = reverse("review:comment", args=[registration.pk])
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(3):
            response = client.post(url, {"body": f"Comment {n}", "audience": "public"})
            assert response.status_code == 302
    mails = len(mail.outbox)
    assert mails
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(url, {"body": "One too many", "audience": "public"})
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    doc = lxml.html.fromstring(refused.content)
    assert "Too many requests" in doc.xpath("//h1")[0].text_content()
    assert Comment.objects.filter(registration=registration).count() == 3
    assert len(mail.outbox) == mails  # no mail for the refused comment
    # Another person is not held back by this one.
    client.force_login(registrant)
    assert client.post(url, {"body": "Mine", "audience": "public"}).status_code == 302


@pytest.mark.rate_limits
@pytest.mark.parametrize(("path", "name", "value"), [("/api/check", "urn", "urn:example:a"),
                                                     ("/api/nid-check", "nid", "example")])
def test_the_apis_answer_429_json(client, db, limits, path, name, value):
    for n in range(3):  # each a different question: none is answered from the cache
        assert client.get(path, {name: f"{value}{n}"}).status_code == 200
    response = client.get(path, {name: f"{value}9"})
    assert response.status_code == 429
    assert response.json()["retry_after"] == 60 and response["Retry-After"] == "60"
    # Counted per client address.
    assert client.get(path, {name: f"{value}8"}, REMOTE_ADDR="192.0.2.7").status_code == 200


@pytest.mark.rate_limits
def test_posted_urn_checks_are_counted_every_time(client, db, limits):
    for _ in range(3):
        assert client.post("/api/check", ["urn:example:a"],
                           content_type="application/json").status_code == 200
    assert client.post("/api/check", ["urn:example:a"],
                       content_type="application/json").status_code == 429


@pytest.mark.rate_limits
@pytest.mark.parametrize(("path", "name", "value"), [("/api/check", "urn", "urn:example:a"),
                                                     ("/search/", "q", "isbn")])
def test_an_answer_from_the_public_cache_is_not_counted(client, db, limits, path, name,
                                                        value):
    """Only work counts: the same question again, until the registry changes, is
    answered from the cache, and the allowance is left for questions that cost."""
    for _ in range(10):
        assert client.get(path, {name: value}).status_code == 200
    for n in range(2):
        assert client.get(path, {name: f"{value}{n}"}).status_code == 200
    assert client.get(path, {name: f"{value}x"}).status_code == 429


@pytest.mark.rate_limits
def test_search_and_the_checker_page_are_rate_limited(client, db, limits):
    for n in range(3):
        assert client.get("/search/", {"q": f"isbn{n}"}).status_code == 200
    refused = client.get("/search/", {"q": "isbn9"})
    assert refused.status_code == 429
    assert texts(page(refused), "//h1") == ["Too many requests"]
    for _ in range(3):
        client.post("/check/", {"urns": "urn:example:a"})
    assert client.post("/check/", {"urns": "urn:example:a"}).status_code == 429


def test_every_response_has_csp_and_permissions_policy(client, db):
    for path in ("/", "/api/namespaces/", "/registry.xml", "/no/such/page/"):
        response = client.get(path)
        csp = response["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
        assert directives["script-src"] == "'self'"
        assert directives["style-src"] == "'self'"
        assert directives["object-src"] == "'none'"
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert "camera=()" in response["Permissions-Policy"]
        assert "geolocation=()" in response["Permissions-Policy"]


def _inline_code(html: bytes) -> list[str]:
    """Whatever a strict CSP would block in a page: inline scripts, handlers, styles."""
    doc = lxml.html.fromstring(html)
    found = [f"<script> {s.text[:40]!r}" for s in doc.iter("script")
             if not s.get("src") and (s.text or "").strip()]
    found += [f"<style> {s.text[:40]!r}" for s in doc.iter("style")]
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        found += [f"{el.tag} {name}" for name in el.attrib
                  if name.startswith("on") or name == "style"]
        if el.get("href", "").lower().startswith("javascript:"):
            found.append(f"{el.tag} javascript: link")
    return found


def test_no_page_needs_inline_code(client, registry, registrant, expert, staff):
    registration = make_registration(registrant, nid="inlinecheck")
    draft = make_registration(registrant, nid="inlinedraft", submit=False)
    pages = {
        None: ["/", "/search/?q=isbn", "/check/?urn=urn:isbn:1", "/namespaces/isbn/",
               "/requests/review/", registration.get_absolute_url(), "/accounts/login/",
               "/accounts/signup/", "/no/such/page/"],
        registrant: ["/requests/", "/requests/new/", reverse("review:edit", args=[draft.pk]),
                     registration.get_absolute_url()],
        expert: ["/requests/dashboard/", registration.get_absolute_url()],
        staff: ["/requests/iana/", "/iana/people/", f"/iana/people/{registrant.pk}/",
                "/iana/namespaces/isbn/", "/namespaces/isbn/"],
    }
    for person, paths in pages.items():
        client.logout()
        if person:
            client.force_login(person)
        for path in paths:
            response = client.get(path)
            assert response.status_code == (404 if "no/such" in path else 200), path
            assert _inline_code(response.content) == [], path


def test_private_pages_are_not_stored(client, registrant, expert):
    registration = make_registration(registrant, nid="internal")
    actions.registration_comment(registration=registration, actor=expert, audience="experts",
                                 body="Internal: looks fine.")
    draft = make_registration(registrant, nid="privdraft", submit=False)
    client.force_login(expert)
    expert_view = client.get(registration.get_absolute_url())
    comments = ("//main//article[starts-with(@id, 'comment-')]"
                "//div[contains(@class, 'comment-body')]")
    assert "Internal: looks fine." in texts(page(expert_view), comments)
    client.force_login(registrant)
    for response in (expert_view, client.get(reverse("review:edit", args=[draft.pk])),
                     client.get("/requests/")):
        directives = {d.strip() for d in response["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= directives


def test_public_pages_for_visitors_stay_cacheable(client, db):
    for path in ("/", "/registry.xml", "/api/namespaces/"):
        response = client.get(path)
        assert "no-store" not in response.get("Cache-Control", "")
        assert "Cookie" not in response.get("Vary", "") or path == "/"
