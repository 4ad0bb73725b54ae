"""Registration requests, their immutable rounds, and the review's audit trail."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Lower
from django.urls import reverse
from django.utils import timezone

from registry.history import (
    AppendOnlyModel,
    AppendOnlyQuerySet,
    EventGuardedQuerySet,
    EventGuardedState,
)
from registry.namespaces.models import Namespace
from registry.namespaces.template import TemplateFields, template_values
from registry.review.mailtext import Segment, split_quoted

if TYPE_CHECKING:
    from registry.accounts.models import User
    from registry.review.workflow import StateMeaning, Visitor


class State(models.TextChoices):
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In public review"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    AWAITING_IESG = "awaiting_iesg", "Awaiting IESG direction"
    APPROVED = "approved", "Ready for IANA to register"
    REGISTERED = "registered", "Registered"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"
    CLOSED = "closed", "Closed"


# What each state means (open, final, editable, reminded...) is a row of
# registry.review.workflow.STATES; the queries below read it there (imported where
# used: the workflow imports these models).


class RegistrationRequestQuerySet(EventGuardedQuerySet):
    def open(self) -> RegistrationRequestQuerySet:
        from registry.review.workflow import states_where

        return self.filter(state__in=states_where(open=True))

    def unassigned(self) -> RegistrationRequestQuerySet:
        """The open requests no expert is assigned to."""
        return self.open().filter(assigned_expert__isnull=True)

    def in_public_review(self) -> RegistrationRequestQuerySet:
        from registry.review.workflow import states_where

        return self.filter(state__in=states_where(public_review=True))

    def of(self, user: User) -> RegistrationRequestQuerySet:
        return self.filter(registrant=user)

    def made_by_form(self, form_token: uuid.UUID | None, user: Any) -> RegistrationRequestQuerySet:
        """The request ``user``'s form with this token made, if it made one."""
        if form_token is None:
            return self.none()
        return self.filter(form_token=form_token, registrant=user)

    def proposing(self, nid: str) -> RegistrationRequestQuerySet:
        """The open requests whose last submitted round proposes ``nid`` (any case): a
        working copy's edits are its registrant's, and count once resubmitted."""
        return self.open().filter(submitted_round__nid__lower=nid.lower(),
                                  revises__isnull=True)

    def conflicting_with(self, registration: RegistrationRequest) -> RegistrationRequestQuerySet:
        """Other open requests proposing the same NID as ``registration`` (section 6.2 asks
        the experts to avoid race conditions on proposed NIDs)."""
        from registry.review.workflow import states_where

        if (not registration.shown_nid or registration.revises_id
                or registration.state in states_where(final=True)):
            return self.none()
        return (self.proposing(registration.shown_nid).exclude(pk=registration.pk)
                .select_related("submitted_round"))

    def visible_to(self, user: Visitor) -> RegistrationRequestQuerySet:
        """The requests ``user`` may see (registry.review.workflow.can_view)."""
        from registry.review.workflow import requests_visible_to

        return self.filter(requests_visible_to(user))

    def with_race(self) -> RegistrationRequestQuerySet:
        """Annotate each request with whether it is in a race for its NID (read by
        workflow.race_of): another open request proposes the same NID, or the NID was
        registered meanwhile. One query for a whole list. The NID is the one shown
        (``RegistrationRequest.shown_nid``): the last round's, a draft's own."""
        shown = Coalesce(F("submitted_round__nid"), F("proposed_nid"))
        twins = (RegistrationRequest.objects.open()
                 .filter(revises__isnull=True,
                         submitted_round__nid__lower=Lower(OuterRef("race_nid")))
                 .exclude(pk=OuterRef("pk")))
        taken = Namespace.objects.filter(nid__lower=Lower(OuterRef("race_nid")))
        raced: RegistrationRequestQuerySet = (
            self.select_related("submitted_round").alias(race_nid=shown)
            .annotate(race_twins=Exists(twins), race_taken=Exists(taken)))
        return raced

    def for_lists(self) -> RegistrationRequestQuerySet:
        return (self.select_related("registrant", "revises", "assigned_expert",
                                    "submitted_round")
                .with_race().order_by("last_activity_at"))

    def dashboard_queue(
            self, *, assigned_to: User | None = None) -> dict[str, list[RegistrationRequest]]:
        """The experts' dashboard: open requests by state, oldest activity first."""
        from registry.review.workflow import states_where

        rows = self.open().for_lists()
        if assigned_to is not None:
            rows = rows.filter(assigned_expert=assigned_to)
        columns: dict[str, list[RegistrationRequest]] = {
            state: [] for state in states_where(open=True)}
        for row in rows:
            columns[row.state].append(row)
        return columns

    def staff_queue(self) -> RegistrationRequestQuerySet:
        """IANA staff's queue: the requests in the states whose row gives staff a next
        step (workflow.STATES' ``staff_next_step``)."""
        from registry.review.workflow import states_where

        return self.filter(state__in=states_where(staff_queue=True)).for_lists()

    def recently_registered(self, limit: int = 20) -> RegistrationRequestQuerySet:
        return (self.filter(state=State.REGISTERED)
                .select_related("published_version__namespace").order_by("-updated_at")[:limit])

    def review_record_of(self, namespace: Namespace) -> list[RegistrationRequest]:
        """The namespace page's review side, in one query: the requests that published
        its versions (its review record), then the open requests for a new version of
        it, each with ``round_count`` and its ``decisions`` (RequestEvent.objects
        .decisions(), oldest first, with their actors).

        Read from the decisions, each joined to its request: every request here has at
        least one (its submission, which took it out of draft; open states all lie past
        it), so the requests need no query of their own."""
        from registry.review.workflow import states_where

        rounds = (Round.objects.filter(registration=OuterRef("registration")).order_by()
                  .values("registration").annotate(n=Count("pk")).values("n"))
        decisions = (RequestEvent.objects.decisions()
                     .filter(Q(registration__published_version__namespace=namespace)
                             | Q(registration__revises=namespace,
                                 registration__state__in=states_where(open=True)))
                     .select_related("registration__published_version",
                                     "registration__submitted_round", "actor")
                     .annotate(registration_round_count=Coalesce(Subquery(rounds), 0))
                     .order_by(F("registration__published_version__number").asc(nulls_last=True),
                               "registration_id", "created_at", "id"))
        requests: dict[int, Any] = {}  # each request gains round_count and decisions
        for decision in decisions:
            registration = requests.get(decision.registration_id)
            if registration is None:
                registration = requests[decision.registration_id] = decision.registration
                registration.round_count = decision.registration_round_count
                registration.decisions = []
            registration.decisions.append(decision)
        return list(requests.values())

    def with_public_comments(self) -> RegistrationRequestQuerySet:
        """Prefetch each request's public comments (``public_comments``, oldest first),
        for pages listing requests with their discussion."""
        return self.prefetch_related(models.Prefetch(
            "comments", to_attr="public_comments",
            queryset=Comment.objects.filter(audience=Comment.Audience.PUBLIC)
            .select_related("author").order_by("created_at", "id")))

    def needing_reminder(self, *, now: dt.datetime,
                         idle: dt.timedelta) -> RegistrationRequestQuerySet:
        """Open requests idle longer than ``idle`` and not reminded about within it:
        one reminder per idle period, however often the periodic task runs. Only states
        whose row names someone to remind (workflow.STATES' ``reminds``: the experts,
        escalated to IANA staff, or IANA staff alone where the experts cannot act)."""
        from registry.review.workflow import states_where

        return self.filter(state__in=states_where(reminded=True),
                           last_activity_at__lt=now - idle).filter(
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
    # The token of the form that created it (a hidden field, new at each render of a new
    # form): the same form posted again (a retry, a double click) finds this request
    # instead of making a second (actions.registration_create).
    form_token = models.UUIDField(null=True, blank=True, unique=True, editable=False)
    published_version = models.ForeignKey("namespaces.TemplateVersion", null=True, blank=True,
                                          on_delete=models.PROTECT, related_name="+")
    # The last round submitted (None: a draft never submitted; a constraint holds it set
    # on every submitted request). Every page, list and mail names the request by its
    # kind, NID and procedure (the ``shown_*`` properties): the columns above are the
    # working copy, edited after a round is sent back and private to its registrant
    # until resubmitted (workflow.can_read_working_copy), who reads them in the edit form.
    submitted_round = models.ForeignKey("Round", null=True, blank=True, editable=False,
                                        on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    review_started_at = models.DateTimeField(null=True, blank=True)
    # The review clock (workflow.STATES' review_clock column): the time of this round spent
    # in states where the public review period does not run, and since when it is stopped.
    review_paused_for = models.DurationField(default=dt.timedelta(0), editable=False)
    review_paused_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_activity_at = models.DateTimeField(default=timezone.now, db_index=True)
    reminded_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = RegistrationRequestQuerySet.as_manager()

    class Meta:
        ordering = ["-last_activity_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(review_started_at__isnull=True) | Q(submitted_round__isnull=False),
                name="submitted_request_has_its_round"),
        ]

    guard_message = "Change a request's state through registry.review.actions."

    def __str__(self) -> str:
        return f"#{self.pk} {self.display_nid}"

    def get_absolute_url(self) -> str:
        return reverse("review:request", args=[self.pk])

    @property
    def is_revision(self) -> bool:
        return self.revises_id is not None

    @property
    def shown_kind(self) -> str:
        """Formal or informal, as submitted (a draft: as its registrant is writing it)."""
        return self.submitted_round.kind if self.submitted_round is not None else self.kind

    def get_shown_kind_display(self) -> str:
        return str(Namespace.Kind(self.shown_kind).label)

    @property
    def shown_nid(self) -> str:
        """The NID proposed, as submitted (a draft: as its registrant is writing it); ""
        for an informal namespace, whose NID IANA assigns."""
        if self.submitted_round is not None:
            return self.submitted_round.nid
        return self.proposed_nid

    @property
    def shown_fast_track(self) -> bool:
        """Whether the request takes the fast track (section 6.3), as submitted."""
        if self.submitted_round is not None:
            return self.submitted_round.fast_track
        return self.fast_track

    @property
    def shown_organisation(self) -> str:
        """The registrant's organisation, as submitted (a draft: as its registrant is
        writing it)."""
        if self.submitted_round is not None:
            return self.submitted_round.registrant_organisation
        return self.registrant_organisation

    @property
    def display_nid(self) -> str:
        if self.published_version_id:
            assert self.published_version is not None  # its id is set
            return self.published_version.nid
        if self.revises_id:
            assert self.revises is not None  # its id is set
            return self.revises.nid
        if self.shown_kind == Namespace.Kind.INFORMAL:
            return "urn-N (assigned at registration)"
        return self.shown_nid or "(no NID yet)"

    @property
    def registrant_label(self) -> str:
        """How public channels name its registrant (workflow.registrant_label)."""
        from registry.review.workflow import registrant_label

        return registrant_label(self)

    @property
    def state_meaning(self) -> StateMeaning:
        """What the request's state means (its row of workflow.STATES)."""
        from registry.review.workflow import meaning_of

        return meaning_of(self.state)

    def values(self) -> dict[str, str]:
        return template_values(self)

    def review_period_ends(self, now: dt.datetime | None = None) -> dt.datetime | None:
        """When the minimum public review period of this round ends: the period counts
        only the time spent in states where the review clock runs, so a request held
        for ten days ends ten days later; while the clock is stopped, the end as if it
        started again ``now``."""
        if not self.review_started_at:
            return None
        ends = (self.review_started_at + dt.timedelta(days=settings.REVIEW_MIN_DAYS)
                + self.review_paused_for)
        if self.review_paused_at is not None:
            ends += (now or timezone.now()) - self.review_paused_at
        return ends


class Round(AppendOnlyModel, TemplateFields):
    """The template exactly as submitted for one round of review. Immutable."""

    registration = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                     related_name="rounds", verbose_name="request")
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
        ordering = ["registration", "number"]
        constraints = [
            models.UniqueConstraint(fields=["registration", "number"], name="one_round_number"),
        ]
        indexes = [models.Index(Lower("nid"), name="round_nid_lower")]

    def __str__(self) -> str:
        return f"round {self.number} of request #{self.registration_id}"

    def values(self) -> dict[str, str]:
        return template_values(self)


class RequestEventQuerySet(AppendOnlyQuerySet):
    def decisions(self) -> RequestEventQuerySet:
        """The events that moved a request to another state (submitted, approved,
        registered, ...): transitions, not assignments, reminders or mail, and no
        event that left the state as it was."""
        return (self.filter(kind=RequestEvent.Kind.TRANSITION)
                .exclude(to_state=F("from_state")))


class RequestEvent(AppendOnlyModel):
    """One thing done to a request: who, when, which transition, from, to, why."""

    registration = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                     related_name="events", verbose_name="request")
    class Kind(models.TextChoices):
        TRANSITION = "transition", "Transition"
        CREATE = "create", "Draft started"
        EDIT = "edit", "Working copy saved"
        ASSIGN = "assign", "Assignment"
        STANDARDISATION = "standardisation", "Standardisation flag"
        REMIND = "remind", "Reminder to the experts"
        ESCALATE = "escalate", "Escalated to the other experts"
        ESCALATE_STAFF = "escalate_staff", "Escalated to IANA staff"
        LIST_COMMENT = "list_comment", "Message on the review list"
        MAIL_REPLY = "mail_reply", "Reply by mail from the registrant"
        RESEND_MAIL = "resend_mail", "Mail sent again"
        MAIL_FAILED = "mail_failed", "Mail could not be sent"
        MAIL_BOUNCED = "mail_bounced", "Mail bounced"
        MAIL_ATTACHED = "mail_attached", "Mail attached by IANA staff"

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT,
                              related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TRANSITION)
    transition = models.CharField(max_length=32, blank=True,
                                  help_text="The workflow transition, for kind 'transition'.")
    from_state = models.CharField(max_length=20, choices=State.choices)
    to_state = models.CharField(max_length=20, choices=State.choices)
    comment = models.TextField(blank=True)
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects: ClassVar = RequestEventQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"#{self.registration_id} {self.transition or self.kind}: {self.from_state} -> " \
            f"{self.to_state}"

    @property
    def label(self) -> str:
        from registry.review.workflow import event_label

        return event_label(self.kind, self.transition)


class CommentQuerySet(AppendOnlyQuerySet):
    def visible_to(self, user: Visitor) -> CommentQuerySet:
        """The comments ``user`` may read (registry.review.workflow.comments_visible_to)."""
        from registry.review.workflow import comments_visible_to

        return self.filter(comments_visible_to(user))


class Comment(AppendOnlyModel):
    """A comment on a request: typed on its page, or a message that arrived by mail
    (``via``), whose sender may have no account here (then ``author`` is empty and
    ``author_name``/``author_email`` say who wrote it)."""

    class Audience(models.TextChoices):
        PUBLIC = "public", "Public review (the list)"
        REGISTRANT = "registrant", "To the registrant"
        EXPERTS = "experts", "Internal to the experts"

    class Via(models.TextChoices):
        WEB = "web", "on this site"
        LIST = "list", "on the review list"
        MAIL = "mail", "by mail"

    registration = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                     related_name="comments", verbose_name="request")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.PROTECT, related_name="+")
    author_name = models.CharField(max_length=200, blank=True)
    author_email = models.EmailField(max_length=320, blank=True)
    audience = models.CharField(max_length=12, choices=Audience.choices)
    via = models.CharField(max_length=8, choices=Via.choices, default=Via.WEB)
    body = models.TextField()
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="comments")
    sent_at = models.DateTimeField(null=True, blank=True,
                                   help_text="For mail: the Date the sender gave it.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar = CommentQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"comment by {self.author_label} on #{self.registration_id}"

    @property
    def author_label(self) -> str:
        """Who wrote it, as shown on the page (never the address of someone with
        no account: the name the mail gave, or the address's mailbox part)."""
        if self.author_id:
            from registry.review.workflow import public_name

            return public_name(self.author, self.registration)
        if self.author_name:
            return self.author_name
        return self.author_email.split("@")[0] or "unknown sender"

    @property
    def sender_verified(self) -> bool:
        """Whether who wrote it is known: typed on the site, or sent to a person's own
        reply address. List mail and attached mail are as their From line says."""
        return self.via == self.Via.WEB or self.author_id is not None

    @property
    def by_registrant(self) -> bool:
        return self.author_id is not None and self.author_id == self.registration.registrant_id

    @property
    def audience_label(self) -> str:
        """Who it is for, as shown: the registrant's own words in their conversation
        with the experts are from them, not addressed to them."""
        if self.audience == self.Audience.REGISTRANT and self.by_registrant:
            return "From the registrant to the experts"
        return self.get_audience_display()

    @property
    def written_at(self) -> dt.datetime:
        return self.sent_at or self.created_at

    def segments(self) -> list[Segment]:
        """The body cut into what is new and what is quoted (mail only), so pages
        can fold quotes and signatures."""
        if self.via == self.Via.WEB:
            return [Segment("text", self.body)]
        return split_quoted(self.body)

    @property
    def excerpt(self) -> str:
        """The first thing the writer wrote (not what they quoted)."""
        return next((s.text for s in self.segments() if s.kind == "text"), "")


class OutboundMessageQuerySet(models.QuerySet["OutboundMessage"]):
    def about(self, registration: RegistrationRequest) -> OutboundMessageQuerySet:
        return self.filter(registration=registration).order_by("created_at", "id")

    def undelivered(self) -> OutboundMessageQuerySet:
        return self.filter(state=OutboundMessage.Delivery.PENDING)

    def overdue(self, *, now: dt.datetime, grace: dt.timedelta) -> OutboundMessageQuerySet:
        """Pending messages to queue again, oldest first: those the broker never took
        (``queued_at`` empty), at once, and those whose next attempt should have
        happened more than ``grace`` ago (their task was lost)."""
        pending = self.undelivered().filter(
            Q(queued_at__isnull=True, next_attempt_at__lte=now)
            | Q(next_attempt_at__lte=now - grace))
        # A row whose sender's lease ran out: its worker died mid-conversation, and
        # sending it again reconciles its copies (``actions.message_deliver``).
        abandoned = self.filter(state=OutboundMessage.Delivery.SENDING, lease_until__lte=now)
        return (pending | abandoned).order_by("created_at", "id")

    def ahead_of(self, row: OutboundMessage) -> OutboundMessageQuerySet:
        """The messages about the same request written before ``row`` and not yet
        sent: a request's mail goes out in the order it was written."""
        return self.undelivered().filter(registration_id=row.registration_id).filter(
            Q(created_at__lt=row.created_at) | Q(created_at=row.created_at, id__lt=row.pk)
        ).order_by("created_at", "id")


class OutboundMessage(models.Model):
    """One message about a request, written in the transaction of the action that
    caused it and sent by the worker afterwards: the outbox. Its content never
    changes; its delivery state does (attempts, errors, sent)."""

    class Delivery(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        UNCERTAIN = "uncertain", "Perhaps sent (check before sending again)"
        FAILED = "failed", "Failed"

    class Copy(models.TextChoices):
        """Where each copy of a row is (``copies``): the delivery record kept across a
        worker's death. ``sending``: the SMTP conversation began and the message's end
        was not yet sent, so the server cannot have accepted it; ``data``: its end was
        sent, the server's answer not yet read (accepted or not, nobody knows);
        ``sent``: the server accepted it; ``uncertain``: a ``data`` copy whose sender
        died or lost the connection, never sent again by the worker (staff decide)."""

        SENDING = "sending"
        DATA = "data"
        SENT = "sent"
        UNCERTAIN = "uncertain"

    registration = models.ForeignKey(
        RegistrationRequest, null=True, blank=True, on_delete=models.PROTECT,
        related_name="outbound_messages", verbose_name="request",
        help_text="Empty: a notice about no request (a namespace's holder changed).")
    event = models.ForeignKey(RequestEvent, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    comment = models.ForeignKey(Comment, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="+")
    audience = models.CharField(max_length=32)
    summary = models.CharField(max_length=300, help_text="What the message is about.")
    message_id = models.CharField("Message-ID", max_length=255, unique=True)
    from_email = models.CharField(max_length=400)
    to = models.JSONField(default=list)
    cc = models.JSONField(default=list, blank=True)
    reply_to = models.JSONField(default=list, blank=True)
    subject = models.CharField(max_length=400)
    body = models.TextField()
    headers = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=12, choices=Delivery.choices, default=Delivery.PENDING,
                             db_index=True)
    copies = models.JSONField(
        default=dict, blank=True,
        help_text="Each copy's delivery (keyed by its envelope recipients): sending, data, "
                  "sent or uncertain; committed before and after each SMTP step.")
    claim = models.CharField(max_length=32, blank=True,
                             help_text="The token of the attempt now sending it.")
    lease_until = models.DateTimeField(
        null=True, blank=True,
        help_text="While being sent: when its sender counts as dead if it has not finished.")
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    next_attempt_at = models.DateTimeField(default=timezone.now, db_index=True)
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When the broker took its task (empty: not yet).")
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    objects = OutboundMessageQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.message_id} ({self.get_state_display().lower()})"

    @property
    def recipients(self) -> list[str]:
        return [*self.to, *self.cc]


class InboundMessageQuerySet(AppendOnlyQuerySet):
    def quarantine(self) -> InboundMessageQuerySet:
        """What arrived and could not be attributed (held, about no request, or past
        the parser's bounds), not yet attached by staff: the staff quarantine."""
        return (self.filter(outcome__in=InboundMessage.QUARANTINE)
                .filter(placement__isnull=True).defer("raw").select_related("registration")
                .order_by("-received_at", "-id"))


class InboundMessage(AppendOnlyModel):
    """Every message that reached ``receive_mail`` (or the IMAP poll), kept whole
    with what became of it: placed on a request's timeline, or recorded for staff
    with the reason it was not (no request found, a duplicate, our own message
    coming back, a bounce, an automatic reply, held, or unreadable)."""

    class Outcome(models.TextChoices):
        PLACED = "placed", "Added to the request"
        HELD = "held", "Held for staff"
        UNPLACED = "unplaced", "No request found"
        DUPLICATE = "duplicate", "Duplicate (same Message-ID)"
        LOOP = "loop", "Our own message, come back"
        BOUNCE = "bounce", "Delivery failure report"
        AUTO_REPLY = "auto_reply", "Automatic reply"
        MALFORMED = "malformed", "Unreadable or past the limits"

    # The outcomes staff look at in the quarantine, to attach by hand.
    QUARANTINE: ClassVar[tuple[str, ...]] = (Outcome.HELD, Outcome.UNPLACED, Outcome.MALFORMED)

    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    source = models.CharField(max_length=16, default="pipe",
                              help_text="How it arrived: pipe (receive_mail) or imap.")
    message_id = models.CharField("Message-ID", max_length=998, db_index=True)
    from_name = models.CharField(max_length=200, blank=True)
    from_address = models.CharField(max_length=320, blank=True)
    subject = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    in_reply_to = models.TextField(blank=True)
    references = models.TextField(blank=True)
    list_id = models.CharField(max_length=300, blank=True)
    text = models.TextField(blank=True, help_text="The body as plain text.")
    raw = models.BinaryField(help_text="The message exactly as received.")
    outcome = models.CharField(max_length=12, choices=Outcome.choices, db_index=True)
    reason = models.TextField(blank=True)
    authentication = models.CharField(
        max_length=300, blank=True,
        help_text="DKIM/DMARC/SPF as the receiving MTA's Authentication-Results gave them "
                  "(informational: attribution is by reply address only).")
    verified_sender = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="+",
        help_text="The person whose reply address it was sent to (their own, revocable).")
    registration = models.ForeignKey(RegistrationRequest, null=True, blank=True,
                                     on_delete=models.PROTECT, related_name="inbound_messages",
                                     verbose_name="request")
    comment = models.OneToOneField(Comment, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="inbound_message")
    bounced_message = models.ForeignKey(OutboundMessage, null=True, blank=True,
                                        on_delete=models.PROTECT, related_name="bounces")

    objects: ClassVar = InboundMessageQuerySet.as_manager()

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            # The last line of defence against placing one message twice.
            models.UniqueConstraint(fields=["message_id"], condition=Q(outcome="placed"),
                                    name="inbound_placed_once"),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} from {self.from_address or '?'}: {self.outcome}"


class InboundPlacement(AppendOnlyModel):
    """A quarantined message that IANA staff attached to a request by hand, as the
    comment it became (credited to nobody: the sender is as the mail gave it)."""

    message = models.OneToOneField(InboundMessage, on_delete=models.PROTECT,
                                   related_name="placement")
    registration = models.ForeignKey(RegistrationRequest, on_delete=models.PROTECT,
                                     related_name="+", verbose_name="request")
    comment = models.OneToOneField(Comment, on_delete=models.PROTECT, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                              related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.message.message_id} attached to #{self.registration_id}"


class ReplyKey(models.Model):
    """The version of a person's reply addresses: each address the registry gives
    them carries it under an HMAC, so raising it revokes every address given before
    (``actions.reply_addresses_revoke``). No row: version 0."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="reply_key")
    version = models.PositiveIntegerField(default=0)
    changed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"reply key {self.version} of {self.user_id}"
