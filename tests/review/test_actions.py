"""The review actions end to end: events, rounds, mail, publication."""

import pytest
from django.core import mail

from registry.namespaces.models import Namespace, NamespaceEvent, TemplateVersion
from registry.review import actions
from registry.review.models import Comment, RequestEvent, Round, State
from tests.factories import approve, complete_values, make_request
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
        request = make_request(registrant, nid="listpost")
    assert request.state == State.IN_REVIEW
    assert len(mail.outbox) == 2
    message, acknowledgement = mail.outbox
    assert message.to == ["urn@ietf.org"] and message.cc == [expert.email]
    assert acknowledgement.to == [registrant.email]
    assert subjects()[1] == \
        f"Received: your URN namespace request #{request.pk} is in public review"
    assert acknowledgement.subject == f"Re: {message.subject}"  # one thread
    assert f"http://127.0.0.1:8000/requests/{request.pk}/" in acknowledgement.body
    assert message.subject == f"[URN #{request.pk}] Registration request for URN NID listpost"
    assert "Namespace Identifier:\n   listpost" in message.body
    assert "Purpose:\n   Names archive records persistently." in message.body
    round_ = Round.objects.get(registration=request)
    assert (round_.number, round_.version, round_.nid) == (1, 1, "listpost")


def test_community_path_to_a_published_namespace(registrant, expert, staff,
                                                 django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        request = make_request(registrant, nid="FullPath")
        request = actions.request_transition(request=request, transition="request_changes",
                                             actor=expert, comment="Say how NSS case works.")
        actions.request_update(request=request, actor=registrant,
                               edit_version=request.edit_version, kind="formal",
                               proposed_nid="FullPath", fast_track=False,
                               values=complete_values(registrant,
                                                      syntax="NSS is case-insensitive."))
        request = actions.request_transition(request=request, transition="resubmit",
                                             actor=registrant)
        request = approve(request, expert, staff, register=True)
    assert request.state == State.REGISTERED
    namespace = Namespace.objects.by_nid("fullpath").get()
    assert namespace.nid == "FullPath" and namespace.holder == registrant
    version = namespace.versions.get()
    assert version.number == 1 and version.syntax == "NSS is case-insensitive."
    assert request.published_version == version
    assert [r.number for r in request.rounds.all()] == [1, 2]
    assert list(RequestEvent.objects.filter(registration=request).values_list("kind", "transition")
                ) == [("create", ""), ("transition", "submit"),
                      ("transition", "request_changes"), ("transition", "resubmit"),
                      ("transition", "approve"), ("transition", "register")]
    received = f"Received: your URN namespace request #{request.pk} is in public review"
    assert subjects() == [
        "[urn] Registration request for URN NID FullPath",
        received,
        f"Your URN namespace request #{request.pk}: Changes requested",
        "[urn] Registration request for URN NID FullPath (round 2)",
        received,
        f"Your URN namespace request #{request.pk}: Ready for IANA to register",
        "[IANA] FullPath: Ready for IANA to register",
        f"Your URN namespace request #{request.pk}: Registered",
        "[urn] Registered: URN NID FullPath",
    ]
    assert NamespaceEvent.objects.filter(namespace=namespace, kind="registered").exists()
    registered = mail.outbox[-2]
    assert "The namespace is published: http://127.0.0.1:8000/namespaces/FullPath/" in \
        registered.body


def test_iesg_step(registrant, expert, staff, settings, django_capture_on_commit_callbacks):
    settings.IESG_ADDRESS = "iesg-secretary@ietf.example"
    request = make_request(registrant, nid="stdnid")
    actions.request_set_standardisation(request=request, involved=True, actor=expert)
    with django_capture_on_commit_callbacks(execute=True):
        request = actions.request_transition(request=request, transition="report_to_iesg",
                                             actor=expert, comment="Report: sound.",
                                             early_reason=EARLY)
    assert request.state == State.AWAITING_IESG
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
    request = actions.request_transition(request=request, transition="record_iesg_approval",
                                         actor=staff, comment="IESG approved on 2026-11-20.")
    request = actions.request_transition(request=request, transition="register", actor=staff)
    assert Namespace.objects.by_nid("stdnid").exists()


def test_fast_track_path(standards_body, expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        request = make_request(standards_body, nid="sdonid", fast_track=True)
        actions.request_comment(request=request, actor=expert, audience="registrant",
                                body="Advice: consider a shorter NID.")
        request = actions.request_transition(request=request, transition="request_registration",
                                             actor=standards_body)
        request = actions.request_transition(request=request, transition="register",
                                             actor=staff)
    version = Namespace.objects.by_nid("sdonid").get().versions.get()
    assert version.fast_track
    assert "[urn] Fast-track Registration request for URN NID sdonid" in subjects()
    assert "[urn] Standards body asks IANA to register URN NID sdonid" in subjects()


def test_informal_registration_assigns_the_next_number(registry, registrant, expert, staff):
    request = make_request(registrant, nid="", kind="informal")
    assert Round.objects.get(registration=request).nid == ""
    approve(request, expert, staff, register=True)
    namespace = Namespace.objects.informal().get(informal_number=8)
    assert namespace.nid == "urn-8" and namespace.versions.get().nid == "urn-8"


def test_a_revision_publishes_version_n_plus_1(registrant, expert, staff):
    approve(make_request(registrant, nid="revised"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("revised").get()
    revision = actions.request_create(actor=registrant, revises=namespace)
    assert revision.purpose == namespace.current_version().purpose  # starts from current text
    assert revision.revision_information == ""
    with pytest.raises(actions.TransitionRefused, match="Revision information is empty"):
        actions.request_transition(request=revision, transition="submit", actor=registrant)
    revision = actions.request_update(
        request=revision, actor=registrant, edit_version=revision.edit_version, kind="formal",
        proposed_nid="", fast_track=False,
        values=complete_values(registrant, revision_information="New resolver."),
    )
    revision = actions.request_transition(request=revision, transition="submit",
                                          actor=registrant)
    assert revision.rounds.get().version == 2
    approve(revision, expert, staff, register=True)
    assert list(namespace.versions.values_list("number", flat=True)) == [1, 2]
    assert TemplateVersion.objects.get(namespace=namespace, number=2).revision_information == \
        "New resolver."


def test_only_the_holder_revises(registrant, other_registrant, expert, staff):
    approve(make_request(registrant, nid="mineonly"), expert, staff, register=True)
    with pytest.raises(actions.NotAllowed, match="holder"):
        actions.request_create(actor=other_registrant,
                               revises=Namespace.objects.by_nid("mineonly").get())


def test_registering_a_taken_nid_is_refused_and_the_request_stays_approved(
        registrant, other_registrant, expert, staff):
    first = approve(make_request(registrant, nid="twice"), expert)
    second = approve(make_request(other_registrant, nid="TWICE"), expert)
    actions.request_transition(request=first, transition="register", actor=staff)
    with pytest.raises(actions.TransitionRefused,
                       match='registered meanwhile.*"Close the request" with a reason'):
        actions.request_transition(request=second, transition="register", actor=staff)
    second.refresh_from_db()
    assert second.state == State.APPROVED
    assert Namespace.objects.by_nid("twice").count() == 1


def test_withdrawal_tells_the_experts_but_not_for_a_draft(registrant, expert,
                                                          django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        draft = make_request(registrant, nid="drafty", submit=False)
        actions.request_transition(request=draft, transition="withdraw", actor=registrant)
    assert mail.outbox == []
    with django_capture_on_commit_callbacks(execute=True):
        request = make_request(registrant, nid="gone")
        actions.request_transition(request=request, transition="withdraw", actor=registrant,
                                   comment="We found another way.")
    assert subjects()[-1] == f"[urn experts] Request #{request.pk} for gone: withdrawn"


def test_comments_reach_the_other_side(registrant, other_registrant, expert,
                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        request = make_request(registrant, nid="talky")
    actions.request_assign(request=request, expert=expert, actor=expert)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        actions.request_comment(request=request, actor=other_registrant, audience="public",
                                body="How is uniqueness ensured?")
        actions.request_comment(request=request, actor=registrant, audience="public",
                                body="Sequential numbers.")
        actions.request_comment(request=request, actor=expert, audience="experts",
                                body="Internal: fine by me.")
    # Public comments go to the review list, the registrant and experts in copy (not the
    # author); the only expert wrote the internal one, so nobody else is told of it.
    assert [(m.to, m.cc) for m in mail.outbox] == [
        (["urn@ietf.org"], [expert.email, registrant.email]),
        (["urn@ietf.org"], [expert.email]),
    ]
    with pytest.raises(actions.NotAllowed):
        actions.request_comment(request=request, actor=registrant, audience="experts",
                                body="Let me in.")
    assert Comment.objects.filter(registration=request).count() == 3


def test_a_mail_failure_never_rolls_back_the_decision(registrant, expert, settings,
                                                     django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "tests.review.failing_backend.EmailBackend"
    request = make_request(registrant, nid="mailfail")
    with django_capture_on_commit_callbacks(execute=True):
        actions.request_transition(request=request, transition="request_changes",
                                   actor=expert, comment="Fix it.")
    request.refresh_from_db()
    assert request.state == State.CHANGES_REQUESTED
    assert RequestEvent.objects.filter(registration=request, transition="request_changes").exists()


def test_idle_requests_get_one_reminder(registrant, expert, staff, settings,
                                        django_capture_on_commit_callbacks):
    import datetime as dt

    from django.utils import timezone

    from registry.review.models import RegistrationRequest
    from registry.review.tasks import remind_idle_requests_task

    settings.REVIEW_IDLE_REMINDER_DAYS = 7
    with django_capture_on_commit_callbacks(execute=True):  # the submissions' mail went out
        idle = make_request(registrant, nid="sleepy")
        make_request(registrant, nid="awake")
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
    request = make_request(registrant, nid="timeline")
    actions.request_assign(request=request, expert=expert, actor=expert)
    actions.request_transition(request=request, transition="request_changes", actor=expert,
                               comment="Explain the check digit.")
    doc = page(client.get(request.get_absolute_url()))
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

    request = make_request(registrant, nid="dated")
    approve(request, expert)
    with pytest.MonkeyPatch.context() as patch:
        later = timezone.localdate() + dt.timedelta(days=30)
        patch.setattr(timezone, "localdate", lambda *a, **k: later)
        actions.request_transition(request=request, transition="register", actor=staff)
    namespace = Namespace.objects.by_nid("dated").get()
    assert namespace.registered_on == later
    assert namespace.versions.get().date == request.rounds.get().date == later - dt.timedelta(30)


def test_one_open_revision_per_namespace(client, registrant, expert, staff):
    approve(make_request(registrant, nid="onerev"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("onerev").get()
    first = actions.request_create(actor=registrant, revises=namespace)
    with pytest.raises(actions.TransitionRefused, match=f"Request #{first.pk} already revises"):
        actions.request_create(actor=registrant, revises=namespace)
    client.force_login(registrant)
    doc = page(client.post("/requests/new/", {"revises": "onerev"}, follow=True))
    refusal = f"Request #{first.pk} already revises onerev"
    assert [alert for alert in texts(doc, "//main//*[@role='alert']") if refusal in alert]
    actions.request_transition(request=first, transition="withdraw", actor=registrant)
    assert actions.request_create(actor=registrant, revises=namespace).pk != first.pk
