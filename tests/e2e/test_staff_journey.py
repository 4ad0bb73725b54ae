"""IANA staff as the demo ships them (group permissions, not a superuser): recognize a
standards body on the staff page; the body then takes the fast track end to end."""

import io
import re

import pytest
from django.core.management import call_command

from registry.accounts.models import AccountEvent, User
from registry.namespaces.models import Namespace
from registry.review.management.commands.seed_demo import DEMO_PASSWORD
from tests.e2e.test_registration_paths import fill_template, log_in, sign_up
from tests.factories import complete_values

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _demo(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    call_command("seed_demo", stdout=io.StringIO())


def test_fast_track_for_a_body_recognized_on_the_staff_page(new_page):
    sam = User.objects.get(email="staff@example.org")
    assert sam.is_staff and not sam.is_superuser

    body = new_page()
    sign_up(body, "rep@norms.example", name=("Nadia", "Norms"),
            organisation="Example Web Consortium")

    iana = new_page()
    log_in(iana, "staff@example.org", password=DEMO_PASSWORD, lands_on=r"/requests/iana/$")
    assert "IANA staff" in iana.inner_text("#who")
    iana.click("main >> text=Accounts and roles")
    iana.fill("#accounts-q", "web consortium")
    iana.click("form[role=search] >> text=Find")
    iana.click("#accounts >> text=Nadia Norms")
    iana.click("button:has-text('Recognize as a standards body')")  # no reason yet
    iana.wait_for_selector("textarea[name=recognition-reason].is-invalid")
    iana.fill("textarea[name=recognition-reason]",
              "The IESG recognized the Example Web Consortium on 2026-11-20.")
    iana.click("button:has-text('Recognize as a standards body')")
    iana.wait_for_selector("text=is now a recognized standards body")
    assert "Example Web Consortium on 2026-11-20" in iana.inner_text("#history")
    event = AccountEvent.objects.get(user__email="rep@norms.example", kind="recognized")
    assert event.actor == sam

    body.goto("/requests/")  # signed in since confirming the address
    assert "standards body" in body.inner_text("#who")
    fill_template(body, "normsids", complete_values(None, contact_email="rep@norms.example"),
                  fast_track=True)
    body.click("button[name=submit]")
    body.wait_for_selector("text=Submitted: the template went to the review list")
    assert "Fast track" in body.inner_text("main")
    body.click("button[value=request_registration]")  # the body decides when
    body.wait_for_url(re.compile(r"/requests/\d+/$"))
    body.wait_for_selector("text=Ready for IANA to register")

    iana.goto("/requests/iana/")
    iana.click("#ready tr:has-text('normsids') >> text=Complete the registration")
    iana.wait_for_url(re.compile(r"/requests/\d+/$"))
    iana.wait_for_selector("main >> text=Registered")
    namespace = Namespace.objects.get(nid="normsids")
    assert namespace.holder.email == "rep@norms.example"
    assert namespace.versions.get().fast_track

    body.goto("/namespaces/normsids/")
    text = body.inner_text("main")
    assert "URN namespace normsids" in text and "Fast track (section 6.3)" in text
