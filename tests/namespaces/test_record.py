"""The registry row IANA staff keep, and deprecation with a pointer: actions with events."""

import datetime as dt

import pytest

from registry.namespaces import xrefs
from registry.namespaces.actions import (
    RecordInvalid,
    namespace_register,
    namespace_set_status,
    namespace_update_record,
)
from registry.namespaces.models import NamespaceEvent
from tests.factories import complete_values


@pytest.fixture
def namespace(staff):
    return namespace_register(kind="formal", nid="recordns", values=complete_values(),
                              date=dt.date(2026, 11, 1), actor=staff)


@pytest.fixture
def successor(staff):
    return namespace_register(kind="formal", nid="nextns", values=complete_values(),
                              date=dt.date(2026, 11, 2), actor=staff)


def test_record_change_writes_one_event_with_before_after_and_reason(namespace, staff,
                                                                      registrant):
    namespace_update_record(namespace=namespace, actor=staff, reason="Ticket 4711.", changes={
        "holder": registrant, "references": ["RFC8141"], "registry_note": "See errata.",
        "registered_on": dt.date(2026, 10, 30), "template_url": "https://iana.example/t",
    })
    namespace.refresh_from_db()
    assert namespace.holder == registrant
    assert [xrefs.label(r) for r in namespace.references] == ["RFC8141"]
    event = NamespaceEvent.objects.get(namespace=namespace, kind="holder_changed")
    assert event.actor == staff and event.comment == "Ticket 4711."
    assert event.changes["holder"] == [None, registrant.email]
    assert event.changes["registered_on"] == ["2026-11-01", "2026-10-30"]
    assert set(event.changes) == {"holder", "references", "registry_note", "registered_on",
                                  "template_url"}


def test_nothing_changed_writes_nothing(namespace, staff):
    namespace_update_record(namespace=namespace, actor=staff, reason="",
                            changes={"registry_note": ""})
    assert not NamespaceEvent.objects.filter(kind="record_changed").exists()


@pytest.mark.parametrize(("changes", "field"), [
    ({"registry_note": "x"}, "reason"),
    ({"template_url": "javascript:alert(1)"}, "template_url"),
    ({"references": ["ok", ""]}, "references"),
])
def test_bad_record_values_are_refused_at_their_field(namespace, staff, changes, field):
    reason = "" if field == "reason" else "Because."
    with pytest.raises(RecordInvalid) as refused:
        namespace_update_record(namespace=namespace, actor=staff, reason=reason,
                                changes=changes)
    assert refused.value.field == field
    assert not NamespaceEvent.objects.filter(kind="record_changed").exists()


def test_deprecation_points_to_a_registered_replacement(namespace, successor, staff):
    namespace_set_status(namespace=namespace, status="deprecated", comment="Superseded.",
                         replaced_by="NEXTNS", actor=staff)
    namespace.refresh_from_db()
    assert namespace.replaced_by == successor
    event = NamespaceEvent.objects.get(namespace=namespace, kind="status_changed")
    assert event.changes == {"replaced_by": [None, "nextns"]}
    namespace_set_status(namespace=namespace, status="active", comment="Back.", actor=staff)
    namespace.refresh_from_db()
    assert namespace.replaced_by is None and namespace.status_note == ""


@pytest.mark.parametrize(("pointer", "message"), [
    ("nosuchns", "not a registered NID"),
    ("recordns", "cannot replace itself"),
])
def test_deprecation_pointer_must_be_another_registered_nid(namespace, staff, pointer,
                                                            message):
    with pytest.raises(RecordInvalid, match=message):
        namespace_set_status(namespace=namespace, status="deprecated", comment="Gone.",
                             replaced_by=pointer, actor=staff)
    namespace.refresh_from_db()
    assert namespace.status == "active"


def test_the_api_names_the_replacement(client, namespace, successor, staff,
                                       django_assert_max_num_queries):
    namespace_set_status(namespace=namespace, status="deprecated", comment="Superseded.",
                         replaced_by="nextns", actor=staff)
    assert client.get("/api/namespaces/recordns/").json()["replaced_by"] == "nextns"
    with django_assert_max_num_queries(6):
        rows = client.get("/api/namespaces/").json()["results"]
    assert {r["nid"]: r["replaced_by"] for r in rows} == {"nextns": None, "recordns": "nextns"}


def test_the_staff_history_shows_references_as_staff_write_them(client, namespace, staff):
    """The record's history wrote a references change as Python's repr of the stored
    dicts ("[{'type': 'rfc', ...}]"); it shows the labels staff typed."""
    from tests.html import find, page, text

    namespace_update_record(namespace=namespace, actor=staff, reason="Ticket 4712.",
                            changes={"references": ["RFC8141", "Example Body <https://b.example/>"]})
    client.force_login(staff)
    doc = page(client.get("/iana/namespaces/recordns/"))
    change = [text(line) for line in find(doc, "//span[code='references']")]
    assert change == ["references: Example Org → RFC8141; Example Body"], change
