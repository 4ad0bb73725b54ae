"""seed_demo writes through the actions only, at plausible past moments."""

import datetime as dt
import io

import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.core.management.base import SystemCheckError
from django.utils import timezone

from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import is_expert, is_iana_staff
from registry.review.checks import demo_accounts_check
from registry.review.management.commands import seed_demo
from registry.review.models import OutboundMessage, RegistrationRequest, RequestEvent


@pytest.fixture
def seeded(db, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    call_command("seed_demo", "--with-history", stdout=io.StringIO())


def test_staff_persona_is_staff_through_its_group_not_a_superuser(seeded, client):
    sam = User.objects.get(email="staff@example.org")
    assert is_iana_staff(sam) and sam.is_staff and not sam.is_superuser
    client.force_login(sam)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/namespaces/namespace/").status_code == 200
    assert client.get("/iana/people/").status_code == 200
    assert is_expert(User.objects.get(email="expert@example.org"))


def test_every_account_change_has_its_event(seeded):
    sofia = User.objects.get(email="sdo@example.org")
    recognition = AccountEvent.objects.get(user=sofia, kind="recognized")
    assert recognition.actor.email == "staff@example.org" and recognition.reason
    for email in ("expert@example.org", "staff@example.org"):
        assert AccountEvent.objects.filter(user__email=email, kind="role_granted").exists()


def test_timestamps_read_like_a_registry_in_use(seeded, settings):
    now = timezone.now()
    for registration in RegistrationRequest.objects.all():
        events = list(registration.events.order_by("created_at", "id"))
        assert events[0].created_at >= registration.created_at - dt.timedelta(seconds=5)
        latest = max([e.created_at for e in events if e.transition not in ("remind",)]
                     + list(registration.comments.values_list("created_at", flat=True)))
        # Nothing was written around the actions: the last activity is the last event.
        assert abs(registration.last_activity_at - latest) < dt.timedelta(seconds=5), registration
    exlib = RegistrationRequest.objects.get(proposed_nid="exlib")
    assert 4 <= (now - exlib.last_activity_at).days <= 6
    assert (now - exlib.review_started_at).days >= 10
    # Decisions come after the full review period, so none needed an early reason.
    for decision in RequestEvent.objects.filter(transition="approve"):
        ends = decision.registration.rounds.order_by("number").first().submitted_at + \
            dt.timedelta(days=settings.REVIEW_MIN_DAYS)
        assert decision.created_at > ends
        assert "Decided before the end" not in decision.comment


def test_seeding_sends_no_mail_and_runs_twice_without_duplicates(seeded):
    assert mail.outbox == []
    counts = (AccountEvent.objects.count(), RequestEvent.objects.count())
    call_command("seed_demo", "--with-history", stdout=io.StringIO())
    assert (AccountEvent.objects.count(), RequestEvent.objects.count()) == counts


@pytest.mark.parametrize(("setting", "value", "says"), [
    ("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend", "mail backend"),
    ("CELERY_TASK_ALWAYS_EAGER", False, "broker"),
])
def test_seeding_is_refused_where_its_mail_could_leave(db, settings, setting, value, says):
    """With a delivering backend or a broker (a worker would send what the actions
    queued), nothing is seeded and nothing is queued."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    setattr(settings, setting, value)
    with pytest.raises(CommandError, match=says):
        call_command("seed_demo", stdout=io.StringIO())
    assert not User.objects.exists() and not OutboundMessage.objects.exists()


def test_seeding_is_refused_in_production(db, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(seed_demo, "IS_PRODUCTION", True)
    with pytest.raises(CommandError, match="production"):
        call_command("seed_demo", stdout=io.StringIO())
    assert not User.objects.exists()


def test_check_deploy_fails_while_the_demo_accounts_exist(seeded):
    """The demo's password is published: a database that holds its accounts must not
    serve the public. Deactivated, they no longer count (tests/review/test_checks.py)."""
    with pytest.raises(SystemCheckError, match=r"review\.E001.*registrant@example\.org"):
        call_command("check", "--deploy", stdout=io.StringIO(), stderr=io.StringIO())
    assert [m.id for m in demo_accounts_check()] == ["review.E001"]
    User.objects.filter(email__in=seed_demo.DEMO_EMAILS).update(is_active=False)
    assert demo_accounts_check() == []
