"""Requests in the admin are read-only records; decisions are taken on the review
pages, through registry.review.actions."""

from django.contrib import admin

from registry.namespaces.admin import ReadOnlyInline
from registry.namespaces.template import TEXT_FIELDS
from registry.review.models import Comment, RegistrationRequest, RequestEvent, Round


class RoundInline(ReadOnlyInline):
    model = Round
    fields = ("number", "version", "nid", "date", "submitted_by", "submitted_at")
    readonly_fields = fields


class EventInline(ReadOnlyInline):
    model = RequestEvent
    fields = ("created_at", "kind", "transition", "from_state", "to_state", "actor", "comment")
    readonly_fields = fields


class CommentInline(ReadOnlyInline):
    model = Comment
    fields = ("created_at", "author", "audience", "body")
    readonly_fields = fields


@admin.register(RegistrationRequest)
class RequestAdmin(admin.ModelAdmin):
    list_display = ("pk", "display_nid", "kind", "state", "fast_track", "registrant",
                    "assigned_expert", "last_activity_at")
    list_select_related = ("registrant", "assigned_expert", "revises", "published_version")
    list_filter = ("state", "kind", "fast_track", "standardisation")
    search_fields = ("proposed_nid", "registrant__email", "registrant_organisation")
    readonly_fields = ("registrant", "kind", "proposed_nid", "revises", "fast_track",
                       "standardisation", "state", "assigned_expert", "published_version",
                       "created_at", "updated_at", "review_started_at", "last_activity_at",
                       *TEXT_FIELDS)
    inlines = [RoundInline, EventInline, CommentInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
