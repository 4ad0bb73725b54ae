"""Reading registration templates from text (registry.templates_text), table-driven.

The ten real templates in samples/ are verbatim copies of shared/data/templates
(with INDEX.tsv, the values a careful reader takes from each); the variants
below are the shapes the README of that folder warns about: placeholders,
fields out of order or renamed, labels inline or on their own line, numbered
headings, non-ASCII, CRLF, tabs.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.templates_text import (
    MAX_TEMPLATES,
    TemplateTextError,
    parse_template,
    parse_templates,
)
from registry.templates_text.formats import MAX_BYTES
from registry.templates_text.registrant import MAX_CHARS as REGISTRANT_MAX_CHARS

SAMPLES = Path(__file__).parent / "samples"
INDEX = list(csv.DictReader((SAMPLES / "INDEX.tsv").open(encoding="utf-8"), delimiter="\t"))


@pytest.mark.parametrize("row", INDEX, ids=[row["file"] for row in INDEX])
def test_real_templates(row):
    parsed = parse_template((SAMPLES / row["file"]).read_bytes())
    assert (parsed.nid, parsed.version, parsed.date, parsed.registrant_organisation,
            parsed.contact_email) == (row["exp_nid"], row["exp_version"], row["exp_date"],
                                      row["exp_registrant_org"], row["exp_contact_email"])
    assert parsed.layout == row["layout"].replace("2611", "3406")
    assert {"syntax", "assignment", "resolution"} <= set(parsed.fields)


def test_rfc3406_fields_fold_into_rfc8141_fields_under_their_old_labels():
    parsed = parse_template((SAMPLES / "xmpp-rfc4854.txt").read_bytes())
    syntax = parsed.fields["syntax"]
    assert syntax.startswith("Declaration of Syntactic Structure:\nThe Namespace Specific")
    assert "\n\nRules for Lexical Equivalence:\nNo special considerations" in syntax
    assert "\n\nConformance with URN Syntax:\n" in syntax and "Validation Mechanism:" in syntax
    assert parsed.fields["assignment"].count("Considerations:\n") == 2
    assert parsed.fields["purpose"] == "Scope:\nGlobal."
    assert parsed.fields["documentation"].startswith("Relevant Ancillary Documentation:\n")
    assert "[Page" not in syntax + parsed.fields["assignment"] and "RFC 4854" not in syntax


def test_what_cannot_be_mapped_is_reported_not_dropped():
    parsed = parse_template((SAMPLES / "nbn-rfc3188.txt").read_bytes())
    labels = [part["label"] for part in parsed.unmapped]
    assert labels == ["Namespace ID", "Registration Information", "Registrant"]
    assert "production use in demonstrator systems" in parsed.unmapped[0]["text"]
    assert "URN WG in\n1998" in parsed.unmapped[1]["text"]


def test_placeholders_are_reported():
    xml = parse_template((SAMPLES / "dev-coredevurn-11.xml").read_bytes())
    assert any('"RFC NNNN" in documentation' in p for p in xml.problems)
    md = parse_template((SAMPLES / "blockhash-cm.md").read_bytes())
    assert md.date == "201?-??-??" and md.date_value is None
    assert any("not a real date" in p for p in md.problems)


DRAFT_8141 = """\
Namespace Identifier:  "foo-bar" (requested)

Version:  TBD

Date:  YYYY-MM-DD

Registrant:  Foo Consortium, Inc.
   Contact: Jane Q. Doe <jane@foo.example>
   Phone: +1 555 0100

Purpose:  The foo-bar namespace names widgets.

Syntax:  See RFCXXXX, Section 3.

Assignment:  First come, first served.

Security and Privacy:  None.

Interoperability:  None known.

Resolution:  Not intended.

Documentation:  RFC XXXX

Additional Information:  None.

Revision Information:  N/A
"""

OUT_OF_ORDER = """\
1.  Namespace Identifier

   widgets

2.  Syntax

   urn:widgets:{id}

3.  Registrant

   Organization: Widget Makers GmbH
   Email: urn@widgets.example

4.  Date

   5 March 2019

5.  Version

   2

6.  Purpose

   Widgets.

7.  Something Else Entirely

   A part the template does not have.
"""

RFC2611_ERA = """\
   Namespace ID:

      Requested of IANA: "lexx"

   Registration Information:

      Registration Version Number: 1
      Registration Date: 1999-07-01

   Declared registrant of the namespace:

      Name:        J. Random Hacker
      E-mail:      jrh@lexx.example
      Affiliation: Lexx Foundation
      Address:     1 Lexx Road,
                   Lexxtown

   Declaration of structure:

      The identifiers are decimal numbers.

   Relevant ancillary documentation:

      None.

   Identifier uniqueness considerations:

      Numbers are never reused.

   Identifier persistence considerations:

      Forever.

   Process of identifier assignment:

      Sequential.

   Process for identifier resolution:

      None.

   Rules for Lexical Equivalence:

      Leading zeros are ignored.

   Conformance with URN Syntax:

      Fully conformant.

   Validation mechanism:

      None.

   Scope:

      Global.
"""

MARKDOWN_8141 = """\
# URN Namespace Definition Template

**Namespace Identifier:** mdns

**Version:** 1

**Date:** June 2, 2021

**Registrant:** Multicast Naming Örganisation e.V.
Contact: Jürgen Müller, juergen@mdns.example

## Purpose

Names devices.

## Syntax

```
mdns-nss = 1*ALPHA
```

## Assignment

Open.
"""

KRAMDOWN_INLINE = """\
Namespace ID:
: wdgt

Registration Information:
: Version: 3
: Date: 2016-02-29

Declared registrant of the namespace:
: Widget Standards Body
: Contact: standards@wsb.example

Declaration of syntactic structure:
: opaque
"""

XML_V3 = """\
<section anchor="iana"><name>IANA Considerations</name>
<dl newline="true">
  <dt>Namespace Identifier:</dt><dd>xmlnid</dd>
  <dt>Version:</dt><dd>1</dd>
  <dt>Date:</dt><dd>2022-11-30</dd>
  <dt>Registrant:</dt><dd><t>XML Example Working Group</t><t>Contact: wg-chairs@xml.example</t></dd>
  <dt>Purpose:</dt><dd><t>Names things &amp; stuff&nbsp;here.</t></dd>
  <dt>Syntax:</dt><dd><sourcecode type="abnf">nss = 1*DIGIT</sourcecode></dd>
</dl>
</section>
"""

BULLETED_MD = """\
### Specification Template

Namespace ID:

- The Namespace ID "wxyz" has been assigned.

Registration Information:

- Version: 1

- Date: TBD

Declared registrant of the namespace:

- Registering organization: The Internet Engineering Task Force.

- Designated contact: The designated experts, on the list "wxyz@ietf.example".

Declaration of Syntactic Structure:

- urn:ietf:params:wxyz:{type}
"""

BOLD_LABELS_MD = """\
## Namespace ID Proposal

A proposal in the layout of RFC 3406 Appendix A.

**Namespace ID:**

boldid

**Registration Information:**

Registration version number: 1
Registration date:           N/A

**Declared registrant of the namespace:**

Registering organization
  Name:    Bold Labels, Inc.
  Address: N/A

Designated contact
  Role:  Technical Program Manager
  Email: info@bold.example
"""

KRAMDOWN_HTML = """\
# Specification Template

Namespace ID
: <br/>"kram"

Registration Information
:
{style="empty"}
 - Registration version number: 2
 - Registration date: 2017-xx-xx

Declared Registrant of the Namespace
: <br/>Registering organization:
{style="empty"}
 - Kram Association of Examples (KAE)

 - 10 rue des Exemples
 - France
 - Email: contact@kram.example

: <br/>Designated Contact:
{style="empty"}
 - Kram Registry Desk
 - Email: desk@kram.example

Conformity with URN syntax:
: <br/>  Nothing is reserved beyond the ABNF above.
"""

XML_V2_HANGING = """\
<section title="IANA Considerations">
<t>This document registers the following URN namespace.</t>
<t><list style="hanging">
  <t hangText="Namespace Identifier:">"hangnid"</t>
  <t hangText="Version:">1</t>
  <t hangText="Date:">2019-09-12</t>
  <t hangText="Registrant:">Hanging Lists Consortium<vspace/>
     Contact: Carol Hang &lt;carol@hang.example&gt;</t>
  <t hangText="Syntax:">urn:hangnid:{id}</t>
</list></t>
</section>
"""

NAME_THEN_CONTACT = """\
   Namespace ID:
         PINX

   Registration Information:
         Version: 1
         Date: 1999-05-11

   Declared registrant of the namespace:
         Name:           Example Corporation
         Address:        1 Example Blvd.
                         Sometown, VA 22102
         Contact:        Mike Example
         Email:          mike@corp.example

   Declaration of structure:
         The identifiers are opaque.
"""

LABELS_ON_THEIR_OWN_LINES = """\
   Namespace ID:

      "ISANX"

   Registration Information:

      Registration version number: 1
      Registration date: 2005-02-21

   Declared registrant of the namespace:

      Registering organization:
         ISANX International Agency
      Address:
         1A rue de l'Exemple
         CH-1203 Geneva
      Designated contact:
         Name: Pat Attal
         E-mail: pat@isanx.example

   Declaration of syntactic structure:

      ISANX-nss = root "-" episode "-" check
"""

CASES = [
    # text, nid, version, date, organisation, email, fields that must be present
    (DRAFT_8141, "foo-bar", "TBD", "YYYY-MM-DD", "Foo Consortium, Inc.", "jane@foo.example",
     {"purpose", "syntax", "assignment", "security", "interoperability", "resolution",
      "documentation", "additional_information", "revision_information", "contact_name"}),
    (OUT_OF_ORDER, "widgets", "2", "2019-03-05", "Widget Makers GmbH", "urn@widgets.example",
     {"syntax", "purpose"}),
    (RFC2611_ERA, "lexx", "1", "1999-07-01", "Lexx Foundation", "jrh@lexx.example",
     {"syntax", "documentation", "assignment", "resolution", "purpose", "registrant_address"}),
    (RFC2611_ERA.replace("\n", "\r\n"), "lexx", "1", "1999-07-01", "Lexx Foundation",
     "jrh@lexx.example", {"syntax", "assignment"}),
    (RFC2611_ERA.replace("      ", "\t"), "lexx", "1", "1999-07-01", "Lexx Foundation",
     "jrh@lexx.example", {"syntax", "assignment"}),
    (MARKDOWN_8141, "mdns", "1", "2021-06-02", "Multicast Naming Örganisation e.V.",
     "juergen@mdns.example", {"purpose", "syntax", "assignment"}),
    (KRAMDOWN_INLINE, "wdgt", "3", "2016-02-29", "Widget Standards Body",
     "standards@wsb.example", {"syntax"}),
    (XML_V3, "xmlnid", "1", "2022-11-30", "XML Example Working Group",
     "wg-chairs@xml.example", {"purpose", "syntax"}),
    (BULLETED_MD, "wxyz", "1", "TBD", "The Internet Engineering Task Force.",
     "wxyz@ietf.example", {"syntax", "contact_name"}),
    (BOLD_LABELS_MD, "boldid", "1", "N/A", "Bold Labels, Inc.", "info@bold.example",
     {"contact_name", "registrant_address"}),
    (XML_V2_HANGING, "hangnid", "1", "2019-09-12", "Hanging Lists Consortium",
     "carol@hang.example", {"syntax", "contact_name"}),
    (NAME_THEN_CONTACT, "PINX", "1", "1999-05-11", "Example Corporation", "mike@corp.example",
     {"registrant_address", "contact_name", "syntax"}),
    (LABELS_ON_THEIR_OWN_LINES, "ISANX", "1", "2005-02-21", "ISANX International Agency",
     "pat@isanx.example", {"registrant_address", "contact_name", "syntax"}),
    (KRAMDOWN_HTML, "kram", "2", "2017-xx-xx", "Kram Association of Examples (KAE)",
     "contact@kram.example", {"syntax", "registrant_address", "contact_name"}),
]


@pytest.mark.parametrize(("text", "nid", "version", "date", "organisation", "email", "fields"),
                         CASES, ids=["draft-8141", "numbered-out-of-order", "rfc2611", "crlf",
                                     "tabs", "markdown", "kramdown", "xml-v3", "bulleted",
                                     "bold-labels", "xml-v2-hanging", "name-then-contact",
                                     "own-lines", "kramdown-html"])
def test_template_variants(text, nid, version, date, organisation, email, fields):
    parsed = parse_template(text.encode("utf-8"))
    assert (parsed.nid, parsed.version, parsed.date, parsed.registrant_organisation,
            parsed.contact_email) == (nid, version, date, organisation, email)
    assert fields <= set(parsed.fields)


def test_draft_placeholders_are_each_reported():
    problems = " | ".join(parse_template(DRAFT_8141).problems)
    assert 'The version is not a number: "TBD"' in problems
    assert 'not a real date: "YYYY-MM-DD"' in problems
    assert '"RFCXXXX" in syntax' in problems and '"RFC XXXX" in documentation' in problems


def test_an_unknown_part_is_reported_with_its_heading():
    parsed = parse_template(OUT_OF_ORDER)
    assert parsed.unmapped == [{"label": "Something Else Entirely",
                                "text": "A part the template does not have."}]


def test_xml_entities_and_code_survive():
    parsed = parse_template(XML_V3)
    assert parsed.fields["purpose"] == "Names things & stuff\u00a0here."
    assert parsed.fields["syntax"] == "nss = 1*DIGIT"


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty"),
    (b"   \n\n\t ", "empty"),
    (b"%PDF-1.7\n\x00\x01binary", "not a text file"),
    (b"PK\x03\x04zipped", "not a text file"),
    ("Namespace ID: x\n".encode("utf-16"), "not a text file"),
    (b"\x01\x02\x03\x04" * 50, "control characters"),
    (b"x" * (MAX_BYTES + 1), "larger than"),
])
def test_input_that_is_no_template_gets_a_clear_message(data, message):
    with pytest.raises(TemplateTextError, match=message):
        parse_template(data)


def test_text_without_any_label_says_so():
    parsed = parse_template(b"Dear IANA,\nplease register my namespace.\n")
    assert parsed.problems[0].startswith("No label of a registration template")
    assert parsed.unmapped == [{"label": "", "text": "Dear IANA,\nplease register my namespace."}]


def test_windows_1252_is_read():
    text = "Namespace ID: caf\u00e9s\nRegistrant: Caf\u00e9 Ltd\n"
    parsed = parse_template(text.encode("cp1252"))
    assert parsed.registrant_organisation == "Caf\u00e9 Ltd"


def test_xml_that_does_not_parse_is_read_by_its_tags():
    broken = XML_V3.replace("</dl>", "")  # not well-formed any more
    parsed = parse_template(broken)
    assert parsed.nid == "xmlnid" and parsed.date == "2022-11-30"


# -- round trip through the app's own plain-text rendering ------------------------

line = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x24F, exclude_characters="[]",
                             exclude_categories=("Cc", "Cs", "Zl", "Zp")),
               max_size=40).map(str.rstrip)
block = st.lists(line, min_size=0, max_size=4).map(lambda ls: "\n".join(ls).strip())
single = line.map(str.strip)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(organisation=single, address=block, name=single, phone=single,
       email=st.from_regex(r"[a-z0-9._+-]{1,12}@[a-z0-9-]{1,10}\.[a-z]{2,6}", fullmatch=True),
       postal=block, purpose=block, syntax=block, revision=block)
def test_render_text_parses_back_to_the_same_values(organisation, address, name, email, phone,
                                                     postal, purpose, syntax, revision):
    from registry.namespaces.template import TEXT_FIELDS, render_text

    values = {name_: "" for name_ in TEXT_FIELDS}
    values.update(registrant_organisation=organisation, registrant_address=address,
                  contact_name=name, contact_email=email, contact_phone=phone,
                  contact_postal=postal, purpose=purpose, syntax=syntax,
                  revision_information=revision)
    text = render_text(nid="Ex-Archive", version=3, date=dt.date(2024, 2, 29), values=values)
    parsed = parse_template(text)
    assert (parsed.nid, parsed.version, parsed.date) == ("Ex-Archive", "3", "2024-02-29")
    got = {name_: parsed.fields.get(name_, "") for name_ in TEXT_FIELDS}
    assert got == {k: _lines(v) for k, v in values.items()}


def _lines(text: str) -> str:
    return "\n".join(x.rstrip() for x in text.splitlines()).strip()


@pytest.mark.parametrize(("namespace_id", "nid"), [
    ('"blockhash" requested.', "blockhash"),
    ("The Namespace ID \"xmpp\" is requested.", "xmpp"),
    ("'3gpp2'", "3gpp2"),
    ("ISBN\n\nThis Namespace ID is the same as the acronym.", "ISBN"),
    ("urn:foo", "foo"),
    ("foo (requested)", "foo"),
    ("The requested Namespace ID is \u201cbarx\u201d.", "barx"),
    ("NID \"qq-z\" requested", "qq-z"),
    ("To be assigned by IANA", ""),
    ("Requested of IANA (formal) or assigned by IANA (informal).", ""),
    ("TBD", ""),
])
def test_the_nid_is_read_from_the_namespace_id_part(namespace_id, nid):
    assert parse_template(f"Namespace ID:\n   {namespace_id}\n").nid == nid


TWO = (SAMPLES / "several" / "epc-two-templates.txt").read_bytes()


def test_a_text_with_two_templates_gives_two_and_merges_nothing():
    first, second = parse_templates(TWO)
    assert (first.nid, first.contact_email, second.nid, second.contact_email) == \
        ("epc", "epc-urn@example.org", "epcglobal", "epcglobal-urn@example.org")
    assert "urn:epc:id:sgtin" in first.fields["syntax"]
    assert "epcglobal" not in first.fields["syntax"]
    assert "urn:epc:id" not in second.fields["syntax"]
    assert not any("Standards Documents" in u["text"] for u in first.unmapped)


def test_parse_template_reads_the_first_and_names_the_others():
    parsed = parse_template(TWO)
    assert parsed.nid == "epc"
    assert parsed.problems[0] == ("This text holds 2 templates (epc, epcglobal); this is "
                                  "number 1, epc. Nothing from the others is used.")


def test_a_namespace_id_repeated_without_other_fields_is_not_a_second_template():
    text = "Namespace ID: abc\nPurpose: things\nSyntax: opaque\nNamespace ID: abc\n"
    (only,) = parse_templates(text)
    assert (only.nid, only.fields["purpose"]) == ("abc", "things")


def test_too_many_templates_are_refused_with_the_reason():
    one = "Namespace ID: n{}\nPurpose: p\n"
    text = "".join(one.format(n) for n in range(MAX_TEMPLATES + 1))
    assert len(parse_templates("".join(one.format(n) for n in range(MAX_TEMPLATES)))) == \
        MAX_TEMPLATES
    with pytest.raises(TemplateTextError, match=f"holds {MAX_TEMPLATES + 1} templates"):
        parse_templates(text)


def test_a_registrant_part_past_its_bound_is_reported_and_kept():
    huge = "Organization: Example\n" + "word " * (REGISTRANT_MAX_CHARS // 5)
    parsed = parse_template(f"Namespace ID: abc\nDeclared registrant of the namespace:\n{huge}")
    assert any("not read field by field" in p for p in parsed.problems)
    assert [u["label"] for u in parsed.unmapped] == ["Registrant"]
    assert "registrant_organisation" not in parsed.fields
