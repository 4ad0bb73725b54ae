"""export_build.py: one builder in the cluster (a PostgreSQL advisory lock), a publish
that lands during a build is built by the holder after it, and a serialization
failure or a deadlock (real ones, raised by PostgreSQL) is retried, within a bound."""

import logging

import psycopg
import pytest
from django.db import OperationalError, connection

from registry.namespaces import export_build
from registry.namespaces.models import ExportGeneration
from registry.namespaces.public_cache import current_generation
from tests.namespaces.test_export_files import register

pytestmark = pytest.mark.postgres


def other_session():
    """A second database session, as another machine's builder would have."""
    settings = connection.settings_dict
    return psycopg.connect(dbname=settings["NAME"], user=settings["USER"],
                           password=settings["PASSWORD"] or None,
                           host=settings["HOST"] or None, port=settings["PORT"] or None,
                           autocommit=True)


def test_one_builder_in_the_cluster(registry):
    with other_session() as elsewhere:
        elsewhere.execute("SELECT pg_advisory_lock(%s)", [export_build.LOCK_KEY])
        assert export_build.build_current_exports() is None  # the holder builds it
        assert not ExportGeneration.objects.exists()
        elsewhere.execute("SELECT pg_advisory_unlock(%s)", [export_build.LOCK_KEY])
    built = export_build.build_current_exports()
    assert built.key == current_generation().exports_key
    assert ExportGeneration.objects.get().key == built.key


def test_a_publish_during_a_build_is_built_by_the_holder_after_it(registry, staff,
                                                                  monkeypatch):
    """The publish's own task found the lock taken and returned: the holder looks again
    once it has released the lock, and builds the newer generation."""
    original = export_build.build_exports
    calls = []

    def build_then_publish():
        built = original()
        calls.append(built.key)
        if len(calls) == 1:
            register("during", staff)
        return built

    monkeypatch.setattr(export_build, "build_exports", build_then_publish)
    built = export_build.build_current_exports()
    assert len(calls) == 2 and built.key == current_generation().exports_key
    assert ExportGeneration.objects.order_by("number").last().key == built.key


def inject(sqlstate: str, times: int) -> None:
    """The next ``times`` stored generations fail with ``sqlstate``, raised by PostgreSQL
    itself (a sequence counts the attempts: it is not rolled back with them)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE SEQUENCE export_build_attempts")
        cursor.execute(f"""
            CREATE FUNCTION export_build_fails() RETURNS trigger AS $$
            BEGIN
                IF nextval('export_build_attempts') <= {int(times)} THEN
                    RAISE EXCEPTION 'injected' USING ERRCODE = '{sqlstate}';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        cursor.execute("CREATE TRIGGER export_build_fails BEFORE INSERT ON "
                       "namespaces_exportgeneration FOR EACH ROW "
                       "EXECUTE FUNCTION export_build_fails()")


@pytest.mark.parametrize(("sqlstate", "what"), [("40001", "a serialization failure"),
                                                ("40P01", "a deadlock")])
def test_a_serialization_failure_or_a_deadlock_is_retried(registry, monkeypatch, caplog,
                                                          sqlstate, what):
    monkeypatch.setattr(export_build, "RETRY_PAUSE_SECONDS", 0.01)
    inject(sqlstate, 2)
    with caplog.at_level(logging.WARNING, logger="registry.exports"):
        built = export_build.build_current_exports()
    assert built.key == current_generation().exports_key
    retries = [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()]
    assert len(retries) == 2 and all(what in message for message in retries)


def test_the_retries_are_bounded(registry, monkeypatch):
    monkeypatch.setattr(export_build, "RETRY_PAUSE_SECONDS", 0.01)
    inject("40001", export_build.BUILD_ATTEMPTS)
    with pytest.raises(OperationalError):
        export_build.build_current_exports()
    assert not ExportGeneration.objects.exists()
