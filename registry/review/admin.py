"""Requests in the admin are read-only records; decisions are taken on the review
pages, through registry.review.actions. The mail that went out and came in is
here too: read-only, with "send again" for staff (the same action as on the
request page).

The admin is one more channel of the visibility policy (registry.review.workflow):
it lists the requests the person may see (no draft nobody submitted), shows the
template as submitted (never a working copy), the comments they may read, and a
mail's words only to those who may read the comment it carries."""

from django.contrib import admin, messages
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from registry.admin_base import ReadOnlyAdmin, ReadOnlyInline
from registry.namespaces.template import PRIVATE_FIELDS, TEMPLATE_FIELDS, field_label
from registry.review import workflow
from registry.review.actions import TransitionRefused, message_resend
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
    Round,
)
from registry.review.workflow import Visitor


class ViewerMixin:
    """The row shown knows who looks at it (``viewer_of``), for the fields that ask the
    policy: an admin object is shared by every request, the row is not."""

    def get_object(self, request: HttpRequest, object_id: str, from_field=None):
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is not None:
            obj.viewer = request.user
        return obj


def viewer_of(obj) -> Visitor:
    """Who looks at ``obj`` (an anonymous visitor when unknown: the policy then says no)."""
    return getattr(obj, "viewer", None) or AnonymousUser()


# What a mail row's list and page read with it: the comment it carries (asked of the
# policy) and its request, which names itself by its NID (its version's, or that of the
# namespace it revises). In get_queryset, not list_select_related: the changelist
# ignores that once the queryset selects anything related.
_MAIL_ROW_RELATED = ("comment__registration", "registration__published_version",
                     "registration__revises", "registration__submitted_round")


class RoundInline(ReadOnlyInline):
    model = Round
    fields = ("number", "version", "nid", "date", "submitted_by", "submitted_at")


class EventInline(ReadOnlyInline):
    model = RequestEvent
    fields = ("created_at", "kind", "transition", "from_state", "to_state", "actor", "comment")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).filter(workflow.events_visible_to(request.user))


class CommentInline(ReadOnlyInline):
    model = Comment
    fields = ("created_at", "author", "author_name", "via", "audience", "body")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).filter(workflow.comments_visible_to(request.user))


class OutboundInline(ReadOnlyInline):
    model = OutboundMessage
    fields = ("created_at", "summary", "to", "state", "attempts", "sent_at", "last_error")
    ordering = ("created_at",)


@admin.register(RegistrationRequest)
class RequestAdmin(ViewerMixin, ReadOnlyAdmin):
    list_display = ("pk", "display_nid", "shown_kind", "state", "shown_fast_track",
                    "registrant", "assigned_expert", "last_activity_at")
    list_select_related = ("registrant", "assigned_expert", "revises", "published_version",
                           "submitted_round")
    # Kind, NID, procedure and organisation as submitted: a filter or a search never
    # finds what only a working copy holds (its registrant's until resubmitted).
    list_filter = ("state", ("submitted_round__kind", admin.ChoicesFieldListFilter),
                   "submitted_round__fast_track", "standardisation")
    search_fields = ("submitted_round__nid", "registrant__email",
                     "rounds__registrant_organisation")
    readonly_fields = ("registrant", "shown_kind", "display_nid", "revises", "shown_fast_track",
                       "standardisation", "state", "assigned_expert", "published_version",
                       "created_at", "review_started_at", "review_paused_for",
                       "review_paused_at", "last_activity_at", "template")
    # The working copy: its registrant's (``template`` and the ``shown_*`` columns ask).
    exclude = ("kind", "proposed_nid", "fast_track", *TEMPLATE_FIELDS)
    inlines = [RoundInline, EventInline, CommentInline, OutboundInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).filter(workflow.requests_visible_to(request.user))

    @admin.display(description="kind", ordering="submitted_round__kind")
    def shown_kind(self, obj: RegistrationRequest) -> str:
        return obj.get_shown_kind_display()

    @admin.display(description="fast track", boolean=True)
    def shown_fast_track(self, obj: RegistrationRequest) -> bool:
        return obj.shown_fast_track

    @admin.display(description="Template as submitted")
    def template(self, obj: RegistrationRequest) -> str:
        """The last round (the working copy only to its registrant, who may read it), with
        the contact for IANA to those who may see it."""
        shown = (obj if workflow.can_read_working_copy(obj, viewer_of(obj))
                 else obj.submitted_round)
        if shown is None:
            return "(not submitted)"
        private = workflow.can_see_private_contact(obj, viewer_of(obj))
        rows = [(field_label(name), getattr(shown, name)) for name in TEMPLATE_FIELDS
                if private or name not in PRIVATE_FIELDS]
        return format_html("<dl>{}</dl>", format_html_join(
            "", "<dt>{}</dt><dd style='white-space: pre-wrap'>{}</dd>", rows))


@admin.register(OutboundMessage)
class OutboundMessageAdmin(ViewerMixin, ReadOnlyAdmin):
    list_display = ("created_at", "registration", "summary", "audience", "state", "attempts",
                    "sent_at")
    list_filter = ("state", "audience")
    search_fields = ("message_id", "subject", "summary", "registration__submitted_round__nid")
    readonly_fields = ("registration", "event", "comment", "audience", "summary", "message_id",
                       "from_email", "to", "cc", "reply_to", "subject", "headers", "words",
                       "state", "attempts", "last_error", "created_at", "next_attempt_at",
                       "last_attempt_at", "sent_at")
    exclude = ("body",)  # ``words`` asks the policy
    actions = ["resend"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (super().get_queryset(request).select_related(*_MAIL_ROW_RELATED)
                .filter(Q(registration__isnull=True) | Q(
                    registration__in=RegistrationRequest.objects.visible_to(request.user))))

    @admin.display(description="Body")
    def words(self, obj: OutboundMessage) -> str:
        if not workflow.can_read_message(obj, viewer_of(obj)):
            return "(It carries a comment for the designated experts only: not shown to you.)"
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", obj.body)

    def has_resend_permission(self, request) -> bool:
        return workflow.sends_mail_again(request.user)

    @admin.action(description="Send the selected messages again", permissions=["resend"])
    def resend(self, request, queryset):
        done = 0
        for message in queryset:
            try:
                message_resend(message=message, actor=request.user)
                done += 1
            except TransitionRefused as exc:
                self.message_user(request, f"{message.message_id}: {exc}", messages.WARNING)
        if done:
            self.message_user(request, f"{done} message(s) are being sent again.")


@admin.register(InboundMessage)
class InboundMessageAdmin(ViewerMixin, ReadOnlyAdmin):
    list_display = ("received_at", "outcome", "from_address", "shown_subject", "registration",
                    "source")
    list_filter = ("outcome", "source")
    # The subject is searched only where the viewer may read it (get_search_results): a
    # hit on a hidden subject would tell its words as surely as showing them.
    search_fields = ("message_id", "from_address")
    readonly_fields = ("received_at", "source", "outcome", "reason", "registration", "comment",
                       "bounced_message", "verified_sender", "authentication",
                       "message_id", "from_name", "from_address",
                       "shown_subject", "sent_at", "in_reply_to", "references", "list_id",
                       "words", "source_text")
    exclude = ("raw", "text", "subject")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        """Each row knows whether its words are the viewer's to read (``readable``: it
        became no comment, or one they may read), for the list as for the page."""
        return (super().get_queryset(request).select_related(*_MAIL_ROW_RELATED)
                .annotate(readable=workflow.inbound_readable_by(request.user)))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet,
                           search_term: str) -> tuple[QuerySet, bool]:
        found, duplicates = super().get_search_results(request, queryset, search_term)
        if search_term.strip():
            found |= queryset.filter(readable=True, subject__icontains=search_term.strip())
        return found, duplicates

    @admin.display(description="Subject")
    def shown_subject(self, obj: InboundMessage) -> str:
        return obj.subject if getattr(obj, "readable", False) else "(not shown to you)"

    @admin.display(description="Text")
    def words(self, obj: InboundMessage) -> str:
        if not workflow.can_read_message(obj, viewer_of(obj)):
            return "(It became a comment for the designated experts only: not shown to you.)"
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", obj.text)

    @admin.display(description="The message as received")
    def source_text(self, obj: InboundMessage) -> str:
        if not workflow.can_read_message(obj, viewer_of(obj)):
            return "(Not shown to you.)"
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>",
                           bytes(obj.raw).decode("utf-8", errors="replace"))
