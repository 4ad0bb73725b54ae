"""The two registration paths of RFC 8141, driven in a real browser from sign-up
to the published namespace page."""

import re
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core import mail

from registry.accounts.models import User
from tests.factories import PASSWORD, complete_values, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEMPLATE_FIELDS = ["registrant_organisation", "contact_name", "contact_email", "contact_phone",
                   "purpose", "syntax", "assignment", "security", "interoperability",
                   "resolution", "documentation"]


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.REVIEW_MIN_DAYS = 14


def sign_up(page, email, *, name=("Pat", "Example"), organisation=""):
    page.goto("/accounts/signup/")
    page.fill("input[name=first_name]", name[0])
    page.fill("input[name=last_name]", name[1])
    page.fill("input[name=organisation]", organisation)
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url(re.compile(r"/accounts/confirm-email/"))
    message = next(m for m in reversed(mail.outbox) if email in m.to)
    link = re.search(r"https?://\S+/accounts/confirm-email/\S+", message.body).group(0)
    # The link is built on SITE_URL (never the request's Host); the live server that
    # plays the site here listens on a port of its own, so the path is followed there.
    assert link.startswith(settings.SITE_URL)
    page.goto(urlsplit(link).path)
    page.click("form button[type=submit]")  # "Confirm"
    page.wait_for_url(re.compile(r"/requests/$"))  # confirming signed the person in
    assert email in page.inner_text("#who") or name[0] in page.inner_text("#who")


def log_in(page, email, *, password=PASSWORD, lands_on=r"/requests/$"):
    """Log in; each role lands on its own page (registrants on "My requests")."""
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.click("form button[type=submit]")
    page.wait_for_url(re.compile(lands_on))


def fill_template(page, nid, values, *, fast_track=False):
    page.goto("/requests/new/")
    page.check("input[name=kind][value=formal]")
    page.fill("input[name=proposed_nid]", "xn--" + nid)
    page.wait_for_selector("#nid-status .text-danger")  # the live check complains...
    assert "two letters and a hyphen" in page.inner_text("#nid-status")
    page.fill("input[name=proposed_nid]", nid)
    page.wait_for_selector("#nid-status .text-success")  # ...then accepts
    for name in TEMPLATE_FIELDS:
        page.fill(f"[name={name}]", values[name])
    if fast_track:
        page.check("input[name=fast_track]")


def approve_early(reviewer, comment, reason):
    """The expert approves before the review period is over, saying why."""
    reviewer.fill("#id_approve_comment", comment)
    reviewer.fill("#id_approve_early_reason", reason)
    reviewer.click("button[value=approve]")
    reviewer.wait_for_selector("text=Approved: the request is in the IANA staff queue.")


def complete_registration(new_page, staff):
    """IANA staff sign in and complete the registration at the head of their queue."""
    iana = new_page()
    log_in(iana, staff.email, lands_on=r"/requests/iana/$")
    iana.click("#ready >> text=Complete the registration")
    iana.wait_for_selector("text=Registered: the namespace is published.")
    return iana


def test_community_registration_from_sign_up_to_published_page(new_page, expert, staff):
    registrant = new_page()
    sign_up(registrant, "alice@example.org")
    fill_template(registrant, "alicearchive",
                  complete_values(None, contact_email="alice@example.org"))
    registrant.click("button[name=save]")  # a draft first
    registrant.wait_for_selector("text=Draft saved.")
    registrant.click("button[name=submit]")
    registrant.wait_for_selector("text=Submitted: the template went to the review list")
    assert "In public review" in registrant.inner_text("main")
    registration_url = registrant.url
    assert any(m.subject.endswith("] Registration request for URN NID alicearchive")
               for m in mail.outbox)

    reviewer = new_page()
    log_in(reviewer, expert.email, lands_on=r"/requests/dashboard/$")
    reviewer.click("table[data-state=in_review] >> a.btn:has-text(\"Review\")")
    assert reviewer.url == registration_url
    reviewer.fill("#id_request_changes_comment", "Please say whether the NSS is case-sensitive.")
    reviewer.click("button[value=request_changes]")
    reviewer.wait_for_selector("text=Changes requested; the registrant will be told by mail.")

    registrant.goto(registration_url)
    registrant.click("text=Edit the template")
    registrant.fill("[name=syntax]", "NSS = 1*DIGIT; compared case-sensitively.")
    registrant.click("button[name=submit]")
    registrant.wait_for_selector("text=Resubmitted: the new round went to the review list")

    reviewer.goto(registration_url)
    assert "Compare rounds" in reviewer.inner_text("main")
    approve_early(reviewer, "Clear and complete.", "The list discussion is over; no objections.")
    complete_registration(new_page, staff)

    registrant.goto("/namespaces/AliceArchive/")
    body = registrant.inner_text("main")
    assert "URN namespace alicearchive" in body
    assert "compared case-sensitively" in body
    assert User.objects.get(email="alice@example.org").namespaces.get().nid == "alicearchive"


def test_fast_track_from_sign_up_to_published_page(new_page, expert):
    iana_admin = make_user("admin@iana.example", roles=["IANA staff"])  # not a superuser

    body = new_page()
    sign_up(body, "rep@sdo.example")
    body_user = User.objects.get(email="rep@sdo.example")

    iana = new_page()
    # IANA staff record the IESG's recognition in the admin, with the reason.
    log_in(iana, iana_admin.email, lands_on=r"/requests/iana/$")
    iana.goto(f"/admin/accounts/user/{body_user.pk}/change/")
    iana.check("input[name=recognized_standards_body]")
    iana.fill("input[name=organisation]", "Example Standards Organization")
    iana.fill("textarea[name=reason]", "The IESG recognized the organisation.")
    iana.click("input[name=_save]")
    iana.wait_for_selector("text=was changed successfully")

    body.goto("/requests/")  # signed in since confirming the address
    fill_template(body, "sdoids", complete_values(None, contact_email="rep@sdo.example"),
                  fast_track=True)
    body.click("button[name=submit]")
    body.wait_for_selector("text=Submitted: the template went to the review list")
    registration_url = body.url
    assert "Fast track" in body.inner_text("main")

    reviewer = new_page()
    log_in(reviewer, expert.email, lands_on=r"/requests/dashboard/$")
    reviewer.goto(registration_url)
    assert reviewer.locator("button[value=approve]").count() == 0  # reviews are advisory
    reviewer.fill("#id_body", "Advice: consider documenting the check digit.")
    reviewer.select_option("select[name=audience]", "registrant")
    reviewer.click("form[action$=\"/comment/\"] button")
    reviewer.wait_for_selector("text=Comment posted.")

    body.goto(registration_url)
    assert "consider documenting the check digit" in body.inner_text("main")
    body.click("button[value=request_registration]")  # the body decides when
    body.wait_for_selector("text=Asked: the request is in the IANA staff queue.")

    iana.goto("/requests/iana/")
    iana.click("#ready >> text=Complete the registration")
    iana.wait_for_selector("text=Registered: the namespace is published.")

    body.goto("/namespaces/sdoids/")
    text = body.inner_text("main")
    assert "URN namespace sdoids" in text and "Fast track (section 6.3)" in text
