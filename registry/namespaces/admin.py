"""Admin for IANA staff: history is read-only, and every change goes through the
same actions the web pages use."""

from __future__ import annotations

from typing import cast

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from registry.accounts.models import User
from registry.admin_base import NoAddNoDeleteMixin, ReadOnlyAdmin, ReadOnlyInline, reason_action
from registry.namespaces.actions import (
    ACTIVE,
    DEPRECATED,
    STAFF_FIELDS,
    RegistryError,
    namespace_set_status,
    namespace_update_record,
)
from registry.namespaces.forms import DeprecateForm, RecordForm, ReinstateForm
from registry.namespaces.models import (
    Namespace,
    NamespaceEvent,
    Person,
    RegistryEvent,
    RegistryMetadata,
    TemplateVersion,
)
from registry.namespaces.template import TEMPLATE_FIELDS
from registry.review import workflow


class VersionInline(ReadOnlyInline):
    model = TemplateVersion
    fields = ("number", "date", "nid", "fast_track", "published_at", "published_by")


class EventInline(ReadOnlyInline):
    model = NamespaceEvent
    fields = ("created_at", "kind", "version", "from_status", "to_status", "actor", "comment",
              "changes")


@admin.register(Namespace)
class NamespaceAdmin(NoAddNoDeleteMixin, admin.ModelAdmin):
    """Staff change the registry row through namespace_update_record() and the status
    through namespace_set_status(); both leave an event. Nothing else is editable.
    Namespaces are registered through the review workflow, not added here, and a NID
    is never deleted or reassigned (RFC 8141 section 5)."""

    form = RecordForm
    list_display = ("nid", "kind", "informal_number", "status", "registered_on", "holder")
    list_select_related = ("holder",)
    list_filter = ("kind", "status")
    search_fields = ("nid", "organisation")
    ordering = ("nid",)
    readonly_fields = ("nid", "kind", "informal_number", "status", "status_note", "replaced_by",
                       "organisation", "record_updated", "contact", "created_at", "updated_at")
    fields = ("nid", "kind", "informal_number", "status", "status_note", "replaced_by",
              *STAFF_FIELDS, "record_updated", "contact", "reason", "organisation",
              "created_at", "updated_at")
    inlines = [VersionInline, EventInline]
    actions = ["deprecate", "reinstate"]

    # Every write asks the workflow who may keep the registry (actions._check_actor); the
    # admin asks it too, so a superuser without the IANA staff role reads and never writes.
    def has_change_permission(self, request: HttpRequest, obj: Namespace | None = None) -> bool:
        return (super().has_change_permission(request, obj)
                and workflow.can_keep_registry(request.user))

    def has_set_status_permission(self, request: HttpRequest) -> bool:
        return (request.user.has_perm("namespaces.set_namespace_status")
                and workflow.can_keep_registry(request.user))

    def save_model(self, request: HttpRequest, obj: Namespace, form: RecordForm,
                   change: bool) -> None:
        namespace_update_record(namespace=obj, changes=form.changes(),
                                reason=form.cleaned_data.get("reason", ""),
                                actor=cast(User, request.user))
        obj.refresh_from_db()

    def _set_status(self, request: HttpRequest, queryset: QuerySet, status: str,
                    title: str) -> HttpResponse:
        def change(namespace: Namespace, data: dict) -> None:
            namespace_set_status(namespace=namespace, status=status, comment=data["comment"],
                                 replaced_by=data.get("replaced_by", ""),
                                 actor=cast(User, request.user))

        return reason_action(
            self, request, queryset, title=title, change=change, refused=RegistryError,
            form_class=DeprecateForm if status == DEPRECATED else ReinstateForm,
            intro="These namespaces keep their NIDs; only their status changes, "
                  "with an event in their history:",
            label=lambda namespace: namespace.nid,
            done=lambda count: f"{count} namespace(s) now {status}.")

    @admin.action(description="Deprecate the selected namespaces", permissions=["set_status"])
    def deprecate(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._set_status(request, queryset, DEPRECATED, "Deprecate namespaces")

    @admin.action(description="Reinstate the selected namespaces", permissions=["set_status"])
    def reinstate(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._set_status(request, queryset, ACTIVE, "Reinstate namespaces")


@admin.register(TemplateVersion)
class TemplateVersionAdmin(ReadOnlyAdmin):
    list_display = ("namespace", "number", "date", "fast_track", "published_at")
    list_select_related = ("namespace",)
    list_filter = ("fast_track",)
    search_fields = ("namespace__nid", "registrant_organisation")
    readonly_fields = ("namespace", "number", "date", "nid", "fast_track", "published_at",
                       "published_by", "source_registration", *TEMPLATE_FIELDS)


# IANA's side of the registry: changed by import_registry and sync_iana, which record
# each change as an event; the admin shows it.

@admin.register(Person)
class PersonAdmin(ReadOnlyAdmin):
    list_display = ("person_id", "name", "org", "updated")
    search_fields = ("person_id", "name", "org")


@admin.register(RegistryMetadata)
class RegistryMetadataAdmin(ReadOnlyAdmin):
    list_display = ("key", "experts", "updated")


@admin.register(RegistryEvent)
class RegistryEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "kind", "subject", "actor")
    list_filter = ("kind",)
