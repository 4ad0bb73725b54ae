"""registry/unavailable.py and its neighbours: a part away is a 503 with Retry-After (or
the page from the cache), never a 500, and every answer, a 500 too, has the headers."""

from __future__ import annotations

import sys

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core import mail
from django.db import OperationalError
from django.db.backends.utils import CursorWrapper
from django.test import Client
from django.urls import reverse

from registry.namespaces import public_cache
from registry.protection import FAIL_OPEN
from registry.review.models import Comment
from registry.unavailable import COUNTS_RETRY_AFTER, DATABASE_RETRY_AFTER, server_error
from tests.factories import make_registration
from tests.faults.conftest import free_port
from tests.html import page, texts

HEADERS = ("Content-Security-Policy", "Permissions-Policy", "X-Content-Type-Options",
           "X-Frame-Options")


def assert_headed(response) -> None:
    missing = [name for name in HEADERS if not response.has_header(name)]
    assert not missing, f"{response.status_code} without {missing}"


def assert_503(response, retry_after: int) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == str(retry_after)
    assert "no-store" in response["Cache-Control"]
    assert_headed(response)


# --- the cache away ---------------------------------------------------------------------


@pytest.fixture
def cache_away(settings):
    """The counts' cache (rate limits, log-in throttling): a Redis nothing answers at."""
    settings.CACHES = {**settings.CACHES, "default": {
        "BACKEND": "registry.cache.RegistryRedisCache",
        "LOCATION": f"redis://127.0.0.1:{free_port()}/0", "KEY_PREFIX": "away",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "comment": "3/m", "api_check": "3/m",
                            "nid_check": "3/m", "search": "3/m"}


def test_signed_in_pages_need_no_cache(client, registrant, cache_away):
    client.force_login(registrant)
    response = client.get("/requests/")
    assert response.status_code == 200
    assert texts(page(response), "//nav//*[@id='who']")  # signed in
    assert client.session[SESSION_KEY] == str(registrant.pk)


@pytest.mark.rate_limits
def test_search_and_the_checks_fail_open(client, db, cache_away):
    for n in range(5):  # past the rate: no count can be kept, each is answered
        assert client.get("/search/", {"q": f"isbn{n}"}).status_code == 200
        assert client.get("/api/check", {"urn": f"urn:example:{n}"}).status_code == 200
        assert client.get("/api/nid-check", {"nid": f"example{n}"}).status_code == 200


@pytest.mark.rate_limits
def test_comments_fail_closed(client, registrant, other_registrant, cache_away,
                              django_capture_on_commit_callbacks):
    registration = make_registration(registrant, nid="awaycache")
    client.force_login(other_registrant)
    mails = len(mail.outbox)
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(reverse("review:comment", args=[registration.pk]),
                              {"body": "While the cache is away.", "audience": "public"})
    assert_503(refused, COUNTS_RETRY_AFTER)
    assert texts(page(refused), "//h1") == ["The registry is unavailable for a moment"]
    assert not Comment.objects.filter(body="While the cache is away.").exists()
    assert len(mail.outbox) == mails


def test_account_forms_fail_closed_and_log_out_still_works(client, registrant, cache_away):
    for path, data in [("/accounts/login/", {"login": "registrant@example.org",
                                             "password": "wrong"}),
                       ("/accounts/signup/", {"email": "new@example.org"}),
                       ("/accounts/password/reset/", {"email": "registrant@example.org"})]:
        assert_503(client.post(path, data), COUNTS_RETRY_AFTER)
    assert client.get("/accounts/login/").status_code == 200  # the form itself shows
    client.force_login(registrant)
    assert client.post("/accounts/logout/").status_code == 302
    assert SESSION_KEY not in client.session


def test_every_rate_limit_group_is_decided():
    """A group is open (listed) or closed (not): only known groups may be listed, and
    the ones that send mail are closed."""
    from django.conf import settings

    assert set(FAIL_OPEN) <= set(settings.RATE_LIMITS)
    assert "comment" not in FAIL_OPEN


# --- an error reading the user: still the headers -------------------------------------


def test_a_user_read_that_raises_still_answers_with_the_security_headers(
        registrant, monkeypatch):
    """Reading the user fails (an error no guard knew): the 500 carries the headers, as
    the headers never ask for the user after the answer is built."""
    def fail(request):
        raise RuntimeError("the user could not be read")

    client = Client(raise_request_exception=False)
    client.force_login(registrant)
    monkeypatch.setattr("registry.accounts.signed_in.signed_in_user", fail)
    response = client.get("/requests/")
    assert response.status_code == 500
    assert_headed(response)
    assert "no-store" in response["Cache-Control"]


def test_a_page_that_never_read_the_user_is_kept_private_for_a_session(client, registrant):
    client.force_login(registrant)
    response = client.get("/registry.xml")
    assert response.status_code == 200
    assert {"private", "no-store"} <= {d.strip() for d in response["Cache-Control"].split(",")}


# --- the database away ------------------------------------------------------------------


@pytest.fixture
def database_away(db):
    """Every query fails as when PostgreSQL has gone, until the test's end (before the
    test database's own teardown)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(public_cache, "_last_read",
                  {"generation": None, "at": float("-inf"), "away_since": None})

    def away(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    def take_away():
        patch.setattr(CursorWrapper, "execute", away)
        patch.setattr(CursorWrapper, "executemany", away)

    yield take_away
    patch.undo()


def test_the_database_away_is_a_503_with_retry_after(client, db, database_away):
    database_away()
    response = client.get("/search/", {"q": "isbn"})
    assert_503(response, DATABASE_RETRY_AFTER)
    assert texts(page(response), "//h1") == ["The registry is unavailable for a moment"]
    api = client.get("/api/namespaces/")
    assert_503(api, DATABASE_RETRY_AFTER)
    assert api.json()["retry_after"] == DATABASE_RETRY_AFTER


def test_a_cached_anonymous_page_is_served_while_the_database_is_away(
        client, registrant, database_away, monkeypatch):
    first = client.get("/")
    assert first.status_code == 200
    signed_in = Client()
    signed_in.force_login(registrant)
    database_away()
    again = client.get("/")
    assert again.status_code == 200 and again.content == first.content
    assert_headed(again)
    assert_503(client.get("/search/", {"q": "never asked"}), DATABASE_RETRY_AFTER)
    assert_503(signed_in.get("/"), DATABASE_RETRY_AFTER)  # not for a session
    assert_503(client.post("/check/", {"urns": "urn:example:a"}), DATABASE_RETRY_AFTER)
    # A generation read longer before the database went away is not trusted.
    monkeypatch.setitem(public_cache._last_read, "at", public_cache._last_read["away_since"]
                        - public_cache.REMEMBERED_GENERATION_SECONDS - 1)
    assert_503(client.get("/"), DATABASE_RETRY_AFTER)


def test_a_database_failure_outside_a_view_is_a_503(rf):
    try:
        raise OperationalError("terminating connection due to administrator command")
    except OperationalError:
        assert sys.exc_info()[0] is OperationalError
        assert server_error(rf.get("/")).status_code == 503
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        assert server_error(rf.get("/")).status_code == 500


DATABASE_OPTIONS = """
import django, json
django.setup()
from django.conf import settings
print(json.dumps(settings.DATABASES["default"]["OPTIONS"]))
"""


@pytest.mark.parametrize("url, timeout", [
    ("postgres://registry@db.example:5432/registry", 3),
    ("postgres://registry@db.example:5432/registry?connect_timeout=7", 7),
])
def test_an_unreachable_database_is_given_up_within_seconds(url, timeout):
    """Not a request hung until gunicorn's timeout: a 503 within connect_timeout."""
    import json
    import os
    import subprocess

    from django.conf import settings

    env = {**{k: v for k, v in os.environ.items() if k != "REGISTRY_ENV"},
           "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "registry.settings"}
    result = subprocess.run([sys.executable, "-c", DATABASE_OPTIONS], cwd=settings.BASE_DIR,
                            env=env, capture_output=True, text=True, check=True)
    assert json.loads(result.stdout.strip().splitlines()[-1])["connect_timeout"] == timeout


@pytest.mark.parametrize("name", sorted(
    path.name for path in (settings.BASE_DIR / "templates").glob("[0-9][0-9][0-9]*.html")
    if "{% extends" not in path.read_text()))
def test_a_standalone_error_page_has_the_landmarks_of_every_page(name):
    """The error pages that cannot lean on base.html (it needs the database and the
    cache they are shown without) still have one main landmark, one heading and a
    viewport, as axe asks of every page."""
    from django.template import loader

    doc = page(loader.render_to_string(name, {"retry_after": 5}))
    assert len(doc.xpath("//main")) == 1
    assert len(texts(doc, "//main//h1")) == 1
    assert doc.xpath("//meta[@name='viewport']")
