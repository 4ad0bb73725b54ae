"""registry/backup.py and the backup / restore commands: a round trip into an empty
PostgreSQL database reproduces every row of every table, the registry's change date and
every export byte, with the append-only triggers in place; every model of every app is
backed up or declared derived."""

import contextlib
import datetime as dt
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from registry.backup import DERIVED, MODELS
from registry.namespaces.export_build import build_current_exports
from registry.namespaces.export_cache import EXPORTS
from registry.review import actions
from registry.review.models import InboundMessage
from tests.factories import complete_values, make_registration
from tests.review.helpers import registration_in


def _server_url(name: str) -> str:
    db = settings.DATABASES["default"]
    auth = quote(db.get("USER") or "postgres")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"])
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"


def _manage(*args, database_url):
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE",)}
    env.update(DATABASE_URL=database_url, REGISTRY_ENV="development")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR,
                          env=env, capture_output=True, text=True, timeout=300)


def _tables():
    from django.apps import apps

    # Groups are created by the migrations of each database: compared by name.
    return [apps.get_model(label)._meta.db_table for label in MODELS if label != "auth.group"]


def _rows(cursor, table):
    """Every column of every row, as PostgreSQL itself writes it (driver-independent)."""
    cursor.execute(f'SELECT row_to_json(t)::text FROM "{table}" t ORDER BY 1')  # noqa: S608
    return [row[0] for row in cursor.fetchall()]


def _generation_change(cursor):
    cursor.execute("SELECT real_change_at FROM namespaces_registrygeneration WHERE id = 1")
    return cursor.fetchone()[0]


def _exports(cursor):
    """Each export of the newest stored generation, as its bytes (the stored gzip inflated)."""
    cursor.execute("SELECT c.name, c.data FROM namespaces_exportchunk c "
                   "WHERE c.generation_id = (SELECT max(id) FROM namespaces_exportgeneration) "
                   "ORDER BY c.name, c.seq")
    files: dict[str, bytes] = {}
    for name, data in cursor.fetchall():
        files[name] = files.get(name, b"") + bytes(data)
    return {name: gzip.decompress(files[f"{name}.gz"]) for name in EXPORTS}


def _triggers(cursor):
    cursor.execute("SELECT tgrelid::regclass::text, tgname FROM pg_trigger "
                   "WHERE tgname LIKE '%append_only' ORDER BY 1")
    return cursor.fetchall()


@pytest.fixture
def history(registry, registrant, other_registrant, expert, staff, standards_body):
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    for n, state in enumerate(["draft", "in_review", "changes_requested", "registered",
                               "rejected", "withdrawn"]):
        registration_in(state, path="community", people=people, nid=f"backup{n}")
    talk = make_registration(other_registrant, nid="backuptalk")
    actions.registration_comment(registration=talk, actor=expert, audience="experts",
                                 body="Internal: fine.\nSecond line, ünïcødé.")
    actions.registration_comment(registration=talk, actor=other_registrant, audience="public",
                                 body="Thanks.")
    # A reply on the review list: a mail comment, and the message kept byte for byte.
    actions.inbound_mail_receive(raw=(
        b"From: Ann Lister <ann@example.net>\r\nTo: urn@ietf.org\r\n"
        b"Subject: Re: [URN #%d] Registration request\r\n"
        b"Message-ID: <backup.1@example.net>\r\nList-Id: <urn.ietf.org>\r\n\r\n"
        b"Looks fine.\r\n\r\n> quoted \xe9\r\n") % talk.pk)
    registration_in("registered", path="fast_track", nid="backupfast",
                    people={**people, "registrant": standards_body})
    # A message the registry could not attribute, placed by IANA staff by hand...
    actions.inbound_mail_receive(raw=(
        b"From: Mallory <mallory@example.com>\r\nTo: urn-registry@iana.example\r\n"
        b"Subject: Re: [URN #%d] Registration request\r\n"
        b"Message-ID: <backup.2@example.com>\r\n\r\nHello.\r\n") % talk.pk)
    held = InboundMessage.objects.get(message_id__contains="backup.2@example.com")
    actions.inbound_message_attach(message=held, registration=talk, audience="public",
                                   actor=staff)
    # ...a person's reply addresses revoked (the roles above wrote account history)...
    actions.reply_addresses_revoke(user=other_registrant, actor=staff)
    # ...an informal namespace (its contact a person of IANA's <people>), a change in the
    # admin, a permission of one account's own and an address being confirmed.
    from allauth.account.models import EmailAddress, EmailConfirmation
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    from registry.namespaces.actions import namespace_register
    from registry.namespaces.models import Namespace

    namespace_register(kind="informal", nid="", holder=registrant, actor=staff,
                       values=complete_values(registrant), date=dt.date(2026, 2, 3))
    LogEntry.objects.create(user=staff, action_flag=CHANGE, object_id="1",
                            content_type=ContentType.objects.get_for_model(Namespace),
                            object_repr="backup0", change_message="[]")
    staff.user_permissions.add(Permission.objects.get(codename="view_namespace"))
    EmailConfirmation.create(EmailAddress.objects.get(email=registrant.email))


@contextlib.contextmanager
def _migrated_database(suffix: str) -> Iterator[str]:
    """A migrated PostgreSQL database of this run's own (its URL), dropped afterwards."""
    target = f"{settings.DATABASES['default']['NAME']}_{suffix}"[:63]
    admin = psycopg.connect(_server_url("postgres"), autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{target}"')
    admin.execute(f'CREATE DATABASE "{target}"')
    try:
        url = _server_url(target)
        assert _manage("migrate", "--noinput", database_url=url).returncode == 0
        yield url
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        admin.close()


@pytest.mark.postgres
def test_a_round_trip_into_an_empty_database_reproduces_every_row(history, tmp_path):
    path = tmp_path / "registry.json"
    call_command("backup", str(path), "--with-passwords", verbosity=0)
    build_current_exports()
    with _migrated_database("restore") as url:
        restored = _manage("restore", str(path), database_url=url)
        assert restored.returncode == 0, restored.stderr
        built = _manage("build_exports", database_url=url)
        assert built.returncode == 0, built.stderr
        with psycopg.connect(url) as other, connection.cursor() as here:
            there = other.cursor()
            for table in _tables():
                assert _rows(here, table), f"the history wrote no row in {table}"
                assert _rows(there, table) == _rows(here, table), table
            assert _generation_change(here) is not None
            assert _generation_change(there) == _generation_change(here)
            mine, theirs = _exports(here), _exports(there)
            assert b"<updated>" in mine["registry.xml"]
            for name in EXPORTS:
                assert theirs[name] == mine[name], name
            assert _triggers(there) == _triggers(here) and len(_triggers(here)) >= 4
            names = "SELECT name FROM auth_group ORDER BY id"
            assert _rows(there, "auth_group") == _rows(here, "auth_group") or (
                there.execute(names).fetchall() == here.execute(names).fetchall())
            # The history is still append-only after the restore...
            with pytest.raises(psycopg.errors.IntegrityConstraintViolation):
                there.execute("UPDATE namespaces_templateversion SET purpose = 'rewritten'")
            other.rollback()
            # ...and the next row gets a fresh id.
            there.execute("SELECT max(id) FROM review_comment")
            highest = there.fetchone()[0]
            there.execute("SELECT nextval(pg_get_serial_sequence('review_comment', 'id'))")
            assert there.fetchone()[0] > highest
        # A second restore is refused: the database is no longer empty.
        again = _manage("restore", str(path), database_url=url)
        assert again.returncode != 0 and "not empty" in again.stderr


@pytest.mark.postgres
def test_a_backup_from_before_version_3_points_each_request_to_its_last_round(history,
                                                                             tmp_path):
    path = tmp_path / "registry.json"
    call_command("backup", str(path), verbosity=0)
    document = json.loads(path.read_text())
    document["version"] = 2
    for row in document["objects"]:
        if row["model"] == "review.registrationrequest":
            del row["fields"]["submitted_round"]
    path.write_text(json.dumps(document))
    with _migrated_database("restore2") as url:
        restored = _manage("restore", str(path), database_url=url)
        assert restored.returncode == 0, restored.stderr
        pointers = ("SELECT id, submitted_round_id FROM review_registrationrequest "
                    "ORDER BY id")
        with psycopg.connect(url) as other, connection.cursor() as here:
            here.execute(pointers)
            mine = here.fetchall()
            assert any(round_id for _, round_id in mine)
            assert other.execute(pointers).fetchall() == mine


def test_the_last_rounds_of_an_old_backup_are_read_past_malformed_rows():
    from registry.backup import _last_rounds

    rows = [{"model": "review.round", "pk": 7, "fields": {"registration": 1, "number": 1}},
            {"model": "review.round", "pk": 9, "fields": {"registration": 1, "number": 2}},
            {"model": "review.round", "pk": 8, "fields": {"registration": [1], "number": 3}},
            {"model": "review.round", "pk": 6, "fields": "not a mapping"},
            {"model": "review.round", "pk": 5, "fields": {"registration": 2, "number": "2"}},
            {"model": "review.comment", "pk": 4, "fields": {"registration": 2, "number": 1}}]
    assert _last_rounds(rows) == {1: 9}


def test_every_model_is_backed_up_or_declared_derived():
    """Read from the apps, so a new model fails here until it is one or the other."""
    from django.apps import apps

    every = {model._meta.label_lower for model in apps.get_models(include_auto_created=True)}
    assert set(MODELS).isdisjoint(DERIVED)
    assert every - set(MODELS) - set(DERIVED) == set(), "neither backed up nor derived"
    assert (set(MODELS) | set(DERIVED)) - every == set(), "no such model"
    assert all(reason.strip() for reason in DERIVED.values())


def test_passwords_are_left_out_unless_asked_for(history, tmp_path):
    plain, secret = tmp_path / "plain.json", tmp_path / "secret.json"
    call_command("backup", str(plain), verbosity=0)
    call_command("backup", str(secret), "--with-passwords", verbosity=0)
    users = [o for o in json.loads(plain.read_text())["objects"] if o["model"] == "accounts.user"]
    assert users and all("password" not in u["fields"] for u in users)
    assert "md5$" in secret.read_text() or "pbkdf2" in secret.read_text()


def test_restore_refuses_a_database_that_is_not_empty(history, tmp_path):
    path = tmp_path / "registry.json"
    call_command("backup", str(path), verbosity=0)
    with pytest.raises(CommandError, match="not empty"):
        call_command("restore", str(path))


@pytest.mark.parametrize("content", ["", "[", "[]", '{"format": "other"}',
                                     '{"format": "urn-registry-backup", "version": 99}'])
def test_restore_refuses_a_file_that_is_not_a_backup(db, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CommandError, match="backup"):
        call_command("restore", str(path))


def test_restore_without_passwords_makes_accounts_that_need_a_reset(db, tmp_path, registrant):
    from registry.accounts.models import User

    path = tmp_path / "plain.json"
    call_command("backup", str(path), verbosity=0)
    User.objects.all().delete()
    from allauth.account.models import EmailAddress

    assert not EmailAddress.objects.exists()
    call_command("restore", str(path), verbosity=0)
    restored = User.objects.get(email=registrant.email)
    assert restored.pk == registrant.pk and not restored.has_usable_password()
