"""The state machine, exhaustively: every (state, transition, role, path) is either
allowed (and then taken through the real action) or refused with a clear message."""

import itertools

import pytest

from registry.review import actions, workflow
from registry.review.models import RequestEvent, State
from registry.review.workflow import (
    TRANSITIONS,
    NotAllowed,
    Refused,
    TransitionRefused,
    enforce_move,
    enforce_transition,
)
from tests.review.helpers import EARLY, registration_in

C, F = "community", "fast_track"

# The rules of RFC 8141 sections 6.2 and 6.3, written out independently of the
# module's table: (state, transition, role, path).
ALLOWED = {
    ("draft", "submit", "registrant", C), ("draft", "submit", "registrant", F),
    ("changes_requested", "resubmit", "registrant", C),
    ("changes_requested", "resubmit", "registrant", F),
    ("in_review", "revise", "registrant", C), ("in_review", "revise", "registrant", F),
    ("in_review", "request_changes", "expert", C),
    ("in_review", "approve", "expert", C),
    ("in_review", "report_to_iesg", "expert", C),
    ("in_review", "reject", "expert", C),
    ("awaiting_iesg", "record_iesg_approval", "staff", C),
    ("awaiting_iesg", "record_iesg_rejection", "staff", C),
    ("in_review", "request_registration", "registrant", F),
    ("approved", "register", "staff", C), ("approved", "register", "staff", F),
    *{(s, "withdraw", "registrant", p)
      for s in ("draft", "in_review", "changes_requested", "awaiting_iesg", "approved")
      for p in (C, F)},
    # A request that lost a race for its NID (section 6.2): experts or staff close it.
    *{(s, "close", r, p)
      for s in ("in_review", "changes_requested", "awaiting_iesg", "approved")
      for r in ("expert", "staff") for p in (C, F)},
}
EXPECTED_TARGET = {
    "submit": "in_review", "resubmit": "in_review", "revise": "changes_requested",
    "request_changes": "changes_requested", "approve": "approved",
    "report_to_iesg": "awaiting_iesg", "reject": "rejected",
    "record_iesg_approval": "approved", "record_iesg_rejection": "rejected",
    "request_registration": "approved", "register": "registered", "withdraw": "withdrawn",
    "close": "closed",
}
ROLES = ["registrant", "expert", "staff", "other"]
TRIPLES = list(itertools.product(State.values, TRANSITIONS, ROLES, (C, F)))


def test_the_module_table_is_the_rfc_table():
    from_module = {
        (s, t.name, r, p)
        for t in TRANSITIONS.values() for s in t.sources for r in t.roles for p in t.paths
    }
    assert from_module == ALLOWED
    assert {t.name: t.target for t in TRANSITIONS.values()} == EXPECTED_TARGET


@pytest.mark.parametrize(("state", "name", "role", "path"), TRIPLES)
def test_every_triple_is_allowed_or_refused_clearly(state, name, role, path):
    roles = set() if role == "other" else {role}
    transition = TRANSITIONS[name]
    if (state, name, role, path) in ALLOWED:
        enforce_move(transition, state=state, path=path, roles=roles)
        return
    with pytest.raises(Refused) as refused:
        enforce_move(transition, state=state, path=path, roles=roles)
    message = str(refused.value)
    assert transition.label.lower() in message.lower()
    if state not in transition.sources:
        assert isinstance(refused.value, TransitionRefused)
        assert State(state).label.lower() in message
    elif path not in transition.paths:
        assert isinstance(refused.value, TransitionRefused)
        assert "6.3" in message
    else:
        assert isinstance(refused.value, NotAllowed)
        assert message.startswith("Only ")


@pytest.fixture
def people(registrant, other_registrant, expert, staff, standards_body):
    return {"registrant": registrant, "other": other_registrant, "expert": expert,
            "staff": staff, "sdo": standards_body}


def _people_for(path, people):
    if path == F:
        return {**people, "registrant": people["sdo"]}
    return people


# States the fast track never reaches: nothing there goes to the IESG or rejects.
UNREACHABLE = {("awaiting_iesg", F), ("rejected", F)}


def test_the_fast_track_never_reaches_the_iesg_or_a_rejection():
    reached = {(t.target, p) for t in TRANSITIONS.values() for p in t.paths}
    assert not UNREACHABLE & reached


@pytest.mark.parametrize(("state", "name", "role", "path"),
                         sorted(t for t in ALLOWED if (t[0], t[3]) not in UNREACHABLE))
def test_every_allowed_triple_works_through_the_action(state, name, role, path, people):
    who = _people_for(path, people)
    registration = registration_in(state, path=path, people=who, nid="wfallowed",
                                   standardisation=name == "report_to_iesg")
    if TRANSITIONS[name].overtaken_only:  # a case-twin makes it a race
        registration_in("in_review", path=C, people=people, nid="WFAllowed")
    before = RequestEvent.objects.filter(registration=registration).count()
    result = actions.registration_transition(registration=registration, transition=name,
                                             actor=who[role],
                                             comment="A reason.", early_reason=EARLY)
    assert result.state == EXPECTED_TARGET[name]
    result.refresh_from_db()
    assert result.state == EXPECTED_TARGET[name]
    event = RequestEvent.objects.filter(registration=registration).latest("id")
    assert RequestEvent.objects.filter(registration=registration).count() == before + 1
    assert (event.kind, event.transition, event.from_state, event.to_state, event.actor) == (
        "transition", name, state, EXPECTED_TARGET[name], who[role])


@pytest.mark.parametrize(
    ("state", "name", "role", "path"),
    [t for t in TRIPLES if t not in ALLOWED and t[0] in ("in_review", "approved")],
)
def test_refused_triples_change_nothing_through_the_action(state, name, role, path, people):
    who = _people_for(path, people)
    registration = registration_in(state, path=path, people=who, nid="wfrefused")
    events = RequestEvent.objects.filter(registration=registration).count()
    with pytest.raises(Refused):
        actions.registration_transition(registration=registration, transition=name, actor=who[role],
                                        comment="A reason.", early_reason=EARLY)
    registration.refresh_from_db()
    assert registration.state == state
    assert RequestEvent.objects.filter(registration=registration).count() == events


def test_decisions_need_their_comment(people):
    registration = registration_in("in_review", path=C, people=people, nid="needsreason")
    for name in ("request_changes", "approve", "reject"):
        with pytest.raises(TransitionRefused, match="is required"):
            enforce_transition(registration, name, people["expert"], early_reason=EARLY)


def test_experts_may_decide_early_only_with_a_recorded_reason(people, settings):
    settings.REVIEW_MIN_DAYS = 14
    registration = registration_in("in_review", path=C, people=people, nid="earlybird")
    with pytest.raises(TransitionRefused, match="14 days"):
        actions.registration_transition(registration=registration, transition="approve",
                                        actor=people["expert"], comment="Fine.")
    actions.registration_transition(registration=registration, transition="approve",
                                    actor=people["expert"],
                                    comment="Fine.", early_reason="Uncontroversial; list agreed.")
    event = RequestEvent.objects.filter(registration=registration).latest("id")
    assert "Decided before the end of the public review period: Uncontroversial" in \
        event.comment


def test_after_the_review_period_no_early_reason_is_needed(people, settings):
    settings.REVIEW_MIN_DAYS = 0
    registration = registration_in("in_review", path=C, people=people, nid="patient")
    actions.registration_transition(registration=registration, transition="approve",
                                    actor=people["expert"],
                                    comment="Fine.")
    assert RequestEvent.objects.filter(registration=registration).latest("id").comment == "Fine."


def test_standardisation_sends_approval_to_the_iesg(people):
    registration = registration_in("in_review", path=C, people=people, nid="stdsbody",
                                   standardisation=True)
    with pytest.raises(TransitionRefused, match="IESG"):
        enforce_transition(registration, "approve", people["expert"], comment="x",
                           early_reason=EARLY)
    plain = registration_in("in_review", path=C, people=people, nid="plainone")
    with pytest.raises(TransitionRefused, match="approve it directly"):
        enforce_transition(plain, "report_to_iesg", people["expert"], comment="x",
                           early_reason=EARLY)


def test_fast_track_needs_a_recognized_body_and_documentation(people):
    from tests.factories import make_registration

    registration = make_registration(people["registrant"], nid="notsdo", fast_track=True,
                                     submit=False)
    with pytest.raises(TransitionRefused, match="recorded as recognized"):
        actions.registration_transition(registration=registration, transition="submit",
                                        actor=people["registrant"])
    sdo_registration = make_registration(people["sdo"], nid="sdonodoc", fast_track=True,
                                         submit=False,
                                         documentation="")
    with pytest.raises(TransitionRefused, match="Documentation: required before you submit"):
        actions.registration_transition(registration=sdo_registration, transition="submit",
                                        actor=people["sdo"])


def test_the_fast_track_offers_no_expert_decisions(people):
    registration = registration_in("in_review", path=F, people=_people_for(F, people),
                                   nid="fastone")
    offered = {t.name for t in workflow.open_transitions(registration, people["expert"])}
    assert offered == set()
    offered = {t.name for t in workflow.open_transitions(registration, people["sdo"])}
    assert offered == {"revise", "request_registration", "withdraw"}


def test_the_state_cannot_change_without_its_event(people):
    from registry.history import UnrecordedChange

    registration = registration_in("in_review", path=C, people=people, nid="sneaky")
    registration.state = State.APPROVED
    with pytest.raises(UnrecordedChange):
        registration.save()
    from registry.review.models import RegistrationRequest

    with pytest.raises(UnrecordedChange):
        RegistrationRequest.objects.filter(pk=registration.pk).update(state=State.APPROVED)
    with pytest.raises(UnrecordedChange):
        RegistrationRequest.objects.bulk_update([registration], ["state"])
    registration.refresh_from_db()
    assert registration.state == State.IN_REVIEW


@pytest.mark.parametrize("state", State.values)
def test_comment_audiences_by_role_and_state(state, people):
    from django.utils import timezone

    from registry.review.models import RegistrationRequest

    submitted = state != "draft"
    registration = RegistrationRequest(registrant=people["registrant"], state=state,
                                       review_started_at=timezone.now() if submitted else None)
    final = state in ("registered", "rejected", "withdrawn", "closed")
    public = [] if state == "draft" else ["public"]
    expected = {
        "registrant": public,
        "other": [] if final else public,
        # Nobody but the registrant sees a draft, so nobody else comments on one.
        "expert": [*public, "registrant", "experts"] if submitted else [],
        "staff": [*public, "registrant"] if submitted else [],
    }
    for role, audiences in expected.items():
        assert workflow.comment_audiences(registration, people[role]) == audiences, (state, role)
    from django.contrib.auth.models import AnonymousUser

    assert workflow.comment_audiences(registration, AnonymousUser()) == []
    assert workflow.can_view(registration, AnonymousUser()) == submitted
    assert workflow.can_view(registration, people["registrant"])


def test_a_refused_public_comment_says_who_may_still_comment(people):
    """Not "while in public review": every open state takes public comments, and a
    request that is over takes them from its participants (comment_audiences)."""
    from django.utils import timezone

    from registry.review.models import RegistrationRequest

    over = RegistrationRequest(registrant=people["registrant"], state=State.REJECTED,
                               review_started_at=timezone.now())
    refused = workflow.comment_refusal(over, people["other"], "public")
    assert refused is not None and str(refused) == (
        "Public comments are for submitted requests: a draft is private to its registrant, "
        "and once a request is over only its registrant, the designated experts and IANA "
        "staff comment.")
    assert workflow.comment_refusal(over, people["registrant"], "public") is None

@pytest.mark.parametrize("state", ["draft", "withdrawn"])
def test_a_request_never_submitted_stays_private_in_any_state(state, people):
    from django.contrib.auth.models import AnonymousUser

    from registry.review.models import RegistrationRequest

    registration = RegistrationRequest(registrant=people["registrant"], state=state)
    for role in ("other", "expert", "staff"):
        assert not workflow.can_view(registration, people[role])
    assert not workflow.can_view(registration, AnonymousUser())
    assert workflow.can_view(registration, people["registrant"])


def test_an_expert_may_not_write_internally_on_their_own_request(people):
    from django.utils import timezone

    from registry.review.models import RegistrationRequest

    registration = RegistrationRequest(registrant=people["expert"], state="in_review",
                                       review_started_at=timezone.now())
    assert workflow.comment_audiences(registration, people["expert"]) == ["public", "registrant"]
