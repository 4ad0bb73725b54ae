"""Contact privacy: the registry publishes the contact the registrant chose; the
contact for IANA only reaches IANA staff and the registrant, and nothing public."""

import json

import pytest
from django.urls import reverse

from registry.namespaces.models import Namespace
from registry.namespaces.template import CONTACT_FIELDS, PRIVATE_FIELDS, TEXT_FIELDS
from registry.review.forms import RequestForm
from registry.review.models import RegistrationRequest
from tests.factories import approve, complete_values, make_registration
from tests.html import field_value, find, one, page, text

ROLE = "urn-registry@archive.example"
PERSONAL = "pat.personal@home.example"
PRIVATE = {"private_contact_name": "Pat Personal", "private_contact_email": PERSONAL,
           "private_contact_phone": "+1 555 9876", "private_contact_postal": "7 Home Lane"}


def test_each_contact_field_has_a_private_twin_kept_out_of_the_published_fields():
    assert [c.published for c in CONTACT_FIELDS] == [
        name for name in TEXT_FIELDS if name.startswith("contact_")]
    assert set(PRIVATE_FIELDS).isdisjoint(TEXT_FIELDS)
    assert len(PRIVATE_FIELDS) == len(CONTACT_FIELDS) == 4


@pytest.fixture
def registered(registrant, expert, staff, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="privarch", contact_email=ROLE,
                                         contact_name="URN registrar", **PRIVATE)
        approve(registration, expert, staff, register=True)
    return RegistrationRequest.objects.get(pk=registration.pk)


def test_the_private_contact_travels_from_request_to_round_to_version(registered):
    version = Namespace.objects.by_nid("privarch").get().current_version()
    for name, value in PRIVATE.items():
        assert getattr(registered.rounds.get(), name) == value
        assert getattr(version, name) == value
    assert version.contact_email == ROLE


def test_the_private_contact_reaches_nothing_public(client, registered, mailoutbox):
    assert mailoutbox, "the review sent mail"
    for message in mailoutbox:
        whole = message.message().as_bytes()
        for value in PRIVATE.values():
            assert value.encode() not in whole
    urls = [reverse("namespaces:detail", args=["privarch"]),
            reverse("namespaces:template-txt", args=["privarch"]),
            reverse("namespaces:registry-xml"), reverse("namespaces:registry-csv"),
            reverse("namespaces:formal-csv"), reverse("namespaces:feed"),
            reverse("namespaces:api-list"), reverse("namespaces:api-detail", args=["privarch"]),
            reverse("namespaces:search") + "?q=Personal",
            reverse("review:public-review"), registered.get_absolute_url(),
            reverse("review:round-txt", args=[registered.pk, 1])]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        body = b"".join(response) if response.streaming else response.content
        for value in PRIVATE.values():
            assert value.encode() not in body, (url, value)
    api = json.loads(client.get(urls[7]).content)
    assert api["versions"][0]["template"]["contact_email"] == ROLE
    assert not set(PRIVATE_FIELDS) & set(api["versions"][0]["template"])


@pytest.mark.parametrize("persona, sees", [("staff", True), ("registrant", True),
                                           ("expert", False), ("other_registrant", False)])
def test_only_staff_and_the_registrant_see_the_private_contact(client, request, registered,
                                                               persona, sees):
    client.force_login(request.getfixturevalue(persona))
    doc = page(client.get(registered.get_absolute_url()))
    shown = find(doc, "//*[@id='private-contact']")
    assert bool(shown) == sees
    if sees:
        assert PERSONAL in text(shown[0]) and "+1 555 9876" in text(shown[0])


def test_staff_see_both_parts_on_the_registry_record(client, registered, staff):
    client.force_login(staff)
    doc = page(client.get(reverse("namespaces:staff-namespace", args=["privarch"])))
    rows = {text(r.xpath("./th")[0]): [text(c) for c in r.xpath("./td")]
            for r in find(doc, "//*[@id='contact-table']/tbody/tr")}
    assert rows["Contact email"] == [ROLE, PERSONAL]
    assert rows["Contact person"] == ["URN registrar", "Pat Personal"]


def test_a_published_address_is_no_literal_address_in_the_page(client, registered):
    response = client.get(reverse("namespaces:detail", args=["privarch"]))
    assert ROLE.encode() not in response.content
    doc = page(response)
    span = one(doc, "//*[contains(@class, 'email-address')]")
    assert f"{span.get('data-email-user')}@{span.get('data-email-domain')}" == ROLE
    assert "@" not in text(span)  # the "@" is drawn by the style sheet
    button = one(doc, "//button[contains(@class, 'copy-email')]")
    assert button.get("hidden") is not None and button.get("type") == "button"


def test_a_new_request_offers_the_account_for_iana_and_publishes_nothing_yet(client,
                                                                              registrant):
    client.force_login(registrant)
    doc = page(client.get(reverse("review:new")))
    assert field_value(doc, "private_contact_email") == registrant.email
    assert field_value(doc, "private_contact_name") == registrant.get_full_name()
    assert field_value(doc, "contact_email") == "" and field_value(doc, "contact_name") == ""
    assert "role address" in text(one(doc, "//*[@id='id_contact_email_helptext']"))


def test_the_form_saves_both_parts(client, registrant):
    client.force_login(registrant)
    data = {"kind": "formal", "proposed_nid": "formpriv", "edit_version": 0,
            **complete_values(registrant, contact_email=ROLE), **PRIVATE}
    client.post(reverse("review:new"), data)
    saved = RegistrationRequest.objects.get(registrant=registrant)
    assert saved.contact_email == ROLE and saved.private_contact_email == PERSONAL
    assert set(PRIVATE_FIELDS) <= set(RequestForm().fields)
