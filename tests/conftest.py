"""Shared fixtures: the named personas, and the PostgreSQL / browser markers."""

from __future__ import annotations

import os
import secrets

import pytest
from django.conf import settings

from tests.factories import make_user

# One id per test run: its database and its Celery queue carry it, so two runs on one
# machine (two checkouts, CI beside a developer) never share or drop each other's data.
RUN_ID = os.environ.get("TEST_RUN_ID") or f"{os.getpid()}_{secrets.token_hex(3)}"



def pytest_configure(config):
    # In CI, property tests draw the same examples every run: a red CI run is then a
    # real regression, not a lucky draw. Locally they keep exploring.
    import os

    from hypothesis import settings as hypothesis_settings

    hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    if os.environ.get("CI", "").lower() == "true":
        hypothesis_settings.load_profile("ci")
    # Personas are made in every test; the production hasher is deliberately slow.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_report_header(config):
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    return f"registry tests on {engine} ({settings.DATABASES['default'].get('NAME')})"


def pytest_collection_modifyitems(config, items):
    if settings.IS_POSTGRES:
        return
    skip = pytest.mark.skip(
        reason="needs PostgreSQL (row locks, concurrency, full-text search); this run uses "
        "SQLite. Run `python3 dev.py test` with PostgreSQL on 127.0.0.1:5432 or set DATABASE_URL."
    )
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def django_db_modify_db_settings():
    """Give every test database a name of this run's own (pytest-django then creates
    and drops ``test_<name>_<run id>``); SQLite's test database is in memory already."""
    for db_settings in settings.DATABASES.values():
        if db_settings["ENGINE"].endswith("sqlite3"):
            continue
        base = db_settings.get("TEST", {}).get("NAME") or f"test_{db_settings['NAME']}"
        db_settings.setdefault("TEST", {})["NAME"] = f"{base}_{RUN_ID}"[:63]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's, and before it drops this run's test database: end the sessions
    that other threads (the live server's, a Celery worker's) left open on it, which
    would otherwise keep PostgreSQL from dropping it (and leave one database per run)."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture(autouse=True)
def _fresh_public_cache():
    """Each test starts with an empty page cache: a test's rolled-back writes leave
    the registry generation where it was, so an entry from an earlier test could
    otherwise match. The same holds for the process's confusion index, which is
    keyed by that generation."""
    from django.core.cache import caches

    from registry.namespaces import advice
    from registry.namespaces.public_cache import free_text_store, local_store

    for alias in ("default", "public"):
        if settings.CACHES[alias]["BACKEND"].endswith("LocMemCache"):
            caches[alias].clear()  # never a shared Redis: other runs use it
    local_store.clear()
    free_text_store.clear()
    advice.forget_index()
    yield


@pytest.fixture(autouse=True)
def _generation_moves_at_once(request):
    """On PostgreSQL the registry generation moves at commit (a deferred trigger,
    actions.registry_changed); a test inside a transaction never commits, so there
    the trigger fires at once, as every test of the generation expects."""
    marker = request.node.get_closest_marker("django_db")
    wants_db = "db" in request.fixturenames or (
        marker is not None and not marker.kwargs.get("transaction", False))
    if not wants_db or "transactional_db" in request.fixturenames:
        return
    from django.db import connection

    request.getfixturevalue("db")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS namespaces_generation_bump IMMEDIATE")


@pytest.fixture(autouse=True)
def _fresh_exports(settings, tmp_path):
    """Each test's export files in its own directory, for the same reason: a rolled-back
    test's generation number comes round again with other rows."""
    settings.EXPORT_ROOT = tmp_path / "exports"


@pytest.fixture(autouse=True)
def _rate_limits(request, settings):
    """Rate limits count per client in the cache across tests; only the tests marked
    ``rate_limits`` (which clear the cache) run with them on."""
    settings.RATELIMIT_ENABLE = request.node.get_closest_marker("rate_limits") is not None


@pytest.fixture
def registrant(db):
    return make_user("registrant@example.org", organisation="Example Archive Foundation")


@pytest.fixture
def other_registrant(db):
    return make_user("other@example.org", organisation="Other Registrant Ltd")


@pytest.fixture
def expert(db):
    return make_user("expert@example.org", roles=["designated expert"])


@pytest.fixture
def second_expert(db):
    return make_user("expert2@example.org", roles=["designated expert"])


@pytest.fixture
def staff(db):
    return make_user("staff@example.org", roles=["IANA staff"])


@pytest.fixture
def standards_body(db):
    return make_user("sdo@example.org", organisation="Example SDO", recognized=True)


@pytest.fixture
def registry(db):
    """The real IANA registry, imported (81 formal, urn-1..urn-7)."""
    from django.core.management import call_command

    call_command("import_registry", str(settings.BASE_DIR / "fixtures" /
                                        "iana-urn-namespaces.json"), verbosity=0)
