"""Requests in the admin are read-only records; decisions are taken on the review
pages, through registry.review.actions. The mail that went out and came in is
here too: read-only, with "send again" for staff (the same action as on the
request page)."""

from django.contrib import admin, messages
from django.utils.html import format_html

from registry.accounts.roles import is_iana_staff
from registry.admin_base import ReadOnlyAdmin, ReadOnlyInline
from registry.namespaces.template import TEMPLATE_FIELDS
from registry.review.actions import TransitionRefused, message_resend
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
    Round,
)


class RoundInline(ReadOnlyInline):
    model = Round
    fields = ("number", "version", "nid", "date", "submitted_by", "submitted_at")


class EventInline(ReadOnlyInline):
    model = RequestEvent
    fields = ("created_at", "kind", "transition", "from_state", "to_state", "actor", "comment")


class CommentInline(ReadOnlyInline):
    model = Comment
    fields = ("created_at", "author", "author_name", "via", "audience", "body")


class OutboundInline(ReadOnlyInline):
    model = OutboundMessage
    fields = ("created_at", "summary", "to", "state", "attempts", "sent_at", "last_error")
    ordering = ("created_at",)


@admin.register(RegistrationRequest)
class RequestAdmin(ReadOnlyAdmin):
    list_display = ("pk", "display_nid", "kind", "state", "fast_track", "registrant",
                    "assigned_expert", "last_activity_at")
    list_select_related = ("registrant", "assigned_expert", "revises", "published_version")
    list_filter = ("state", "kind", "fast_track", "standardisation")
    search_fields = ("proposed_nid", "registrant__email", "registrant_organisation")
    readonly_fields = ("registrant", "kind", "proposed_nid", "revises", "fast_track",
                       "standardisation", "state", "assigned_expert", "published_version",
                       "created_at", "updated_at", "review_started_at", "review_paused_for",
                       "review_paused_at", "last_activity_at", *TEMPLATE_FIELDS)
    inlines = [RoundInline, EventInline, CommentInline, OutboundInline]


@admin.register(OutboundMessage)
class OutboundMessageAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "registration", "summary", "audience", "state", "attempts",
                    "sent_at")
    list_filter = ("state", "audience")
    search_fields = ("message_id", "subject", "summary", "registration__proposed_nid")
    list_select_related = ("registration",)
    readonly_fields = ("registration", "event", "comment", "audience", "summary", "message_id",
                       "from_email", "to", "cc", "reply_to", "subject", "headers", "body",
                       "state", "attempts", "last_error", "created_at", "next_attempt_at",
                       "last_attempt_at", "sent_at")
    actions = ["resend"]

    def has_resend_permission(self, request) -> bool:
        return is_iana_staff(request.user)

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
class InboundMessageAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "outcome", "from_address", "subject", "registration", "source")
    list_filter = ("outcome", "source")
    search_fields = ("message_id", "from_address", "subject")
    list_select_related = ("registration",)
    readonly_fields = ("received_at", "source", "outcome", "reason", "registration", "comment",
                       "bounced_message", "verified_sender", "authentication",
                       "message_id", "from_name", "from_address",
                       "subject", "sent_at", "in_reply_to", "references", "list_id", "text",
                       "source_text")
    exclude = ("raw",)

    @admin.display(description="The message as received")
    def source_text(self, obj: InboundMessage) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>",
                           bytes(obj.raw).decode("utf-8", errors="replace"))
