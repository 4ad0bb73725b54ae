"""The decisions on a request (RequestEvent.objects.decisions()): the events that moved
it to another state. A namespace's review record lists them, and nothing else that
happened to its request."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from registry.namespaces.models import Namespace
from registry.review import actions, workflow
from registry.review.models import RegistrationRequest, RequestEvent, State
from tests.factories import approve, make_registration
from tests.html import page, texts


@pytest.fixture
def decided(registrant, expert, staff):
    """A request that was registered, with every other kind of event on the way."""
    registration = make_registration(registrant, nid="decided")  # created, then submitted
    actions.registration_assign(registration=registration, expert=expert, actor=expert)
    actions.registration_set_standardisation(registration=registration, involved=False,
                                             actor=expert)
    assert actions.registration_remind(registration=registration, idle=dt.timedelta(0))
    # A transition row that left the state as it was (rows written before events had
    # kinds of their own could be such): a record of the request, not a decision on it.
    RequestEvent.objects.create(registration=registration, actor=expert,
                                kind=RequestEvent.Kind.TRANSITION, transition="submit",
                                from_state=State.IN_REVIEW, to_state=State.IN_REVIEW)
    return approve(registration, expert, staff, register=True)


def test_decisions_are_the_transitions_that_changed_the_state(decided):
    assert [(e.kind, e.transition) for e in decided.events.all()] == [
        ("create", ""), ("transition", "submit"), ("assign", ""), ("standardisation", ""),
        ("remind", ""), ("transition", "submit"), ("transition", "approve"),
        ("transition", "register")]
    decisions = RequestEvent.objects.filter(registration=decided).decisions()
    assert [(e.transition, e.from_state, e.to_state) for e in decisions] == [
        ("submit", "draft", "in_review"), ("approve", "in_review", "approved"),
        ("register", "approved", "registered")]
    assert list(decided.events.decisions()) == list(decisions)


def test_only_transitions_are_decisions_whatever_states_an_event_records(registrant):
    registration = make_registration(registrant, nid="kinds")  # created, then submitted
    for kind in RequestEvent.Kind:
        RequestEvent.objects.create(
            registration=registration, actor=registrant, kind=kind,
            transition="approve" if kind == RequestEvent.Kind.TRANSITION else "",
            from_state=State.IN_REVIEW, to_state=State.APPROVED)
    assert [e.transition for e in registration.events.decisions()] == ["submit", "approve"]


def test_the_review_record_brings_the_decisions_in_one_query(decided, registrant, staff):
    namespace = Namespace.objects.by_nid("decided").get()
    revision = actions.registration_create(actor=registrant, revises=namespace,
                                           values={"revision_information": "A new resolver."})
    revision = actions.registration_transition(registration=revision, transition="submit",
                                               actor=registrant)
    with CaptureQueriesContext(connection) as queries:
        rows = list(RegistrationRequest.objects.review_record_of(namespace))
        shown = {row.pk: [(e.transition, e.actor.email) for e in row.decisions]
                 for row in rows}
    assert len(queries) == 1  # the decisions, each with its request and actor
    assert shown == {
        decided.pk: [("submit", "registrant@example.org"), ("approve", "expert@example.org"),
                     ("register", "staff@example.org")],
        revision.pk: [("submit", "registrant@example.org")],
    }


def test_the_namespace_page_lists_the_decisions_and_nothing_else(client, decided, registrant,
                                                                  expert, staff):
    doc = page(client.get("/namespaces/decided/"))
    today = timezone.localdate().isoformat()
    assert texts(doc, '//*[@id="review-record"]/following-sibling::ul[1]/li/ul/li') == [
        f"{today} · {workflow.TRANSITIONS[name].label} ({who})"  # the registrant as published
        for name, who in (("submit", registrant.organisation), ("approve", expert.display_name),
                          ("register", staff.display_name))]
