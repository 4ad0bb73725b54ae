"""IANA staff pages for accounts and roles: find, recognize, roles, profile, holder."""

import datetime as dt

import lxml.html
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.accounts import actions
from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import EXPERT_GROUP, STAFF_GROUP, is_expert
from registry.namespaces.actions import namespace_register
from registry.namespaces.models import NamespaceEvent
from tests.factories import complete_values, make_user
from tests.html import one, text


@pytest.fixture
def body(db):
    return make_user("body@example.org", organisation="Body of Standards")


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def html(response):
    return lxml.html.fromstring(response.content)


@pytest.mark.parametrize("persona", ["registrant", "expert"])
def test_only_staff_see_the_accounts(client, request, body, persona):
    assert client.get("/iana/people/").status_code == 302
    client.force_login(request.getfixturevalue(persona))
    assert client.get("/iana/people/").status_code == 403
    response = client.post(f"/iana/people/{body.pk}/", {"form": "recognition",
                                                        "recognition-reason": "Me."})
    assert response.status_code == 403
    body.refresh_from_db()
    assert not body.recognized_standards_body


def test_accounts_are_found_by_organisation(staff_client, body, registrant):
    page = html(staff_client.get("/iana/people/?q=standards"))
    assert [h.text_content() for h in page.xpath("//main//h1")] == ["Accounts and roles"]
    rows = page.xpath("//table[@id='accounts']/tbody/tr")
    assert len(rows) == 1 and "body@example.org" in rows[0].text_content()
    assert rows[0].xpath(".//a/@href") == [f"/iana/people/{body.pk}/"]


def test_more_accounts_and_roles_cost_no_more_queries(staff_client, body, registrant, expert):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            response = staff_client.get("/iana/people/")
        assert response.status_code == 200
        return len(captured)

    queries()  # the first answer after a change reads what the next ones keep
    few = queries()
    roles = [(), [EXPERT_GROUP], [STAFF_GROUP], [EXPERT_GROUP, STAFF_GROUP]]
    for n in range(8):
        make_user(f"many{n}@example.org", roles=roles[n % 4], recognized=n == 4)
    queries()
    doc = html(staff_client.get("/iana/people/"))
    shown = {row.xpath("td[2]")[0].text_content(): row.xpath("td[4]")[0].text_content()
             for row in doc.xpath("//table[@id='accounts']/tbody/tr")}
    assert len(shown) == 12
    assert [shown[f"many{n}@example.org"] for n in range(5)] == [
        "registrant", "designated expert", "IANA staff", "IANA staff", "standards body"]
    assert queries() == few


def test_recognize_a_body_from_its_page(staff_client, staff, body):
    url = f"/iana/people/{body.pk}/"
    refused = staff_client.post(url, {"form": "recognition", "recognition-reason": ""})
    assert refused.status_code == 400
    assert html(refused).xpath("//textarea[@name='recognition-reason']"
                               "[contains(@class, 'is-invalid')]")
    assert staff_client.post(url, {"form": "recognition",
                                   "recognition-reason": "IESG, 2026-11-20."}).status_code == 302
    body.refresh_from_db()
    assert body.recognized_standards_body
    event = AccountEvent.objects.get(user=body, kind="recognized")
    assert (event.actor, event.reason) == (staff, "IESG, 2026-11-20.")
    history = html(staff_client.get(url)).get_element_by_id("history").text_content()
    assert "IESG, 2026-11-20." in history and staff.get_full_name() in history


def test_grant_and_end_the_expert_role(staff_client, body):
    url = f"/iana/people/{body.pk}/"
    form = "role:designated expert"
    prefix = "role-designated-expert"
    assert staff_client.post(url, {"form": form, f"{prefix}-reason": "Appointed."}
                             ).status_code == 302
    assert is_expert(User.objects.get(pk=body.pk))
    assert staff_client.post(url, {"form": form, f"{prefix}-reason": "Term ended."}
                             ).status_code == 302
    assert not is_expert(User.objects.get(pk=body.pk))
    assert list(AccountEvent.objects.filter(user=body).order_by("id")
                .values_list("kind", "role")) == [("role_granted", EXPERT_GROUP),
                                                  ("role_revoked", EXPERT_GROUP),
                                                  (AccountEvent.Kind.REPLY_ADDRESSES_REVOKED, "")]


def test_a_refused_profile_keeps_what_was_typed(staff_client, body):
    url = f"/iana/people/{body.pk}/"
    response = staff_client.post(url, {"form": "profile", "profile-first_name": "Beatrix",
                                       "profile-last_name": "Body", "profile-organisation":
                                       "Renamed Body", "profile-is_active": "on",
                                       "profile-reason": ""})
    assert response.status_code == 400
    page = html(response)
    assert page.xpath("//input[@name='profile-first_name']/@value") == ["Beatrix"]
    assert page.xpath("//input[@name='profile-organisation']/@value") == ["Renamed Body"]
    assert page.xpath("//textarea[@name='profile-reason'][contains(@class, 'is-invalid')]")
    body.refresh_from_db()
    assert body.first_name == "Pat"


def test_make_someone_the_holder_of_a_namespace(staff_client, staff, body):
    namespace_register(kind="formal", nid="heldns", values=complete_values(),
                       date=dt.date(2026, 11, 1), actor=staff)
    url = f"/iana/people/{body.pk}/"
    refused = staff_client.post(url, {"form": "holder", "holder-nid": "heldnz",
                                      "holder-reason": "Transfer."})
    assert refused.status_code == 400
    assert html(refused).xpath("//input[@name='holder-nid']/@value") == ["heldnz"]
    assert staff_client.post(url, {"form": "holder", "holder-nid": "HeldNS",
                                   "holder-reason": "Transfer."}).status_code == 302
    event = NamespaceEvent.objects.get(kind="holder_changed")
    assert event.changes["holder"] == [None, body.email] and event.comment == "Transfer."
    # The Reference column names the new holder's organisation (tests/review/test_holder_change)
    assert [r["text"] for r in event.changes["references"][1]] == ["Body of Standards"]
    assert "/iana/namespaces/heldns/" in html(staff_client.get(url)).xpath("//a/@href")


def test_refusing_to_deactivate_oneself_shows_at_the_field(staff_client, staff):
    url = f"/iana/people/{staff.pk}/"
    response = staff_client.post(url, {"form": "profile", "profile-first_name": staff.first_name,
                                       "profile-last_name": staff.last_name,
                                       "profile-organisation": "", "profile-reason": "Leaving."})
    assert response.status_code == 400
    page = html(response)
    assert page.xpath("//input[@name='profile-is_active'][contains(@class, 'is-invalid')]")
    assert "You cannot deactivate your own account." in text(one(
        page, "//input[@name='profile-is_active']/ancestor::div[contains(@class, 'mb-3')][1]"))
    assert User.objects.get(pk=staff.pk).is_active


def test_a_change_without_a_reason_is_refused_at_the_reason_with_the_actions_words(
        staff_client, registrant):
    url = f"/iana/people/{registrant.pk}/"
    response = staff_client.post(url, {"form": "profile", "profile-first_name": "Renamed",
                                       "profile-last_name": registrant.last_name,
                                       "profile-organisation": registrant.organisation,
                                       "profile-is_active": "on", "profile-reason": "  "})
    assert response.status_code == 400
    page = html(response)
    shown = text(one(page, "//textarea[@name='profile-reason']"
                           "/ancestor::div[contains(@class, 'mb-3')][1]"))
    assert str(actions.reason_refusal("")) in shown
    assert User.objects.get(pk=registrant.pk).first_name != "Renamed"
    # What was typed stays in its field; the page names the account as it is stored.
    assert one(page, "//input[@name='profile-first_name']").get("value") == "Renamed"
    assert "Renamed" not in text(one(page, "//h1"))
    assert text(one(page, "//h1")).startswith(registrant.display_name)
