"""The request page's panels (registry/review/presenters.py), each on its own: what it
shows, and for whom."""

import datetime as dt

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.http import QueryDict
from django.utils import timezone

from registry.accounts.actions import expert_set_availability
from registry.review import actions, presenters, workflow
from registry.review.forms import CommentForm
from registry.review.models import Comment, RequestEvent
from tests.factories import make_registration, make_user
from tests.review.helpers import EARLY, registration_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(registrant, expert, staff):
    return {"registrant": registrant, "expert": expert, "staff": staff}


def test_the_header_shows_the_review_period(registrant):
    registration = make_registration(registrant, nid="header")
    now = timezone.now()
    panel = presenters.header_panel(registration, now=now)
    assert panel["period_ends"] == registration.review_period_ends() is not None
    assert panel["now"] == now and panel["registration"] == registration


def test_the_race_panel_names_the_rival_and_remembers_the_race(registrant, other_registrant,
                                                               django_assert_num_queries):
    registration = make_registration(registrant, nid="racer")
    rival = make_registration(other_registrant, nid="RACER")
    panel = presenters.race_panel(registration)
    assert panel["conflicts"] == [rival] and panel["taken_by"] is None
    assert panel["race"] == workflow.Race(1, False)
    with django_assert_num_queries(0):  # the actions that follow read the remembered race
        workflow.race_of(registration)


def test_the_actions_panel_offers_what_the_policy_allows(registrant, expert, second_expert):
    own = make_registration(expert, nid="ownpanel")
    mine = presenters.actions_panel(own, expert, bound={}, now=timezone.now())
    assert [move.name for move, _ in mine["offered"]] == [
        t.name for t in workflow.page_transitions(own, expert)]
    assert not mine["can_assign"] and mine["experts"] == []
    theirs = presenters.actions_panel(own, second_expert, bound={}, now=timezone.now())
    assert theirs["can_assign"]
    # The registrant is never among those a request can be assigned to.
    assert second_expert in theirs["experts"] and expert not in theirs["experts"]
    assert [a for a, _ in theirs["audiences"]] == workflow.comment_audiences(own, second_expert)


def test_the_assign_choices_are_those_the_assign_action_accepts(registrant, expert,
                                                              second_expert, staff):
    """An expert of the registrant's organisation, or one away, is not offered (assigning
    them is refused); the current assignee stays shown as chosen."""
    colleague = make_user("colleague@example.org", roles=["designated expert"],
                          organisation=registrant.organisation)
    away = make_user("away@example.org", roles=["designated expert"])
    expert_set_availability(expert=away, unavailable_until=timezone.localdate()
                            + dt.timedelta(days=9), max_open_assignments=None, actor=away)
    registration = make_registration(registrant, nid="assignees")
    offered = presenters.actions_panel(registration, staff, bound={},
                                       now=timezone.now())["experts"]
    candidates = list(get_user_model().objects.designated_experts())
    assert {away, colleague} <= set(candidates)
    assert offered == [e for e in candidates
                       if workflow.assign_refusal(registration, staff, e) is None]
    assert colleague not in offered and away not in offered and expert in offered
    registration = actions.registration_assign(registration=registration, expert=expert,
                                               actor=staff)
    expert_set_availability(expert=expert, unavailable_until=timezone.localdate()
                            + dt.timedelta(days=9), max_open_assignments=None, actor=expert)
    again = presenters.actions_panel(registration, staff, bound={}, now=timezone.now())
    assert expert in again["experts"]  # away now, still the one assigned


def test_a_refused_form_comes_back_at_its_place_or_above_the_page(registrant, expert):
    registration = make_registration(registrant, nid="boundform")
    refused = CommentForm({"body": "", "audience": Comment.Audience.PUBLIC})
    assert not refused.is_valid()
    placed = presenters.actions_panel(registration, expert, bound={"target": "comment",
                                                                   "form": refused},
                                      now=timezone.now())
    assert placed["comment_form"] is refused and placed["unplaced_errors"] == []
    # A form whose place is not offered any more: its errors go above the page.
    gone = presenters.actions_panel(registration, expert, bound={"target": "register",
                                                                 "form": refused},
                                    now=timezone.now())
    assert gone["unplaced_errors"] == [e for errors in refused.errors.values() for e in errors]


def test_the_template_panel_shows_the_last_round_and_compares_two(people):
    registration = registration_in("changes_requested", path="community", people=people,
                                   nid="rounds")
    one = presenters.template_panel(registration, AnonymousUser(), QueryDict())
    assert [r.number for r in one["rounds"]] == [1] and "round_diffs" not in one
    assert one["shown"] == one["rounds"][0]
    actions.registration_transition(registration=registration, transition="resubmit",
                                    actor=people["registrant"], early_reason=EARLY)
    two = presenters.template_panel(registration, AnonymousUser(), QueryDict())
    assert [r.number for r in two["rounds"]] == [2, 1]
    assert two["round_diffs"]["left_label"] == "Round 1"


def test_the_timeline_hides_what_the_person_may_not_read(people):
    registration = registration_in("in_review", path="community", people=people, nid="timeline")
    actions.registration_comment(registration=registration, actor=people["expert"],
                                 audience="experts",
                                 body="Between experts.")
    for user in (AnonymousUser(), people["registrant"], people["expert"]):
        panel = presenters.timeline_panel(registration, user)
        hidden = workflow.hidden_events(registration, user)
        assert all(e.kind not in hidden for e in panel["events"])
        assert {c.body for c in panel["comments"]} == {
            c.body for c in registration.comments.all() if workflow.can_read_comment(c, user)}
    submitted = presenters.timeline_panel(registration, AnonymousUser())["events"]
    # the registrant is named as the template publishes them, not by their account's name
    assert [e.who for e in submitted if e.kind == RequestEvent.Kind.TRANSITION] == [
        registration.submitted_round.registrant_organisation]


def test_the_mail_panel_is_for_experts_and_staff_only(people):
    registration = registration_in("in_review", path="community", people=people, nid="mailpanel")
    assert presenters.mail_panel(registration, people["registrant"]) == {}
    assert presenters.mail_panel(registration, AnonymousUser()) == {}
    panel = presenters.mail_panel(registration, people["staff"])
    assert panel["show_mail"] and panel["mail_log"]


def test_the_page_is_the_panels_together(people):
    registration = registration_in("in_review", path="community", people=people, nid="together")
    now = timezone.now()
    user = people["expert"]
    context = presenters.registration_page_context(registration, user, query=QueryDict(), now=now)
    parts = [presenters.header_panel(registration, now=now), presenters.race_panel(registration),
             presenters.warnings_panel(registration),
             presenters.actions_panel(registration, user, bound={}, now=now),
             presenters.template_panel(registration, AnonymousUser(), QueryDict()),
             presenters.timeline_panel(registration, user), presenters.mail_panel(registration,
                                                                                  user)]
    keys = [key for part in parts for key in part]
    assert sorted(context) == sorted(keys) and len(keys) == len(set(keys))
