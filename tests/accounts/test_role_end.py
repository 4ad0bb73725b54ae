"""Ending a role, or deactivating an account, ends what the person held by it (issue 30):
their assignments (each with an event), the mail not yet sent to them, and their reply
addresses (a reply to an old one waits in the quarantine)."""

from __future__ import annotations

import io

import pytest
from django.core import mail

from registry.accounts import actions as account_actions
from registry.accounts.roles import EXPERT_GROUP
from registry.review import actions
from registry.review.mailaddress import reply_address
from registry.review.models import OutboundMessage, RequestEvent
from tests.factories import make_registration
from tests.review.helpers import feed


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def reply(sender: str, to: str, registration, number: int) -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: Re: [URN #{registration.pk}] "
            f"Registration request\r\nMessage-ID: <ended.{number}@example.org>\r\n"
            "Date: Wed, 25 Nov 2026 12:30:00 +0000\r\nContent-Type: text/plain\r\n\r\n"
            f"Message {number}.\r\n").encode()


def end(how: str, expert, staff):
    if how == "role revoked":
        account_actions.role_revoke(user=expert, role=EXPERT_GROUP, reason="Stepped down.",
                                    actor=staff)
    else:
        account_actions.user_update_profile(user=expert, changes={"is_active": False},
                                            reason="Left.", actor=staff)


@pytest.mark.parametrize("how", ["role revoked", "deactivated"])
def test_ending_a_role_ends_assignments_mail_and_reply_addresses(
        how, registrant, expert, second_expert, staff, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="roleend")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
    # An internal message written while they were an expert, not yet sent when it ends.
    with django_capture_on_commit_callbacks(execute=False):
        actions.registration_comment(registration=registration, actor=second_expert,
                                     audience="experts", body="Internal: fine by me.")
    internal = OutboundMessage.objects.get(registration=registration, audience="experts")
    assert expert.email in internal.recipients and internal.state == "pending"
    old_address = reply_address(registration_pk=registration.pk, user_pk=expert.pk, version=0)

    end(how, expert, staff)

    registration.refresh_from_db()
    assert registration.assigned_expert is None
    (event,) = RequestEvent.objects.filter(registration=registration, kind="assign",
                                           comment__startswith="Unassigned")
    assert event.actor == staff and expert.display_name in event.comment
    # The message written before is sent, but not to them.
    mail.outbox.clear()
    actions.message_deliver(message_pk=internal.pk)
    assert all(expert.email not in m.recipients() for m in mail.outbox)
    internal.refresh_from_db()
    assert internal.state == "sent"
    # Their reply address is dead: what they send to it waits for staff.
    record = feed(reply(expert.email, old_address, registration, 1))
    assert record.outcome == "held" and record.verified_sender is None
    # The registrant's reply reaches the experts still in office, not them.
    mail.outbox.clear()
    registrant_address = reply_address(registration_pk=registration.pk,
                                       user_pk=registrant.pk, version=0)
    with django_capture_on_commit_callbacks(execute=True):
        record = feed(reply(registrant.email, registrant_address, registration, 2))
    assert record.outcome == "placed"
    sent_to = {address for m in mail.outbox for address in m.recipients()}
    assert second_expert.email in sent_to and expert.email not in sent_to


def test_ending_another_role_keeps_an_experts_assignments(
        registrant, expert, staff, django_capture_on_commit_callbacks):
    from registry.accounts.roles import STAFF_GROUP

    account_actions.role_grant(user=expert, role=STAFF_GROUP, reason="Joined IANA.", actor=staff)
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(registrant, nid="rolekeep")
        actions.registration_assign(registration=registration, expert=expert, actor=expert)
    account_actions.role_revoke(user=expert, role=STAFF_GROUP, reason="Left IANA.", actor=staff)
    registration.refresh_from_db()
    assert registration.assigned_expert == expert


@pytest.mark.parametrize("how", ["role revoked", "deactivated", "command"])
def test_revoking_reply_addresses_is_in_the_accounts_history(how, expert, staff):
    """Every write has its event row: the account's history says its reply addresses
    were revoked, by whom and why, whether a role ended or staff ran the command."""
    from django.core.management import call_command

    from registry.accounts.models import AccountEvent
    from registry.review.models import ReplyKey

    if how == "command":
        call_command("revoke_reply_addresses", expert.email, stdout=io.StringIO())
    else:
        end(how, expert, staff)
    assert ReplyKey.objects.get(user=expert).version == 1
    (event,) = AccountEvent.objects.filter(user=expert,
                                           kind=AccountEvent.Kind.REPLY_ADDRESSES_REVOKED)
    assert event.actor == (None if how == "command" else staff)
    assert ("revoke_reply_addresses" if how == "command" else expert.display_name) in event.reason
