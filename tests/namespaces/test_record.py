"""The registry row IANA staff keep, and deprecation with a pointer: actions with events."""

import datetime as dt
import inspect

import pytest

from registry.namespaces import actions, xrefs
from registry.namespaces.actions import (
    RecordInvalid,
    RegistryRefused,
    namespace_register,
    namespace_set_status,
    namespace_update_record,
)
from registry.namespaces.iana import Person as IanaPerson
from registry.namespaces.iana import Record
from registry.namespaces.models import (
    Namespace,
    NamespaceEvent,
    Person,
    RegistryEvent,
    RegistryGeneration,
    TemplateVersion,
)
from registry.review.models import OutboundMessage
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


def _written() -> dict[str, object]:
    """Every row a registry write leaves: its events, the registry's, and the outbox."""
    return {model.__name__: model.objects.count()
            for model in (Namespace, NamespaceEvent, TemplateVersion, Person, RegistryEvent,
                          OutboundMessage)} | {
        "generation": RegistryGeneration.objects.values_list("number", flat=True).first()}


RECORD_MOVES = {
    "holder change": lambda ns, actor, who: namespace_update_record(
        namespace=ns, changes={"holder": who}, reason="Handed over.", actor=actor),
    "record change": lambda ns, actor, who: namespace_update_record(
        namespace=ns, changes={"registry_note": "See errata."}, reason="Ticket.", actor=actor),
    "deprecation": lambda ns, actor, who: namespace_set_status(
        namespace=ns, status="deprecated", comment="Use nextns.", replaced_by="nextns",
        actor=actor),
    "reinstatement": lambda ns, actor, who: namespace_set_status(
        namespace=ns, status="active", comment="Back in use.", actor=actor),
}


@pytest.mark.parametrize("move", RECORD_MOVES)
@pytest.mark.parametrize("persona", ["registrant", "expert", "standards_body"])
def test_only_staff_change_a_namespace_record(request, namespace, successor, staff, persona,
                                              move):
    """The actions ask who is acting themselves, not only the staff pages and the admin
    in front of them: anyone else is refused and nothing is written."""
    if move == "reinstatement":
        namespace_set_status(namespace=namespace, status="deprecated", comment="Gone.",
                             actor=staff)
    person = request.getfixturevalue(persona)
    before = _written()
    with pytest.raises(RegistryRefused, match="Only IANA staff"):
        RECORD_MOVES[move](namespace, person, person)
    assert _written() == before
    namespace.refresh_from_db()
    assert (namespace.status, namespace.holder, namespace.registry_note) == (
        "deprecated" if move == "reinstatement" else "active", None, "")
    RECORD_MOVES[move](namespace, staff, person)  # IANA staff may
    assert NamespaceEvent.objects.count() == before["NamespaceEvent"] + 1


def test_every_registry_write_refuses_a_person_who_is_not_staff(namespace, registrant):
    """Each write function of the actions that names its actor (found, not listed, so a
    new one is covered): a registrant acting is refused before anything is written, and
    a command on the server (actor None) is not."""
    person = IanaPerson("Pat_Example", "Pat Example", "", ["mailto:pat&example.org"],
                        dt.date(2026, 1, 1))
    record = Record(kind="formal", name="freshns", date=dt.date(2026, 1, 1))
    calls = {
        "namespace_register": lambda actor: namespace_register(
            kind="formal", nid="newns", values=complete_values(), date=dt.date(2026, 11, 3),
            actor=actor),
        "version_publish": lambda actor: actions.version_publish(
            namespace=namespace, values=complete_values(revision_information="Fixed."),
            date=dt.date(2026, 11, 3), actor=actor),
        "namespace_set_profile": lambda actor: actions.namespace_set_profile(
            namespace=namespace, reason="A correction.", actor=actor, profile={
                "syntax": {"abnf": 'nss = 1*DIGIT "-" 1*DIGIT\n', "cite": "Syntax field"},
                "examples": ["urn:recordns:12-34"], "counter_examples": ["urn:recordns:12"]}),
        "namespace_set_status": lambda actor: namespace_set_status(
            namespace=namespace, status="deprecated", comment="Gone.", actor=actor),
        "namespace_update_record": lambda actor: namespace_update_record(
            namespace=namespace, changes={"registry_note": "x"}, reason="Why.", actor=actor),
        "namespace_import": lambda actor: actions.namespace_import(record=record, actor=actor),
        "namespace_note_dropped": lambda actor: actions.namespace_note_dropped(
            namespace=namespace, actor=actor),
        "person_sync": lambda actor: actions.person_sync(person=person, actor=actor),
        "registry_metadata_set": lambda actor: actions.registry_metadata_set(
            key="registry", updated=dt.date(2026, 1, 2), actor=actor),
        "namespaces_bulk_register": lambda actor: actions.namespaces_bulk_register(
            registrations=[{"nid": "bulkns", "date": dt.date(2026, 1, 1),
                            "versions": [(dt.date(2026, 1, 1), complete_values())]}],
            actor=actor),
    }
    writers = {name for name, function in inspect.getmembers(actions, inspect.isfunction)
               if function.__module__ == actions.__name__ and not name.startswith("_")
               and "actor" in inspect.signature(function).parameters}
    assert set(calls) == writers
    for name, call in calls.items():
        before = _written()
        with pytest.raises(RegistryRefused):
            call(registrant)
        assert _written() == before, name
        call(None)
        assert _written() != before, name
