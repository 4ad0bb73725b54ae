"""Rules of the policy that are columns of the table or questions of the workflow
module: conflict of interest, races for a NID and their way out, privacy, mail
audiences, and forms that keep what was typed with the error at the field."""

import dataclasses
import re

import pytest
from django.core import mail
from django.urls import reverse
from lxml import html as lxml_html

from registry.namespaces.models import Namespace
from registry.review import actions, workflow
from registry.review.models import RegistrationRequest, RequestEvent, State
from tests.factories import approve, make_registration, make_user

EARLY = "Tested early."


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def page(response):
    return lxml_html.fromstring(response.content)


def text_of(tree, xpath):
    return " ".join(" ".join(e.text_content().split()) for e in tree.xpath(xpath))


# --- Conflict of interest (a column: independent) ---------------------------------------

def test_an_expert_may_not_decide_on_their_own_request(client, expert, second_expert):
    own = make_registration(expert, nid="selfish")
    for name in ("approve", "reject", "request_changes"):
        with pytest.raises(actions.NotAllowed, match="conflict of interest"):
            actions.registration_transition(registration=own, transition=name, actor=expert,
                                            comment="Fine by me.", early_reason=EARLY)
    assert {t.name for t in workflow.open_transitions(own, expert)} == {"revise", "withdraw"}
    client.force_login(expert)
    response = client.get(own.get_absolute_url())
    buttons = page(response).xpath('//form[starts-with(@id, "do-")]/@id')
    assert sorted(buttons) == ["do-revise", "do-withdraw"]
    response = client.post(reverse("review:transition", args=[own.pk, "approve"]),
                           {"comment": "Fine by me.", "early_reason": EARLY})
    assert response.status_code == 403
    assert "conflict of interest" in text_of(page(response), '//*[@id="refused"]')
    actions.registration_transition(registration=own, transition="approve", actor=second_expert,
                                    comment="Fine.", early_reason=EARLY)
    own.refresh_from_db()
    assert own.state == State.APPROVED


def test_an_expert_may_not_assign_their_own_request(client, expert, second_expert):
    """Conflict of interest, as for decisions: the registrant neither assigns their request
    nor is assigned it, whoever asks; another expert may assign it to someone else."""
    own = make_registration(expert, nid="selfassign")
    events = RequestEvent.objects.filter(registration=own, kind=RequestEvent.Kind.ASSIGN)
    for assignee in (expert, second_expert, None):
        with pytest.raises(actions.NotAllowed, match="conflict of interest"):
            actions.registration_assign(registration=own, expert=assignee, actor=expert)
    assert not workflow.can_assign(own, expert)
    with pytest.raises(actions.TransitionRefused, match="conflict of interest") as refused:
        actions.registration_assign(registration=own, expert=expert, actor=second_expert)
    assert refused.value.field == "expert"
    assert not events.exists()
    client.force_login(expert)
    response = client.post(reverse("review:assign", args=[own.pk]), {"expert": expert.pk})
    assert response.status_code == 403
    assert "conflict of interest" in text_of(page(response), '//*[@role="alert"]')
    own.refresh_from_db()
    assert own.assigned_expert is None and not events.exists()
    actions.registration_assign(registration=own, expert=second_expert, actor=second_expert)
    own.refresh_from_db()
    assert own.assigned_expert == second_expert and events.count() == 1


def test_staff_may_not_register_their_own_request(staff, expert):
    other_staff = make_user("staff2@example.org", roles=["IANA staff"])
    own = approve(make_registration(staff, nid="staffown"), expert)
    with pytest.raises(actions.NotAllowed, match="another member of IANA staff"):
        actions.registration_transition(registration=own, transition="register", actor=staff)
    assert "register" not in {t.name for t in workflow.open_transitions(own, staff)}
    actions.registration_transition(registration=own, transition="register", actor=other_staff)
    assert Namespace.objects.by_nid("staffown").exists()


def test_one_row_changes_one_rule(monkeypatch, expert):
    """The table is the policy: drop the column from one row and the rule goes with it."""
    own = make_registration(expert, nid="onerow")
    assert workflow.refusal(own, workflow.TRANSITIONS["reject"], expert) is not None
    lax = dataclasses.replace(workflow.TRANSITIONS["reject"], independent=False)
    monkeypatch.setitem(workflow.TRANSITIONS, "reject", lax)
    assert workflow.refusal(own, workflow.TRANSITIONS["reject"], expert) is None
    assert workflow.refusal(own, workflow.TRANSITIONS["approve"], expert) is not None


# --- Races for a NID --------------------------------------------------------------------

def test_case_twins_are_flagged_everywhere_they_are_shown(client, registrant, other_registrant,
                                                          expert, staff):
    first = approve(make_registration(registrant, nid="exlib"), expert)
    second = approve(make_registration(other_registrant, nid="ExLib"), expert)
    client.force_login(staff)
    queue = page(client.get(reverse("review:staff-queue")))
    assert len(queue.xpath('//table[@id="ready"]//*[@data-race="conflict"]')) == 2
    client.force_login(expert)
    dashboard = page(client.get(reverse("review:dashboard")))
    assert len(dashboard.xpath('//*[@data-race="conflict"]')) == 2
    registration_page = page(client.get(first.get_absolute_url()))
    assert f"#{second.pk}" in text_of(registration_page, '//*[@id="conflict-flag"]')
    client.force_login(other_registrant)
    mine = page(client.get(reverse("review:my-requests")))
    assert mine.xpath('//table[@id="my-requests"]//*[@data-race="conflict"]')


def test_a_twin_registered_meanwhile_is_closed_not_a_dead_end(client, registrant,
                                                               other_registrant, expert, staff):
    first = approve(make_registration(registrant, nid="exlib"), expert)
    second = approve(make_registration(other_registrant, nid="ExLib"), expert)
    actions.registration_transition(registration=first, transition="register", actor=staff)
    # Registering the second is refused, with the way out in the message...
    with pytest.raises(actions.TransitionRefused, match='"Close the request" with a reason'):
        actions.registration_transition(registration=second, transition="register", actor=staff)
    # ...and in the UI: the staff queue offers "Close", not "Complete the registration".
    client.force_login(staff)
    queue = page(client.get(reverse("review:staff-queue")))
    row = queue.xpath(f'//table[@id="ready"]//tr[td[1]="{second.pk}"]')[0]
    assert row.xpath('.//*[@data-race="taken"]')
    assert not row.xpath('.//button[contains(., "Complete the registration")]')
    assert row.xpath('.//a[contains(., "Close the request")]/@href') == [
        f"{second.get_absolute_url()}#do-close"]
    registration_page = page(client.get(second.get_absolute_url()))
    assert "registered meanwhile" in text_of(registration_page, '//*[@id="nid-taken"]')
    assert registration_page.xpath('//form[@id="do-close"]')
    # Closing needs a reason, said at its field, and keeps nothing back.
    refused = client.post(reverse("review:transition", args=[second.pk, "close"]),
                          {"comment": ""})
    assert refused.status_code == 409
    assert "is required" in text_of(page(refused), '//*[@id="id_close_comment-error"]')
    mail.outbox.clear()
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        done = client.post(reverse("review:transition", args=[second.pk, "close"]),
                           {"comment": f"exlib was registered for request #{first.pk}."})
    assert done.status_code == 302
    second.refresh_from_db()
    assert second.state == State.CLOSED
    event = RequestEvent.objects.filter(registration=second).latest("id")
    assert (event.kind, event.transition, event.actor, event.to_state) == (
        "transition", "close", staff, "closed")
    assert other_registrant.email in [address for m in mail.outbox for address in m.to]
    assert workflow.TRANSITIONS["close"].done in [
        str(m) for m in client.get(second.get_absolute_url()).context["messages"]]


def test_close_is_only_for_a_request_in_a_race(registrant, expert):
    alone = make_registration(registrant, nid="alone")
    with pytest.raises(actions.TransitionRefused, match="Only a request in a race"):
        actions.registration_transition(registration=alone, transition="close", actor=expert,
                                        comment="No reason.")
    assert "close" not in {t.name for t in workflow.open_transitions(alone, expert)}


# --- Privacy ----------------------------------------------------------------------------

def test_a_withdrawn_draft_stays_private(client, registrant, other_registrant, expert,
                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        draft = make_registration(registrant, nid="hushhush", submit=False)
        actions.registration_transition(registration=draft, transition="withdraw", actor=registrant)
    assert mail.outbox == []  # nobody hears of a request that was never submitted
    assert client.get(draft.get_absolute_url()).status_code == 404
    for person in (other_registrant, expert):
        client.force_login(person)
        assert client.get(draft.get_absolute_url()).status_code == 404
    client.force_login(registrant)
    assert client.get(draft.get_absolute_url()).status_code == 200


# --- Mail -------------------------------------------------------------------------------

def test_every_link_in_every_mail_is_built_from_site_url(settings, registrant, expert, staff,
                                                         django_capture_on_commit_callbacks):
    settings.SITE_URL = "https://urn.example.org/"
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="linked")
        actions.registration_comment(registration=registration, actor=expert, audience="public",
                                     body="A public question.")
        approve(registration, expert, staff, register=True)
    links = [link for m in mail.outbox for link in re.findall(r"https?://\S+", m.body)
             if not link.startswith("https://archive.example/")]  # the template's own text
    assert links and all(link.startswith("https://urn.example.org/") for link in links), links
    assert "https://urn.example.org/namespaces/linked/" in links


def test_no_mail_template_names_a_transition(settings):
    """The mail templates read what the workflow says of a move (its row, the state it
    reaches, a question of registry.review.workflow), never which move it was by name."""
    names = "|".join(workflow.TRANSITIONS)
    named = re.compile(rf"""\.name\s*[!=]=|["']({names})["']""")
    folder = settings.BASE_DIR / "templates" / "review" / "mail"
    deciding = [f"{path.name}:{number}: {line.strip()}"
                for path in sorted(folder.glob("*.txt"))
                for number, line in enumerate(path.read_text().splitlines(), start=1)
                if named.search(line)]
    assert len(list(folder.glob("*.txt"))) > 5 and deciding == []


def test_every_move_the_list_hears_of_says_what_it_is():
    """to_list.txt and its subject know three kinds of news: a round to review, a
    registration, and a registrant asking IANA to register; a new move told to the list
    needs its own words, never one of these by elimination."""
    told = [t for t in workflow.TRANSITIONS.values() if workflow.REVIEW_LIST in t.mail]
    kinds = {t.name: (t.creates_round, t.publishes, workflow.asks_to_register(t))
             for t in told}
    assert told and [name for name, kind in kinds.items() if sum(kind) != 1] == []


# --- Forms keep everything, errors at the field -----------------------------------------

def test_a_refused_internal_comment_keeps_its_audience_and_every_character(client, registrant,
                                                                           expert):
    registration = make_registration(registrant, nid="longnote")
    client.force_login(expert)
    body = "Internal: " + "x" * 20_500
    response = client.post(reverse("review:comment", args=[registration.pk]),
                           {"body": body, "audience": "experts"})
    assert response.status_code == 400
    form = page(response).get_element_by_id("comment-form")
    assert form.xpath('.//select[@name="audience"]/option[@selected]/@value') == ["experts"]
    assert form.xpath('.//textarea[@name="body"]')[0].text_content().strip() == body
    assert "20000" in text_of(form, './/*[@id="id_body-error"]').replace(",", "")
    assert not registration.comments.exists()


def test_a_refused_standardisation_note_is_kept_at_its_field(client, registrant, expert):
    registration = make_registration(registrant, nid="stdnote")
    client.force_login(expert)
    note = "y" * 2_100
    response = client.post(reverse("review:standardisation", args=[registration.pk]),
                           {"involved": "1", "comment": note})
    assert response.status_code == 400
    form = page(response).get_element_by_id("standardisation")
    assert form.xpath('.//input[@name="comment"]/@value') == [note]
    assert text_of(form, './/*[@id="id_comment-error"]')
    registration.refresh_from_db()
    assert not registration.standardisation


def test_each_transition_says_what_was_done(client, registrant, expert):
    registration = make_registration(registrant, nid="saydone")
    client.force_login(expert)
    response = client.post(reverse("review:transition", args=[registration.pk, "request_changes"]),
                           {"comment": "Explain the check digit."}, follow=True)
    messages = [str(m) for m in response.context["messages"]]
    assert messages == [workflow.TRANSITIONS["request_changes"].done]
    assert "will be told by mail" in messages[0]  # queued, not yet sent: no "has been"
    assert all(t.done and not t.done.startswith("Done") for t in workflow.TRANSITIONS.values())


# --- Named reads --------------------------------------------------------------------------

def test_designated_experts_are_the_active_ones(client, registrant, expert, second_expert):
    from registry.accounts.models import User

    second_expert.is_active = False
    second_expert.save()
    assert list(User.objects.designated_experts()) == [expert]
    registration = make_registration(registrant, nid="assignme")
    client.force_login(expert)
    options = page(client.get(registration.get_absolute_url())).xpath(
        '//select[@name="expert"]/option/@value')
    assert options == ["", str(expert.pk)]
    with pytest.raises(actions.TransitionRefused, match="not a designated expert"):
        actions.registration_assign(registration=registration, expert=second_expert, actor=expert)


def test_the_queues_are_named_reads(registrant, expert, django_assert_max_num_queries):
    for n in range(5):
        approve(make_registration(registrant, nid=f"queue{n}"), expert)
    with django_assert_max_num_queries(1):
        rows = list(RegistrationRequest.objects.staff_queue())
        races = [workflow.race_of(r) for r in rows]
    assert len(rows) == 5 and not any(races)
    columns = RegistrationRequest.objects.dashboard_queue()
    assert [len(columns[s]) for s in (State.IN_REVIEW, State.APPROVED)] == [0, 5]


# --- The namespace pages ------------------------------------------------------------------

def test_the_namespace_page_links_its_review_record_and_asks_can_revise(
        client, registrant, expert, staff):
    registration = approve(make_registration(registrant, nid="recorded"), expert, staff,
                           register=True)
    client.force_login(registrant)
    detail = page(client.get("/namespaces/recorded/"))
    record = text_of(detail, '//*[@id="review-record"]/following-sibling::ul[1]')
    assert f"request #{registration.pk}" in record and "Approve" in record
    assert detail.xpath('//button[contains(., "Start a new version")]')
    revision = actions.registration_create(actor=registrant,
                                           revises=Namespace.objects.by_nid("recorded").get())
    detail = page(client.get("/namespaces/recorded/"))
    assert not detail.xpath('//button[contains(., "Start a new version")]')
    assert f"Request #{revision.pk} already revises recorded" in text_of(
        detail, "//p[@data-revise-refusal]")
    mine = page(client.get(reverse("review:my-requests")))
    assert not mine.xpath('//button[contains(., "start a new version")]')
    assert mine.xpath(f'//a[@href="/requests/{revision.pk}/"]')


def test_the_diff_says_when_a_version_does_not_exist(client, registrant, expert, staff):
    approve(make_registration(registrant, nid="difftwo"), expert, staff, register=True)
    assert client.get("/namespaces/difftwo/diff/", {"a": "1"}).status_code == 200
    # Not version 1 against version 1 in silence: a version that does not exist is a 404.
    response = client.get("/namespaces/difftwo/diff/", {"a": "1", "b": "7"})
    assert response.status_code == 404
