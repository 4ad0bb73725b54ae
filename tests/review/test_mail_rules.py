"""Mail in follows the web's rules (issue 30): list mail and mail replies pass the same
audiences, state checks and rate limit as comments typed on the page; list mail about a
request not in public review waits in the quarantine; list mail is marked "sender not
verified" wherever it is shown or relayed, however its display name is dressed up; a
registrant's own reply is labelled as theirs."""

from __future__ import annotations

import pytest
from django.core import mail
from django.core.cache import cache
from django.urls import reverse

from registry.review.mailaddress import reply_address
from registry.review.models import Comment, InboundMessage, OutboundMessage, RequestEvent
from tests.factories import approve, make_registration
from tests.html import find, one, page, text
from tests.review.helpers import feed
from tests.review.test_mail_attribution import message, subject_of

FORGED = '"IANA Staff (verified) <staff@example.org>" <attacker@attacker.example>'


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture
def in_review(registrant, expert, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="mailrules")
    return registration


def list_mail(registration, number: int, sender: str = FORGED) -> bytes:
    return message(sender=sender, to="urn@ietf.org", subject=subject_of(registration),
                   message_id=f"<list.{number}@attacker.example>",
                   extra="List-Id: Uniform Resource Names <urn.ietf.org>\r\n",
                   body=f"Message {number}: approved, see https://attacker.example/")


def test_forged_verified_list_mail_is_marked_on_the_review_dashboard_and_in_relays(
        client, in_review, registrant, django_capture_on_commit_callbacks):
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(list_mail(in_review, 1))
    assert record.outcome == "placed" and record.comment.author is None
    dashboard = page(client.get(reverse("review:public-review")))
    (item,) = find(dashboard, "//li[contains(@class, 'discussion-item')]")
    assert text(one(item, ".//*[contains(@class, 'comment-unverified')]")) == \
        "sender not verified"
    # The name as the mail gave it, in quotes, never in an account's bold.
    author = one(item, ".//*[contains(@class, 'comment-author')]")
    assert "fw-semibold" not in author.get("class")
    assert text(item).startswith('“IANA Staff (verified) <staff@example.org>” ·')
    card = one(page(client.get(in_review.get_absolute_url())),
               f"//article[@id='comment-{record.comment.pk}']")
    assert find(card, ".//*[contains(@class, 'comment-unverified')]")
    # What the registry relays of it says so too, in the registry's own words.
    assert mail.outbox
    assert all("not verified" in sent.body and "approved" not in sent.body
               for sent in mail.outbox)


def test_list_mail_about_a_request_not_in_public_review_is_held(
        in_review, expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        approved = approve(in_review, expert, staff)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(list_mail(approved, 2))
    assert record.outcome == "held" and "not in public review" in record.reason
    assert record in InboundMessage.objects.quarantine()
    assert not Comment.objects.filter(registration=approved, via="list").exists()
    assert mail.outbox == []


@pytest.mark.rate_limits
def test_list_mail_past_the_comment_rate_waits_in_the_quarantine(
        in_review, settings, django_capture_on_commit_callbacks):
    cache.clear()
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "comment": "3/10m"}
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        records = [feed(list_mail(in_review, n)) for n in range(6)]
    assert [r.outcome for r in records] == ["placed"] * 3 + ["held"] * 3
    assert all("past the rate of comments" in r.reason for r in records[3:])
    assert Comment.objects.filter(registration=in_review, via="list").count() == 3
    assert RequestEvent.objects.filter(registration=in_review, kind="list_comment").count() == 3
    # A notice for each placed message, none for the held ones.
    assert OutboundMessage.objects.filter(registration=in_review, comment__via="list").count() == 3


@pytest.mark.rate_limits
def test_a_registrants_mail_replies_share_the_rate_of_their_comments(
        client, in_review, registrant, settings, django_capture_on_commit_callbacks):
    cache.clear()
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "comment": "3/10m"}
    address = reply_address(registration_pk=in_review.pk, user_pk=registrant.pk, version=0)
    client.force_login(registrant)
    for n in range(2):  # two comments typed on the page
        response = client.post(reverse("review:comment", args=[in_review.pk]),
                               {"audience": "public", "body": f"Typed {n}."})
        assert response.status_code == 302
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        records = [feed(message(sender=registrant.email, to=address,
                                subject=subject_of(in_review), body=f"By mail {n}.",
                                message_id=f"<reply.{n}@example.org>")) for n in range(3)]
    assert [r.outcome for r in records] == ["placed", "held", "held"]
    assert all(r.verified_sender == registrant for r in records)
    assert Comment.objects.filter(registration=in_review, via="mail").count() == 1
    # Only the placed reply is passed on (to the expert).
    assert OutboundMessage.objects.filter(registration=in_review, comment__via="mail").count() == 1
    # And the page refuses the next typed comment: one count for both.
    response = client.post(reverse("review:comment", args=[in_review.pk]),
                           {"audience": "public", "body": "Typed again."})
    assert response.status_code == 429


def test_a_registrants_own_mail_reply_is_labelled_as_theirs(
        client, in_review, registrant, expert, django_capture_on_commit_callbacks):
    address = reply_address(registration_pk=in_review.pk, user_pk=registrant.pk, version=0)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(message(sender=registrant.email, to=address,
                              subject=subject_of(in_review), body="Our answer."))
    comment = record.comment
    assert (comment.author, comment.audience) == (registrant, "registrant")
    for viewer in (registrant, expert):
        client.force_login(viewer)
        card = one(page(client.get(in_review.get_absolute_url())),
                   f"//article[@id='comment-{comment.pk}']")
        assert text(one(card, ".//*[@class='comment-audience']")) == \
            "From the registrant to the experts"
    (relayed,) = mail.outbox
    assert relayed.to == [expert.email]
    words = " ".join(relayed.body.split())
    assert "to the registrant" not in words and "by mail on request" in words
    assert f"({in_review.proposed_nid}), to the designated experts:" in words
