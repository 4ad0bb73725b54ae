"""A request sent back for changes crossed with everything that names it: its registrant's
unsubmitted edits (a new NID, the fast track, another organisation) are theirs alone
until resubmitted. Pages, lists, the live NID check, races, mail and the admin show the
last round submitted (workflow.can_read_working_copy)."""

import pytest
from django.urls import reverse

from registry.review import actions
from registry.review.models import Comment, RegistrationRequest, RequestEvent
from tests.factories import complete_values, make_registration
from tests.html import find, one, page, text

SUBMITTED, EDITED = "roundarch", "editedarch"
EDITED_ORGANISATION = "Renamed Holding Company"


@pytest.fixture
def sent_back(standards_body, expert, mailoutbox, django_capture_on_commit_callbacks):
    """A request in "changes requested" whose working copy has a new NID, the fast track
    (its registrant is a recognised standards body) and another organisation, not
    resubmitted."""
    registrant = standards_body
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid=SUBMITTED)
        registration = actions.registration_transition(
            registration=registration, transition="request_changes", actor=expert,
            comment="Please say more.")
        registration = actions.registration_update(
            registration=registration, actor=registrant,
            edit_version=registration.edit_version, kind="formal", proposed_nid=EDITED,
            fast_track=True,
            values=complete_values(registrant, registrant_organisation=EDITED_ORGANISATION))
    mailoutbox.clear()
    sent_back = RegistrationRequest.objects.get(pk=registration.pk)
    # What the experts read of its activity is the sending back, not the edit after it.
    assert sent_back.last_activity_at < sent_back.events.get(
        kind=RequestEvent.Kind.EDIT).created_at
    return sent_back


def _everything(response) -> str:
    return response.content.decode()


@pytest.mark.parametrize("persona", [None, "expert", "staff", "other_registrant"])
def test_the_request_page_names_the_submitted_round(client, sent_back, persona, request):
    if persona:
        client.force_login(request.getfixturevalue(persona))
    doc = page(client.get(sent_back.get_absolute_url()))
    assert SUBMITTED in text(one(doc, ".//h1"))
    assert SUBMITTED in text(one(doc, ".//title"))
    whole = text(one(doc, ".//body"))
    assert EDITED not in whole and EDITED_ORGANISATION not in whole
    assert not find(doc, './/span[contains(@class, "badge") and contains(., "Fast track")]')


def test_the_registrant_reads_the_edits_in_their_form(client, sent_back, standards_body):
    client.force_login(standards_body)
    edit = _everything(client.get(reverse("review:edit", args=[sent_back.pk])))
    assert EDITED in edit
    # Everywhere the request is named, it is named as it is under review; its page says
    # which of its saved edits are not submitted yet.
    doc = page(client.get(sent_back.get_absolute_url()))
    assert SUBMITTED in text(one(doc, ".//h1"))
    pending = text(one(doc, ".//*[@data-unsubmitted]"))
    for label in ("Namespace ID", "Procedure (fast track)", "Organisation"):
        assert label in pending


def test_lists_and_the_admin_show_the_submitted_round(client, sent_back, expert, staff):
    client.force_login(expert)
    dashboard = text(one(page(client.get(reverse("review:dashboard"))), ".//main"))
    assert SUBMITTED in dashboard and EDITED not in dashboard
    client.force_login(staff)
    changelist = reverse("admin:review_registrationrequest_changelist")
    assert not find(page(client.get(changelist, {"q": EDITED})), './/table[@id="result_list"]')
    found = page(client.get(changelist, {"q": SUBMITTED}))
    assert SUBMITTED in text(one(found, './/table[@id="result_list"]'))
    change = _everything(client.get(reverse("admin:review_registrationrequest_change",
                                            args=[sent_back.pk])))
    assert EDITED not in change and EDITED_ORGANISATION not in change


def test_the_live_check_and_races_count_only_submitted_nids(client, sent_back,
                                                            other_registrant):
    check = reverse("nid-check")
    assert client.get(check, {"nid": EDITED}).json()["other_open_requests"] == 0
    assert client.get(check, {"nid": SUBMITTED}).json()["other_open_requests"] == 1
    # Another request for the edited NID is in no race with an edit nobody can read...
    rival = make_registration(other_registrant, nid=EDITED)
    assert not RegistrationRequest.objects.conflicting_with(rival).exists()
    assert not RegistrationRequest.objects.conflicting_with(sent_back).exists()
    # ...and one for the NID under review is, on every list's annotation too.
    twin = make_registration(other_registrant, nid=SUBMITTED.upper())
    assert list(RegistrationRequest.objects.conflicting_with(twin)) == [sent_back]
    listed = RegistrationRequest.objects.for_lists().get(pk=sent_back.pk)
    assert listed.race_twins and not listed.race_taken


def test_mail_about_the_request_names_the_submitted_round(sent_back, expert, mailoutbox,
                                                          django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_comment(registration=sent_back, actor=expert,
                                     audience=Comment.Audience.PUBLIC, body="A question.")
    assert mailoutbox
    for message in mailoutbox:
        whole = message.message().as_string()
        assert SUBMITTED in message.subject
        assert EDITED not in whole and EDITED_ORGANISATION not in whole


def test_resubmitting_makes_the_edits_what_everyone_reads(client, sent_back, standards_body):
    resubmitted = actions.registration_transition(registration=sent_back,
                                                  transition="resubmit", actor=standards_body)
    assert resubmitted.submitted_round == resubmitted.rounds.order_by("-number").first()
    assert resubmitted.shown_nid == EDITED and resubmitted.shown_fast_track
    doc = page(client.get(resubmitted.get_absolute_url()))
    assert EDITED in text(one(doc, ".//h1"))
    assert client.get(reverse("nid-check"),
                      {"nid": EDITED}).json()["other_open_requests"] == 1


def test_a_request_withdrawn_with_edits_keeps_its_submitted_name(client, sent_back,
                                                                standards_body):
    withdrawn = actions.registration_transition(registration=sent_back, transition="withdraw",
                                                actor=standards_body)
    doc = page(client.get(withdrawn.get_absolute_url()))
    assert SUBMITTED in text(one(doc, ".//h1"))
    assert EDITED not in text(one(doc, ".//body"))


def test_each_save_of_the_working_copy_is_an_event_only_its_registrant_reads(
        client, sent_back, standards_body, expert, staff):
    edits = RequestEvent.objects.filter(registration=sent_back, kind=RequestEvent.Kind.EDIT)
    assert [(e.actor, e.from_state, e.to_state) for e in edits] == [
        (standards_body, sent_back.state, sent_back.state)]
    label = RequestEvent.Kind.EDIT.label
    client.force_login(standards_body)
    assert label in text(one(page(client.get(sent_back.get_absolute_url())), "//*[@id='timeline']"))
    for viewer in (expert, None):
        if viewer is None:
            client.logout()
        else:
            client.force_login(viewer)
        timeline = one(page(client.get(sent_back.get_absolute_url())), "//*[@id='timeline']")
        assert label not in text(timeline)
    client.force_login(staff)  # the admin is one more channel of the same policy
    change = page(client.get(reverse("admin:review_registrationrequest_change",
                                     args=[sent_back.pk])))
    assert label not in text(one(change, ".//body"))
    assert RequestEvent.Kind.TRANSITION.label in text(one(change, ".//body"))
