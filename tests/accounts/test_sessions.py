"""Sessions in the database with their account's id (registry/accounts/sessions.py):
expired ones are cleared daily, and the migration that brought the table kept every
session of Django's own table, with its account."""

from datetime import timedelta
from importlib import import_module

import pytest
from django.apps import apps as current_apps
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.utils import timezone

from registry.accounts.models import AccountSession
from registry.accounts.sessions import SessionStore, account_id
from registry.accounts.tasks import clear_expired_sessions_task

copy_sessions = import_module("registry.accounts.migrations.0007_account_sessions").copy_sessions


def test_the_daily_task_clears_only_expired_sessions(client, registrant):
    client.force_login(registrant)
    live = client.session.session_key
    AccountSession.objects.create(session_key="x" * 32, session_data="",
                                  expire_date=timezone.now() - timedelta(seconds=1))
    clear_expired_sessions_task()
    assert list(AccountSession.objects.values_list("session_key", flat=True)) == [live]
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "registry.accounts.tasks.clear_expired_sessions_task" in schedule


def test_a_session_names_its_account_only_by_a_valid_id():
    assert account_id({SESSION_KEY: "42"}) == 42
    assert account_id({}) is None
    assert account_id({SESSION_KEY: "not a number"}) is None


def test_the_migration_copies_djangos_sessions_with_their_account(registrant, expert):
    store = SessionStore()
    later = timezone.now() + timedelta(days=1)
    rows = {
        "signedinsessionkey1": ({SESSION_KEY: str(registrant.pk)}, later),
        "anonymoussessionkey2": ({"_messages": "[]"}, later),
        "deletedaccountkey3": ({SESSION_KEY: "999999999"}, later),
        "expiredsessionkey4": ({SESSION_KEY: str(expert.pk)}, timezone.now()),
    }
    for key, (data, expiry) in rows.items():
        Session.objects.create(session_key=key, session_data=store.encode(data),
                               expire_date=expiry)
    copy_sessions(current_apps, None)
    assert not Session.objects.exists()  # moved: a copy left behind would outlive a log-out
    copied = dict(AccountSession.objects.values_list("session_key", "account_id"))
    assert copied == {"signedinsessionkey1": registrant.pk, "anonymoussessionkey2": None,
                      "deletedaccountkey3": None}
    assert SessionStore("signedinsessionkey1").load() == rows["signedinsessionkey1"][0]


@pytest.mark.parametrize("value", ["abcdefgh\x00ijkl", "\x00" * 12, "A" * 4000, "short",
                                   "UPPERCASEKEYOF32CHARACTERS123456", "key;with,signs=1"])
def test_a_cookie_that_is_no_session_key_is_no_session(client, registrant, value):
    client.force_login(registrant)
    client.cookies[settings.SESSION_COOKIE_NAME] = value
    for path in ("/", "/requests/review/"):
        response = client.get(path)
        assert response.status_code == 200
        assert not response.wsgi_request.user.is_authenticated
    assert client.get("/requests/").status_code == 302  # to log in


def test_a_session_key_is_what_django_makes(db):
    store = SessionStore()
    store.create()
    assert SessionStore(store.session_key).session_key == store.session_key
    assert SessionStore("abcdefgh\x00ijkl").session_key is None
