"""import_templates and parse_template: templates as text become versions of the
imported namespaces, idempotently, never overwriting; and the app's own
template.txt reads back to the same values."""

import datetime as dt
import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from registry.namespaces.actions import namespace_register, version_publish
from registry.namespaces.models import Namespace, NamespaceEvent, TemplateVersion
from registry.namespaces.template import TEXT_FIELDS, template_values
from registry.templates_text import parse_template
from tests.factories import complete_values
from tests.html import one, page, terms, text

SAMPLES = Path(__file__).parent.parent / "templates_text" / "samples"


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=out)
    return out.getvalue()


def test_templates_become_the_version_history_of_imported_namespaces(registry, client):
    out = run("import_templates", str(SAMPLES))
    assert "9 versions published, 0 already present, 0 files not imported" in out
    assert "blockhash-cm.md: skipped" in out and "README.md: skipped" in out
    nbn = Namespace.objects.by_nid("nbn").get()
    assert list(nbn.versions.values_list("number", "date")) == [
        (3, dt.date(2001, 1, 30)), (4, dt.date(2018, 4, 9))]
    assert nbn.versions.get(number=4).revision_information.startswith("This version of the")
    assert "Imported from nbn-rfc3188.txt" not in nbn.versions.get(number=3).revision_information
    isbn = Namespace.objects.by_nid("isbn").get().versions.get()
    assert isbn.nid == "ISBN" and isbn.contact_email == "hartmut.walravens@sbb.spk-berlin.de"
    assert "Namespace ID:\nThis Namespace ID is the same" in isbn.additional_information
    xmpp = page(client.get("/namespaces/xmpp/"))
    template = terms(one(xmpp, "//main//dl[@class='template']"))
    assert text(template["Registrant"]).startswith("Organisation: XMPP Standards Foundation")
    assert text(template["Syntax"]).startswith("Declaration of Syntactic Structure")


def test_import_is_idempotent(registry):
    run("import_templates", str(SAMPLES))
    versions, events = TemplateVersion.objects.count(), NamespaceEvent.objects.count()
    out = run("import_templates", str(SAMPLES))
    assert "0 versions published, 9 already present" in out
    assert (TemplateVersion.objects.count(), NamespaceEvent.objects.count()) == (versions, events)


def test_a_published_version_is_never_overwritten(registry, staff):
    xmpp = Namespace.objects.by_nid("xmpp").get()
    version_publish(namespace=xmpp, values=complete_values(purpose="Ours."),
                    date=dt.date(2026, 1, 1), actor=staff)
    out = run("import_templates", str(SAMPLES))
    assert "xmpp version 1 is already published; left as it is" in out
    assert xmpp.versions.get().purpose == "Ours."


def test_a_bad_file_imports_nothing_and_fails_the_run(registry, tmp_path):
    shutil.copy(SAMPLES / "3gpp-rfc5279.txt", tmp_path)
    (tmp_path / "broken.txt").write_bytes(b"%PDF-1.4\x00\x00")
    (tmp_path / "nodate.txt").write_text("Namespace ID: isbn\nVersion: 1\nDate: TBD\n")
    with pytest.raises(CommandError, match="1 version published, 0 already present, 2 files"):
        run("import_templates", str(tmp_path))
    assert Namespace.objects.by_nid("isbn").get().versions.count() == 0
    assert Namespace.objects.by_nid("3gpp").get().versions.count() == 1


def test_not_a_directory(db, tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        run("import_templates", str(tmp_path / "nope"))


def test_parse_template_prints_one_json_object_per_file(db, capsys):
    call_command("parse_template", "--json", str(SAMPLES / "xmpp-rfc4854.txt"),
                 str(SAMPLES / "uuid-uuidrev-kramdown.md"))
    data = json.loads(capsys.readouterr().out)
    assert [d["nid"] for d in data] == ["xmpp", "UUID"]
    assert set(data[0]) >= {"file", "nid", "version", "date", "registrant_organisation",
                            "contact_email", "fields", "unmapped", "problems"}
    assert data[1]["version"] == "" and data[1]["date"] == "2003-10-01"


def test_parse_template_reports_an_unreadable_file_and_fails(db, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(CommandError, match="Could not read 1 of 2 files"):
        call_command("parse_template", "--json", str(SAMPLES / "xmpp-rfc4854.txt"), str(empty))
    data = json.loads(capsys.readouterr().out)
    assert data[1]["problems"] == ["The template is empty."]


def test_every_published_template_txt_reads_back_to_the_same_values(registry, client, staff,
                                                                    registrant):
    run("import_templates", str(SAMPLES))
    exarchive = namespace_register(
        kind="formal", nid="ExArchive", holder=registrant, actor=staff, fast_track=True,
        values=complete_values(registrant, registrant_address="1 Example Street\nSpringfield",
                               contact_postal="PO Box 1\n  Springfield"),
        date=dt.date(2026, 1, 5))
    assert exarchive.versions.count() == 1
    versions = TemplateVersion.objects.select_related("namespace")
    assert versions.count() == 10
    for version in versions:
        url = f"/namespaces/{version.namespace.nid}/v/{version.number}/template.txt"
        parsed = parse_template(client.get(url).content)
        assert (parsed.nid, parsed.version, parsed.date) == (
            version.nid, str(version.number), version.date.isoformat()), url
        expected = {k: "\n".join(line.rstrip() for line in v.strip().splitlines())
                    for k, v in template_values(version).items() if v.strip() and k in TEXT_FIELDS}
        assert {k: v for k, v in parsed.fields.items() if k in TEXT_FIELDS} == expected, url


def test_a_file_with_two_templates_publishes_each_as_its_own_namespace(registry, tmp_path):
    source = SAMPLES / "several" / "epc-two-templates.txt"
    (tmp_path / source.name).write_bytes(source.read_bytes())
    out = run("import_templates", str(tmp_path))
    assert "2 versions published, 0 already present, 0 files not imported" in out
    epc = Namespace.objects.by_nid("epc").get().versions.get()
    epcglobal = Namespace.objects.by_nid("epcglobal").get().versions.get()
    assert (epc.contact_email, epcglobal.contact_email) == \
        ("epc-urn@example.org", "epcglobal-urn@example.org")
    assert "urn:epcglobal:" not in epc.syntax and "urn:epc:id" not in epcglobal.syntax
