"""Issue 34: the admin and the request page's mail log are channels of the visibility
policy too. IANA staff read neither an experts-only comment (in its mail, in the
admin's comments and outbox), nor a draft nobody submitted, nor a working copy."""

import pytest
from django.urls import reverse

from registry.review import actions, workflow
from registry.review.models import Comment, OutboundMessage, RegistrationRequest
from tests.factories import make_registration
from tests.html import find, page, text

INTERNAL = "Between us experts: the archive looks dormant."
DRAFT = "Unsent draft purpose nobody submitted"
WITHDRAWN = "Withdrawn draft purpose never sent"
EDITED = "Working copy edit after the round"


@pytest.fixture
def internal_comment(registrant, expert, second_expert, staff, django_capture_on_commit_callbacks):
    registration = make_registration(registrant, nid="adminpriv")
    with django_capture_on_commit_callbacks(execute=True):
        actions.registration_comment(registration=registration, actor=expert, body=INTERNAL,
                                     audience=Comment.Audience.EXPERTS)
    return registration


def experts_answer(registration, expert, *, subject: str, number: int, body: str) -> bytes:
    """An expert's answer by mail to an internal message: sent to their reply address, so
    it becomes an experts-only comment."""
    from email.message import EmailMessage

    from registry.review.mailaddress import reply_address

    answer = EmailMessage()
    answer["From"] = f"Expert <{expert.email}>"
    answer["To"] = reply_address(registration_pk=registration.pk, user_pk=expert.pk,
                                 version=0)
    answer["Subject"] = subject
    answer["Message-ID"] = f"<answer-{number}@elsewhere.example>"
    answer.set_content(body)
    return bytes(answer)


def _body(response) -> str:
    assert response.status_code == 200
    return text(page(response))


def test_staff_read_no_internal_comment_in_the_mail_log(client, internal_comment, staff,
                                                        second_expert):
    message = OutboundMessage.objects.get(comment__body=INTERNAL)
    assert INTERNAL in message.body  # the experts' mail carries it
    client.force_login(staff)
    doc = page(client.get(internal_comment.get_absolute_url()))
    assert find(doc, "//*[@id='mail-log']") or find(doc, "//table"), "staff see the mail log"
    assert INTERNAL not in text(doc)
    assert "designated experts only" in text(doc)
    client.force_login(second_expert)
    assert INTERNAL in _body(client.get(internal_comment.get_absolute_url()))


def test_staff_read_no_internal_comment_in_the_admin(client, internal_comment, staff):
    message = OutboundMessage.objects.get(comment__body=INTERNAL)
    client.force_login(staff)
    for url in (reverse("admin:review_outboundmessage_change", args=[message.pk]),
                reverse("admin:review_outboundmessage_changelist"),
                reverse("admin:review_registrationrequest_change", args=[internal_comment.pk])):
        assert INTERNAL not in _body(client.get(url)), url


def test_staff_see_no_draft_nor_working_copy_in_the_admin(client, registrant, expert, staff):
    draft = make_registration(registrant, nid="admindraft", submit=False, purpose=DRAFT)
    withdrawn = make_registration(registrant, nid="adminwithdrawn", submit=False,
                                  purpose=WITHDRAWN)
    withdrawn = actions.registration_transition(registration=withdrawn, transition="withdraw",
                                                actor=registrant)
    sent_back = make_registration(registrant, nid="adminedited")
    sent_back = actions.registration_transition(registration=sent_back,
                                                transition="request_changes", actor=expert,
                                                comment="Please say more.")
    actions.registration_update(registration=sent_back, actor=registrant,
                                edit_version=sent_back.edit_version, kind="formal",
                                proposed_nid="adminedited", fast_track=False,
                                values={**sent_back.values(), "purpose": EDITED,
                                        "registrant_organisation": "Edited Org Unsent"})
    client.force_login(staff)
    listing = _body(client.get(reverse("admin:review_registrationrequest_changelist")))
    assert "adminedited" in listing
    assert "admindraft" not in listing and "adminwithdrawn" not in listing
    for hidden in (draft, withdrawn):
        response = client.get(reverse("admin:review_registrationrequest_change",
                                      args=[hidden.pk]))
        assert response.status_code in (302, 404) or DRAFT not in _body(response)
        assert not workflow.can_view(RegistrationRequest.objects.get(pk=hidden.pk), staff)
    changelist = reverse("admin:review_registrationrequest_changelist")
    assert "adminedited" not in _body(client.get(changelist, {"q": "Edited Org Unsent"}))
    assert "adminedited" in _body(client.get(changelist, {"q": registrant.organisation}))
    page_text = _body(client.get(reverse("admin:review_registrationrequest_change",
                                         args=[sent_back.pk])))
    assert EDITED not in page_text
    assert "Names archive records persistently." in page_text  # the submitted round


def test_staff_read_no_experts_answer_by_mail_in_the_admin(client, internal_comment, expert,
                                                            staff):
    from registry.review.models import InboundMessage

    message = actions.inbound_mail_receive(raw=experts_answer(
        internal_comment, expert, subject="Dormant archive, between us", number=1,
        body="The archive has not answered in a year."))
    assert message.comment.audience == Comment.Audience.EXPERTS
    client.force_login(staff)
    for url in (reverse("admin:review_inboundmessage_changelist"),
                reverse("admin:review_inboundmessage_change", args=[message.pk])):
        shown = _body(client.get(url))
        assert "Dormant archive" not in shown and "not answered in a year" not in shown, url
    assert InboundMessage.objects.filter(pk=message.pk).exists()


def test_staff_cannot_find_an_experts_answer_by_searching_its_subject(client, internal_comment,
                                                                       expert, staff):
    """A search that finds a row by words of a subject the viewer may not read tells
    those words as surely as showing them: the subject is searched where it is shown."""
    from email.message import EmailMessage

    hidden = actions.inbound_mail_receive(raw=experts_answer(
        internal_comment, expert, subject="Quarrelsome archive, between us", number=2,
        body="Only for the experts."))
    assert hidden.comment.audience == Comment.Audience.EXPERTS
    stray = EmailMessage()
    stray["From"] = "Someone <someone@elsewhere.example>"
    stray["To"] = "urn-registry@iana.example"
    stray["Subject"] = "Quarrelsome question for IANA"
    stray["Message-ID"] = "<stray-2@elsewhere.example>"
    stray.set_content("Nobody's request.")
    unplaced = actions.inbound_mail_receive(raw=bytes(stray))
    assert unplaced.comment is None
    client.force_login(staff)
    changelist = reverse("admin:review_inboundmessage_changelist")

    def rows(query: str) -> set[str]:
        found = page(client.get(changelist, {"q": query}))
        return {(a.get("href") or "").split("?")[0]
                for a in find(found, "//table[@id='result_list']//a")}

    change = "admin:review_inboundmessage_change"
    assert reverse(change, args=[unplaced.pk]) in rows("Quarrelsome")  # a subject they read
    assert reverse(change, args=[hidden.pk]) not in rows("Quarrelsome")
    assert reverse(change, args=[hidden.pk]) in rows("answer-2@")  # by what is shown


@pytest.mark.parametrize("changelist", ["admin:review_outboundmessage_changelist",
                                        "admin:review_inboundmessage_changelist"])
def test_the_mail_lists_cost_the_same_queries_for_any_number_of_requests(
        client, registrant, expert, staff, changelist, django_capture_on_commit_callbacks):
    """Each row names its request by its NID (a revision's is its namespace's): read
    with the rows, not once a row."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import approve

    def queries() -> int:
        client.force_login(staff)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse(changelist)).status_code == 200
        return len(captured)

    def mail_about_a_revision(nid: str) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            registered = approve(make_registration(registrant, nid=nid), expert, staff,
                                 register=True)
        namespace = registered.published_version.namespace
        revision = actions.registration_create(
            actor=registrant, revises=namespace,
            values={"revision_information": "A second version."})
        revision = actions.registration_transition(registration=revision, transition="submit",
                                                   actor=registrant)
        from registry.review.mailaddress import reply_address

        answer = (f"From: {registrant.email}\r\nTo: "
                  f"{reply_address(registration_pk=revision.pk, user_pk=registrant.pk, version=0)}"
                  f"\r\nSubject: Re: revision\r\nMessage-ID: <{nid}@elsewhere.example>\r\n"
                  "Content-Type: text/plain\r\n\r\nMore.\r\n").encode()
        actions.inbound_mail_receive(raw=answer)

    mail_about_a_revision("adminone")
    few = queries()
    for n in range(3):
        mail_about_a_revision(f"adminmore{n}")
    assert queries() == few


def test_a_second_delivery_of_an_experts_answer_is_as_private_as_the_first(
        client, internal_comment, expert, staff):
    """The same message delivered again (an MTA's retry, a copy to a second address) is
    recorded as a duplicate, which carries no comment of its own; its words are still the
    experts' answer, and staff read them no more than the first's: not in the admin, not
    on the request page, not as the raw message."""
    raw = experts_answer(internal_comment, expert, subject="Hushed archive, between us",
                         number=3, body="Nobody else should read this twice.")
    first = actions.inbound_mail_receive(raw=raw)
    again = actions.inbound_mail_receive(raw=raw)
    assert first.comment.audience == Comment.Audience.EXPERTS
    assert again.outcome == "duplicate" and again.comment is None
    assert again.registration_id == internal_comment.pk
    client.force_login(staff)
    for url in (reverse("admin:review_inboundmessage_changelist"),
                reverse("admin:review_inboundmessage_change", args=[again.pk]),
                internal_comment.get_absolute_url()):
        shown = _body(client.get(url))
        assert "Hushed archive" not in shown and "Nobody else" not in shown, url
    found = page(client.get(reverse("admin:review_inboundmessage_changelist"),
                            {"q": "Hushed"}))
    assert not find(found, "//table[@id='result_list']//tbody/tr")  # nor found by its subject
    assert client.get(reverse("review:quarantine-raw", args=[again.pk])).status_code == 404
    assert not workflow.can_read_message(again, staff)


def test_our_own_internal_message_come_back_is_as_private_as_when_it_left(
        client, internal_comment, staff):
    """The experts' copy of an internal comment that comes back (a forward, a list that
    echoes it) is recorded as our own message come back: its words stay the experts'."""
    sent = OutboundMessage.objects.get(comment__body=INTERNAL)
    echo = (f"From: Expert <expert@example.org>\r\nTo: urn-registry@iana.example\r\n"
            f"Subject: {sent.subject}\r\nMessage-ID: {sent.message_id}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{sent.body}\r\n").encode()
    back = actions.inbound_mail_receive(raw=echo)
    assert back.outcome == "loop" and back.comment is None
    assert back.registration_id == internal_comment.pk
    assert not workflow.can_read_message(back, staff)
    client.force_login(staff)
    assert INTERNAL not in _body(client.get(reverse("admin:review_inboundmessage_change",
                                                    args=[back.pk])))
    assert client.get(reverse("review:quarantine-raw", args=[back.pk])).status_code == 404
