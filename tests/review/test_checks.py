"""The demo guard (registry/review/checks.py): an account of seed_demo that still accepts
the published demo password fails `check --deploy`, and production will not serve."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.http import HttpResponse
from django.test import RequestFactory

from registry.review import checks
from registry.review.checks import DemoGuardMiddleware, demo_accounts_check
from registry.review.management.commands.seed_demo import DEMO_EMAILS, DEMO_PASSWORD
from tests.factories import make_user
from tests.test_settings import PRODUCTION


@pytest.fixture
def demo_accounts(db):
    """seed_demo's people, with the demo's password (its own list of them)."""
    accounts = []
    for email in DEMO_EMAILS:
        user = make_user(email)
        user.set_password(DEMO_PASSWORD)
        user.save()
        accounts.append(user)
    return accounts


def test_the_check_names_the_accounts_that_accept_the_demo_password(demo_accounts):
    [error] = demo_accounts_check()
    assert error.id == "review.E001"
    assert "accept the published demo password" in error.msg
    assert all(email in error.msg for email in DEMO_EMAILS)


def test_an_account_with_a_new_password_is_not_the_demo_s(demo_accounts):
    """The issue's finding: the check looked at addresses only, while its message spoke
    of passwords. An operator who changed the passwords is no longer stopped."""
    first, *others = demo_accounts
    first.set_password("a password nobody published 8141")
    first.save()
    [error] = demo_accounts_check()
    assert first.email not in error.msg and others[0].email in error.msg
    for user in others:
        user.set_password("a password nobody published 8141")
        user.save()
    assert demo_accounts_check() == []


def test_a_deactivated_demo_account_does_not_count(demo_accounts):
    for user in demo_accounts:
        user.is_active = False
        user.save()
    assert demo_accounts_check() == []


def ok(request):
    return HttpResponse("served")


def test_production_does_not_start_while_the_guard_fires(demo_accounts):
    with pytest.raises(ImproperlyConfigured, match=r"demo password.*review\.E001"):
        DemoGuardMiddleware(ok)


def test_production_starts_when_no_demo_account_accepts_its_password(db):
    guard = DemoGuardMiddleware(ok)
    assert guard(RequestFactory().get("/")).content == b"served"


def test_a_database_away_at_start_up_is_asked_again_and_then_refused(demo_accounts,
                                                                     monkeypatch):
    real = checks.demo_accounts_in_use

    def away():
        raise DatabaseError("connection refused")

    monkeypatch.setattr(checks, "demo_accounts_in_use", away)
    guard = DemoGuardMiddleware(ok)  # starts: it cannot know yet
    monkeypatch.setattr(checks, "demo_accounts_in_use", real)
    response = guard(RequestFactory().get("/"))
    assert response.status_code == 503 and b"demo password" in response.content
    assert guard(RequestFactory().get("/healthz")).status_code == 503


def test_the_guard_is_in_production_s_middleware():
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY")}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import "
         "settings; print('\\n'.join(settings.MIDDLEWARE))"],
        cwd=settings.BASE_DIR, capture_output=True, text=True,
        env={**clean, **PRODUCTION, "DJANGO_SETTINGS_MODULE": "registry.settings"})
    assert "registry.review.checks.DemoGuardMiddleware" in result.stdout.split(), result.stderr
    assert "registry.review.checks.DemoGuardMiddleware" not in settings.MIDDLEWARE
