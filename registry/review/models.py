"""Registration requests, their immutable rounds, and the review's audit trail."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Count, Q
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone

from registry.history import AppendOnlyModel, EventGuardedQuerySet, EventGuardedState
from registry.namespaces.models import Namespace
from registry.namespaces.template import TemplateFields, missing_fields, template_values


class State(models.TextChoices):
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In public review"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    AWAITING_IESG = "awaiting_iesg", "Awaiting IESG direction"
    APPROVED = "approved", "Ready for IANA to register"
    REGISTERED = "registered", "Registered"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


OPEN_STATES = (State.IN_REVIEW, State.CHANGES_REQUESTED, State.AWAITING_IESG, State.APPROVED)
EDITABLE_STATES = (State.DRAFT, State.CHANGES_REQUESTED)
FINAL_STATES = (State.REGISTERED, State.REJECTED, State.WITHDRAWN)


class RegistrationRequestQuerySet(EventGuardedQuerySet):
    def open(self):
        return self.filter(state__in=OPEN_STATES)

    def in_public_review(self):
        return self.filter(state=State.IN_REVIEW)

    def of(self, user):
        return self.filter(registrant=user)

    def conflicting_with(self, request: RegistrationRequest):
        """Other open requests proposing the same NID as ``request`` (section 6.2 asks
        the experts to avoid race conditions on proposed NIDs)."""
        if not request.proposed_nid or request.revises_id:
            return self.none()
        return (self.open().filter(proposed_nid__lower=request.proposed_nid.lower(),
                                   revises__isnull=True).exclude(pk=request.pk))

    def conflicting_nid_keys(self) -> set[str]:
        """Case-folded NIDs proposed by more than one open request."""
        rows = (self.open().exclude(proposed_nid="").filter(revises__isnull=True)
                .values(key=Lower("proposed_nid")).annotate(n=Count("pk")).filter(n__gt=1))
        return {row["key"] for row in rows}

    def needing_reminder(self, *, now: dt.datetime, idle: dt.timedelta):
        """Open requests idle longer than ``idle`` and not reminded about within it:
        one reminder per idle period, however often the periodic task runs."""
        return self.filter(state__in=OPEN_STATES, last_activity_at__lt=now - idle).filter(
            Q(reminded_at__isnull=True) | Q(reminded_at__lt=now - idle)
        )


class RegistrationRequest(EventGuardedState, TemplateFields):
    """A request to register a namespace, or to publish a new version of one.

    The template fields here are the working copy; what was submitted is kept
    in the rounds."""

    registrant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="registration_requests")
    kind = models.CharField(max_length=8, choices=Namespace.Kind.choices,
                            default=Namespace.Kind.FORMAL)
    proposed_nid = models.CharField("proposed NID", max_length=32, blank=True)
    revises = models.ForeignKey(Namespace, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="revision_requests")
    fast_track = models.BooleanField(
        "fast track", default=False,
        help_text="Requested by a recognized standards body (RFC 8141 section 6.3).",
    )
    standardisation = models.BooleanField(
        "standardisation involved", default=False,
        help_text="Set by the experts: approval then produces a report for the IESG (6.2 step 4).",
    )
    state = models.CharField(max_length=20, choices=State.choices, default=State.DRAFT,
                             db_index=True)
    assigned_expert = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                        on_delete=models.SET_NULL, related_name="assigned_requests")
    edit_version = models.PositiveIntegerField(default=0, editable=False)
    published_version = models.ForeignKey("namespaces.TemplateVersion", null=True, blank=True,
                                          on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    review_started_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now, db_index=True)
    reminded_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = RegistrationRequestQuerySet.as_manager()

    class Meta:
        ordering = ["-last_activity_at"]
        indexes = [models.Index(Lower("proposed_nid"), name="request_proposed_nid_lower")]

    guard_message = "Change a request's state through registry.review.actions."

    def __str__(self) -> str:
        return f"#{self.pk} {self.display_nid}"

    def get_absolute_url(self) -> str:
        return reverse("review:request", args=[self.pk])

    @property
    def is_revision(self) -> bool:
        return self.revises_id is not None

    @property
    def display_nid(self) -> str:
        if self.published_version_id:
            return self.published_version.nid
        if self.revises_id:
            return self.revises.nid
        if self.kind == Namespace.Kind.INFORMAL:
            return "urn-N (assigned at registration)"
        return self.proposed_nid or "(no NID yet)"

    @property
    def is_editable(self) -> bool:
        return self.state in EDITABLE_STATES

    def values(self) -> dict[str, str]:
        return template_values(self)

    def missing_fields(self) -> list[str]:
        return missing_fields(self.values(), fast_track=self.fast_track, revision=self.is_revision)

    def review_period_ends(self) -> dt.datetime | None:
        if not self.review_started_at:
            return None
        return self.review_started_at + dt.timedelta(days=settings.REVIEW_MIN_DAYS)

    def latest_round(self) -> Round | None:
        return self.rounds.order_by("-number").first()


class Round(AppendOnlyModel, TemplateFields):
    """The template exactly as submitted for one round of review. Immutable."""

    request = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                related_name="rounds")
    number = models.PositiveIntegerField()
    nid = models.CharField("NID", max_length=32, blank=True)
    kind = models.CharField(max_length=8, choices=Namespace.Kind.choices)
    fast_track = models.BooleanField(default=False)
    version = models.PositiveIntegerField(help_text="The template version this round proposes.")
    date = models.DateField()
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                     related_name="+")
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["request", "number"]
        constraints = [
            models.UniqueConstraint(fields=["request", "number"], name="one_round_number"),
        ]

    def __str__(self) -> str:
        return f"round {self.number} of request #{self.request_id}"

    def values(self) -> dict[str, str]:
        return template_values(self)


class RequestEvent(AppendOnlyModel):
    """One thing done to a request: who, when, which transition, from, to, why."""

    request = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT,
                              related_name="+")
    transition = models.CharField(max_length=32)
    from_state = models.CharField(max_length=20, choices=State.choices)
    to_state = models.CharField(max_length=20, choices=State.choices)
    comment = models.TextField(blank=True)
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"#{self.request_id} {self.transition}: {self.from_state} -> {self.to_state}"


class Comment(AppendOnlyModel):
    class Audience(models.TextChoices):
        PUBLIC = "public", "Public review (the list)"
        REGISTRANT = "registrant", "To the registrant"
        EXPERTS = "experts", "Internal to the experts"

    request = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                               related_name="+")
    audience = models.CharField(max_length=12, choices=Audience.choices)
    body = models.TextField()
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="comments")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"comment by {self.author} on #{self.request_id}"


def visible_comments(request: RegistrationRequest, user) -> models.QuerySet[Comment]:
    """Comments ``user`` may read: experts and staff see all; the registrant sees
    public ones and those addressed to them; everyone else, the public ones."""
    from registry.accounts.roles import is_expert, is_iana_staff

    qs = request.comments.select_related("author")
    if is_expert(user) or is_iana_staff(user):
        return qs
    if getattr(user, "is_authenticated", False) and user.pk == request.registrant_id:
        return qs.filter(Q(audience="public") | Q(audience="registrant"))
    return qs.filter(audience="public")
