"""Conflict warnings (RFC 8141 sections 5.1 and 6.2) where people see them: the live
check behind the form, the form itself, the request page and the expert dashboard."""

import datetime as dt

import pytest
from django.urls import reverse

from registry.namespaces.actions import namespace_register
from registry.namespaces.advice import confusion_index, nid_warnings
from registry.namespaces.models import Namespace, Person
from registry.review import actions
from tests.factories import complete_values, make_registration
from tests.html import find, links, one, page, text
from urn8141.confusion import SAME_ORGANISATION


@pytest.fixture
def xmpp(staff):
    return namespace_register(kind="formal", nid="xmpp", actor=staff, date=dt.date(2007, 4, 27),
                              values=complete_values(registrant_organisation=
                                                     "XMPP Standards Foundation"))


def test_live_check_gives_each_warning_with_its_reason_and_links(client, xmpp):
    data = client.get("/api/nid-check", {"nid": "xmpp-ext",
                                          "organisation": "XMPP Standards Foundation, Inc."}).json()
    assert data["acceptable"]
    assert [(w["code"], w["matched"], w["link"]) for w in data["warnings"]] == [
        ("prefix_or_suffix", "xmpp", "/namespaces/xmpp/"),
        ("same_organisation", "xmpp", "/namespaces/xmpp/"),
    ]
    first = data["warnings"][0]
    assert first["message"] == '"xmpp-ext" starts with the registered NID "xmpp".'
    assert first["rule"] == "RFC 8141 section 5.1"
    assert first["rule_link"] == "https://www.rfc-editor.org/rfc/rfc8141#section-5.1"


def test_live_check_does_not_compare_a_request_with_itself(client, registrant):
    registration = make_registration(registrant, nid="selfnid")
    codes = [w["code"] for w in client.get("/api/nid-check", {"nid": "selfnid"}).json()
             ["warnings"]]
    assert codes == ["duplicate_request"]
    mine = client.get("/api/nid-check", {"nid": "selfnid",
                                         "registration": registration.pk}).json()
    assert mine["warnings"] == []


def test_the_index_follows_the_registry(client, staff, db):
    assert client.get("/api/nid-check", {"nid": "newnids"}).json()["warnings"] == []
    namespace_register(kind="formal", nid="newnid", actor=staff, date=dt.date(2026, 1, 1),
                       values=complete_values())
    data = client.get("/api/nid-check", {"nid": "newnids"}).json()
    assert [w["code"] for w in data["warnings"]] == ["plural"]
    assert confusion_index() is confusion_index()  # unchanged registry: the same index


def test_the_index_follows_the_open_requests_in_place(registrant, xmpp):
    """A submission changes only the open requests: the index of the registry is kept
    and the request is added to it; a request that closes leaves it."""
    index = confusion_index()
    assert nid_warnings("racenid") == []
    registration = make_registration(registrant, nid="racenid")
    assert confusion_index() is index
    assert [w.code for w in nid_warnings("racenids")] == ["plural"]
    actions.registration_transition(registration=registration, transition="withdraw",
                                    actor=registrant)
    assert confusion_index() is index
    assert nid_warnings("racenids") == []


def test_request_page_lists_the_warnings_accessibly(client, registrant, expert, xmpp):
    registration = make_registration(registrant, nid="xmpp-ext",
                                     registrant_organisation="XMPP Standards Foundation Inc")
    client.force_login(expert)
    doc = page(client.get(registration.get_absolute_url()))
    section = one(doc, "//section[@id='nid-warnings']")
    assert section.get("aria-labelledby") == "nid-warnings-title"
    assert text(one(doc, "//*[@id='nid-warnings-title']")).startswith(
        "Possible confusion with this NID (2)")
    items = find(section, ".//li[contains(@class, 'nid-warning')]")
    assert [li.get("data-code") for li in items] == ["prefix_or_suffix", "same_organisation"]
    assert "This body already holds \"xmpp\"" in text(items[1])
    assert links(items[0], ".//a") == ["/namespaces/xmpp/",
                                       "https://www.rfc-editor.org/rfc/rfc8141#section-5.1"]
    assert text(one(items[0], ".//*[@class='visually-hidden']")) == "Warning:"


def test_dashboard_shows_the_warnings_of_each_request(client, registrant, other_registrant,
                                                      expert, xmpp):
    near = make_registration(registrant, nid="xmpp3")
    clean = make_registration(other_registrant, nid="quitefresh")
    client.force_login(expert)
    doc = page(client.get(reverse("review:dashboard")))
    rows = {text(row.xpath("./td")[0]): row
            for row in find(doc, "//table[@data-state='in_review']/tbody/tr")}
    details = find(rows[str(near.pk)], ".//details[contains(@class, 'dashboard-warnings')]")
    assert len(details) == 1
    assert "1 warning" in text(one(details[0], ".//summary"))
    assert details[0].xpath(".//li")[0].get("data-code") == "near_spelling"
    assert find(rows[str(clean.pk)], ".//details") == []


def test_the_form_shows_the_warnings_without_javascript(client, registrant, xmpp):
    client.force_login(registrant)
    draft = make_registration(registrant, nid="xmpps", submit=False)
    doc = page(client.get(reverse("review:edit", args=[draft.pk])))
    status = one(doc, "//*[@id='nid-status']")
    assert status.get("aria-live") == "polite"
    assert [li.get("data-code") for li in status.xpath(".//li")] == ["plural"]


def test_same_organisation_fires_for_rows_imported_without_a_template(registry):
    issn = Namespace.objects.by_nid("issn").get()
    assert issn.organisation == "" and not issn.versions.exists()  # IANA's row only
    warnings = nid_warnings("issnl", organisation="ISSN International Centre")
    same = [w for w in warnings if w.code == SAME_ORGANISATION]
    assert [w.matched for w in same] == ["issn"]
    assert not [w for w in nid_warnings("issnl", organisation="Another Body")
                if w.code == SAME_ORGANISATION]


def test_same_organisation_reads_the_organisation_of_a_person_referred_to(db):
    Person.objects.create(person_id="Pat_Archivist", name="Pat Archivist",
                          org="Example Archive Foundation")
    Namespace.objects.create(nid="exarch", kind="formal",
                             references=[{"type": "person", "data": "Pat_Archivist"}])
    warnings = nid_warnings("exarch2", organisation="Example Archive Foundation")
    assert [w.matched for w in warnings if w.code == SAME_ORGANISATION] == ["exarch"]
