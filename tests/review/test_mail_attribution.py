"""Who said it: inbound mail is credited to a person only when it reached the reply
address the registry gave that person (an HMAC under the site's secret, revocable);
list mail is public and credited to nobody; a bounce is believed only at its
message's return address (VERP); the rest waits in the staff quarantine, where staff
attach it by hand (an event)."""

from __future__ import annotations

import email
from email import policy

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from registry.review import actions, workflow
from registry.review.mailaddress import (
    read_reply_address,
    read_return_address,
    reply_address,
    return_address,
)
from registry.review.models import (
    Comment,
    InboundPlacement,
    OutboundMessage,
    ReplyKey,
    RequestEvent,
)
from tests.factories import make_registration
from tests.html import find, one, page, text
from tests.review.helpers import feed
from tests.review.test_receive_mail import eml


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture
def in_review(registrant, expert, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="whosaid")
    return registration


def message(*, sender: str, to: str, subject: str, body: str = "I approve this request.",
            message_id: str = "<forged.1@attacker.example>", extra: str = "") -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n"
            f"Date: Wed, 25 Nov 2026 12:30:00 +0000\r\n{extra}MIME-Version: 1.0\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()


def subject_of(registration) -> str:
    return (f"Re: [URN #{registration.pk}] Registration request for URN NID "
            f"{registration.proposed_nid}")


# --- Forged senders are credited to nobody --------------------------------------------

@pytest.mark.parametrize("via", ["list-id", "to-list", "direct"])
@pytest.mark.parametrize("who", ["expert", "registrant"])
def test_a_forged_from_is_credited_to_nobody(client, in_review, expert, registrant, via, who,
                                             django_capture_on_commit_callbacks):
    person = {"expert": expert, "registrant": registrant}[who]
    extra = "List-Id: Uniform Resource Names <urn.ietf.org>\r\n" if via == "list-id" else ""
    to = "urn@ietf.org" if via == "to-list" else "urn-registry@iana.example"
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(message(sender=f"{person.display_name} <{person.email}>", to=to,
                              subject=subject_of(in_review), extra=extra,
                              body="Approved. Pay the fee at https://attacker.example/pay"))
    assert record.verified_sender is None
    if via == "direct":  # neither a reply address nor the list: quarantine
        assert record.outcome == "held" and record.comment is None
        assert not Comment.objects.exists() and mail.outbox == []
        return
    assert record.outcome == "placed"
    comment = record.comment
    assert (comment.author, comment.via, comment.audience) == (None, "list", "public")
    event = RequestEvent.objects.get(registration=in_review, kind="list_comment")
    assert event.actor is None and "sender not verified" in event.comment
    # The page marks it, and never links it to the account.
    card = one(page(client.get(in_review.get_absolute_url())),
               f"//article[@id='comment-{comment.pk}']")
    assert text(one(card, ".//*[contains(@class, 'comment-unverified')]")) == \
        "sender not verified"
    assert not find(card, ".//*[@class='comment-address']")  # no address for harvesters
    client.force_login(expert)  # the experts see the address as the mail gave it
    card = one(page(client.get(in_review.get_absolute_url())),
               f"//article[@id='comment-{comment.pk}']")
    assert text(one(card, ".//*[@class='comment-address']")) == person.email
    # Nobody receives the attacker's words from the registry's address.
    assert mail.outbox, "the registrant is told where to read it"
    for sent in mail.outbox:
        assert "attacker.example" not in sent.body and "Approved." not in sent.body
        assert "not verified" in sent.body


def test_a_reply_to_a_reply_address_is_credited_to_its_person(
        client, in_review, registrant, expert, django_capture_on_commit_callbacks):
    """The registrant's copy of each message carries their own reply address; an answer
    to it is theirs, whatever its From line says, and reaches the experts."""
    (ack,) = [m for m in mail.outbox if m.to == [registrant.email]]
    (address,) = ack.reply_to
    token = read_reply_address(address)
    assert token is not None and (token.registration_pk, token.user_pk) == (in_review.pk,
                                                                            registrant.pk)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(message(sender="Someone Else <other@elsewhere.example>", to=address,
                              subject=subject_of(in_review), body="Here is our answer."))
    assert (record.outcome, record.verified_sender) == ("placed", registrant)
    comment = record.comment
    assert (comment.author, comment.via, comment.audience) == (registrant, "mail", "registrant")
    assert RequestEvent.objects.get(registration=in_review, kind="mail_reply").actor == registrant
    assert [m.to for m in mail.outbox] == [[expert.email]]  # relayed: it is theirs


def test_an_experts_reply_to_an_internal_message_stays_internal(
        in_review, registrant, expert, second_expert, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_comment(registration=in_review, actor=second_expert,
                                     audience="experts",
                                     body="Internal: conflicting NID?")
    internal = OutboundMessage.objects.get(registration=in_review, audience="experts")
    address = reply_address(registration_pk=in_review.pk, user_pk=expert.pk, version=0)
    (copy,) = [m for m in mail.outbox if m.recipients() == [expert.email]
               and m.extra_headers["Message-ID"] == internal.message_id]
    assert copy.reply_to == [address]
    record = feed(message(sender=expert.email, to=address, subject=subject_of(in_review),
                          extra=f"In-Reply-To: {internal.message_id}\r\n", body="No conflict."))
    assert record.outcome == "placed"
    assert (record.comment.author, record.comment.audience) == (expert, "experts")
    assert not RequestEvent.objects.filter(registration=in_review, kind="mail_reply").exists()


@pytest.mark.parametrize("tamper", ["mac", "person", "registration", "domain", "revoked"])
def test_a_tampered_or_revoked_reply_address_credits_nobody(in_review, registrant, expert,
                                                            settings, tamper):
    address = reply_address(registration_pk=in_review.pk, user_pk=expert.pk, version=0)
    local, _at, domain = address.partition("@")
    if tamper == "mac":
        address = local[:-1] + ("0" if local[-1] != "0" else "1") + "@" + domain
    elif tamper == "person":
        address = address.replace(f".{expert.pk}.", f".{registrant.pk}.", 1)
    elif tamper == "registration":
        address = address.replace(f"+{in_review.pk}.", f"+{in_review.pk + 1}.", 1)
    elif tamper == "domain":
        address = f"{local}@attacker.example"
    else:
        call_command("revoke_reply_addresses", expert.email)
        assert ReplyKey.objects.get(user=expert).version == 1
    record = feed(message(sender=expert.email, to=address, subject=subject_of(in_review)))
    assert record.verified_sender is None and record.outcome == "held"
    assert not Comment.objects.exists()


def test_after_revocation_new_messages_carry_the_new_address(in_review, expert,
                                                             django_capture_on_commit_callbacks):
    actions.reply_addresses_revoke(user=expert, actor=None)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_transition(registration=in_review, transition="request_changes",
                                        actor=expert, comment="Say how case works.")
    assert read_reply_address(reply_address(registration_pk=in_review.pk, user_pk=expert.pk,
                                            version=1)) is not None
    for sent in mail.outbox:
        for address in sent.reply_to:
            token = read_reply_address(address)
            assert token is None or token.user_pk != expert.pk or token.version == 1


# --- Bounces: only at the message's own return address -----------------------------------

def test_each_message_leaves_with_its_own_return_address(in_review):
    for sent in mail.outbox:
        wire = email.message_from_bytes(sent.message().as_bytes(), policy=policy.default)
        row = OutboundMessage.objects.get(message_id=wire["Message-ID"])
        assert sent.from_email == return_address(row.pk)  # the SMTP envelope sender
        assert read_return_address(sent.from_email) == row.pk
        assert wire["From"] == row.from_email  # what people see is unchanged


def test_a_bounce_quoting_a_public_message_id_changes_nothing(in_review):
    posting = OutboundMessage.objects.get(registration=in_review, audience="review_list")
    forged = eml("bounce", in_review, BOUNCED=posting.message_id.strip("<>"),
                 RETURN="urn-registry@iana.example")
    record = feed(forged)
    assert record.outcome == "bounce" and record.bounced_message is None
    assert "believed about nothing" in record.reason
    posting.refresh_from_db()
    assert posting.state == "sent"
    assert not RequestEvent.objects.filter(kind="mail_bounced").exists()
    # Another message's genuine return address names that message, not the quoted one.
    other = OutboundMessage.objects.exclude(pk=posting.pk).filter(registration=in_review).first()
    record = feed(forged.replace(b"urn-registry@iana.example",
                                 return_address(other.pk).encode()).replace(
        b"20261125130000.4F2A1", b"20261125130000.4F2A2"))
    assert record.bounced_message == other
    posting.refresh_from_db()
    assert posting.state == "sent"


def test_a_bounce_at_the_return_address_given_by_the_mta_is_believed(in_review):
    posting = OutboundMessage.objects.get(registration=in_review, audience="review_list")
    raw = eml("bounce", in_review, BOUNCED=posting.message_id.strip("<>"),
              RETURN="urn-registry@iana.example")
    record = feed(raw, "--recipient", return_address(posting.pk))
    assert record.bounced_message == posting
    posting.refresh_from_db()
    assert posting.state == "failed"


# --- The quarantine ------------------------------------------------------------------------

def test_staff_attach_quarantined_mail_by_hand(client, in_review, staff, expert, registrant,
                                               settings):
    settings.MAIL_AUTHSERV_ID = "mx.iana.example"  # the registry's MTA, which wrote the field
    held = feed(message(sender="Mallory <mallory@example.com>", to="urn-registry@iana.example",
                        subject=subject_of(in_review), body="Please look at this.",
                        extra="Authentication-Results: mx.iana.example; dkim=pass "
                              "header.d=example.com; dmarc=fail; spf=pass\r\n"))
    assert held.outcome == "held" and held.authentication == \
        "dmarc=fail dkim=pass spf=pass (mx.iana.example)"
    url = reverse("review:quarantine")
    for person in (None, registrant, expert):
        if person is None:
            client.logout()
        else:
            client.force_login(person)
        assert client.get(url).status_code in (302, 403)
    client.force_login(staff)
    doc = page(client.get(url))
    card = one(doc, f"//article[@id='quarantined-{held.pk}']")
    assert "mallory@example.com" in text(one(card, ".//*[@class='quarantine-sender']"))
    assert "dmarc=fail" in text(one(card, ".//*[@class='quarantine-authentication']"))
    # The request it names is offered; a wrong number is refused at the field, kept.
    assert one(card, f".//input[@name='m{held.pk}-registration']").get("value") == \
        str(in_review.pk)
    attach = reverse("review:quarantine-attach", args=[held.pk])
    refused = client.post(attach, {f"m{held.pk}-registration": "999999",
                                   f"m{held.pk}-audience": "public"})
    assert refused.status_code == 400
    card = one(page(refused), f"//article[@id='quarantined-{held.pk}']")
    assert text(one(card, f".//*[@id='id_m{held.pk}-registration-error']")) == \
        "There is no request #999999."
    assert one(card, f".//input[@name='m{held.pk}-registration']").get("value") == "999999"
    done = client.post(attach, {f"m{held.pk}-registration": str(in_review.pk),
                                f"m{held.pk}-audience": "public"})
    assert done.status_code == 302
    placement = InboundPlacement.objects.get(message=held)
    comment = placement.comment
    assert (placement.actor, placement.registration) == (staff, in_review)
    assert (comment.author, comment.audience, comment.author_email) == (
        None, "public", "mallory@example.com")
    event = RequestEvent.objects.get(registration=in_review, kind="mail_attached")
    assert event.actor == staff and "not verified" in event.comment
    assert not find(page(client.get(url)), f"//article[@id='quarantined-{held.pk}']")
    # Twice is refused by the policy.
    with pytest.raises(workflow.Refused):
        actions.inbound_message_attach(message=held, registration=in_review, audience="public",
                                       actor=staff)
    client.logout()
    public = page(client.get(in_review.get_absolute_url()))
    assert find(public, f"//article[@id='comment-{comment.pk}']")
    assert "Mail attached by IANA staff" not in text(one(public, "//*[@id='timeline']"))


@pytest.mark.parametrize("withdrawn", [False, True])
def test_a_draft_never_submitted_takes_no_mail_and_is_not_named(client, staff, registrant,
                                                               withdrawn):
    draft = make_registration(registrant, nid="privdraft", submit=False)
    if withdrawn:
        draft = actions.registration_transition(registration=draft, transition="withdraw",
                                                actor=registrant)
    held = feed(message(sender="m@example.com", to="urn-registry@iana.example",
                        subject="About a draft"))
    client.force_login(staff)
    field = f"m{held.pk}-registration"
    refused = client.post(reverse("review:quarantine-attach", args=[held.pk]),
                          {field: str(draft.pk), f"m{held.pk}-audience": "public"})
    # The same answer as for a number no request has: a private draft's is not told.
    assert refused.status_code == 400
    card = one(page(refused), f"//article[@id='quarantined-{held.pk}']")
    assert text(one(card, f".//*[@id='id_{field}-error']")) == f"There is no request #{draft.pk}."
    with pytest.raises(workflow.Refused, match=f"There is no request #{draft.pk}"):
        actions.inbound_message_attach(message=held, registration=draft, audience="public",
                                       actor=staff)
    assert not InboundPlacement.objects.exists()


def test_only_staff_attach(in_review, expert):
    held = feed(message(sender="m@example.com", to="urn-registry@iana.example",
                        subject=subject_of(in_review)))
    with pytest.raises(workflow.NotAllowed):
        actions.inbound_message_attach(message=held, registration=in_review, audience="public",
                                       actor=expert)
    assert not InboundPlacement.objects.exists()


def test_the_staff_queue_links_the_quarantine(client, staff):
    client.force_login(staff)
    doc = page(client.get(reverse("review:staff-queue")))
    assert find(doc, f"//a[@href='{reverse('review:quarantine')}']")


def test_an_authentication_verdict_is_only_the_receiving_servers(db, settings):
    from registry.review.inbound import authentication_verdict

    top = "mx.iana.example; dkim=fail; dmarc=fail"
    forged = "mx.iana.example; dkim=pass; dmarc=pass"
    assert authentication_verdict([top, forged], "mx.iana.example") == \
        "dmarc=fail dkim=fail (mx.iana.example)"
    assert authentication_verdict([forged.replace("mx.iana", "evil")], "mx.iana.example") == ""
    assert authentication_verdict([], "") == ""
    # Without MAIL_AUTHSERV_ID no field is believed, the topmost included (issue 31 item 5).
    assert authentication_verdict([forged], "") == ""
    # A field naming our server below one of another server's: it came with the message.
    assert authentication_verdict(["relay.example; dkim=none", forged], "mx.iana.example") == ""


def test_a_forged_verdict_is_never_shown_to_staff(client, in_review, staff, settings):
    """A message whose sender wrote "dkim=pass dmarc=pass" for itself: recorded without
    a verdict, and the page shows none (issue 31 item 5)."""
    forged = ("Authentication-Results: mx.iana.example; dkim=pass header.d=iana.org; "
              "dmarc=pass\r\n")
    settings.MAIL_AUTHSERV_ID = ""  # the default: no MTA of the registry's named
    record = feed(message(sender="IANA <staff@iana.org>", to="urn-registry@iana.example",
                          subject=subject_of(in_review), extra=forged))
    assert record.outcome == "held" and record.authentication == ""
    # Received by our MTA, which puts its own field on top (RFC 8601 section 5): only
    # that field's verdict is shown.
    settings.MAIL_AUTHSERV_ID = "mx.iana.example"
    ours = "Authentication-Results: mx.iana.example; dkim=fail; dmarc=fail\r\n"
    record = feed(message(sender="IANA <staff@iana.org>", to="urn-registry@iana.example",
                          subject=subject_of(in_review), extra=ours + forged,
                          message_id="<forged.ours@attacker.example>"))
    assert record.authentication == "dmarc=fail dkim=fail (mx.iana.example)"
    client.force_login(staff)
    shown = text(page(client.get(in_review.get_absolute_url())))
    assert "dmarc=fail dkim=fail" in shown and "dkim=pass" not in shown


# --- Outgoing subjects ---------------------------------------------------------------------

def test_encoded_words_in_an_organisation_reach_subjects_as_the_text_typed(
        registrant, expert, django_capture_on_commit_callbacks):
    typed = "=?utf-8?b?WU9VUiBSRVFVRVNUIElTIEFQUFJPVkVE?= Org\r\nBcc: x@y"
    with django_capture_on_commit_callbacks(execute=True):
        make_registration(registrant, nid="", kind="informal", registrant_organisation=typed)
    assert len(mail.outbox) >= 2
    for sent in mail.outbox:
        wire = email.message_from_bytes(sent.message().as_bytes(), policy=policy.default)
        subject = str(wire["Subject"])
        assert "YOUR REQUEST IS APPROVED" not in subject
        assert "=?utf-8?b?WU9VUiBSRVFVRVNUIElTIEFQUFJPVkVE?= Org Bcc: x@y" in subject
        assert wire["Bcc"] is None


def test_a_reply_reaches_the_registrant_only_when_it_answers_their_conversation(
        in_review, registrant, expert, staff, django_capture_on_commit_callbacks):
    actions.registration_assign(registration=in_review, expert=expert, actor=expert)
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_comment(registration=in_review, actor=expert, audience="registrant",
                                     body="Which resolver?")
        approved = actions.registration_transition(registration=in_review, transition="approve",
                                                   actor=expert, comment="Fine.",
                                                   early_reason="Clear case.")
    to_registrant = OutboundMessage.objects.get(registration=in_review, audience="registrant",
                                                comment__isnull=False)
    to_staff = OutboundMessage.objects.get(registration=approved, audience="staff")
    # The expert answering the registrant's conversation writes to the registrant.
    record = feed(message(
        sender=expert.email, subject=subject_of(in_review), message_id="<e.1@x>",
        to=reply_address(registration_pk=in_review.pk, user_pk=expert.pk, version=0),
        extra=f"In-Reply-To: {to_registrant.message_id}\r\n"))
    assert (record.outcome, record.comment.audience) == ("placed", "registrant")
    # Staff answering their own notification are not guessed into the registrant's
    # conversation: staff do not write internally, so it is held for them.
    record = feed(message(
        sender=staff.email, subject=subject_of(in_review), message_id="<s.1@x>",
        to=reply_address(registration_pk=in_review.pk, user_pk=staff.pk, version=0),
        extra=f"In-Reply-To: {to_staff.message_id}\r\n"))
    assert (record.outcome, record.verified_sender) == ("held", staff)
    assert "internally to the experts" in record.reason
