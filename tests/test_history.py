"""registry.history: published versions and event logs cannot be changed or removed, and
an event-guarded state cannot change without its event."""

import datetime as dt

import pytest
from django.db import DatabaseError, connection, transaction

from registry.history import AppendOnlyError, UnrecordedChange
from registry.namespaces.actions import namespace_register, namespace_set_status
from registry.namespaces.models import Namespace, NamespaceEvent, TemplateVersion
from tests.factories import complete_values


@pytest.fixture
def version(staff):
    namespace = namespace_register(kind="formal", nid="immutable", values=complete_values(),
                                   date=dt.date(2026, 11, 1), actor=staff)
    return namespace.versions.get()


def test_a_published_version_cannot_be_saved_again(version):
    version.purpose = "rewritten history"
    with pytest.raises(AppendOnlyError):
        version.save()
    assert TemplateVersion.objects.get(pk=version.pk).purpose != "rewritten history"


def test_a_published_version_cannot_be_deleted(version):
    with pytest.raises(AppendOnlyError):
        version.delete()
    with pytest.raises(AppendOnlyError):
        TemplateVersion.objects.filter(pk=version.pk).delete()
    assert TemplateVersion.objects.filter(pk=version.pk).exists()


def test_a_published_version_cannot_be_updated_in_bulk(version):
    with pytest.raises(AppendOnlyError):
        TemplateVersion.objects.filter(pk=version.pk).update(purpose="x")
    version.purpose = "x"
    with pytest.raises(AppendOnlyError):
        TemplateVersion.objects.bulk_update([version], ["purpose"])
    assert TemplateVersion.objects.get(pk=version.pk).purpose == complete_values()["purpose"]


def test_the_namespace_itself_cannot_be_deleted_while_it_has_versions(version):
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        version.namespace.delete()


def test_events_are_append_only(version):
    event = NamespaceEvent.objects.get(namespace=version.namespace)
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        NamespaceEvent.objects.all().delete()


def test_a_status_change_without_its_event_is_refused(version):
    namespace = version.namespace
    namespace.status = Namespace.Status.DEPRECATED
    with pytest.raises(UnrecordedChange):
        namespace.save()
    with pytest.raises(UnrecordedChange):
        Namespace.objects.filter(pk=namespace.pk).update(status="deprecated")
    assert Namespace.objects.get(pk=namespace.pk).status == "active"


def test_loading_without_the_guarded_field_reads_no_more_rows(version, registry,
                                                              django_assert_num_queries):
    with django_assert_num_queries(1):
        nids = [namespace.nid for namespace in Namespace.objects.only("nid")]
    assert len(nids) > 80


def test_a_guarded_field_set_on_a_row_loaded_without_it_is_still_refused(version):
    namespace = Namespace.objects.only("nid").get(pk=version.namespace_id)
    namespace.status = Namespace.Status.DEPRECATED
    with pytest.raises(UnrecordedChange):
        namespace.save()
    assert Namespace.objects.get(pk=namespace.pk).status == "active"


def test_other_fields_save_freely_and_a_refreshed_row_knows_its_stored_state(version, staff):
    stale = Namespace.objects.get(pk=version.namespace_id)
    namespace_set_status(namespace=stale, status="deprecated", comment="Use urn:newer.",
                         actor=staff)
    stale.refresh_from_db()
    stale.registry_note = "noted"
    stale.save()
    assert Namespace.objects.get(pk=stale.pk).registry_note == "noted"


def test_a_status_change_through_the_action_writes_its_event(version, staff):
    namespace_set_status(namespace=version.namespace, status="deprecated",
                         comment="Use urn:newer instead.", actor=staff)
    event = NamespaceEvent.objects.filter(kind="status_changed").get()
    assert (event.from_status, event.to_status, event.actor) == ("active", "deprecated", staff)
    assert Namespace.objects.get(pk=version.namespace_id).status_note == "Use urn:newer instead."


@pytest.mark.postgres
def test_postgres_refuses_raw_sql_updates_and_deletes(version):
    for sql in (
        "UPDATE namespaces_templateversion SET purpose = 'x' WHERE id = %s",
        "DELETE FROM namespaces_templateversion WHERE id = %s",
    ):
        with (pytest.raises(DatabaseError, match="immutable history"), transaction.atomic(),
              connection.cursor() as cursor):
            cursor.execute(sql, [version.pk])
    assert TemplateVersion.objects.get(pk=version.pk).purpose == complete_values()["purpose"]
