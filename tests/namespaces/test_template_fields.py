"""Every field of the registration template reaches every surface that shows a template.

The fields are read from the model (``TemplateFields``), not from a list kept here: a field
added to the model (one field, its place in ``SECTIONS``, a migration) is swept by these
tests at once, and they fail until the form, the request page, the namespace page, the API,
the OpenAPI document, the diff, ``template.txt``, the parser and the backup all carry it.
"""

import datetime as dt
import json

import pytest
from django.db import models
from django.urls import reverse

from registry.backup import write_backup
from registry.namespaces.actions import namespace_register, version_publish
from registry.namespaces.template import (
    PRIVATE_FIELDS,
    PROFILE_FIELD,
    SECTIONS,
    TEMPLATE_FIELDS,
    TEXT_FIELDS,
    TemplateFields,
    field_label,
)
from registry.review import actions
from registry.review.forms import RequestForm
from registry.templates_text import parse_template
from tests.factories import complete_values
from tests.html import field_value, one, page, terms, text

NID = "EveryField"


def _model_fields() -> list[str]:
    return [f.name for f in TemplateFields._meta.get_fields()]


def _published_fields() -> list[str]:
    """The model's fields that the registry publishes: all but IANA's private contact
    and the machine-readable profile (each with tests of its own)."""
    return [name for name in _model_fields()
            if name not in PRIVATE_FIELDS and name != PROFILE_FIELD]


def _marker(name: str, round_: int = 1) -> str:
    if isinstance(TemplateFields._meta.get_field(name), models.EmailField):
        return f"r{round_}.{name.replace('_', '-')}@marker.example"
    return f"Marker{round_} of {name}"


def _values(round_: int = 1) -> dict[str, str]:
    return {name: _marker(name, round_) for name in _published_fields()}


def _section_of(name: str) -> str:
    return next(section.title for section in SECTIONS if name in section.fields)


def test_the_lists_hold_every_field_of_the_model_once():
    """A field on the model that no list names would be stored and shown nowhere."""
    assert sorted(TEMPLATE_FIELDS) == sorted(_model_fields())
    assert len(set(TEMPLATE_FIELDS)) == len(TEMPLATE_FIELDS)
    assert [name for section in SECTIONS for name in section.fields] == list(TEXT_FIELDS)
    assert sorted(TEXT_FIELDS) == sorted(_published_fields())


@pytest.fixture
def published(staff, registrant):
    """A namespace whose two versions fill every published field, each differently."""
    namespace = namespace_register(kind="formal", nid=NID, holder=registrant,
                                   values=_values(1), date=dt.date(2026, 1, 5), actor=staff)
    version_publish(namespace=namespace, date=dt.date(2026, 6, 1), actor=staff,
                    values=_values(2))
    return namespace


def _template_terms(doc, xpath: str) -> dict[str, str]:
    return {title: text(dd) for title, dd in terms(one(doc, xpath)).items()}


def _assert_every_field_shown(shown: dict[str, str], round_: int) -> None:
    for name in _published_fields():
        assert _section_of(name) in shown, name
        value = shown[_section_of(name)]
        marker = _marker(name, round_)
        if "@" in marker:  # written harvest-resistant: "user at domain"
            marker = marker.replace("@", " at ")
        assert marker in value, (name, value)


def test_the_namespace_page_shows_every_field(client, published):
    doc = page(client.get(reverse("namespaces:detail", args=[NID])))
    _assert_every_field_shown(_template_terms(doc, "//main//dl[@class='template']"), 2)
    old = page(client.get(reverse("namespaces:version", args=[NID, 1])))
    _assert_every_field_shown(_template_terms(old, "//main//dl[@class='template']"), 1)


def test_the_request_page_and_form_show_every_field(client, published, registrant):
    # A revision: its form has every field (a new namespace's has no revision information).
    registration = actions.registration_create(actor=registrant, revises=published,
                                               values=_values(3))
    client.force_login(registrant)
    doc = page(client.get(registration.get_absolute_url()))
    _assert_every_field_shown(_template_terms(doc, "//main//h2[starts-with(., 'Template')]"
                                                   "/following-sibling::dl[1]"), 3)
    form = page(client.get(reverse("review:edit", args=[registration.pk])))
    for name in _published_fields():
        assert field_value(form, name) == _marker(name, 3), name
    assert set(_model_fields()) <= set(RequestForm(revision=True).fields)


def test_the_api_and_its_schema_carry_every_field(client, published):
    answer = client.get(reverse("namespaces:api-detail", args=[NID])).json()
    assert answer["versions"][-1]["template"] == _values(2)
    schema = client.get(reverse("namespaces:api-schema")).json()
    template = next(definition["properties"]["template"]
                    for definition in schema["components"]["schemas"].values()
                    if "template" in definition.get("properties", {}))
    assert sorted(template["properties"]) == sorted(_published_fields())
    assert sorted(template["required"]) == sorted(_published_fields())


def test_the_diff_compares_every_field(client, published):
    doc = page(client.get(reverse("namespaces:diff", args=[NID]) + "?a=1&b=2"))
    changed = doc.xpath("//table[contains(@class, 'diff')]//th[span = 'changed']/text()[1]")
    assert sorted(text(label) for label in changed) == sorted(
        field_label(name) for name in _published_fields())


def test_template_txt_carries_every_field_and_reads_back(client, published):
    response = client.get(reverse("namespaces:template-txt", args=[NID]))
    parsed = parse_template(response.content.decode())
    assert {name: parsed.fields.get(name, "") for name in _published_fields()} == _values(2)


def test_the_backup_holds_every_field(published, registrant, tmp_path):
    actions.registration_create(actor=registrant, proposed_nid="everyfield",
                                values=complete_values(registrant))
    path = tmp_path / "backup.json"
    write_backup(path)
    rows = json.loads(path.read_text())["objects"]
    for label in ("namespaces.templateversion", "review.registrationrequest"):
        row = next(o["fields"] for o in rows if o["model"] == label)
        assert set(_model_fields()) <= set(row), label
    latest = max((o for o in rows if o["model"] == "namespaces.templateversion"),
                 key=lambda o: o["fields"]["number"])
    assert {name: latest["fields"][name] for name in _published_fields()} == _values(2)


def test_an_empty_section_says_so_and_the_fast_track_is_noted(client, registrant):
    from types import SimpleNamespace

    from registry.namespaces.presentation import template_entries
    from registry.namespaces.template import FAST_TRACK_NOTE

    empty = SimpleNamespace(fast_track=False)
    entries = {e.title: e for e in template_entries(empty)}
    assert entries["Registrant"].lines == () and not entries["Registrant"].note
    assert "Revision Information" not in entries  # shown only when filled
    assert template_entries(SimpleNamespace(fast_track=True))[0].note == FAST_TRACK_NOTE
    registration = actions.registration_create(actor=registrant, proposed_nid="emptyone",
                                               values={"purpose": "Only this."})
    client.force_login(registrant)
    doc = page(client.get(registration.get_absolute_url()))
    shown = _template_terms(doc, "//main//h2[starts-with(., 'Template')]/following-sibling::dl[1]")
    assert shown["Registrant"] == "—" and shown["Purpose"] == "Only this."
