"""What the request page says has changed: a registrant's edits saved after a round and
not yet resubmitted (the page shows the submitted round, so the edits seemed lost), and,
for a revision, its changes against the version it revises (what its reviewers judge)."""

import pytest
from django.conf import settings

from registry.namespaces.models import Namespace
from registry.review import actions
from tests.factories import approve, complete_values, make_registration
from tests.html import find, one, page, text, texts

pytestmark = pytest.mark.django_db


def _saved_edits(registrant, expert):
    registration = make_registration(registrant, nid="edited")
    registration = actions.registration_transition(
        registration=registration, transition="request_changes", actor=expert,
        comment="Give examples.")
    return actions.registration_update(
        registration=registration, actor=registrant, edit_version=registration.edit_version,
        kind="formal", proposed_nid="edited", fast_track=False,
        values=complete_values(registrant, syntax="NSS = 1*DIGIT ; e.g. urn:edited:12",
                               assignment="Sequential, never reused, audited."))


def test_the_registrant_is_told_her_saved_edits_are_not_submitted(client, registrant, expert):
    registration = _saved_edits(registrant, expert)
    client.force_login(registrant)
    doc = page(client.get(registration.get_absolute_url()))
    note = one(doc, "//*[@data-unsubmitted]")
    assert "not submitted yet" in text(note)
    assert "round 1" in text(note) and "Syntax, Assignment" in text(note)
    assert find(note, f".//a[@href='/requests/{registration.pk}/edit/']")
    # The page itself still shows the round the reviewers read.
    assert "e.g. urn:edited:12" not in text(one(doc, "//main"))


def test_nobody_else_learns_of_the_unsubmitted_edits(client, registrant, expert, staff):
    registration = _saved_edits(registrant, expert)
    for person in (expert, staff, None):
        client.logout()
        if person is not None:
            client.force_login(person)
        doc = page(client.get(registration.get_absolute_url()))
        assert find(doc, "//*[@data-unsubmitted]") == [], person
        assert "Syntax, Assignment" not in text(one(doc, "//main"))


def test_no_note_once_the_edits_are_resubmitted(client, registrant, expert):
    registration = _saved_edits(registrant, expert)
    actions.registration_transition(registration=registration, transition="resubmit",
                                     actor=registrant)
    client.force_login(registrant)
    assert find(page(client.get(registration.get_absolute_url())),
                "//*[@data-unsubmitted]") == []


def test_a_revision_shows_its_changes_against_the_published_version(client, registrant, expert,
                                                                    staff):
    approve(make_registration(registrant, nid="revised"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("revised").get()
    revision = actions.registration_create(actor=registrant, revises=namespace)
    revision = actions.registration_update(
        registration=revision, actor=registrant, edit_version=revision.edit_version,
        kind=revision.kind, proposed_nid="", fast_track=False,
        values={**revision.values(), "resolution": "https://archive.example/r/{urn}",
                "revision_information": "Adds a resolver."})
    revision = actions.registration_transition(registration=revision, transition="submit",
                                               actor=registrant)
    doc = page(client.get(revision.get_absolute_url()))  # anyone reviewing it
    assert texts(doc, "//h2[@id='changes']") == ["Changes against the published version 1"]
    table = one(doc, "//h2[@id='changes']/following-sibling::table[1]")
    assert [th.text.strip() for th in table.xpath(".//th[@scope='row']")] == [
        "Resolution", "Revision information"]
    assert texts(table, ".//thead/tr/th") == ["Field", "Published", "Round 1"]
    # Once registered, the comparison is the namespace's own (its diff page).
    approve(revision, expert, staff, register=True)
    assert find(page(client.get(revision.get_absolute_url())), "//h2[@id='changes']") == []


def test_while_changes_are_requested_the_page_says_how_much_review_remains(
        client, registrant, expert):
    """The header said nothing of the review period once changes were requested: the
    clock stops, and a registrant could not tell how long the next round stays open."""
    import datetime as dt

    import time_machine

    with time_machine.travel(dt.datetime(2026, 11, 1, 12, tzinfo=dt.UTC), tick=False):
        registration = make_registration(registrant, nid="paused")
    with time_machine.travel(dt.datetime(2026, 11, 5, 12, tzinfo=dt.UTC), tick=False):
        actions.registration_transition(registration=registration,
                                        transition="request_changes", actor=expert,
                                        comment="Give examples.")
    with time_machine.travel(dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC), tick=False):
        client.force_login(registrant)
        said = text(one(page(client.get(registration.get_absolute_url())),
                        "//*[@data-period-left]"))
    # Resubmitting makes a new round, and a new round has the whole period (as the
    # clock then runs: review_started_at moves to the resubmission).
    assert said == ("public review paused: the next round has a whole review period of "
                    f"{settings.REVIEW_MIN_DAYS} days")
    resubmitted_at = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    with time_machine.travel(resubmitted_at, tick=False):
        registration = actions.registration_transition(
            registration=registration, transition="resubmit", actor=registrant)
        assert registration.review_period_ends(resubmitted_at) == (
            resubmitted_at + dt.timedelta(days=settings.REVIEW_MIN_DAYS))
