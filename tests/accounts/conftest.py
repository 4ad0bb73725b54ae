"""allauth's mail goes through the outbox (registry/accounts/mail.py), queued when the
transaction commits: in a request that is at once. A test's transaction never commits,
so here it is queued at once too (Celery runs eagerly in tests: it is sent)."""

import pytest


@pytest.fixture(autouse=True)
def _account_mail_queued_at_once(monkeypatch):
    monkeypatch.setattr("registry.accounts.mail.after_commit", lambda callback: callback())
