"""The review actions end to end: events, rounds, mail, publication."""

import dataclasses

import pytest
from django.core import mail

from registry.namespaces.models import Namespace, NamespaceEvent, TemplateVersion
from registry.review import actions
from registry.review.models import Comment, RequestEvent, Round, State
from registry.review.workflow import STATES
from tests.factories import approve, complete_values, make_registration
from tests.html import find, one, page, text, texts
from tests.review.helpers import sent_summaries

EARLY = "Tested early."


def subjects():
    return sent_summaries(mail.outbox)


@pytest.fixture(autouse=True)
def _eager_mail(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def test_submission_posts_the_template_to_the_list_and_experts(registrant, expert,
                                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="listpost")
    assert registration.state == State.IN_REVIEW
    assert len(mail.outbox) == 2
    message, acknowledgement = mail.outbox
    assert message.to == ["urn@ietf.org"] and message.cc == [expert.email]
    assert acknowledgement.to == [registrant.email]
    assert subjects()[1] == \
        f"Received: your URN namespace request #{registration.pk} is in public review"
    assert acknowledgement.subject == f"Re: {message.subject}"  # one thread
    assert f"http://127.0.0.1:8000/requests/{registration.pk}/" in acknowledgement.body
    assert message.subject == f"[URN #{registration.pk}] Registration request for URN NID listpost"
    assert "Namespace Identifier:\n   listpost" in message.body
    assert "Purpose:\n   Names archive records persistently." in message.body
    round_ = Round.objects.get(registration=registration)
    assert (round_.number, round_.version, round_.nid) == (1, 1, "listpost")


def test_community_path_to_a_published_namespace(registrant, expert, staff,
                                                 django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="FullPath")
        registration = actions.registration_transition(registration=registration,
                                                       transition="request_changes",
                                                       actor=expert,
                                                       comment="Say how NSS case works.")
        actions.registration_update(registration=registration, actor=registrant,
                                    edit_version=registration.edit_version, kind="formal",
                                    proposed_nid="FullPath", fast_track=False,
                                    values=complete_values(registrant,
                                                      syntax="NSS is case-insensitive."))
        registration = actions.registration_transition(registration=registration,
                                                       transition="resubmit",
                                                       actor=registrant)
        registration = approve(registration, expert, staff, register=True)
    assert registration.state == State.REGISTERED
    namespace = Namespace.objects.by_nid("fullpath").get()
    assert namespace.nid == "FullPath" and namespace.holder == registrant
    version = namespace.versions.get()
    assert version.number == 1 and version.syntax == "NSS is case-insensitive."
    assert registration.published_version == version
    assert [r.number for r in registration.rounds.all()] == [1, 2]
    assert list(RequestEvent.objects.filter(registration=registration).values_list("kind",
                                                                                   "transition")
                ) == [("create", ""), ("transition", "submit"),
                      ("transition", "request_changes"), ("edit", ""), ("transition", "resubmit"),
                      ("transition", "approve"), ("transition", "register")]
    received = f"Received: your URN namespace request #{registration.pk} is in public review"
    assert subjects() == [
        "[urn] Registration request for URN NID FullPath",
        received,
        f"Your URN namespace request #{registration.pk}: Changes requested",
        "[urn] Registration request for URN NID FullPath (round 2)",
        received,
        f"Your URN namespace request #{registration.pk}: Ready for IANA to register",
        "[IANA] FullPath: Ready for IANA to register",
        f"Your URN namespace request #{registration.pk}: Registered",
        "[urn] Registered: URN NID FullPath",
    ]
    assert NamespaceEvent.objects.filter(namespace=namespace, kind="registered").exists()
    to_staff = mail.outbox[-3]
    assert to_staff.to == [staff.email]
    url = f"http://127.0.0.1:8000{registration.get_absolute_url()}"
    assert " ".join(to_staff.body.split()).endswith(
        f"Looks right. Decided before the end of the public review period: Test. "
        f"It is in the IANA staff queue for registration: {url}")
    assert "IESG" not in to_staff.body
    registered = mail.outbox[-2]
    assert "The namespace is published: http://127.0.0.1:8000/namespaces/FullPath/" in \
        registered.body


def test_iesg_step(registrant, expert, staff, settings, django_capture_on_commit_callbacks):
    settings.IESG_ADDRESS = "iesg-secretary@ietf.example"
    registration = make_registration(registrant, nid="stdnid")
    actions.registration_set_standardisation(registration=registration, involved=True, actor=expert)
    with django_capture_on_commit_callbacks(execute=True):
        registration = actions.registration_transition(registration=registration,
                                                       transition="report_to_iesg",
                                                       actor=expert, comment="Report: sound.",
                                                       early_reason=EARLY)
    assert registration.state == State.AWAITING_IESG
    assert any(summary.startswith("[IANA] stdnid") for summary in subjects())
    to_iesg = [m for m in mail.outbox if m.to == [settings.IESG_ADDRESS]]
    assert len(to_iesg) == 1
    assert "Report: sound." in to_iesg[0].body
    assert "Namespace Identifier:\n   stdnid" in to_iesg[0].body
    # Staff hear of it once, by their own message; the report's answers come to them.
    assert to_iesg[0].cc == [] and to_iesg[0].reply_to == [staff.email]
    to_staff = [m for m in mail.outbox if staff.email in m.recipients()]
    assert len(to_staff) == 1 and "went to the IESG (iesg-secretary@ietf.example)" in \
        to_staff[0].body
    url = f"http://127.0.0.1:8000{registration.get_absolute_url()}"
    assert (f"with IANA staff as its reply address. Record the IESG's direction when it "
            f"arrives: {url}" in " ".join(to_staff[0].body.split()))
    registration = actions.registration_transition(registration=registration,
                                                   transition="record_iesg_approval",
                                                   actor=staff,
                                                   comment="IESG approved on 2026-11-20.")
    registration = actions.registration_transition(registration=registration, transition="register",
                                                   actor=staff)
    assert Namespace.objects.by_nid("stdnid").exists()


def test_the_mail_to_staff_says_the_next_step_of_the_state_s_row(
        monkeypatch, registrant, expert, staff, django_capture_on_commit_callbacks):
    row = dataclasses.replace(STATES[State.APPROVED], staff_next_step="Check the calendar")
    monkeypatch.setitem(STATES, State.APPROVED, row)
    registration = make_registration(registrant, nid="nextstep")
    with django_capture_on_commit_callbacks(execute=True):
        approve(registration, expert)
    to_staff = [m for m in mail.outbox if staff.email in m.recipients()]
    assert len(to_staff) == 1 and "Check the calendar:" in to_staff[0].body


def test_fast_track_path(standards_body, expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(standards_body, nid="sdonid", fast_track=True)
        actions.registration_comment(registration=registration, actor=expert, audience="registrant",
                                     body="Advice: consider a shorter NID.")
        registration = actions.registration_transition(registration=registration,
                                                       transition="request_registration",
                                                       actor=standards_body)
        registration = actions.registration_transition(registration=registration,
                                                       transition="register",
                                                       actor=staff)
    version = Namespace.objects.by_nid("sdonid").get().versions.get()
    assert version.fast_track
    assert "[urn] Fast-track Registration request for URN NID sdonid" in subjects()
    assert "[urn] Standards body asks IANA to register URN NID sdonid" in subjects()


def _sent_to(address):
    return [m for m in mail.outbox if address in m.recipients()]


def test_the_registrant_is_asked_to_resubmit_when_the_template_comes_back(
        registrant, expert, django_capture_on_commit_callbacks):
    """Requested changes hand the template back to its registrant (the state they edit
    in): their mail asks for a new round; a rejection only says where to read it."""
    with django_capture_on_commit_callbacks(execute=True):
        asked = make_registration(registrant, nid="asked")
        rejected = make_registration(registrant, nid="rejected")
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_transition(registration=asked, transition="request_changes",
                                        actor=expert, comment="Shorten the syntax.")
        actions.registration_transition(registration=rejected, transition="reject",
                                        actor=expert, comment="Not a namespace.",
                                        early_reason=EARLY)
    changes, rejection = _sent_to(registrant.email)
    url = f"http://127.0.0.1:8000/requests/{asked.pk}/"
    assert changes.body.startswith(f"Hello,\n\nYour request #{asked.pk} for the URN namespace "
                                   "asked is now: Changes requested.\n\n")
    assert changes.body.endswith(
        f"wrote:\n\nShorten the syntax.\n\nPlease revise the template and resubmit it:\n{url}\n\n")
    url = f"http://127.0.0.1:8000/requests/{rejected.pk}/"
    assert rejection.body.endswith(f"period: {EARLY}\n\n{url}\n\n")
    assert "resubmit" not in rejection.body


def test_the_list_hears_a_fast_track_request_to_register_as_one(
        standards_body, staff, django_capture_on_commit_callbacks):
    """The standards body's request to IANA reaches the list as such (RFC 8141 section
    6.3), and the registration that follows as a registration."""
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(standards_body, nid="fastlist", fast_track=True)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        registration = actions.registration_transition(
            registration=registration, transition="request_registration", actor=standards_body)
        actions.registration_transition(registration=registration, transition="register",
                                        actor=staff)
    asked, registered = _sent_to("urn@ietf.org")
    assert asked.body.startswith(
        "The representative of Example SDO asks IANA to complete this fast-track\n"
        "registration (RFC 8141 section 6.3).\n\nNamespace Identifier:\n   fastlist\n")
    assert asked.body.endswith(f"-- \nhttp://127.0.0.1:8000/requests/{registration.pk}/\n\n")
    assert registered.body.startswith("IANA has registered the URN namespace fastlist:\n"
                                      "http://127.0.0.1:8000/namespaces/fastlist/\n")
    assert sent_summaries([asked, registered]) == [
        "[urn] Standards body asks IANA to register URN NID fastlist",
        "[urn] Registered: URN NID fastlist"]


def test_informal_registration_assigns_the_next_number(registry, registrant, expert, staff):
    registration = make_registration(registrant, nid="", kind="informal")
    assert Round.objects.get(registration=registration).nid == ""
    approve(registration, expert, staff, register=True)
    namespace = Namespace.objects.informal().get(informal_number=8)
    assert namespace.nid == "urn-8" and namespace.versions.get().nid == "urn-8"


def test_a_revision_publishes_version_n_plus_1(registrant, expert, staff):
    approve(make_registration(registrant, nid="revised"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("revised").get()
    revision = actions.registration_create(actor=registrant, revises=namespace)
    assert revision.purpose == namespace.current_version().purpose  # starts from current text
    assert revision.revision_information == ""
    with pytest.raises(actions.TransitionRefused, match="Revision information: required"):
        actions.registration_transition(registration=revision, transition="submit",
                                        actor=registrant)
    revision = actions.registration_update(
        registration=revision, actor=registrant, edit_version=revision.edit_version, kind="formal",
        proposed_nid="", fast_track=False,
        values=complete_values(registrant, revision_information="New resolver."),
    )
    revision = actions.registration_transition(registration=revision, transition="submit",
                                               actor=registrant)
    assert revision.rounds.get().version == 2
    approve(revision, expert, staff, register=True)
    assert list(namespace.versions.values_list("number", flat=True)) == [1, 2]
    assert TemplateVersion.objects.get(namespace=namespace, number=2).revision_information == \
        "New resolver."


def test_only_the_holder_revises(registrant, other_registrant, expert, staff):
    approve(make_registration(registrant, nid="mineonly"), expert, staff, register=True)
    with pytest.raises(actions.NotAllowed, match="holder"):
        actions.registration_create(actor=other_registrant,
                                    revises=Namespace.objects.by_nid("mineonly").get())


def test_registering_a_taken_nid_is_refused_and_the_request_stays_approved(
        registrant, other_registrant, expert, staff):
    first = approve(make_registration(registrant, nid="twice"), expert)
    second = approve(make_registration(other_registrant, nid="TWICE"), expert)
    actions.registration_transition(registration=first, transition="register", actor=staff)
    with pytest.raises(actions.TransitionRefused,
                       match='registered meanwhile.*"Close the request" with a reason'):
        actions.registration_transition(registration=second, transition="register", actor=staff)
    second.refresh_from_db()
    assert second.state == State.APPROVED
    assert Namespace.objects.by_nid("twice").count() == 1


def test_withdrawal_tells_the_experts_but_not_for_a_draft(registrant, expert,
                                                          django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        draft = make_registration(registrant, nid="drafty", submit=False)
        actions.registration_transition(registration=draft, transition="withdraw", actor=registrant)
    assert mail.outbox == []
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="gone")
        actions.registration_transition(registration=registration, transition="withdraw",
                                        actor=registrant,
                                        comment="We found another way.")
    assert subjects()[-1] == f"[urn experts] Request #{registration.pk} for gone: withdrawn"


def test_comments_reach_the_other_side(registrant, other_registrant, expert,
                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="talky")
    actions.registration_assign(registration=registration, expert=expert, actor=expert)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_comment(registration=registration, actor=other_registrant,
                                     audience="public",
                                     body="How is uniqueness ensured?")
        actions.registration_comment(registration=registration, actor=registrant, audience="public",
                                     body="Sequential numbers.")
        actions.registration_comment(registration=registration, actor=expert, audience="experts",
                                     body="Internal: fine by me.")
    # Public comments go to the review list, the registrant and experts in copy (not the
    # author); the only expert wrote the internal one, so nobody else is told of it.
    assert [(m.to, m.cc) for m in mail.outbox] == [
        (["urn@ietf.org"], [expert.email, registrant.email]),
        (["urn@ietf.org"], [expert.email]),
    ]
    with pytest.raises(actions.NotAllowed):
        actions.registration_comment(registration=registration, actor=registrant,
                                     audience="experts",
                                     body="Let me in.")
    assert Comment.objects.filter(registration=registration).count() == 3


def test_a_mail_failure_never_rolls_back_the_decision(registrant, expert, settings,
                                                      django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "tests.review.failing_backend.EmailBackend"
    registration = make_registration(registrant, nid="mailfail")
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_transition(registration=registration, transition="request_changes",
                                        actor=expert, comment="Fix it.")
    registration.refresh_from_db()
    assert registration.state == State.CHANGES_REQUESTED
    assert RequestEvent.objects.filter(registration=registration,
                                       transition="request_changes").exists()


def test_idle_requests_get_one_reminder(registrant, expert, staff, settings,
                                        django_capture_on_commit_callbacks):
    import datetime as dt

    from django.utils import timezone

    from registry.review.models import RegistrationRequest
    from registry.review.tasks import remind_idle_requests_task

    settings.REVIEW_IDLE_REMINDER_DAYS = 7
    with django_capture_on_commit_callbacks(execute=True):  # the submissions' mail went out
        idle = make_registration(registrant, nid="sleepy")
        make_registration(registrant, nid="awake")
    RegistrationRequest.objects.filter(pk=idle.pk).update(
        last_activity_at=timezone.now() - dt.timedelta(days=8))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert remind_idle_requests_task() == 1
        assert remind_idle_requests_task() == 0  # beat runs often; one reminder per period
    assert subjects() == [f"[urn experts] Request #{idle.pk} (sleepy) is waiting"]
    event = RequestEvent.objects.get(registration=idle, kind="remind")
    assert event.comment == "No activity for 8 days; the available experts were reminded."
    # A week later, still idle: not the same reminder again, but escalated (unassigned,
    # every available expert was told already: to IANA staff).
    RegistrationRequest.objects.filter(pk=idle.pk).update(
        reminded_at=timezone.now() - dt.timedelta(days=8))
    with django_capture_on_commit_callbacks(execute=True):
        assert remind_idle_requests_task() == 1
    assert len(mail.outbox) == 2
    assert mail.outbox[1].to == [staff.email]
    assert RequestEvent.objects.filter(registration=idle, kind="escalate_staff").count() == 1


def test_the_timeline_names_each_event(client, registrant, expert):
    registration = make_registration(registrant, nid="timeline")
    actions.registration_assign(registration=registration, expert=expert, actor=expert)
    actions.registration_transition(registration=registration, transition="request_changes",
                                    actor=expert,
                                    comment="Explain the check digit.")
    doc = page(client.get(registration.get_absolute_url()))
    items = {text(one(item, "./div/strong")): item
             for item in find(doc, "//*[@id='timeline']/div[contains(@class, 'item')]")}
    for label in ("Draft started", "Submit for public review", "Assignment",
                  "Request changes"):
        assert label in items, list(items)
    changes = items["Request changes"]
    assert "In public review → Changes requested" in text(changes)
    assert texts(changes, "./div[contains(@class, 'template-text')]") == [
        "Explain the check digit."]


def test_the_version_date_is_when_iana_was_asked_not_when_it_registered(
        registrant, expert, staff):
    import datetime as dt

    from django.utils import timezone

    registration = make_registration(registrant, nid="dated")
    approve(registration, expert)
    with pytest.MonkeyPatch.context() as patch:
        later = timezone.localdate() + dt.timedelta(days=30)
        patch.setattr(timezone, "localdate", lambda *a, **k: later)
        actions.registration_transition(registration=registration, transition="register",
                                        actor=staff)
    namespace = Namespace.objects.by_nid("dated").get()
    assert namespace.registered_on == later
    submitted = later - dt.timedelta(30)
    assert namespace.versions.get().date == registration.rounds.get().date == submitted


def test_one_open_revision_per_namespace(client, registrant, expert, staff):
    approve(make_registration(registrant, nid="onerev"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("onerev").get()
    first = actions.registration_create(actor=registrant, revises=namespace)
    with pytest.raises(actions.TransitionRefused, match=f"Request #{first.pk} already revises"):
        actions.registration_create(actor=registrant, revises=namespace)
    client.force_login(registrant)
    doc = page(client.post("/requests/new/", {"revises": "onerev"}, follow=True))
    refusal = f"Request #{first.pk} already revises onerev"
    assert [alert for alert in texts(doc, "//main//*[@role='alert']") if refusal in alert]
    actions.registration_transition(registration=first, transition="withdraw", actor=registrant)
    assert actions.registration_create(actor=registrant, revises=namespace).pk != first.pk
