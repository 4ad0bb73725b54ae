"""The registrant part of a template, one extractor per field
(registry.templates_text.registrant), and the parser's field list against the model's."""

from __future__ import annotations

import pytest

from registry.namespaces import template as model_template
from registry.templates_text import TEXT_FIELDS
from registry.templates_text.registrant import (
    FIELDS,
    MAX_CHARS,
    Found,
    Items,
    Registrant,
    _items,
    extract_addresses,
    extract_contact_name,
    extract_email,
    extract_organisation,
    extract_phone,
    parse_registrant,
)

XMPP = """\
Registering organization
   Organization: XMPP Standards Foundation
   Address: P.O. Box 1641, Denver, CO 80201 USA

Designated contact
   Role: XMPP Registrar
   Email: registrar@xmpp.org
"""


def items(text: str) -> Items:
    return Items([i for i in _items(text) if i.value.strip()], text)


def test_the_parser_fills_exactly_the_models_template_fields_in_order():
    assert TEXT_FIELDS == model_template.TEXT_FIELDS
    registrant_section = next(s for s in model_template.SECTIONS if s.title == "Registrant")
    assert registrant_section.fields == FIELDS


def test_organisation_takes_the_labelled_name_and_its_address():
    pool, result = items(XMPP), Registrant()
    taken = extract_organisation(pool, result)
    assert taken is not None and taken.label == "Organization"
    assert result.registrant_organisation == "XMPP Standards Foundation"
    assert result.registrant_address == ""  # the address is its own item, left for later
    assert taken not in pool.left()


@pytest.mark.parametrize(("text", "organisation", "name"), [
    ("Jane Doe <jane@example.org>\n", "Jane Doe", "Jane Doe"),
    ("IETF and the CORE working group. Should the group cease to exist, the IESG.\n",
     "IETF and the CORE working group.", ""),
    ("ACME Inc. Research\n", "ACME Inc. Research", ""),
])
def test_organisation_from_a_plain_first_line(text, organisation, name):
    result = Registrant()
    assert extract_organisation(items(text), result) is None
    assert (result.registrant_organisation, result.contact_name) == (organisation, name)


def test_contact_name_from_a_name_a_contact_or_else_a_role():
    result = Registrant()
    extract_contact_name(items("Contact: Pat Example\nRole: Editor\n"), result)
    assert result.contact_name == "Pat Example"
    result = Registrant()
    person, contact = extract_contact_name(items(XMPP), result)
    assert (person, contact, result.contact_name) == (None, None, "XMPP Registrar")


def test_email_prefers_the_labelled_one_over_any_other():
    text = "Organization: X <info@example.org>\nEmail: mailto:pat@example.org\n"
    assert extract_email(items(text)) == "pat@example.org"
    assert extract_email(items("Write to pat@example.org.\n")) == "pat@example.org"
    assert extract_email(items("No address here\n")) == ""


def test_phone_is_the_first_line_of_a_phone_label():
    assert extract_phone(items("Phone: +1 555 0100\n   ext. 3\n")) == "+1 555 0100"
    assert extract_phone(items("Email: a@example.org\n")) == ""


def test_addresses_and_leftover_come_from_what_no_extractor_took():
    text = XMPP + "   Web: https://xmpp.example\n"
    pool, result = items(text), Registrant()
    found = Found(organisation=extract_organisation(pool, result))
    found.person, found.contact = extract_contact_name(pool, result)
    result.contact_email = extract_email(pool)
    extract_addresses(pool, result, found)
    assert result.registrant_address == "P.O. Box 1641, Denver, CO 80201 USA"
    assert result.leftover == "Web: https://xmpp.example"


def test_a_registrant_part_past_its_bound_is_kept_whole_as_leftover():
    text = "Organization: X\n" + "x" * MAX_CHARS
    result = parse_registrant(text)
    assert (result.registrant_organisation, result.leftover) == ("", text)


@pytest.mark.parametrize(("text", "organisation", "address"), [
    ("Example Corp, 1 Main Street, Springfield, IL 62701, USA\n",
     "Example Corp", "1 Main Street, Springfield, IL 62701, USA"),
    ("Example Corp, Inc., P.O. Box 12, Springfield, USA\n",
     "Example Corp, Inc.", "P.O. Box 12, Springfield, USA"),
    ("Organization: Example Corp, 1 Main Street, Springfield, USA\n",
     "Example Corp", "1 Main Street, Springfield, USA"),
    # Not an address: no number, or a single part after the name.
    ("IETF and the CORE working group, see RFC 7252\n",
     "IETF and the CORE working group, see RFC 7252", ""),
    ("ACME, Research and Standards\n", "ACME, Research and Standards", ""),
])
def test_an_organisation_and_its_address_on_one_line_are_both_mapped(text, organisation,
                                                                     address):
    result = parse_registrant(text)
    assert (result.registrant_organisation, result.registrant_address) == (organisation,
                                                                           address)
    assert result.leftover == ""
