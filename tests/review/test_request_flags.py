"""Flags a request carries where people read it: the public review list flags races
for a NID, a registered or closed request carries no stale warnings, and a closed
request says why at its top."""

import datetime as dt

import pytest
from django.urls import reverse

from registry.namespaces.actions import namespace_register
from registry.review import actions, workflow
from tests.factories import complete_values, make_registration
from tests.html import find, one, page, text
from tests.review.helpers import registration_in


@pytest.fixture
def people(registrant, other_registrant, expert, staff):
    return {"registrant": registrant, "other_registrant": other_registrant, "expert": expert,
            "staff": staff}


def race_flags(doc) -> dict[str, list[str]]:
    rows = find(doc, "//table[@id='pending']/tbody/tr[not(@class='discussion')]")
    return {text(row.xpath("./td[1]")[0]): [b.get("data-race") for b in
                                            row.xpath(".//*[@data-race]")] for row in rows}


def test_the_public_review_list_flags_case_twins_and_nids_registered_meanwhile(
        client, people, staff):
    lower = make_registration(people["registrant"], nid="exlib")
    upper = make_registration(people["other_registrant"], nid="ExLib")
    taken = make_registration(people["registrant"], nid="exgone")
    alone = make_registration(people["registrant"], nid="exalone")
    namespace_register(kind="formal", nid="ExGone", values=complete_values(),
                       date=dt.date(2026, 11, 1), actor=staff)
    flags = race_flags(page(client.get(reverse("review:public-review"))))
    assert flags == {str(lower.pk): ["conflict"], str(upper.pk): ["conflict"],
                     str(taken.pk): ["taken"], str(alone.pk): []}


def test_a_registered_request_carries_no_stale_warnings(client, people, staff):
    namespace_register(kind="formal", nid="exarchive", values=complete_values(),
                       date=dt.date(2026, 11, 1), actor=staff)
    open_one = registration_in("in_review", path="community", people=people, nid="exarchives")
    assert find(page(client.get(open_one.get_absolute_url())), "//*[@id='nid-warnings']")
    registered = registration_in("registered", path="community", people=people, nid="exarchivez")
    doc = page(client.get(registered.get_absolute_url()))
    assert find(doc, "//*[@id='nid-warnings']") == []
    assert find(doc, "//*[@id='conflict-flag' or @id='nid-taken']") == []
    assert find(doc, "//*[@id='closing-reason']") == []


@pytest.mark.parametrize("state", workflow.CLOSED_STATES)
def test_a_closed_request_says_why_at_its_top(client, people, state):
    registration = make_registration(people["registrant"], nid="exclosed")
    twin = make_registration(people["other_registrant"], nid="ExClosed")
    move, actor = {"rejected": ("reject", "expert"), "withdrawn": ("withdraw", "registrant"),
                   "closed": ("close", "expert")}[state]
    reason = f"The reason for {state}: see the twin request."
    actions.registration_transition(registration=registration, transition=move, actor=people[actor],
                                    comment=reason, early_reason="Tested early.")
    doc = page(client.get(registration.get_absolute_url()))
    closing = one(doc, "//*[@id='closing-reason']")
    assert reason in text(closing)
    assert find(doc, "//*[@id='conflict-flag' or @id='nid-warnings']") == []
    assert find(page(client.get(twin.get_absolute_url())), "//*[@id='closing-reason']") == []
