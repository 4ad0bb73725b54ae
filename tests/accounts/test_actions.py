"""Recognition, roles and profile corrections: each an action with its AccountEvent."""

import pytest
from django.db import connection, transaction

from registry.accounts import actions
from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import EXPERT_GROUP, STAFF_GROUP, is_iana_staff
from registry.history import AppendOnlyError, UnrecordedChange
from tests.factories import make_user


@pytest.fixture
def body(db):
    return make_user("body@example.org", organisation="Body of Standards")


def test_recognize_and_unrecognize_record_who_whom_why(body, staff):
    actions.user_recognize(user=body, reason="IESG recognition of 2026-11-01.", actor=staff)
    body.refresh_from_db()
    assert body.recognized_standards_body
    event = AccountEvent.objects.get(user=body, kind="recognized")
    assert (event.actor, event.reason) == (staff, "IESG recognition of 2026-11-01.")
    actions.user_unrecognize(user=body, reason="The body was dissolved.", actor=staff)
    body.refresh_from_db()
    assert not body.recognized_standards_body
    assert AccountEvent.objects.filter(user=body).values_list("kind", flat=True)[0] == \
        "unrecognized"


@pytest.mark.parametrize("reason", ["", "   "])
def test_every_account_action_needs_a_reason(body, staff, reason):
    with pytest.raises(actions.AccountRefused, match="reason"):
        actions.user_recognize(user=body, reason=reason, actor=staff)
    with pytest.raises(actions.AccountRefused, match="reason"):
        actions.role_grant(user=body, role=EXPERT_GROUP, reason=reason, actor=staff)
    body.refresh_from_db()
    assert not body.recognized_standards_body and not body.groups.exists()
    assert not AccountEvent.objects.filter(user=body).exists()


def test_only_staff_may_change_accounts(body, registrant, expert):
    for actor in (registrant, expert):
        with pytest.raises(actions.AccountRefused, match="Only IANA staff"):
            actions.user_recognize(user=body, reason="Why not.", actor=actor)
        with pytest.raises(actions.AccountRefused, match="Only IANA staff"):
            actions.role_grant(user=body, role=STAFF_GROUP, reason="Why not.", actor=actor)
    assert not AccountEvent.objects.filter(user=body).exists()


def test_granting_staff_opens_the_admin_and_revoking_closes_it(body, staff):
    actions.role_grant(user=body, role=STAFF_GROUP, reason="Joined IANA.", actor=staff)
    body.refresh_from_db()
    assert body.is_staff and not body.is_superuser and is_iana_staff(body)
    assert body.has_perm("namespaces.set_namespace_status")
    actions.role_revoke(user=body, role=STAFF_GROUP, reason="Left IANA.", actor=staff)
    body = User.objects.get(pk=body.pk)
    assert not body.is_staff and not is_iana_staff(body)
    assert not body.has_perm("namespaces.set_namespace_status")
    kinds = [(e.kind, e.role) for e in AccountEvent.objects.filter(user=body).order_by("id")]
    # Ending the role revoked their reply addresses too (registry.review.actions).
    assert kinds[-3:] == [("role_granted", STAFF_GROUP), ("role_revoked", STAFF_GROUP),
                          (AccountEvent.Kind.REPLY_ADDRESSES_REVOKED, "")]


def test_refusals_say_what_is_already_so(body, staff):
    actions.role_grant(user=body, role=EXPERT_GROUP, reason="Appointed by the IESG.", actor=staff)
    with pytest.raises(actions.AccountRefused, match="already designated expert"):
        actions.role_grant(user=body, role=EXPERT_GROUP, reason="Again.", actor=staff)
    with pytest.raises(actions.AccountRefused, match="not a recognized"):
        actions.user_unrecognize(user=body, reason="Never was.", actor=staff)
    with pytest.raises(actions.AccountRefused, match="own staff role"):
        actions.role_revoke(user=staff, role=STAFF_GROUP, reason="Bored.", actor=staff)


def test_profile_change_records_before_and_after_and_ignores_no_change(body, staff):
    actions.user_update_profile(user=body, changes={"organisation": "Body of Standards"},
                                reason="", actor=staff)
    assert not AccountEvent.objects.filter(user=body, kind="profile_changed").exists()
    actions.user_update_profile(user=body, changes={"first_name": "Bea", "is_active": False},
                                reason="Name spelt wrong; account closed on request.",
                                actor=staff)
    event = AccountEvent.objects.get(user=body, kind="profile_changed")
    assert event.changes == {"first_name": ["Pat", "Bea"], "is_active": [True, False]}
    with pytest.raises(actions.AccountRefused, match="Not a profile field"):
        actions.user_update_profile(user=body, changes={"is_superuser": True},
                                    reason="Promote.", actor=staff)


def test_account_events_are_append_only(body, staff):
    actions.user_recognize(user=body, reason="Recognized.", actor=staff)
    event = AccountEvent.objects.get(user=body)
    event.reason = "Rewritten."
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        AccountEvent.objects.filter(pk=event.pk).update(reason="Rewritten.")


@pytest.mark.postgres
def test_account_events_refuse_raw_sql_rewrites(body, staff):
    actions.user_recognize(user=body, reason="Recognized.", actor=staff)
    with pytest.raises(Exception, match="immutable history"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_accountevent SET reason = 'x'")


def test_recognition_never_changes_without_its_event(body):
    body.recognized_standards_body = True
    with pytest.raises(UnrecordedChange):
        body.save()
    with pytest.raises(UnrecordedChange):
        User.objects.filter(pk=body.pk).update(recognized_standards_body=True)
    assert not User.objects.get(pk=body.pk).recognized_standards_body


def test_an_unverified_address_is_not_recognized(staff):
    from allauth.account.models import EmailAddress

    newcomer = User.objects.create_user(email="new@body.example", password="x" * 12)
    EmailAddress.objects.create(user=newcomer, email=newcomer.email, verified=False,
                                primary=True)
    with pytest.raises(actions.AccountRefused, match="not verified yet"):
        actions.user_recognize(user=newcomer, reason="IESG.", actor=staff)
    assert not AccountEvent.objects.filter(user=newcomer).exists()
