"""The review clock, a column of the states table: the minimum public review period
(RFC 8141 section 6.2, ``REVIEW_MIN_DAYS``) counts only the time a request spends in
states where the clock runs. A request held for ten days cannot be decided at once after
its release as if the period had run meanwhile.

No state of today's table holds a request in review and lets it go back; the "put on
hold" a maintainer would add is built here as they would add it (a row of STATES, a pair
of rows of TRANSITIONS) on the live tables, so the test proves the column is read."""

import dataclasses
import datetime as dt

import pytest
import time_machine
from django.conf import settings

from registry.accounts.roles import EXPERT_ROLE
from registry.review import actions, workflow
from registry.review.models import RegistrationRequest, RequestEvent, State
from registry.review.workflow import STATES, TRANSITIONS, Refused, states_where
from registry.review.workflow.tables import _t
from tests.factories import make_registration

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
ON_HOLD = "on_hold"


@dataclasses.dataclass(frozen=True)
class _Label:
    label: str = "On hold"


@pytest.fixture
def hold(monkeypatch):
    """An "on hold" state where the clock stops, entered and left by the experts."""
    row = dataclasses.replace(STATES[State.IN_REVIEW], state=_Label(), public_review=False,
                              reminds="", review_clock=False)
    monkeypatch.setitem(STATES, ON_HOLD, row)
    monkeypatch.setitem(TRANSITIONS, "hold", _t(
        "hold", "Put on hold", [State.IN_REVIEW], ON_HOLD, [EXPERT_ROLE], "Held."))
    monkeypatch.setitem(TRANSITIONS, "release", _t(
        "release", "Release", [ON_HOLD], State.IN_REVIEW, [EXPERT_ROLE], "Released."))


def _move(registration, name, actor, **typed):
    return actions.registration_transition(registration=registration, transition=name,
                                           actor=actor, **typed)


def test_the_clock_runs_only_in_review():
    assert states_where(review_clock=True) == (State.IN_REVIEW,)
    assert set(states_where(review_clock=True)) <= set(states_where(public_review=True))


@pytest.mark.django_db
def test_a_request_held_ten_days_is_not_decided_as_if_the_period_ran(hold, registrant,
                                                                       expert):
    period = dt.timedelta(days=settings.REVIEW_MIN_DAYS)
    with time_machine.travel(T0, tick=False) as clock:
        registration = make_registration(registrant, nid="heldten")
        assert registration.review_period_ends() == T0 + period
        clock.move_to(T0 + dt.timedelta(days=2))
        registration = _move(registration, "hold", expert)
        clock.move_to(T0 + dt.timedelta(days=12))
        # While held, the period ends as if the clock started again now.
        assert registration.review_period_ends() == T0 + period + dt.timedelta(days=10)
        registration = _move(registration, "release", expert)
        ends = T0 + period + dt.timedelta(days=10)
        assert RegistrationRequest.objects.get(pk=registration.pk).review_period_ends() == ends

        # The period the request spent in review is 2 + 2 days: an approval needs a reason.
        clock.move_to(T0 + period + dt.timedelta(hours=1))
        with pytest.raises(Refused, match=f"ends on {ends:%Y-%m-%d}"):
            _move(registration, "approve", expert, comment="Fine.")
        assert RegistrationRequest.objects.get(pk=registration.pk).state == State.IN_REVIEW

        # Once the clock has run the whole period, no reason is asked for.
        clock.move_to(ends + dt.timedelta(minutes=1))
        registration = _move(registration, "approve", expert, comment="Fine.")
    assert registration.state == State.APPROVED
    approval = registration.events.get(kind=RequestEvent.Kind.TRANSITION, transition="approve")
    assert "before the end of the public review period" not in approval.comment


@pytest.mark.django_db
def test_an_early_decision_after_a_hold_records_its_reason(hold, registrant, expert):
    with time_machine.travel(T0, tick=False) as clock:
        registration = make_registration(registrant, nid="heldearly")
        registration = _move(registration, "hold", expert)
        clock.move_to(T0 + dt.timedelta(days=settings.REVIEW_MIN_DAYS + 1))
        registration = _move(registration, "release", expert)
        registration = _move(registration, "approve", expert, comment="Fine.",
                             early_reason="The list agreed.")
    approval = registration.events.get(kind=RequestEvent.Kind.TRANSITION, transition="approve")
    assert approval.comment.endswith(
        "Decided before the end of the public review period: The list agreed.")


@pytest.mark.django_db
def test_a_new_round_starts_a_full_clock(hold, registrant, expert):
    with time_machine.travel(T0, tick=False) as clock:
        registration = make_registration(registrant, nid="heldround")
        registration = _move(registration, "hold", expert)
        clock.move_to(T0 + dt.timedelta(days=5))
        registration = _move(registration, "release", expert)
        registration = _move(registration, "request_changes", expert, comment="Fix it.")
        clock.move_to(T0 + dt.timedelta(days=6))
        registration = _move(registration, "resubmit", registrant)
    assert registration.review_period_ends() == (
        T0 + dt.timedelta(days=6 + settings.REVIEW_MIN_DAYS))
    assert workflow.meaning_of(registration.state).review_clock


@pytest.mark.django_db(transaction=True)
def test_each_move_is_its_own_transaction_outside_any_other(hold, registrant, expert):
    """In autocommit, as a view or a command calls it: the move locks its row, which only
    a transaction of its own allows."""
    registration = make_registration(registrant, nid="heldcommit")
    registration = _move(registration, "hold", expert)
    registration = _move(registration, "release", expert)
    stored = RegistrationRequest.objects.get(pk=registration.pk)
    assert stored.state == State.IN_REVIEW and stored.review_paused_at is None
    assert stored.review_paused_for > dt.timedelta(0)
