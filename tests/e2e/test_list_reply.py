"""A reply on the review list, piped to ``receive_mail``, shows in a real browser under
its request on the public review page and on the request's page, quotes folded."""

import io
import os
import sys
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command

from registry.review.models import OutboundMessage
from tests.factories import make_registration, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EML = Path(__file__).parent.parent / "review" / "eml"
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", tempfile.gettempdir()))


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def pipe(name: str, registration) -> None:
    root = OutboundMessage.objects.about(registration).first()
    raw = (EML / f"{name}.eml").read_bytes()
    for key, value in (("REQ", str(registration.pk)), ("NID", registration.proposed_nid),
                       ("ROOT", root.message_id.strip("<>"))):
        raw = raw.replace(f"%%{key}%%".encode(), value.encode())
    stdin, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(raw))
    try:
        call_command("receive_mail")
    finally:
        sys.stdin = stdin


def test_a_list_reply_appears_under_its_request(new_page):
    registrant = make_user("registrant@example.org", organisation="Example Archive Foundation")
    make_user("expert@example.org", roles=["designated expert"])
    other = make_registration(registrant, nid="quietnid")
    registration = make_registration(registrant, nid="racefoo")
    pipe("gmail_list_reply", registration)
    pipe("thunderbird_flowed", registration)

    page = new_page()
    page.goto("/requests/review/")
    row = page.locator(f"#discussion-{registration.pk}")
    row.wait_for()
    assert "2 messages in the review" in row.inner_text()
    authors = row.locator(".comment-author").all_inner_texts()
    assert authors == ["Alice Reviewer", "Carol Lister"]
    assert "Could you add one lower-case example?" in row.inner_text()
    assert page.locator(f"#discussion-{other.pk}").count() == 0  # no discussion, no row
    page.screenshot(path=str(SHOTS / "public-review-list-reply.png"), full_page=True)

    row.locator("a", has_text="2 messages in the review").click()
    page.wait_for_url(f"**/requests/{registration.pk}/#comments")
    comment = page.locator("#comments ~ article").first
    assert comment.locator(".comment-author").inner_text() == "Alice Reviewer"
    fold = comment.locator("details.mail-fold").first
    assert not fold.locator(".template-text").is_visible()  # the quote starts folded
    fold.locator("summary").click()
    assert "asks for the registration" in fold.locator(".template-text").inner_text()
    assert "Message on the review list" in page.inner_text("#timeline")
    page.locator("#comments").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "request-list-reply.png"), full_page=True)
