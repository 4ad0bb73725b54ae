"""Experts' availability and load: the expert's own page, the suggested assignee on the
dashboard, who may be assigned, and the escalation of idle requests."""

import datetime as dt

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from registry.accounts import actions as account_actions
from registry.accounts.models import AccountEvent, User
from registry.review import actions, workflow
from registry.review.models import RequestEvent
from registry.review.tasks import remind_idle_requests_task
from tests.factories import make_registration, make_user
from tests.html import field_errors, field_value, find, one, page, text, texts
from tests.review.helpers import registration_in

TODAY = dt.date(2026, 11, 24)


@pytest.fixture(autouse=True)
def _eager_mail(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.REVIEW_IDLE_REMINDER_DAYS = 7


def _loaded(*experts):
    return list(User.objects.filter(pk__in=[e.pk for e in experts]).with_load()
                .order_by("pk"))


def _away(expert, until):
    return account_actions.expert_set_availability(
        expert=expert, unavailable_until=until, max_open_assignments=None, actor=expert)


# --- The expert's own page --------------------------------------------------------------

def test_an_expert_sets_away_and_maximum_on_their_own_page_with_an_event(client, expert):
    client.force_login(expert)
    until = timezone.localdate() + dt.timedelta(days=10)
    response = client.post("/requests/availability/", {
        "unavailable_until": until.isoformat(), "max_open_assignments": "3"})
    assert response.status_code == 302
    expert.refresh_from_db()
    assert (expert.unavailable_until, expert.max_open_assignments) == (until, 3)
    event = AccountEvent.objects.get(user=expert, kind=AccountEvent.Kind.AVAILABILITY_CHANGED)
    assert event.actor == expert
    assert event.changes == {"unavailable_until": [None, until.isoformat()],
                             "max_open_assignments": [None, 3]}
    doc = page(client.get("/requests/availability/"))
    assert field_value(doc, "unavailable_until") == until.isoformat()
    assert text(one(doc, "//*[@data-status]")).startswith(
        f"You are away until {until.isoformat()}: you are not suggested")
    # Saving the same again writes nothing more.
    client.post("/requests/availability/", {
        "unavailable_until": until.isoformat(), "max_open_assignments": "3"})
    assert AccountEvent.objects.filter(user=expert,
                                       kind=AccountEvent.Kind.AVAILABILITY_CHANGED).count() == 1


def test_a_past_day_or_a_silly_maximum_is_refused_at_its_field_keeping_what_was_typed(
        client, expert):
    client.force_login(expert)
    response = client.post("/requests/availability/", {
        "unavailable_until": "2001-01-01", "max_open_assignments": "0"})
    assert response.status_code == 400
    doc = page(response)
    assert field_errors(doc, "unavailable_until") and field_errors(doc, "max_open_assignments")
    assert field_value(doc, "unavailable_until") == "2001-01-01"
    assert field_value(doc, "max_open_assignments") == "0"
    expert.refresh_from_db()
    assert expert.unavailable_until is None and expert.max_open_assignments is None
    response = client.post("/requests/availability/", {"unavailable_until": "not a day"})
    assert response.status_code == 400


def test_only_experts_have_an_availability_and_only_their_own(client, registrant, expert,
                                                              staff):
    client.force_login(registrant)
    assert client.get("/requests/availability/").status_code == 403
    with pytest.raises(account_actions.AccountRefused):
        account_actions.expert_set_availability(expert=expert, unavailable_until=None,
                                                max_open_assignments=2, actor=staff)
    with pytest.raises(account_actions.AccountRefused):
        account_actions.expert_set_availability(expert=registrant, unavailable_until=None,
                                                max_open_assignments=2, actor=registrant)


# --- The policy ---------------------------------------------------------------------------

def test_conflict_of_interest_is_the_registrant_or_their_organisation(registrant, expert):
    registration = make_registration(registrant, nid="conflicted", submit=False)
    assert workflow.conflict_of_interest(registration, expert) == ""
    assert "registrant" in workflow.conflict_of_interest(registration, registrant)
    colleague = make_user("colleague@example.org", roles=["designated expert"],
                          organisation="  example ARCHIVE foundation ")
    assert "organisation" in workflow.conflict_of_interest(registration, colleague)
    # The template's organisation counts too, not only the account's.
    registration.registrant_organisation = "ISSN International Centre"
    issn = make_user("issn@example.org", roles=["designated expert"],
                     organisation="ISSN International Centre")
    assert "organisation" in workflow.conflict_of_interest(registration, issn)


def test_the_suggestion_is_the_least_loaded_available_expert_without_a_conflict(
        registrant, expert, second_expert):
    third = make_user("expert3@example.org", roles=["designated expert"],
                      organisation=registrant.organisation)
    busy = make_registration(registrant, nid="busyone")
    actions.registration_assign(registration=busy, expert=expert, actor=expert)
    registration = make_registration(registrant, nid="suggested")
    experts = _loaded(expert, second_expert, third)
    # expert has one open request, second_expert none, third is of the registrant's body.
    assert workflow.suggested_assignee(registration, experts, today=TODAY) == second_expert
    _away(second_expert, TODAY)
    experts = _loaded(expert, second_expert, third)
    assert workflow.suggested_assignee(registration, experts, today=TODAY) == expert
    account_actions.expert_set_availability(expert=expert, unavailable_until=None,
                                            max_open_assignments=1, actor=expert)
    experts = _loaded(expert, second_expert, third)
    assert workflow.suggested_assignee(registration, experts, today=TODAY) is None
    # Back the day after their absence ends.
    tomorrow = TODAY + dt.timedelta(days=1)
    assert workflow.suggested_assignee(registration, experts, today=tomorrow) == second_expert
    # An assigned request needs no suggestion.
    busy.refresh_from_db()
    assert workflow.suggested_assignee(busy, experts, today=tomorrow) is None


def test_nobody_assigns_a_conflicted_expert_nor_someone_else_who_is_away(
        registrant, expert, second_expert, staff):
    registration = make_registration(registrant, nid="assignrule")
    colleague = make_user("colleague@example.org", roles=["designated expert"],
                          organisation=registrant.organisation)
    with pytest.raises(workflow.TransitionRefused, match="conflict of interest"):
        actions.registration_assign(registration=registration, expert=colleague, actor=staff)
    _away(second_expert, timezone.localdate() + dt.timedelta(days=3))
    with pytest.raises(workflow.TransitionRefused, match="away until"):
        actions.registration_assign(registration=registration, expert=second_expert, actor=expert)
    # ... but they may still take it themselves, and IANA staff assign too.
    actions.registration_assign(registration=registration, expert=second_expert,
                                actor=second_expert)
    actions.registration_assign(registration=registration, expert=expert, actor=staff)
    registration.refresh_from_db()
    assert registration.assigned_expert == expert
    assert RequestEvent.objects.filter(registration=registration, kind="assign").count() == 2


# --- The dashboard ---------------------------------------------------------------------

@pytest.mark.parametrize("persona", ["expert", "staff"])
def test_the_dashboard_shows_each_load_and_assigns_the_suggestion_in_one_click(
        client, persona, registrant, expert, second_expert, staff):
    busy = make_registration(registrant, nid="busyone")
    actions.registration_assign(registration=busy, expert=expert, actor=expert)
    _away(expert, timezone.localdate())
    waiting = make_registration(registrant, nid="waiting")
    client.force_login({"expert": expert, "staff": staff}[persona])
    doc = page(client.get("/requests/dashboard/"))
    rows = {row.get("data-expert"): row for row in find(doc, "//table[@data-load]/tbody/tr")}
    assert set(rows) == {str(expert.pk), str(second_expert.pk)}
    assert text(one(rows[str(expert.pk)], "./td[@data-label='Open requests']")) == "1"
    assert text(one(rows[str(expert.pk)], "./td[@data-label='Takes new requests']")) \
        .startswith("No: is away until")
    form = one(doc, f"//form[@action='/requests/{waiting.pk}/assign/'][@data-suggested]")
    assert form.get("data-suggested") == str(second_expert.pk)
    fields = {i.get("name"): i.get("value") for i in find(form, ".//input")
              if i.get("type") == "hidden"}
    response = client.post(form.get("action"), fields)
    assert response.status_code == 302 and response["Location"] == "/requests/dashboard/"
    waiting.refresh_from_db()
    assert waiting.assigned_expert == second_expert
    event = RequestEvent.objects.filter(registration=waiting, kind="assign").get()
    assert event.actor.pk == {"expert": expert, "staff": staff}[persona].pk


def test_the_dashboard_counts_the_open_requests_nobody_is_assigned(client, registrant, expert):
    busy = make_registration(registrant, nid="countbusy")
    actions.registration_assign(registration=busy, expert=expert, actor=expert)
    make_registration(registrant, nid="countone")
    make_registration(registrant, nid="counttwo")
    make_registration(registrant, nid="countdraft", submit=False)  # the registrant's alone
    client.force_login(expert)
    doc = page(client.get("/requests/dashboard/"))
    said = text(one(doc, "//main//p[contains(., 'unassigned')]"))
    assert said.startswith("2 open requests unassigned.")


def test_one_click_assignment_says_so_and_mails_the_assignee(
        client, registrant, expert, second_expert, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the submissions' mail goes out
        busy = make_registration(registrant, nid="busytwo")
        actions.registration_assign(registration=busy, expert=expert, actor=expert)
        waiting = make_registration(registrant, nid="clicked")
    client.force_login(expert)
    form = one(page(client.get("/requests/dashboard/")),
               f"//form[@action='/requests/{waiting.pk}/assign/'][@data-suggested]")
    fields = {i.get("name"): i.get("value") for i in find(form, ".//input")
              if i.get("type") == "hidden"}
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(form.get("action"), fields, follow=True)
    said = texts(page(response), "//main//*[@role='alert']")
    assert said == [f"Request #{waiting.pk} (clicked) is assigned to "
                    f"{second_expert.display_name}; they are told by mail."]
    assert [m.to for m in mail.outbox] == [[second_expert.email]]
    assert "assigned request" in mail.outbox[0].body
    assert waiting.get_absolute_url() in mail.outbox[0].body
    # Taking it oneself mails nobody.
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(form.get("action"), {**fields, "expert": expert.pk}, follow=True)
    assert texts(page(response), "//main//*[@role='alert']") == [
        f"Request #{waiting.pk} (clicked) is assigned to you."]
    assert mail.outbox == []


def test_an_away_assignee_is_marked_on_the_dashboard(client, registrant, expert,
                                                     second_expert, staff):
    registration = make_registration(registrant, nid="awaymark")
    actions.registration_assign(registration=registration, expert=expert, actor=expert)
    other = make_registration(registrant, nid="heremark")
    actions.registration_assign(registration=other, expert=second_expert, actor=second_expert)
    until = timezone.localdate() + dt.timedelta(days=10)
    _away(expert, until)
    client.force_login(staff)
    doc = page(client.get("/requests/dashboard/"))
    marks = find(doc, "//td[@data-label='Assigned']/*[@data-away]")
    assert [m.get("data-away") for m in marks] == [str(expert.pk)]
    assert text(marks[0]).endswith(f"is away until {until:%Y-%m-%d}")
    row = marks[0].getparent().getparent()
    assert one(row, ".//a[@class='nid']").text == "awaymark"


# --- Escalation -------------------------------------------------------------------------

START = timezone.now()


def _run(capture, *, periods):
    """The periodic task, ``periods`` idle periods (8 days each) from now."""
    mail.outbox.clear()
    with time_machine.travel(START + dt.timedelta(days=8 * periods), tick=False), \
            capture(execute=True):
        return remind_idle_requests_task()


def test_an_idle_request_goes_to_its_expert_then_the_others_then_staff_then_stops(
        registrant, expert, second_expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the submission's mail goes out
        registration = make_registration(registrant, nid="sleepy")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
    steps = [(_run(django_capture_on_commit_callbacks, periods=n),
              [sorted(m.to) for m in mail.outbox]) for n in (1, 2, 3, 4)]
    assert steps == [(1, [[expert.email]]), (1, [[second_expert.email]]),
                     (1, [[staff.email]]), (0, [])]
    kinds = list(RequestEvent.objects.filter(registration=registration,
                                             kind__in=workflow.REMINDER_KINDS)
                 .values_list("kind", flat=True))
    assert kinds == list(workflow.REMINDER_KINDS)
    # Someone acts: the next idle period starts from the beginning again.
    with time_machine.travel(START + dt.timedelta(days=33), tick=False), \
            django_capture_on_commit_callbacks(execute=True):  # its mail goes out then
        actions.registration_comment(registration=registration, actor=expert, audience="experts",
                                     body="On it.")
    assert _run(django_capture_on_commit_callbacks, periods=5) == 0  # not idle long enough
    assert _run(django_capture_on_commit_callbacks, periods=6) == 1
    assert [m.to for m in mail.outbox] == [[expert.email]]


def test_an_expert_away_gets_no_reminder(registrant, expert, second_expert, staff,
                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the submission's mail goes out
        registration = make_registration(registrant, nid="awayreq")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
    _away(expert, timezone.localdate() + dt.timedelta(days=60))
    assert _run(django_capture_on_commit_callbacks, periods=1) == 1
    assert [m.to for m in mail.outbox] == [[second_expert.email]]
    # The other experts were told already (the one assigned is away): on to staff.
    assert _run(django_capture_on_commit_callbacks, periods=2) == 1
    assert [m.to for m in mail.outbox] == [[staff.email]]
    assert RequestEvent.objects.filter(registration=registration, kind="escalate").count() == 0


def test_with_every_expert_away_staff_hear_at_once(registrant, expert, staff,
                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the submission's mail goes out
        registration = make_registration(registrant, nid="nobodyin")
    _away(expert, timezone.localdate() + dt.timedelta(days=30))
    assert _run(django_capture_on_commit_callbacks, periods=1) == 1
    assert [m.to for m in mail.outbox] == [[staff.email]]
    event = RequestEvent.objects.get(registration=registration, kind="escalate_staff")
    assert event.comment == "Still no activity; escalated to IANA staff."
    assert "escalated" in mail.outbox[0].body


@pytest.mark.parametrize("state", ["approved", "awaiting_iesg"])
def test_a_request_only_staff_can_move_on_is_reminded_to_staff_first_and_once(
        state, registrant, expert, second_expert, staff, django_capture_on_commit_callbacks):
    """Ready for IANA to register (or awaiting the IESG's direction, which staff record):
    the experts cannot act, so staff hear at the first idle period, the experts never."""
    assert workflow.meaning_of(state).reminds == workflow.STAFF
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    with django_capture_on_commit_callbacks(execute=True):  # the moves' mail goes out
        registration = registration_in(state, path="community", people=people,
                                       nid=f"{state[:5]}staff")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
    steps = [(_run(django_capture_on_commit_callbacks, periods=n),
              [sorted(m.to) for m in mail.outbox]) for n in (1, 2, 3)]
    assert steps == [(1, [[staff.email]]), (0, []), (0, [])]
    event = RequestEvent.objects.get(registration=registration, kind__in=workflow.REMINDER_KINDS)
    assert event.kind == "remind"
    assert event.comment.endswith(" days; IANA staff were reminded.")


def test_the_reminder_says_the_state_as_it_is_written(registrant, expert, staff,
                                                      django_capture_on_commit_callbacks):
    people = {"registrant": registrant, "expert": expert, "staff": staff}
    with django_capture_on_commit_callbacks(execute=True):
        registration_in("approved", path="community", people=people, nid="wording")
    _run(django_capture_on_commit_callbacks, periods=1)
    (message,) = mail.outbox
    assert message.to == [staff.email]
    assert 'has been "ready for IANA to register"' in " ".join(message.body.split())


def test_the_command_takes_one_step_per_run_when_told_any_idle_time_counts(
        registrant, expert, staff, django_capture_on_commit_callbacks):
    from io import StringIO

    from django.core.management import CommandError, call_command

    registration = make_registration(registrant, nid="cmdreq")
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("remind_idle_requests", stdout=out)
    assert out.getvalue().strip() == "0 requests brought up."  # not idle a week
    kinds = []
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            call_command("remind_idle_requests", "--idle-days", "0", stdout=StringIO())
        kinds = list(RequestEvent.objects.filter(registration=registration,
                                                 kind__in=workflow.REMINDER_KINDS)
                     .values_list("kind", flat=True))
    # Unassigned: every expert first, then straight to staff; then nothing more.
    assert kinds == ["remind", "escalate_staff"]
    with pytest.raises(CommandError):
        call_command("remind_idle_requests", "--idle-days", "-1")


def test_staff_reach_the_dashboard_from_their_queue(client, staff, registrant):
    client.force_login(staff)
    doc = page(client.get("/requests/iana/"))
    assert "/requests/dashboard/" in [a.get("href") for a in find(doc, "//main//a")]
    client.force_login(registrant)
    assert client.get("/requests/dashboard/").status_code == 403
