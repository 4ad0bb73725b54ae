"""The two tables of the workflow held together: STATES (what each state means) and
TRANSITIONS (the moves between them). A new state or a new move that leaves either
table incomplete fails here, naming what is missing."""

import dataclasses
import datetime as dt

import pytest
from django.utils import timezone

from registry.review import workflow
from registry.review.models import RegistrationRequest, State
from registry.review.workflow import STATES, TRANSITIONS, StateMeaning, states_where
from tests.factories import make_registration
from tests.html import one, page, text
from tests.review.helpers import registration_in

FLAGS = [f.name for f in dataclasses.fields(StateMeaning) if f.type in ("bool", bool)]


def test_every_state_has_one_row_and_every_row_is_a_state():
    assert list(STATES) == list(State.values)
    assert all(row.state == name for name, row in STATES.items())


def test_every_attribute_is_set_for_every_state():
    """No attribute has a default: a row that leaves one out does not even build."""
    fields = dataclasses.fields(StateMeaning)
    assert all(f.default is dataclasses.MISSING for f in fields)
    for row in STATES.values():
        assert row.badge.startswith("text-bg-"), row
        assert row.label == State(row.state).label
        assert all(isinstance(getattr(row, flag), bool) for flag in FLAGS), row


def test_exactly_one_initial_state_and_each_state_initial_open_or_final():
    assert len(states_where(initial=True)) == 1
    for row in STATES.values():
        assert [row.initial, row.open, row.final].count(True) == 1, row.state


def test_what_only_an_open_request_can_be():
    """Reminders, public review, answers by mail and the staff queue are for requests
    under way; nothing final can be edited."""
    for flag in ("reminded", "public_review", "answered_by_mail", "staff_queue",
                 "standardisation_open", "review_clock"):
        assert set(states_where(**{flag: True})) <= set(states_where(open=True)), flag
    assert not set(states_where(editable=True)) & set(states_where(final=True))


def test_every_state_staff_are_mailed_about_says_what_they_are_to_do():
    """The mail to IANA staff prints the row's ``staff_next_step``: every state a move
    that mails staff reaches has one (and so is in their queue)."""
    mailed = {t.target for t in TRANSITIONS.values() if workflow.STAFF in t.mail}
    assert mailed
    assert sorted(state for state in mailed if not STATES[state].staff_next_step) == []


def test_every_transition_joins_states_of_the_table():
    for t in TRANSITIONS.values():
        assert t.sources <= set(STATES) and t.target in STATES, t.name


def test_every_state_is_reachable_from_the_initial_one():
    reached = {workflow.INITIAL_STATE}
    frontier = [workflow.INITIAL_STATE]
    while frontier:
        state = frontier.pop()
        for t in TRANSITIONS.values():
            if state in t.sources and t.target not in reached:
                reached.add(t.target)
                frontier.append(t.target)
    assert set(STATES) - reached == set(), "states no transition reaches"


def test_final_states_have_no_exits_and_the_others_have_one():
    exits = {s for t in TRANSITIONS.values() for s in t.sources}
    assert exits & set(states_where(final=True)) == set(), "a final state with an exit"
    assert set(states_where(final=False)) - exits == set(), "a dead end that is not final"


def test_the_derived_lists_are_the_rows():
    assert states_where(open=True) == workflow.OPEN_STATES
    assert states_where(final=True) == workflow.FINAL_STATES
    assert set(TRANSITIONS["close"].sources) == set(workflow.OPEN_STATES)
    assert set(TRANSITIONS["withdraw"].sources) == {workflow.INITIAL_STATE, *workflow.OPEN_STATES}


# --- The rows are read: one row changes one rule ------------------------------------------

def _quiet(monkeypatch, state: str, **meaning):
    monkeypatch.setitem(STATES, state, dataclasses.replace(STATES[state], **meaning))


@pytest.mark.django_db
def test_the_idle_reminder_reads_the_row(monkeypatch, registrant):
    registration = make_registration(registrant, nid="idlerow")
    RegistrationRequest.objects.filter(pk=registration.pk).update(
        last_activity_at=timezone.now() - dt.timedelta(days=60))
    def due():
        return list(RegistrationRequest.objects.needing_reminder(
            now=timezone.now(), idle=dt.timedelta(days=14)))

    assert due() == [registration]
    _quiet(monkeypatch, registration.state, reminds="")  # e.g. a request put on hold
    assert due() == []


@pytest.mark.django_db
def test_the_public_review_list_reads_the_row(monkeypatch, registrant):
    registration = make_registration(registrant, nid="listrow")
    assert list(RegistrationRequest.objects.in_public_review()) == [registration]
    _quiet(monkeypatch, registration.state, public_review=False)
    assert list(RegistrationRequest.objects.in_public_review()) == []


@pytest.mark.django_db
def test_answers_by_mail_read_the_row(monkeypatch, registrant, expert, staff):
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    registration = registration_in("changes_requested", path="community", people=people,
                                   nid="mailrow")
    assert workflow.answered_by_mail(registration)
    assert workflow.moves_answered_by_mail() == ("request_changes",)
    _quiet(monkeypatch, registration.state, answered_by_mail=False)
    assert not workflow.answered_by_mail(registration)
    assert workflow.moves_answered_by_mail() == ()


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["draft", "in_review", "changes_requested", "registered"])
def test_the_badge_is_the_rows(client, registrant, expert, staff, state):
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    nid = "badge" + state.replace("_", "")[:8]
    registration = registration_in(state, path="community", people=people, nid=nid)
    client.force_login(registrant)
    doc = page(client.get(registration.get_absolute_url()))
    badge = one(doc, "//h1/following-sibling::span[1]")
    assert set(badge.get("class").split()) == {"badge", *STATES[state].badge.split()}
    assert text(badge) == STATES[state].label


def test_who_is_reminded_first_is_who_can_act_in_the_state():
    """The ``reminds`` column: where the experts take a move leaving the state, the
    experts; where only IANA staff can (ready to register, awaiting the IESG), staff;
    where the registrant is to act (changes requested), the experts, who follow it up."""
    from registry.accounts.roles import EXPERT_ROLE, STAFF_ROLE

    for row in STATES.values():
        assert row.reminds in ("", workflow.EXPERTS, workflow.STAFF), row.state
        if not row.reminds:
            continue
        acting = {r for t in TRANSITIONS.values() if row.state in t.sources
                  and not t.overtaken_only and t.name != "withdraw" for r in t.roles}
        if EXPERT_ROLE in acting:
            assert row.reminds == workflow.EXPERTS, row.state
        elif STAFF_ROLE in acting:
            assert row.reminds == workflow.STAFF, row.state
        else:
            assert row.reminds == workflow.EXPERTS, row.state
    assert STATES[State.APPROVED].reminds == workflow.STAFF
