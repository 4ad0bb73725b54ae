"""Paste or upload a template to prefill the request form: nothing is saved until
the registrant saves, what was not mapped is shown, and bad input loses nothing."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from registry.review.models import RegistrationRequest
from tests.factories import complete_values, make_registration
from tests.html import field_errors, field_value, one, page, text, texts

SAMPLES = Path(__file__).parent.parent / "templates_text" / "samples"


@pytest.fixture
def logged_in(client, registrant):
    client.force_login(registrant)
    return client


def test_a_pasted_template_fills_the_form_and_saves_nothing(logged_in, registrant):
    template = (SAMPLES / "nbn-rfc3188.txt").read_text()
    response = logged_in.post(reverse("review:new"), {
        "kind": "formal", "proposed_nid": "", "edit_version": 0, "purpose": "typed by hand",
        "template_text": template, "import_template": "1"})
    assert response.status_code == 200
    assert not RegistrationRequest.objects.filter(registrant=registrant).exists()
    doc = page(response)
    assert field_value(doc, "proposed_nid") == "NBN"
    assert field_value(doc, "contact_email") == "juha.hakala@helsinki.fi"
    assert field_value(doc, "registrant_organisation") == \
        "Helsinki University Library - The National Library of"
    assert field_value(doc, "syntax").startswith("Declaration of syntactic structure:\n")
    assert field_value(doc, "purpose") == "Scope:\nGlobal."
    result = text(one(doc, "//*[@id='import-result']"))
    assert "Version 3." in result and "Date 2001-01-30." in result
    unmapped = texts(doc, "//*[@id='import-unmapped']//*[@class='fw-semibold']")
    assert unmapped == ["Namespace ID", "Registration Information", "Registrant"]
    assert one(doc, "//*[@id='template-import']").get("open") is not None


def test_an_uploaded_file_works_the_same(logged_in):
    upload = SimpleUploadedFile("3gpp.txt", (SAMPLES / "3gpp-rfc5279.txt").read_bytes())
    response = logged_in.post(reverse("review:new"), {
        "kind": "formal", "edit_version": 0, "template_file": upload, "import_template": "1"})
    doc = page(response)
    assert field_value(doc, "proposed_nid") == "3gpp"
    assert field_value(doc, "contact_name") == "Specifications Manager"


def test_a_binary_upload_is_refused_at_the_field_and_keeps_what_was_typed(logged_in, registrant):
    upload = SimpleUploadedFile("t.pdf", b"%PDF-1.4\x00\x00binary")
    response = logged_in.post(reverse("review:new"), {
        "kind": "formal", "proposed_nid": "mynid", "edit_version": 0,
        "purpose": "typed by hand", "template_file": upload, "import_template": "1"})
    assert response.status_code == 400
    doc = page(response)
    assert "not a text file" in text(one(doc, "//*[@id='template_file_error']"))
    assert one(doc, "//input[@name='template_file']").get("aria-describedby") == \
        "template_file_error"  # the message is the file field's
    assert field_value(doc, "purpose") == "typed by hand"
    assert field_value(doc, "proposed_nid") == "mynid"
    assert not RegistrationRequest.objects.filter(registrant=registrant).exists()


def test_nothing_to_read_says_so(logged_in):
    response = logged_in.post(reverse("review:new"), {"kind": "formal", "edit_version": 0,
                                                      "template_text": "  ",
                                                      "import_template": "1"})
    doc = page(response)
    assert "Paste a template or choose a file" in text(one(doc, "//*[@id='import-errors']"))


def test_importing_into_a_draft_changes_it_only_when_saved(logged_in, registrant):
    draft = make_registration(registrant, nid="olddraft", submit=False)
    data = {"kind": "formal", "proposed_nid": "olddraft", "edit_version": draft.edit_version,
            **complete_values(registrant),
            "template_text": (SAMPLES / "xmpp-rfc4854.txt").read_text(),
            "import_template": "1"}
    response = logged_in.post(reverse("review:edit", args=[draft.pk]), data)
    doc = page(response)
    assert field_value(doc, "proposed_nid") == "xmpp"
    assert field_value(doc, "contact_email") == "registrar@xmpp.org"
    draft.refresh_from_db()
    assert draft.proposed_nid == "olddraft" and draft.contact_email == registrant.email


TWO_TEMPLATES = (SAMPLES / "several" / "epc-two-templates.txt").read_text()


def _import(client, **extra):
    return client.post(reverse("review:new"), {
        "kind": "formal", "proposed_nid": "", "edit_version": 0,
        "template_text": TWO_TEMPLATES, "import_template": "1", **extra})


def test_a_text_with_two_templates_fills_the_form_from_the_first_and_names_both(logged_in):
    doc = page(_import(logged_in))
    assert field_value(doc, "proposed_nid") == "epc"
    assert field_value(doc, "contact_email") == "epc-urn@example.org"
    assert "epcglobal" not in field_value(doc, "syntax")
    problems = texts(doc, "//*[@id='import-problems']//li")
    assert problems[0] == ("This text holds 2 templates (epc, epcglobal); this is number 1, "
                           "epc. Nothing from the others is used.")
    radios = doc.xpath("//*[@id='template-choice']//input[@name='template_number']")
    assert [(r.get("value"), r.get("checked") is not None) for r in radios] == \
        [("1", True), ("2", False)]
    # The pasted text stays, so picking the other one needs no second paste.
    assert field_value(doc, "template_text") == TWO_TEMPLATES.replace("\r\n", "\n")


def test_the_registrant_picks_the_second_template_and_nothing_of_the_first_stays(logged_in):
    first = page(_import(logged_in))
    assert field_value(first, "security") == ""  # the first template says nothing of it
    data = {name: field_value(first, name) or "" for name in
            ("purpose", "syntax", "assignment", "resolution", "documentation",
             "contact_name", "contact_email", "registrant_organisation")}
    data["purpose"] = "Global."
    doc = page(_import(logged_in, template_number="2", **data))
    assert field_value(doc, "proposed_nid") == "epcglobal"
    assert field_value(doc, "contact_email") == "epcglobal-urn@example.org"
    assert "urn:epcglobal:" in field_value(doc, "syntax")
    assert "urn:epc:id" not in field_value(doc, "syntax")
    radios = doc.xpath("//*[@id='template-choice']//input[@checked]")
    assert [r.get("value") for r in radios] == ["2"]


def test_two_templates_in_one_text_offer_a_request_for_the_other_one_too(logged_in,
                                                                         registrant):
    first = page(_import(logged_in, private_contact_name="Typed in the first form"))
    (button,) = first.xpath("//*[@id='import-others']//button[@name='other_template']")
    assert (button.get("formaction"), button.get("value")) == (reverse("review:new"), "2")
    assert "Make a request for epcglobal too" in text(button)
    # The request form as the browser sends it with that button: every field, the text.
    data = {i.get("name"): i.get("value") or "" for i in first.xpath("//form//input")
            if i.get("name") and i.get("type") not in ("file", "radio", "submit")}
    data.update({t.get("name"): t.text_content().lstrip("\n") for t in first.xpath(
        "//form//textarea")})
    data["other_template"] = button.get("value")
    response = logged_in.post(button.get("formaction"), data)
    assert response.status_code == 200
    doc = page(response)
    assert field_value(doc, "proposed_nid") == "epcglobal"
    assert field_value(doc, "contact_email") == "epcglobal-urn@example.org"
    # A new request: nothing of the first form's values.
    assert field_value(first, "private_contact_name") == "Typed in the first form"
    assert field_value(doc, "private_contact_name") == registrant.get_full_name()
    assert field_value(doc, "private_contact_email") == registrant.email
    assert [r.get("value") for r in doc.xpath("//*[@id='template-choice']//input[@checked]")] \
        == ["2"]
    assert [b.get("value") for b in doc.xpath("//*[@id='import-others']//button")] == ["1"]
    assert not RegistrationRequest.objects.filter(registrant=registrant).exists()


def test_a_template_number_past_the_last_is_refused_at_the_field(logged_in, registrant):
    response = _import(logged_in, template_number="3")
    assert response.status_code == 400
    doc = page(response)
    assert text(one(doc, "//*[@id='template_number_error']")) == \
        "This text holds only 2 template(s)."
    assert field_value(doc, "template_text") == TWO_TEMPLATES.replace("\r\n", "\n")
    assert not RegistrationRequest.objects.filter(registrant=registrant).exists()

ONLY_AN_ADDRESS = """Namespace Identifier:
   {nid}

Version:
   1

Registrant:
   Email: role@archive.example

Purpose:
   Names archive records.
"""


def test_the_templates_contact_replaces_the_forms_as_a_whole(logged_in, registrant):
    response = logged_in.post(reverse("review:new"), {
        "kind": "formal", "proposed_nid": "", "edit_version": 0,
        "contact_name": registrant.get_full_name(), "contact_phone": "+1 555 0100",
        "private_contact_name": registrant.get_full_name(),
        "template_text": ONLY_AN_ADDRESS.format(nid="archrec"), "import_template": "1"})
    doc = page(response)
    assert field_value(doc, "contact_email") == "role@archive.example"
    # no name typed for someone else stays beside the template's address
    assert field_value(doc, "contact_name") == "" and field_value(doc, "contact_phone") == ""
    assert field_value(doc, "private_contact_name") == registrant.get_full_name()


def test_what_the_template_gets_wrong_is_no_refusal_beside_filled_in(logged_in):
    response = logged_in.post(reverse("review:new"), {
        "kind": "formal", "proposed_nid": "", "edit_version": 0,
        "template_text": ONLY_AN_ADDRESS.format(nid="ab"), "import_template": "1"})
    doc = page(response)
    assert field_errors(doc, "proposed_nid")  # still said at the field
    summary = one(doc, "//*[@id='error-summary']")
    assert "alert-danger" not in summary.get("class")
    assert not text(summary).startswith("Nothing was saved")
