"""Inbound mail through ``manage.py receive_mail``: real-shaped messages (tests/review/eml/)
from the list and from people, placed on their request's timeline or recorded for staff."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.db import OperationalError
from lxml import html as lxml_html

from registry.review import actions
from registry.review.mailaddress import reply_address, return_address
from registry.review.models import Comment, InboundMessage, OutboundMessage, RequestEvent, State
from tests.factories import make_registration
from tests.review.helpers import feed

EML = Path(__file__).parent / "eml"


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture
def in_review(registrant, expert, django_capture_on_commit_callbacks):
    """A request in public review whose posting to the list went out."""
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="racefoo")
    return registration


def eml(name: str, registration, **tokens: str) -> bytes:
    """A fixture with this test's request and Message-IDs filled in."""
    raw = (EML / f"{name}.eml").read_bytes()
    root = OutboundMessage.objects.about(registration).first() if registration else None
    values = {"REQ": str(registration.pk) if registration else "0",
              "NID": registration.proposed_nid if registration else "none",
              "ROOT": root.message_id.strip("<>") if root else "none@example.org", **tokens}
    for key, value in values.items():
        raw = raw.replace(f"%%{key}%%".encode(), value.encode())
    return raw


def page(client, registration, user=None):
    if user is None:
        client.logout()
    else:
        client.force_login(user)
    return lxml_html.fromstring(client.get(registration.get_absolute_url()).content)


def shown_comment(document, comment: Comment):
    (card,) = document.xpath(f'//article[@id="comment-{comment.pk}"]')
    return {
        "author": card.xpath('.//*[@class="comment-author"]')[0].text_content(),
        "time": card.xpath(".//time")[0].get("datetime"),
        "text": "\n".join(e.text_content() for e in card.xpath('.//div[contains(@class, '
                                                                '"comment-text")]')),
        "folds": [d.xpath("./summary")[0].text_content() for d in card.xpath(".//details")],
        "folded": "\n".join(d.text_content() for d in card.xpath(".//details")),
    }


def test_a_gmail_list_reply_goes_on_the_public_timeline(client, in_review, registrant,
                                                        django_capture_on_commit_callbacks):
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(eml("gmail_list_reply", in_review))
    assert record.outcome == InboundMessage.Outcome.PLACED and record.registration == in_review
    comment = record.comment
    assert (comment.via, comment.audience, comment.author) == ("list", "public", None)
    assert comment.sent_at == dt.datetime(2026, 11, 24, 8, 12, 45, tzinfo=dt.UTC)
    shown = shown_comment(page(client, in_review), comment)  # anonymous: it is public
    assert shown["author"] == "Alice Reviewer"
    assert shown["time"].startswith("2026-11-24T08:12:45")
    assert "Could you add one lower-case example?" in shown["text"]
    assert "—" in shown["text"]  # quoted-printable UTF-8 decoded
    assert shown["folds"] == ["Quoted text", "Signature"]
    assert "asks for the registration" in shown["folded"]
    assert "asks for the registration" not in shown["text"]
    timeline = page(client, in_review).get_element_by_id("timeline").text_content()
    assert "Message on the review list" in timeline
    assert "Alice Reviewer (sender not verified) wrote on the review list." in timeline
    in_review.refresh_from_db()
    assert in_review.state == State.IN_REVIEW  # mail never changes a state
    # The registrant hears of it, in the request's thread, but not in the registry's
    # words: where to read it, from whom as the list said, unverified.
    (told,) = [m for m in mail.outbox if registrant.email in m.recipients()]
    assert told.to == [registrant.email]
    root = OutboundMessage.objects.about(in_review).first()
    assert told.extra_headers["In-Reply-To"] == root.message_id
    assert "not verified" in told.body and "alice.reviewer@gmail.com" in told.body
    assert "lower-case example" not in told.body


CLIENTS = [
    # fixture, author shown, what the text says, the folds, what must not be in the text
    ("gmail_list_reply", "Alice Reviewer", "lower-case example", ["Quoted text", "Signature"],
     "<div"),
    ("thunderbird_flowed", "Carol Lister",
     "the resolver's URL, so that readers know where",  # format=flowed joined
     ["Quoted text", "Quoted text", "Signature"], "mailman/listinfo"),
    ("outlook_list_copy", "Bob Example", "We don’t see a conflict", ["Quoted text"],
     "Sent: Monday"),
    ("base64_latin1", "Jürgen Müller", "Grüße aus Köln", [], "R3V0"),
    ("iso2022jp", "山田太郎", "確認しました。問題ありません。", [], "\x1b$B"),
    ("html_only", "Dana Web",
     "the review rules <https://www.rfc-editor.org/rfc/rfc8141#section-6.2>", ["Quoted text"],
     'alert("x")'),
    ("mixed_attachment", "Erin Reviewer",
     "[Attachment kept by IANA staff: review.pdf (application/pdf)]", [], "JVBERi0"),
]


@pytest.mark.parametrize(("name", "author", "says", "folds", "absent"), CLIENTS,
                         ids=[c[0] for c in CLIENTS])
def test_each_mail_client_shape_reads_well_on_the_page(client, in_review, name, author, says,
                                                       folds, absent):
    if name == "thunderbird_flowed":  # it answers the Gmail message, placed first
        feed(eml("gmail_list_reply", in_review))
    record = feed(eml(name, in_review))
    assert record.outcome == "placed", record.reason
    document = page(client, in_review)
    shown = shown_comment(document, record.comment)
    assert shown["author"] == author
    assert says in shown["text"]
    assert shown["folds"] == folds
    assert absent not in shown["text"]


def test_located_by_the_messages_it_answers_when_the_subject_has_no_ticket(in_review):
    raw = eml("gmail_list_reply", in_review).replace(f"[URN #{in_review.pk}] ".encode(), b"")
    record = feed(raw)
    assert record.outcome == "placed" and record.registration == in_review


def test_the_same_message_twice_is_added_once(in_review):
    first = feed(eml("gmail_list_reply", in_review))
    second = feed(eml("gmail_list_reply", in_review))
    assert (first.outcome, second.outcome) == ("placed", "duplicate")
    assert second.reason == f"Already added to request #{in_review.pk}."
    # Sent to the list and copied to the registry: two deliveries, one comment.
    direct = feed(eml("outlook_direct_copy", in_review))
    via_list = feed(eml("outlook_list_copy", in_review))
    assert (direct.outcome, via_list.outcome) == ("placed", "duplicate")
    assert Comment.objects.filter(registration=in_review).count() == 2
    assert InboundMessage.objects.count() == 4  # every delivery is kept


def test_our_own_message_coming_back_is_a_loop(in_review):
    record = feed(eml("own_post_via_list", in_review))
    assert record.outcome == "loop" and record.registration == in_review
    assert not Comment.objects.exists()


def test_a_bounce_marks_the_message_failed_for_staff_to_resend(client, in_review, expert, staff,
                                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_transition(registration=in_review, transition="request_changes",
                                        actor=expert, comment="Say how case works.")
    changes = OutboundMessage.objects.get(event__transition="request_changes")
    assert changes.state == "sent"
    record = feed(eml("bounce", in_review, BOUNCED=changes.message_id.strip("<>"),
                      RETURN=return_address(changes.pk)))
    assert record.outcome == "bounce" and record.bounced_message == changes
    changes.refresh_from_db()
    assert changes.state == "failed"
    assert "550 5.1.1" in changes.last_error and "User unknown" in changes.last_error
    event = RequestEvent.objects.get(registration=in_review, kind="mail_bounced")
    assert "bounced" in event.comment
    document = page(client, in_review, staff)
    (row,) = document.xpath('//table[@id="mail-log"]//tr[contains(@class, "mail-failed")]')
    assert row.xpath('.//button[normalize-space()="Send again"]')
    public = page(client, in_review).get_element_by_id("timeline").text_content()
    assert "Mail bounced" not in public  # delivery trouble is for staff and experts
    assert not Comment.objects.exists()


def test_an_automatic_reply_is_recorded_not_posted(in_review):
    record = feed(eml("out_of_office", in_review))
    assert record.outcome == "auto_reply" and not Comment.objects.exists()


def test_mail_about_no_request_is_kept_for_staff(in_review, capsys):
    record = feed(eml("no_ticket", in_review))
    assert record.outcome == "unplaced" and record.registration is None
    assert b"gadget serial numbers" in bytes(record.raw)
    assert "No request found" in capsys.readouterr().out


def test_the_registrant_answering_changes_requested_reaches_the_expert(
        client, in_review, registrant, other_registrant, expert,
        django_capture_on_commit_callbacks):
    actions.registration_assign(registration=in_review, expert=expert, actor=expert)
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_transition(registration=in_review, transition="request_changes",
                                        actor=expert, comment="Say how case works.")
    changes = OutboundMessage.objects.get(event__transition="request_changes")
    reply = reply_address(registration_pk=in_review.pk, user_pk=registrant.pk, version=0)
    assert reply in [a for m in mail.outbox if m.to == [registrant.email] for a in m.reply_to]
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(eml("registrant_reply", in_review, CHANGES=changes.message_id.strip("<>"),
                          REPLY=reply))
    assert record.outcome == "placed"
    comment = record.comment
    assert (comment.author, comment.via, comment.audience) == (registrant, "mail", "registrant")
    in_review.refresh_from_db()
    assert in_review.state == State.CHANGES_REQUESTED  # nobody's mail changes a state
    for user, sees in ((expert, True), (registrant, True), (other_registrant, False),
                       (None, False)):
        found = page(client, in_review, user).xpath(f'//article[@id="comment-{comment.pk}"]')
        assert bool(found) is sees
    (told,) = mail.outbox
    assert told.to == [expert.email] and "answered by mail" in told.body


def test_direct_mail_from_someone_else_is_held_for_staff(client, in_review, staff):
    record = feed(eml("direct_stranger", in_review))
    assert record.outcome == "held" and record.registration == in_review
    assert "the From line proves nothing" in record.reason
    held = page(client, in_review, staff).xpath('//*[@id="mail-held"]/following-sibling::ul')
    assert "Held for staff" in held[0].text_content()
    assert not page(client, in_review).xpath('//*[@id="mail-held"]')
    assert not Comment.objects.exists()


def test_a_draft_takes_no_mail(registrant):
    draft = make_registration(registrant, nid="draftmail", submit=False)
    record = feed(eml("gmail_list_reply", draft))
    assert record.outcome == "held" and "draft" in record.reason
    assert not Comment.objects.exists()


def test_bad_input_is_kept_or_refused_clearly(db, tmp_path):
    record = feed(b"\x00\xff\xfe not a mail message at all \x80\x81\n\n\xc3\x28")
    assert record.outcome == "unplaced"
    assert bytes(record.raw).startswith(b"\x00\xff\xfe")
    assert record.message_id.startswith("<sha256-")  # no Message-ID: one made from its bytes
    with pytest.raises(CommandError, match="the input is empty") as raised:
        feed(b"   \n")
    assert raised.value.returncode == 65
    with pytest.raises(CommandError, match="No such file") as raised:
        call_command("receive_mail", str(tmp_path / "missing.eml"))
    assert raised.value.returncode == 65


def test_files_on_the_command_line(in_review, tmp_path, capsys):
    path = tmp_path / "reply.eml"
    path.write_bytes(eml("gmail_list_reply", in_review))
    call_command("receive_mail", str(path), str(path))
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"Added to the request on request #{in_review.pk}")
    assert "Duplicate (same Message-ID)" in out[1]


class FakeIMAP:
    """Just enough of imaplib.IMAP4_SSL: two unread messages, one that makes the
    receive fail; \\Seen is set only for what was taken in."""

    instances: list[FakeIMAP] = []

    def __init__(self, host, port, timeout=None):
        self.messages = FakeIMAP.messages
        self.seen: list[str] = []
        FakeIMAP.instances.append(self)

    def login(self, user, password):
        assert (user, password) == ("registry", "secret")

    def select(self, folder):
        assert folder == "INBOX"

    def uid(self, command, *args):
        if command == "SEARCH":
            return "OK", [" ".join(self.messages).encode()]
        if command == "FETCH":
            header = f"1 (UID {args[0]} BODY[] {{99}}".encode()
            return "OK", [(header, self.messages[args[0]]), b")"]
        if command == "STORE":
            self.seen.append(args[0])
            return "OK", [b""]
        raise AssertionError(command)

    def logout(self):
        pass


def test_the_imap_poll_takes_in_unread_mail(in_review, settings, monkeypatch):
    from registry.review import imap
    from registry.review.tasks import poll_imap_mailbox_task

    assert poll_imap_mailbox_task() == 0  # off by default
    settings.MAIL_IMAP_HOST = "imap.example.org"
    settings.MAIL_IMAP_USER, settings.MAIL_IMAP_PASSWORD = "registry", "secret"
    FakeIMAP.messages = {"11": eml("gmail_list_reply", in_review),
                         "12": eml("no_ticket", in_review)}
    monkeypatch.setattr(imap.imaplib, "IMAP4_SSL", FakeIMAP)
    assert poll_imap_mailbox_task() == 2
    assert FakeIMAP.instances[-1].seen == ["11", "12"]
    assert sorted(InboundMessage.objects.values_list("outcome", "source")) == [
        ("placed", "imap"), ("unplaced", "imap")]
    # A message taken in again (flag lost) is a duplicate, never a second comment.
    assert poll_imap_mailbox_task() == 2
    assert Comment.objects.count() == 1


def test_the_imap_poll_leaves_unread_what_it_could_not_store(in_review, settings, monkeypatch):
    from registry.review import imap

    settings.MAIL_IMAP_HOST = "imap.example.org"
    settings.MAIL_IMAP_USER, settings.MAIL_IMAP_PASSWORD = "registry", "secret"
    FakeIMAP.messages = {"21": eml("gmail_list_reply", in_review)}
    monkeypatch.setattr(imap.imaplib, "IMAP4_SSL", FakeIMAP)

    def broken(**kwargs):
        raise OperationalError("database went away")

    monkeypatch.setattr("registry.review.actions.inbound_mail_receive", broken)
    with pytest.raises(OperationalError):
        imap.poll_mailbox()
    assert FakeIMAP.instances[-1].seen == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_deliveries_at_once_place_one_comment(registrant, expert):
    """The list's copy and the direct copy arriving together: one comment."""
    import threading

    from django.db import connection

    registration = make_registration(registrant, nid="raceboth")
    raw = eml("gmail_list_reply", registration)
    barrier = threading.Barrier(4)
    outcomes = []

    def deliver():
        barrier.wait()
        outcomes.append(actions.inbound_mail_receive(raw=raw).outcome)
        connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["duplicate", "duplicate", "duplicate", "placed"]
    assert Comment.objects.filter(registration=registration).count() == 1


def test_the_public_review_page_shows_a_reply_that_came_after_it_was_cached(client, in_review):
    first = lxml_html.fromstring(client.get("/requests/review/").content)
    assert not first.xpath(f'//*[@id="discussion-{in_review.pk}"]')
    feed(eml("gmail_list_reply", in_review))
    second = lxml_html.fromstring(client.get("/requests/review/").content)
    (row,) = second.xpath(f'//*[@id="discussion-{in_review.pk}"]')
    # List mail: the name as the list gave it, quoted and not in an account's bold.
    assert row.xpath('.//*[@class="comment-author"]')[0].text_content() == "Alice Reviewer"
