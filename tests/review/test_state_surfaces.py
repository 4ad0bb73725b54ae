"""Every state of the table reaches every surface that lists requests by state.

The states are read from ``workflow.STATES`` when the tests are collected: a state added
to the table (a value of ``State``, its row, its transitions, a migration) is swept here at
once, and fails until the experts' dashboard, the public review page, IANA staff's queue,
the idle reminders, the statistics and the manual's states table each treat it as its row
says. (That it is reachable and has a way out: tests/review/test_states.py.)"""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from registry.review import workflow
from registry.review.models import RegistrationRequest
from registry.review.workflow import STATES
from registry.review.workflow_docs import states_table
from tests.html import links, page
from tests.review.helpers import FAST_ROUTES, ROUTES, registration_in


@pytest.fixture
def in_state(request, registrant, expert, staff):
    state = request.param
    path = workflow.COMMUNITY if ROUTES[state] is not None else workflow.FAST_TRACK
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    if path == workflow.FAST_TRACK:
        from tests.factories import make_user

        people["registrant"] = make_user("body@example.org", organisation="A Body",
                                         recognized=True)
    registration = registration_in(state, path=path, people=people,
                                   nid="every" + state.replace("_", "")[:10])
    assert registration is not None and registration.state == state
    return registration


def _listed(client, url: str, registration: RegistrationRequest) -> bool:
    return registration.get_absolute_url() in links(page(client.get(url)), "//main//a")


@pytest.mark.django_db
@pytest.mark.parametrize("in_state", list(STATES), indirect=True)
def test_each_state_is_where_its_row_says(client, in_state, expert, staff):
    registration, row = in_state, STATES[in_state.state]

    client.force_login(expert)
    dashboard = page(client.get(reverse("review:dashboard")))
    headings = [h.text_content().split("\n")[0].strip()
                for h in dashboard.xpath("//main//h2[span[contains(@class, 'badge')]]")]
    assert (row.label in " ".join(headings)) == row.open, headings
    assert _listed(client, reverse("review:dashboard"), registration) == row.open

    client.force_login(staff)
    assert _listed(client, reverse("review:staff-queue"), registration) == row.staff_queue
    if row.staff_queue:  # under its state's heading, or with what staff register
        queue = page(client.get(reverse("review:staff-queue")))
        heading = queue.xpath(f"//main//a[@href='{registration.get_absolute_url()}']"
                              "/preceding::h2[1]")[0].text_content()
        assert ("Ready to register" if workflow.registers_from(row.state)
                else row.label) in heading
    client.logout()
    assert _listed(client, reverse("review:public-review"), registration) == row.public_review

    later = timezone.now() + dt.timedelta(days=365)
    due = RegistrationRequest.objects.needing_reminder(now=later, idle=dt.timedelta(days=7))
    assert due.filter(pk=registration.pk).exists() == row.reminded

    by_state = {r["state"]: r for r in client.get(reverse("stats-json")).json()[
        "requests_by_state"]}
    # Every state but the initial one has its row; a request never submitted (a draft,
    # a draft withdrawn) is private: not counted.
    assert (registration.state in by_state) == (not row.initial)
    if not row.initial:
        assert by_state[registration.state]["label"] == row.label
        assert by_state[registration.state]["count"] == (
            registration.review_started_at is not None)

    assert sum(f"(`{registration.state}`)" in line for line in states_table()) == 1


def test_the_sweep_covers_every_state():
    assert set(ROUTES) == set(FAST_ROUTES) == set(STATES)
    assert all(ROUTES[s] is not None or FAST_ROUTES[s] is not None for s in STATES)
