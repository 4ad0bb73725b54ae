"""The IANA staff page of a namespace: record, deprecation, reinstatement."""

import datetime as dt

import lxml.html
import pytest

from registry.namespaces import xrefs
from registry.namespaces.actions import namespace_register, reason_refusal
from registry.namespaces.models import NamespaceEvent
from tests.factories import complete_values


@pytest.fixture
def namespace(staff):
    return namespace_register(kind="formal", nid="staffns", values=complete_values(),
                              date=dt.date(2026, 11, 1), actor=staff)


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


URL = "/iana/namespaces/staffns/"


def html(response):
    return lxml.html.fromstring(response.content)


def field_error(page, name):
    """The error shown at the field called ``name`` (crispy's invalid-feedback)."""
    element = page.xpath(f"//*[@name='{name}']")[0]
    assert "is-invalid" in element.get("class", "")
    return " ".join(page.xpath(f"//*[@id='error_1_id_{name}']//text()")).strip()


@pytest.mark.parametrize("persona", ["registrant", "expert"])
def test_only_staff_see_the_page(client, request, namespace, persona):
    assert client.get(URL).status_code == 302  # anonymous: log in first
    client.force_login(request.getfixturevalue(persona))
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"form": "record", "record-registry_note": "x",
                             "record-reason": "y"}).status_code == 403
    namespace.refresh_from_db()
    assert namespace.registry_note == ""


def test_namespace_page_links_staff_to_the_record(client, staff, registrant, namespace):
    client.force_login(registrant)
    assert URL not in html(client.get("/namespaces/staffns/")).xpath("//a/@href")
    client.force_login(staff)
    assert URL in html(client.get("/namespaces/staffns/")).xpath("//a/@href")


def test_set_the_holder_and_references_with_a_reason(staff_client, staff, registrant,
                                                     namespace):
    response = staff_client.post(URL, {
        "form": "record", "record-holder": registrant.email.upper(),
        "record-references": "RFC8141\n\nRFC Errata 3188", "record-registry_note": "",
        "record-registered_on": "2026-11-01", "record-template_url": "",
        "record-template_date": "", "record-reason": "The registrant asked, ticket 12."})
    assert response.status_code == 302
    namespace.refresh_from_db()
    assert namespace.holder == registrant
    assert [xrefs.label(r) for r in namespace.references] == ["RFC8141", "RFC Errata 3188"]
    event = NamespaceEvent.objects.get(kind="holder_changed")
    assert event.actor == staff and event.comment == "The registrant asked, ticket 12."
    history = html(staff_client.get(URL)).get_element_by_id("history").text_content()
    assert "The registrant asked, ticket 12." in history and registrant.email in history


@pytest.mark.parametrize(("field", "value", "message"), [
    ("holder", "nobody@example.org", "No account has the address"),
    ("template_url", "javascript:alert(1)", "Enter a valid URL"),
    ("reason", "", str(reason_refusal(""))),  # the action's own words
])
def test_a_refused_record_keeps_every_character_with_the_error_at_the_field(
        staff_client, namespace, field, value, message):
    data = {"form": "record", "record-holder": "", "record-references": "RFC8141",
            "record-registry_note": "A note of 2,000 characters? " * 3,
            "record-registered_on": "2026-11-01", "record-template_url": "",
            "record-template_date": "", "record-reason": "Why I changed it."}
    data[f"record-{field}"] = value
    response = staff_client.post(URL, data)
    assert response.status_code == 400
    page = html(response)
    assert message in field_error(page, f"record-{field}")
    assert page.xpath("//textarea[@name='record-registry_note']")[0].text.strip() == \
        data["record-registry_note"].strip()
    if field != "reason":
        assert page.xpath("//textarea[@name='record-reason']")[0].text.strip() == \
            "Why I changed it."
    assert not NamespaceEvent.objects.filter(kind="record_changed").exists()


def test_deprecate_with_pointer_then_reinstate(staff_client, staff, namespace):
    namespace_register(kind="formal", nid="staffnext", values=complete_values(),
                       date=dt.date(2026, 11, 2), actor=staff)
    refused = staff_client.post(URL, {"form": "status", "status-replaced_by": "staffnxt",
                                      "status-comment": "Use staffnext."})
    assert refused.status_code == 400
    page = html(refused)
    assert "not a registered NID" in field_error(page, "status-replaced_by")
    assert page.xpath("//input[@name='status-replaced_by']/@value") == ["staffnxt"]
    assert page.xpath("//textarea[@name='status-comment']")[0].text.strip() == "Use staffnext."
    assert staff_client.post(URL, {"form": "status", "status-replaced_by": "StaffNext",
                                   "status-comment": "Use staffnext."}).status_code == 302
    namespace.refresh_from_db()
    assert namespace.is_deprecated and namespace.replaced_by.nid == "staffnext"
    public = html(staff_client.get("/namespaces/staffns/"))
    assert "/namespaces/staffnext/" in public.xpath("//div[contains(@class,'alert-warning')]"
                                                    "//a/@href")
    assert staff_client.post(URL, {"form": "status", "status-comment": "Back in use."}
                             ).status_code == 302
    namespace.refresh_from_db()
    assert not namespace.is_deprecated and namespace.replaced_by is None
    assert NamespaceEvent.objects.filter(kind="status_changed").count() == 2


def test_staff_queue_opens_a_record_by_nid(staff_client, namespace):
    queue = html(staff_client.get("/requests/iana/"))
    assert queue.xpath("//form[@action='/iana/namespaces/']//input[@name='nid']")
    assert "/iana/people/" in queue.xpath("//a/@href")
    assert staff_client.get("/iana/namespaces/?nid=STAFFNS")["Location"] == URL
    assert staff_client.get("/iana/namespaces/?nid=nope")["Location"] == "/requests/iana/"
