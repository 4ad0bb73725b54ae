"""The IANA registry import: counts, idempotence, no invented text, XML round trip."""

import json

import pytest
from django.conf import settings
from django.core.management import call_command

from registry.namespaces import xrefs
from registry.namespaces.export_files import export_bytes
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
        assert [xrefs.label(x) for x in ns.references] == [
            xrefs.label(xrefs.from_label(r)) for r in row["refs"]]
        assert (ns.registered_on.isoformat() if ns.registered_on else "") == row["date"]


@pytest.mark.django_db(transaction=True)
def test_xml_export_round_trips_into_an_empty_database(tmp_path):
    call_command("import_registry", str(SOURCE), verbosity=0)
    before = snapshot()
    path = tmp_path / "registry.xml"
    path.write_bytes(export_bytes("registry.xml"))
    call_command("flush", interactive=False, verbosity=0)  # an empty database
    assert Namespace.objects.count() == 0
    call_command("import_registry", str(path), verbosity=0)
    # What IANA's XML carries survives; the JSON layout's notes are not in it.
    assert [row[:6] for row in snapshot()] == [row[:6] for row in before]
    assert InformalNumberCounter.objects.get().last_assigned == 7


def test_a_broken_file_is_a_clear_error(tmp_path, db):
    from django.core.management import CommandError

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CommandError, match=r"Nothing imported\. .*bad\.json: not JSON"):
        call_command("import_registry", str(bad), verbosity=0)


def test_the_shipped_fixture_is_the_import_result(db):
    """fixtures/iana_registry.json (``loaddata iana_registry``) is what `import_registry
    fixtures/iana-urn-namespaces.json` stores in an empty database, as written by `dumpdata
    namespaces.namespace namespaces.informalnumbercounter namespaces.registrymetadata`."""
    call_command("loaddata", "iana_registry", verbosity=0)
    from_fixture = snapshot()
    counter = InformalNumberCounter.objects.get().last_assigned
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_registry", str(SOURCE), verbosity=0)
    assert snapshot() == from_fixture
    assert InformalNumberCounter.objects.get().last_assigned == counter == 7


@pytest.mark.parametrize("field, value", [("registrant", "Evil \u202egro.live"),
                                          ("name", "bad\x07nid"),
                                          ("refs", ["RFC\x0b1"]),
                                          ("notes", ["fine\n", "not \x1b fine"]),
                                          ("template_url", "https://example.org/\u2066x")])
def test_import_refuses_a_file_with_a_row_that_breaks_the_text_policy(db, tmp_path, field,
                                                                       value):
    from django.core.management import CommandError

    data = json.loads(SOURCE.read_text())
    data["formal"][0][field] = value
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError) as error:
        call_command("import_registry", str(path), verbosity=0)
    assert "Nothing imported" in str(error.value)
    assert "hostile.json: formal record 1 (" in str(error.value)
    assert f"{field}: Character" in str(error.value)
    assert Namespace.objects.count() == 0  # all or nothing


@pytest.mark.parametrize("needle, replacement", [
    ("<name>Juha Hakala</name>", "<name>Juha\u202eHakala</name>"),
    ("International ISBN Agency", "International \u202aISBN Agency"),
    ('data="https://isni.org/"', 'data="https://isni.org/\u2066"'),
])
def test_import_refuses_ianas_xml_with_text_the_policy_refuses(db, tmp_path, needle,
                                                                replacement):
    from django.core.management import CommandError

    source = settings.BASE_DIR / "fixtures" / "iana" / "urn-namespaces.xml"
    path = tmp_path / "hostile.xml"
    path.write_text(source.read_text().replace(needle, replacement, 1))
    with pytest.raises(CommandError, match="Nothing imported.*Character"):
        call_command("import_registry", str(path), verbosity=0)
    assert Namespace.objects.count() == 0
