from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser, UserManager
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models
from django.utils import timezone

from registry.history import AppendOnlyModel, EventGuardedQuerySet, EventGuardedState

if TYPE_CHECKING:
    from registry.accounts.sessions import SessionStore


class AccountQuerySet(EventGuardedQuerySet):
    """Reads of accounts: the IANA staff pages' search and filters, the experts and
    staff the workflow asks for."""

    def _refuse_guarded(self, fields: Iterable[str]) -> None:
        # Migrations use this manager on a historical User, which has no guard to keep.
        if hasattr(self.model, "guarded_field"):
            super()._refuse_guarded(fields)

    def search(self, text: str) -> AccountQuerySet:
        text = text.strip()
        if not text:
            return self
        return self.filter(models.Q(email__icontains=text) | models.Q(first_name__icontains=text)
                           | models.Q(last_name__icontains=text)
                           | models.Q(organisation__icontains=text))

    def recognized(self) -> AccountQuerySet:
        return self.filter(recognized_standards_body=True)

    def in_role(self, role: str) -> AccountQuerySet:
        return self.filter(groups__name=role)

    def with_role(self, group: str) -> AccountQuerySet:
        return (self.filter(groups__name=group, is_active=True)
                .order_by("last_name", "first_name", "email"))

    def designated_experts(self) -> AccountQuerySet:
        """The active designated experts (RFC 8141 section 6.2)."""
        from registry.accounts.roles import EXPERT_GROUP

        return self.with_role(EXPERT_GROUP)

    def iana_staff(self) -> AccountQuerySet:
        from registry.accounts.roles import STAFF_GROUP

        return self.with_role(STAFF_GROUP)

    def with_load(self) -> AccountQuerySet:
        """Annotate each account with ``open_assignments``: the open requests assigned
        to them (one query for a whole list of experts)."""
        from registry.review.workflow import OPEN_STATES

        loaded: AccountQuerySet = self.annotate(open_assignments=models.Count(
            "assigned_requests", filter=models.Q(assigned_requests__state__in=OPEN_STATES)))
        return loaded


# A call as a base class is beyond mypy, and django-stubs makes no usable base of
# UserManager.from_queryset() assigned to a name either: the base is Any to mypy, so
# what the methods below get from super() is typed where they receive it.
class AccountManager(UserManager.from_queryset(AccountQuerySet)):  # type: ignore[misc]
    """Users are identified by email; ``username`` is kept for the admin only."""

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("username", email)
        user: User = super().create_user(extra.pop("username"), email, password, **extra)
        return user

    def create_superuser(self, email: str, password: str | None = None,
                         **extra: Any) -> User:
        extra.setdefault("username", email)
        user: User = super().create_superuser(extra.pop("username"), email, password, **extra)
        return user


class User(EventGuardedState, AbstractUser):
    email = models.EmailField("email address", unique=True)
    organisation = models.CharField(max_length=200, blank=True)
    recognized_standards_body = models.BooleanField(
        "recognized standards body",
        default=False,
        help_text=(
            "Set by IANA staff when the IESG recognizes this registrant's organisation as a "
            "standards-related organisation, scientific society or similar body: it may then "
            "use the fast track of RFC 8141 section 6.3."
        ),
    )

    # A designated expert's own availability: away until a day (inclusive), and how many
    # open requests they take at most. Changed through expert_set_availability().
    unavailable_until = models.DateField(
        "away until", null=True, blank=True,
        help_text="Until this day (inclusive) you are not suggested for requests and get no "
                  "reminders. Leave empty when you are available.")
    max_open_assignments = models.PositiveSmallIntegerField(
        "most open requests at a time", null=True, blank=True,
        help_text="You are not suggested once this many open requests are assigned to you. "
                  "Leave empty for no limit.")

    # Recognition decides who may take the fast track: it changes only through
    # user_recognize() / user_unrecognize(), which write the AccountEvent.
    guarded_field = "recognized_standards_body"
    guard_message = "Recognize a standards body with registry.accounts.actions.user_recognize()."

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = ["username"]

    objects = AccountManager()  # type: ignore[misc]

    class Meta:
        permissions = [
            ("recognize_standards_body", "Can recognize or unrecognize a standards body"),
            ("grant_role", "Can grant or revoke the designated expert and IANA staff roles"),
        ]

    def __str__(self) -> str:
        name = self.get_full_name()
        return f"{name} <{self.email}>" if name else self.email

    @property
    def display_name(self) -> str:
        return self.get_full_name() or self.email

    @property
    def salutation(self) -> str:
        """How mail greets this person: by name, never by address."""
        name = self.get_full_name()
        return f"Dear {name}," if name else "Hello,"


class AccountEvent(AppendOnlyModel):
    """Everything IANA staff (or a command) did to an account: who, to whom, what, why, when.

    Append-only like the registry's other history (a PostgreSQL trigger refuses UPDATE
    and DELETE); written by registry.accounts.actions in the same transaction as the
    change it records."""

    class Kind(models.TextChoices):
        CREATED = "created", "Account created"
        SIGNED_UP = "signed_up", "Signed up"
        PROFILE_CHANGED = "profile_changed", "Profile changed"
        RECOGNIZED = "recognized", "Recognized as a standards body"
        UNRECOGNIZED = "unrecognized", "Recognition as a standards body withdrawn"
        ROLE_GRANTED = "role_granted", "Role granted"
        ROLE_REVOKED = "role_revoked", "Role revoked"
        AVAILABILITY_CHANGED = "availability", "Availability changed"
        REPLY_ADDRESSES_REVOKED = "reply_revoked", "Reply addresses revoked"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="account_events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.PROTECT, related_name="+",
                              help_text="Empty: a command run on the server.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    role = models.CharField(max_length=40, blank=True)
    changes = models.JSONField(default=dict, blank=True,
                               help_text="Field: [before, after], for profile changes.")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_kind_display()}"

    @property
    def description(self) -> str:
        if self.role:
            return f"{self.get_kind_display()}: {self.role}"
        if self.changes:
            return f"{self.get_kind_display()}: {', '.join(sorted(self.changes))}"
        return self.get_kind_display()


class AccountMail(models.Model):
    """A message of allauth's (address confirmation, password reset, "you already have
    an account"), kept until the worker has sent it: the request that causes it only
    writes this row, so a slow or stalled SMTP relay never holds a web worker
    (``accounts/mail.py``). It carries a one-time link, so its text is erased once it is
    sent, or given up; it is never backed up (it is transient)."""

    class Delivery(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    template = models.CharField(max_length=100, help_text="allauth's mail template.")
    message_id = models.CharField("Message-ID", max_length=255, unique=True)
    from_email = models.CharField(max_length=400)
    to = models.CharField(max_length=320)
    subject = models.CharField(max_length=400)
    body = models.TextField(blank=True)
    html = models.TextField(blank=True)
    state = models.CharField(max_length=8, choices=Delivery.choices, default=Delivery.PENDING,
                             db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    next_attempt_at = models.DateTimeField(default=timezone.now, db_index=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.template} to {self.to} ({self.get_state_display().lower()})"


class AccountSession(AbstractBaseSession):
    """A session, with the id of the account signed in to it (none before a log-in):
    a signed-in request reads its session, its account and the registry generation in
    one query (registry/accounts/signed_in.py). Deleting an account deletes its sessions."""

    account = models.ForeignKey(User, null=True, blank=True, on_delete=models.CASCADE,
                                related_name="+")

    @classmethod
    def get_session_store_class(cls) -> type[SessionStore]:
        from registry.accounts.sessions import SessionStore

        return SessionStore

    class Meta:
        verbose_name = "session"
