"""Admin for IANA staff: history is read-only, and every change goes through the
same actions the web pages use."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from registry.accounts.models import User
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
from registry.namespaces.template import TEXT_FIELDS


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class VersionInline(ReadOnlyInline):
    model = TemplateVersion
    fields = ("number", "date", "nid", "fast_track", "published_at", "published_by")
    readonly_fields = fields


class EventInline(ReadOnlyInline):
    model = NamespaceEvent
    fields = ("created_at", "kind", "version", "from_status", "to_status", "actor", "comment",
              "changes")
    readonly_fields = fields


def reason_page(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet,
                form: forms.Form, title: str, intro: str) -> HttpResponse:
    """The intermediate page of an admin action that asks for a reason."""
    return render(request, "admin/reason_action.html", {
        **modeladmin.admin_site.each_context(request), "title": title, "form": form,
        "objects": queryset, "action": request.POST.get("action"), "intro": intro,
        "opts": modeladmin.model._meta,
    })


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    """Staff change the registry row through namespace_update_record() and the status
    through namespace_set_status(); both leave an event. Nothing else is editable."""

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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # namespaces are registered through the review workflow

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a NID is never deleted or reassigned (RFC 8141 section 5)

    def has_set_status_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("namespaces.set_namespace_status")

    def save_model(self, request: HttpRequest, obj: Namespace, form: RecordForm,
                   change: bool) -> None:
        namespace_update_record(namespace=obj, changes=form.changes(),
                                reason=form.cleaned_data.get("reason", ""),
                                actor=cast(User, request.user))
        obj.refresh_from_db()

    def _set_status(self, request: HttpRequest, queryset: QuerySet, status: str,
                    title: str) -> HttpResponse | None:
        form_class = DeprecateForm if status == DEPRECATED else ReinstateForm
        form = form_class(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            done = 0
            for namespace in queryset:
                try:
                    namespace_set_status(namespace=namespace, status=status,
                                         comment=form.cleaned_data["comment"],
                                         replaced_by=form.cleaned_data.get("replaced_by", ""),
                                         actor=cast(User, request.user))
                    done += 1
                except RegistryError as exc:
                    self.message_user(request, f"{namespace.nid}: {exc}", messages.ERROR)
            if done:
                self.message_user(request, f"{done} namespace(s) now {status}.")
            return redirect(request.get_full_path())
        return reason_page(self, request, queryset, form, title,
                           "These namespaces keep their NIDs; only their status changes, "
                           "with an event in their history:")

    @admin.action(description="Deprecate the selected namespaces", permissions=["set_status"])
    def deprecate(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._set_status(request, queryset, DEPRECATED, "Deprecate namespaces")

    @admin.action(description="Reinstate the selected namespaces", permissions=["set_status"])
    def reinstate(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._set_status(request, queryset, ACTIVE, "Reinstate namespaces")


@admin.register(TemplateVersion)
class TemplateVersionAdmin(admin.ModelAdmin):
    list_display = ("namespace", "number", "date", "fast_track", "published_at")
    list_select_related = ("namespace",)
    list_filter = ("fast_track",)
    search_fields = ("namespace__nid", "registrant_organisation")
    readonly_fields = ("namespace", "number", "date", "nid", "fast_track", "published_at",
                       "published_by", "source_request", *TEXT_FIELDS)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """IANA's side of the registry: changed by import_registry and sync_iana, which
    record each change as an event; the admin shows it."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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
