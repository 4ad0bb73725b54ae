"""The IANA registry import: counts, idempotence, no invented text, XML round trip."""

import json

import pytest
from django.conf import settings
from django.core.management import call_command

from registry.namespaces.exports import registry_xml
from registry.namespaces.models import InformalNumberCounter, Namespace, TemplateVersion

SOURCE = settings.BASE_DIR / "fixtures" / "iana-urn-namespaces.json"


def snapshot():
    return sorted(
        Namespace.objects.values_list("nid", "kind", "informal_number", "registered_on",
                                      "references", "template_url", "template_date",
                                      "registry_note", "organisation")
    )


def test_imports_81_formal_and_7_informal(registry):
    assert Namespace.objects.formal().count() == 81
    assert Namespace.objects.informal().count() == 7
    assert sorted(Namespace.objects.informal().values_list("informal_number", flat=True)) == \
        list(range(1, 8))
    assert InformalNumberCounter.objects.get().last_assigned == 7


def test_import_is_idempotent(registry):
    before = snapshot()
    call_command("import_registry", str(SOURCE), verbosity=0)
    assert snapshot() == before
    assert Namespace.objects.count() == 88


def test_import_keeps_unknown_fields_empty(registry):
    isbn = Namespace.objects.by_nid("ISBN").get()
    assert isbn.registered_on is None
    assert TemplateVersion.objects.count() == 0  # no template text is invented
    urn2 = Namespace.objects.by_nid("urn-2").get()
    assert str(urn2.template_date) == "2001-02-05"
    assert urn2.organisation == "Robert M. Akscyn (Knowledge Systems)"


def test_import_matches_the_source_file(registry):
    data = json.loads(SOURCE.read_text())
    for row in data["formal"]:
        ns = Namespace.objects.by_nid(row["name"]).get()
        assert ns.references == row["refs"]
        assert (ns.registered_on.isoformat() if ns.registered_on else "") == row["date"]


@pytest.mark.django_db(transaction=True)
def test_xml_export_round_trips_into_an_empty_database(tmp_path):
    call_command("import_registry", str(SOURCE), verbosity=0)
    before = snapshot()
    path = tmp_path / "registry.xml"
    path.write_bytes(registry_xml(Namespace.objects.all(), updated="2026-11-22"))
    call_command("flush", interactive=False, verbosity=0)  # an empty database
    assert Namespace.objects.count() == 0
    call_command("import_registry", str(path), verbosity=0)
    assert snapshot() == before
    assert InformalNumberCounter.objects.get().last_assigned == 7


def test_a_broken_file_is_a_clear_error(tmp_path, db):
    from django.core.management import CommandError

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CommandError, match="not a registry file"):
        call_command("import_registry", str(bad), verbosity=0)


def test_the_shipped_fixture_is_the_import_result(db):
    """fixtures/iana_registry.json is `import_registry` then `dumpdata` (see the README)."""
    call_command("loaddata", "iana_registry", verbosity=0)
    from_fixture = snapshot()
    counter = InformalNumberCounter.objects.get().last_assigned
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_registry", str(SOURCE), verbosity=0)
    assert snapshot() == from_fixture
    assert InformalNumberCounter.objects.get().last_assigned == counter == 7


def test_a_re_import_that_changes_a_row_records_what_changed(db):
    from registry.namespaces.actions import namespace_import
    from registry.namespaces.models import NamespaceEvent

    row = {"name": "reimportns", "refs": ["RFC8141"], "date": "2020-01-02", "notes": []}
    namespace_import(row=row, kind="formal")
    namespace_import(row=row, kind="formal")  # unchanged: nothing recorded
    assert not NamespaceEvent.objects.filter(kind="record_changed").exists()
    namespace_import(row={**row, "refs": ["RFC8141", "RFC Errata 3188"]}, kind="formal")
    event = NamespaceEvent.objects.get(kind="record_changed")
    assert event.changes == {"references": [["RFC8141"], ["RFC8141", "RFC Errata 3188"]]}
    assert event.comment == "Refreshed from IANA's registry."


@pytest.mark.parametrize("field, value", [("registrant", "Evil \u202egro.live"),
                                          ("name", "bad\x07nid"),
                                          ("refs", ["RFC\x0b1"]),
                                          ("notes", ["fine\n", "not \x1b fine"]),
                                          ("template_url", "https://example.org/\u2066x")])
def test_import_refuses_a_row_that_breaks_the_text_policy(db, tmp_path, field, value):
    import io

    data = json.loads(SOURCE.read_text())
    data["formal"][0][field] = value
    bad_nid = data["formal"][0]["name"]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    err, out = io.StringIO(), io.StringIO()
    call_command("import_registry", str(path), stdout=out, stderr=err)
    assert f"formal row 1 ({bad_nid!r}) not imported: {field}: Character" in err.getvalue()
    assert "1 refused" in out.getvalue()
    assert not Namespace.objects.filter(nid=bad_nid).exists()
    assert Namespace.objects.count() == 87  # every other row is in
