"""The policy as the demo's personas meet it in a real browser: a case-twin race
closed by an expert, a withdrawn draft that stays private, and a refused internal
comment that comes back with its audience and every character."""

import re

import pytest
from django.core.management import call_command

from registry.review.management.commands.seed_demo import DEMO_PASSWORD
from registry.review.models import RegistrationRequest, RequestEvent, State

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def demo(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    call_command("seed_demo", verbosity=0)


def log_in(page, email):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))


def test_an_expert_closes_the_case_twin_of_a_request(new_page):
    exlib = RegistrationRequest.objects.get(proposed_nid="exlib")
    twin = RegistrationRequest.objects.get(proposed_nid="ExLib")
    page = new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    log_in(page, "expert@example.org")
    page.goto("/requests/dashboard/")
    assert page.locator("[data-race=conflict]").count() == 2
    page.goto(twin.get_absolute_url())
    assert f"#{exlib.pk}" in page.inner_text("#conflict-flag")
    page.fill("#id_close_comment", f"Same NID as request #{exlib.pk}, submitted first.")
    page.click("#do-close button[type=submit]")
    page.wait_for_selector(".alert-success")
    assert "Closed" in page.inner_text("main h1 + .badge, main .badge >> nth=0")
    twin.refresh_from_db()
    assert twin.state == State.CLOSED
    event = RequestEvent.objects.filter(registration=twin).latest("id")
    assert (event.transition, event.actor.email) == ("close", "expert@example.org")
    page.goto("/requests/dashboard/")
    assert page.locator("[data-race=conflict]").count() == 0


def test_a_withdrawn_draft_stays_private(new_page):
    draft = RegistrationRequest.objects.get(proposed_nid="exdraft")
    owner = new_page()
    owner.on("dialog", lambda dialog: dialog.accept())
    log_in(owner, "registrant@example.org")
    owner.goto(draft.get_absolute_url())
    owner.click("#do-withdraw button[type=submit]")
    owner.wait_for_selector(".alert-success")
    draft.refresh_from_db()
    assert draft.state == State.WITHDRAWN
    stranger = new_page()
    assert stranger.goto(draft.get_absolute_url()).status == 404
    other = new_page()
    log_in(other, "other@example.org")
    assert other.goto(draft.get_absolute_url()).status == 404
    expert = new_page()
    log_in(expert, "expert@example.org")
    assert expert.goto(draft.get_absolute_url()).status == 404
    assert owner.goto(draft.get_absolute_url()).status == 200


def test_a_refused_internal_comment_keeps_its_audience(new_page):
    exlib = RegistrationRequest.objects.get(proposed_nid="exlib")
    page = new_page()
    log_in(page, "expert@example.org")
    page.goto(exlib.get_absolute_url())
    body = "Internal: the archive's other NID is close. " + "z" * 20_100
    page.select_option("#comment-form select[name=audience]", "experts")
    page.fill("#comment-form textarea[name=body]", body)
    page.click("#comment-form button")
    page.wait_for_selector("#id_body-error")
    assert page.input_value("#comment-form select[name=audience]") == "experts"
    assert page.input_value("#comment-form textarea[name=body]") == body
    assert "20000" in page.inner_text("#id_body-error").replace(",", "")
    assert not exlib.comments.filter(audience="experts").exists()
