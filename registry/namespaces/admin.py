"""Admin for IANA staff: history is read-only, and every change goes through the
same actions the web pages use."""

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.shortcuts import redirect, render

from registry.namespaces.actions import (
    EDITABLE_ROW_FIELDS,
    RegistryError,
    namespace_edit_row,
    namespace_set_status,
)
from registry.namespaces.models import (
    Namespace,
    NamespaceEvent,
    Person,
    RegistryEvent,
    RegistryMetadata,
    TemplateVersion,
)
from registry.namespaces.template import TEXT_FIELDS
from registry.text_policy import TextPolicyForm


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
    fields = ("created_at", "kind", "version", "from_status", "to_status", "actor", "comment")
    readonly_fields = fields


class StatusForm(TextPolicyForm, forms.Form):
    comment = forms.CharField(widget=forms.Textarea, label="Why, and what to use instead")


class NamespaceAdminForm(TextPolicyForm, forms.ModelForm):
    template_url = forms.URLField(
        assume_scheme="https", required=False,
        max_length=Namespace._meta.get_field("template_url").max_length,
        help_text=Namespace._meta.get_field("template_url").help_text)

    class Meta:
        model = Namespace
        fields = ("registered_on", "references", "template_url", "template_date",
                  "registry_note", "holder")


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    form = NamespaceAdminForm
    list_display = ("nid", "kind", "informal_number", "status", "registered_on", "holder")
    list_select_related = ("holder",)
    list_filter = ("kind", "status")
    search_fields = ("nid", "organisation")
    ordering = ("nid",)
    readonly_fields = ("nid", "kind", "informal_number", "status", "status_note", "organisation",
                       "record_updated", "contact", "created_at", "updated_at")
    fields = ("nid", "kind", "informal_number", "status", "status_note", "registered_on",
              "record_updated", "references", "contact", "template_url", "template_date",
              "registry_note", "holder", "organisation", "created_at", "updated_at")
    autocomplete_fields = ("holder",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    inlines = [VersionInline, EventInline]
    actions = ["deprecate", "reinstate"]

    def has_add_permission(self, request):
        return False  # namespaces are registered through the review workflow

    def save_model(self, request, obj, form, change):
        # Through the action, which moves the registry generation with the edit.
        changes = {name: form.cleaned_data[name] for name in form.changed_data
                   if name in EDITABLE_ROW_FIELDS}
        namespace_edit_row(namespace=obj, changes=changes, actor=request.user)

    def has_delete_permission(self, request, obj=None):
        return False  # a NID is never deleted or reassigned (RFC 8141 section 5)

    def _set_status(self, request, queryset, status, title):
        if "apply" in request.POST:
            form = StatusForm(request.POST)
            if form.is_valid():
                done = 0
                for namespace in queryset:
                    try:
                        namespace_set_status(namespace=namespace, status=status,
                                             comment=form.cleaned_data["comment"],
                                             actor=request.user)
                        done += 1
                    except RegistryError as exc:
                        self.message_user(request, f"{namespace.nid}: {exc}", messages.ERROR)
                if done:
                    self.message_user(request, f"{done} namespace(s) now {status}.")
                return redirect(request.get_full_path())
        else:
            form = StatusForm()
        return render(request, "admin/namespaces/set_status.html", {
            **self.admin_site.each_context(request), "title": title, "form": form,
            "namespaces": queryset, "action": request.POST.get("action"),
            "opts": self.model._meta,
        })

    @admin.action(description="Deprecate the selected namespaces")
    def deprecate(self, request, queryset):
        return self._set_status(request, queryset, "deprecated", "Deprecate namespaces")

    @admin.action(description="Reinstate the selected namespaces")
    def reinstate(self, request, queryset):
        return self._set_status(request, queryset, "active", "Reinstate namespaces")


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
