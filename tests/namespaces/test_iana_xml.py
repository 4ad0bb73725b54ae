"""/registry.xml against IANA's RELAX NG schema and IANA's published file, and
import_registry reading IANA's XML (the shared copy, and a newer one)."""

import datetime as dt

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from lxml import etree

from registry.namespaces.actions import namespace_register, namespace_set_status, version_publish
from registry.namespaces.models import (
    InformalNumberCounter,
    Namespace,
    NamespaceEvent,
    Person,
    RegistryMetadata,
)
from tests.factories import complete_values
from tests.namespaces.iana_xml import NS, summary

IANA = settings.BASE_DIR / "fixtures" / "iana"
IANA_XML = IANA / "urn-namespaces.xml"


@pytest.fixture(scope="module")
def schema():
    return etree.RelaxNG(etree.parse(str(IANA / "urn-namespaces.rng")))


@pytest.fixture
def iana_registry(db):
    call_command("import_registry", str(IANA_XML), verbosity=0)


def by_name(records):
    return sorted(records, key=lambda r: r["name"])


def assert_same_registry(ours: bytes, ianas: bytes):
    """Record for record (IANA orders a few rows by hand, so compare by name)."""
    a, b = summary(ours), summary(ianas)
    for key in ("title", "category", "updated", "people"):
        assert a[key] == b[key], key
    for sub in ("urn-namespaces-1", "urn-namespaces-2"):
        for key in ("title", "xrefs", "rule", "expert"):
            assert a[sub][key] == b[sub][key], (sub, key)
        assert by_name(a[sub]["records"]) == by_name(b[sub]["records"])


def newer_iana_file() -> bytes:
    """IANA's file as a later edition may look: a new record without a date, a new
    person, a reference type the shared copy does not use, new experts, a new date."""
    text = IANA_XML.read_text(encoding="utf-8")
    text = text.replace("<updated>2026-03-18</updated>", "<updated>2026-05-28</updated>", 1)
    text = text.replace("Stephanie Palek, Lars Svensson, Jyrki Ilva",
                        "Stephanie Nitsche, Lars Svensson")
    text = text.replace("""    <record>
      <name>xmlorg</name>""", """    <record date="2026-05-04">
      <name>trivore</name>
      <template><xref type="uri" data="https://www.iana.org/assignments/urn-formal/trivore">trivore-template</xref></template>
      <xref type="uri" data="https://www.trivore.com/">Trivore Corp.</xref>
    </record>
    <record>
      <name>newdraft</name>
      <xref type="draft" data="draft-example-urn-newdraft-02"/>
      <xref type="rfc" data="rfc8141" section="6.3"/>
      <xref type="person" data="Ada_Example"/>
    </record>
    <record>
      <name>xmlorg</name>""")
    text = text.replace("""  <people>
""", """  <people>
    <person id="Ada_Example">
      <name>Ada Example</name>
      <org>Example Archive</org>
      <uri>mailto:ada&amp;archive.example</uri>
      <updated>2026-05-28</updated>
    </person>
""")
    return text.encode()


def test_ianas_own_file_validates_against_its_schema(schema):
    assert schema.validate(etree.parse(str(IANA_XML))), schema.error_log


def test_after_importing_ianas_xml_the_export_is_ianas_record_for_record(
        client, iana_registry, schema):
    ours = client.get("/registry.xml").getvalue()
    assert schema.validate(etree.fromstring(ours)), schema.error_log
    assert_same_registry(ours, IANA_XML.read_bytes())


def test_import_of_ianas_xml_counts_and_numbers(iana_registry):
    assert Namespace.objects.formal().count() == 94
    assert list(Namespace.objects.informal().order_by("informal_number")
                .values_list("informal_number", flat=True)) == list(range(1, 9))
    assert InformalNumberCounter.objects.get().last_assigned == 8
    ucode = Namespace.objects.by_nid("ucode").get()
    assert ucode.references == [{"type": "rfc", "data": "rfc6588"},
                                {"type": "rfc-errata", "data": "3188"},
                                {"type": "rfc-errata", "data": "3189"}]
    said = Namespace.objects.by_nid("said").get()
    assert said.references == [{"type": "person", "data": "Wenjing_Chu",
                                "text": "trustoverip@lfdecentralizedtrust.org"}]
    assert str(Namespace.objects.by_nid("eidr").get().record_updated) == "2016-09-09"
    assert Namespace.objects.by_nid("urn-7").get().contact == [
        {"type": "rfc", "data": "rfc6050"}]
    assert Person.objects.count() == 10
    assert RegistryMetadata.objects.get(key="informal").experts.endswith("Stephanie Palek")
    # and the shipped machine-readable profiles installed after it (shipped with urn8141)
    assert set(NamespaceEvent.objects.values_list("kind", flat=True)) == {
        "imported", "profile_shipped"}


def test_a_newer_iana_file_imports_and_exports_as_iana_publishes_it(
        tmp_path, client, iana_registry, schema):
    path = tmp_path / "urn-namespaces.xml"
    path.write_bytes(newer_iana_file())
    call_command("import_registry", str(path), verbosity=0)
    ours = client.get("/registry.xml").getvalue()
    assert schema.validate(etree.fromstring(ours)), schema.error_log
    assert_same_registry(ours, path.read_bytes())
    newdraft = Namespace.objects.by_nid("newdraft").get()
    assert newdraft.registered_on is None
    assert newdraft.references[1] == {"type": "rfc", "data": "rfc8141", "section": "6.3"}
    assert Person.objects.get(person_id="Ada_Example").org == "Example Archive"


def test_an_empty_database_imports_a_newer_file_directly(tmp_path, db, schema, client):
    path = tmp_path / "urn-namespaces.xml"
    path.write_bytes(newer_iana_file())
    call_command("import_registry", str(path), verbosity=0)
    assert_same_registry(client.get("/registry.xml").getvalue(), path.read_bytes())


def test_reference_types_the_schema_does_not_know_are_kept(tmp_path, iana_registry):
    text = newer_iana_file().decode().replace(
        '<xref type="draft" data="draft-example-urn-newdraft-02"/>',
        '<xref type="doi" data="10.1000/182">DOI Handbook</xref>')
    path = tmp_path / "later.xml"
    path.write_text(text)
    call_command("import_registry", str(path), verbosity=0)
    assert Namespace.objects.by_nid("newdraft").get().references[0] == {
        "type": "doi", "data": "10.1000/182", "text": "DOI Handbook"}


@pytest.mark.parametrize("bad, message", [
    ('data="https://www.iana.org/assignments/urn-formal/3gpp2"',
     'data="javascript:alert(1)"'),
    ('data="https://www.iana.org/assignments/urn-formal/3gpp2"',
     'data="ftp://example.org/3gpp2"'),
])
def test_import_refuses_template_urls_that_are_not_http(tmp_path, db, bad, message):
    path = tmp_path / "evil.xml"
    path.write_text(IANA_XML.read_text().replace(bad, message, 1))
    with pytest.raises(CommandError) as error:
        call_command("import_registry", str(path), verbosity=0)
    text = str(error.value)
    assert "Nothing imported" in text and "evil.xml" in text
    assert "formal record 2 (3gpp2)" in text and "not an http(s) URL" in text
    assert Namespace.objects.count() == 0  # nothing half-imported


@pytest.mark.parametrize("change, words", [
    (("<name>urn-3</name>", "<name>urn-03</name>"), r"informal record 3 \(urn-03\)"),
    (('<record date="2017-01-20">', '<record date="20 Jan 2017">'), "is not a date"),
    (("<name>bbf</name>", "<name>3gpp</name>"), "appears twice"),
    (('data="rfc8107"', 'data="RFC-8107"'), "names no RFC"),
    (("<registry ", "<registry><registry "), "not well-formed"),
])
def test_a_bad_record_stops_the_import_with_where_and_why(tmp_path, registry, change, words):
    before = Namespace.objects.count()
    path = tmp_path / "bad.xml"
    path.write_text(IANA_XML.read_text().replace(*change, 1))
    with pytest.raises(CommandError, match=words):
        call_command("import_registry", str(path), verbosity=0)
    assert Namespace.objects.count() == before
    assert not Namespace.objects.by_nid("urn-8").exists()


def test_entities_are_refused(tmp_path, db):
    path = tmp_path / "entities.xml"
    path.write_text('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]>'
                    '<registry xmlns="http://www.iana.org/assignments">&a;</registry>')
    with pytest.raises(CommandError, match="DOCTYPE or entity"):
        call_command("import_registry", str(path), verbosity=0)


@pytest.fixture
def registered_here(iana_registry, staff, registrant):
    ns = namespace_register(kind="formal", nid="archive", date=dt.date(2026, 11, 1),
                            actor=staff, values=complete_values(registrant))
    version_publish(namespace=ns, date=dt.date(2026, 11, 5), actor=staff,
                    values=complete_values(registrant, revision_information="Mirror."))
    namespace_register(kind="informal", nid=None, date=dt.date(2026, 11, 3), actor=staff,
                       values=complete_values(registrant, contact_name="Pat Example"))
    namespace_set_status(namespace=Namespace.objects.by_nid("3gpp").get(),
                         status="deprecated", comment="Use 3gpp2.", actor=staff)
    return ns


def test_registrations_made_here_are_published_as_iana_would(client, registered_here,
                                                             schema, registrant):
    ours = client.get("/registry.xml").getvalue()
    root = etree.fromstring(ours)
    assert schema.validate(root), schema.error_log
    archive = root.find("i:registry/i:record[i:name='archive']", NS)
    assert archive.get("date") == "2026-11-01" and archive.get("updated") == "2026-11-05"
    template = archive.find("i:template/i:xref", NS)
    assert template.get("type") == "uri" and template.text == "archive-template"
    assert template.get("data") == settings.SITE_URL + "/namespaces/archive/template.txt"
    ref = archive.find("i:xref", NS)
    assert (ref.get("type"), ref.get("data"), ref.text) == (
        "uri", "https://archive.example/spec", registrant.organisation)
    urn9 = root.find("i:registry[@id='urn-namespaces-2']/i:record[i:name='urn-9']", NS)
    person_id = urn9.find("i:contact/i:xref", NS).get("data")
    assert person_id == "Pat_Example"
    person = root.find(f"i:people/i:person[@id='{person_id}']", NS)
    assert person.findtext("i:uri", namespaces=NS) == \
        "mailto:" + registrant.email.replace("@", "&")
    # The registry's updated date is the last real change here, not an import date.
    assert root.findtext("i:updated", namespaces=NS) == dt.date.today().isoformat()
    # Status and deprecation are not in IANA's schema: the JSON API carries them.
    assert b"deprecated" not in ours
    assert client.get("/api/namespaces/3gpp/").json()["status_note"] == "Use 3gpp2."


def test_stored_control_characters_never_break_the_xml(client, iana_registry, staff, schema):
    namespace_register(kind="formal", nid="ctrl", date=dt.date(2026, 11, 1), actor=staff,
                       values=complete_values(None, documentation="none"))
    # Stored before the forms refused such characters: the serialiser copes.
    Namespace.objects.by_nid("ctrl").update(
        references=[{"type": "text", "text": "Bad\x0bOrg\x1f"}])
    response = client.get("/registry.xml")
    root = etree.fromstring(response.getvalue())
    assert schema.validate(root), schema.error_log
    assert root.find("i:registry/i:record[i:name='ctrl']/i:xref", NS).text == "BadOrg"
