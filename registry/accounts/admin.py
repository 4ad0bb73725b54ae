"""Accounts in the admin. Staff correct names and organisations, recognize standards
bodies and grant roles only through registry.accounts.actions, each with a reason
and an AccountEvent. Accounts are created by signing up, never deleted (their
history stays), and passwords are reset by their owners."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from registry.accounts import actions
from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import ROLE_GROUPS, forget_roles
from registry.admin_base import NoAddNoDeleteMixin, ReadOnlyAdmin, ReadOnlyInline, reason_action
from registry.text_policy import TextPolicyForm


class AccountEventInline(ReadOnlyInline):
    model = AccountEvent
    fk_name = "user"
    fields = ("created_at", "kind", "role", "changes", "actor", "reason")
    show_change_link = False


class AccountForm(TextPolicyForm, forms.ModelForm):
    """Profile, recognition and roles, and the reason for whatever changes."""

    roles = forms.MultipleChoiceField(choices=[(r, r) for r in ROLE_GROUPS], required=False,
                                      widget=forms.CheckboxSelectMultiple)
    reason = forms.CharField(max_length=2000, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Kept in the account's history with your name.")

    class Meta:
        model = User
        fields = (*actions.PROFILE_FIELDS, "recognized_standards_body")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["roles"] = list(self.instance.groups.filter(name__in=ROLE_GROUPS)
                                         .values_list("name", flat=True))

    actor: User | None = None  # the person using the admin (set by get_form)

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        if self.changed_data and (problem := actions.reason_refusal(data.get("reason", ""))):
            self.add_error("reason", str(problem))
        # Each change asked alone, so every refused field shows its own answer (the
        # actions in save_model ask the same function again, under the row's lock).
        for name in self.changed_data:
            if name == "reason" or name not in data:
                continue
            problem = actions.account_change_refusal(actor=self.actor, user=self.instance,
                                                     changes={name: data[name]})
            if problem is not None:
                self.add_error(problem.field if problem.field in self.fields else None,
                               str(problem))
        return data


class ReasonForm(TextPolicyForm, forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=2000,
                             help_text="Kept in each account's history with your name.")


@admin.register(User)
class RegistryUserAdmin(NoAddNoDeleteMixin, UserAdmin):
    """People sign up themselves (and verify their address), so the admin adds none;
    an account with history is deactivated, not deleted."""

    form = AccountForm
    list_display = ("email", "first_name", "last_name", "organisation",
                    "recognized_standards_body", "is_staff")
    list_filter = ("recognized_standards_body", "groups", "is_staff", "is_active")
    search_fields = ("email", "first_name", "last_name", "organisation")
    ordering = ("email",)
    # The availability is the expert's own to set (on their availability page).
    readonly_fields = ("email", "is_staff", "is_superuser", "last_login", "date_joined",
                       "unavailable_until", "max_open_assignments")
    fieldsets = (
        (None, {"fields": ("email",)}),
        ("Name and organisation", {"fields": ("first_name", "last_name", "organisation")}),
        ("Standing", {"fields": ("recognized_standards_body", "roles", "is_active", "is_staff",
                                 "is_superuser")}),
        ("Availability (a designated expert's own)",
         {"fields": ("unavailable_until", "max_open_assignments")}),
        ("Why", {"fields": ("reason",)}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    inlines = [AccountEventInline]
    actions = ["recognize", "unrecognize"]

    def has_recognize_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("accounts.recognize_standards_body")

    def user_change_password(self, request: HttpRequest, id: str,
                             form_url: str = "") -> HttpResponse:
        raise PermissionDenied("People reset their own password from the log-in page.")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        readonly = tuple(self.readonly_fields)
        if not request.user.has_perm("accounts.recognize_standards_body"):
            readonly += ("recognized_standards_body",)
        return readonly

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False,
                 **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        may_grant = request.user.has_perm("accounts.grant_role")

        class Form(form):  # type: ignore[misc, valid-type]
            actor = cast(User, request.user)

            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                if "roles" in self.fields and not may_grant:
                    self.fields["roles"].disabled = True

        return Form

    def save_model(self, request: HttpRequest, obj: User, form: AccountForm,
                   change: bool) -> None:
        reason, actor = form.cleaned_data.get("reason", ""), cast(User, request.user)
        changed = form.changed_data
        profile = {name: form.cleaned_data[name] for name in actions.PROFILE_FIELDS
                   if name in changed}
        actions.user_update_profile(user=obj, changes=profile, reason=reason, actor=actor)
        if "recognized_standards_body" in changed:
            change_recognition = (actions.user_recognize
                                  if form.cleaned_data["recognized_standards_body"]
                                  else actions.user_unrecognize)
            change_recognition(user=obj, reason=reason, actor=actor)
        if "roles" in changed:
            before, after = set(form.initial.get("roles", [])), set(form.cleaned_data["roles"])
            for role in sorted(after - before):
                actions.role_grant(user=obj, role=role, reason=reason, actor=actor)
            for role in sorted(before - after):
                actions.role_revoke(user=obj, role=role, reason=reason, actor=actor)
        obj.refresh_from_db()
        forget_roles(obj)  # the form's refusals read them before the change

    def _recognition(self, request: HttpRequest, queryset: QuerySet, recognized: bool,
                     title: str) -> HttpResponse:
        action = actions.user_recognize if recognized else actions.user_unrecognize

        def change(user: User, data: dict) -> None:
            action(user=user, reason=data["reason"], actor=cast(User, request.user))

        return reason_action(
            self, request, queryset, title=title, form_class=ReasonForm, change=change,
            refused=actions.AccountRefused,
            intro="Recognition decides who may use the fast track (RFC 8141 section 6.3); "
                  "each account's history keeps the change:",
            label=lambda user: user.email,
            done=lambda count: f"{title}: {count} account(s).")

    @admin.action(description="Recognize as standards bodies", permissions=["recognize"])
    def recognize(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._recognition(request, queryset, True, "Recognize as standards bodies")

    @admin.action(description="Withdraw recognition as standards bodies",
                  permissions=["recognize"])
    def unrecognize(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        return self._recognition(request, queryset, False,
                                 "Withdraw recognition as standards bodies")


class RoleFilter(admin.SimpleListFilter):
    """The role an event granted or ended, each by name, and the events of no role
    under a name too (Django's own filter lists the blank value as a link with no text,
    which no screen reader can name)."""

    title = "role"
    parameter_name = "role"
    NONE = "none"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(role, role) for role in ROLE_GROUPS] + [(self.NONE, "No role (other events)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == self.NONE:
            return queryset.filter(role="")
        return queryset.filter(role=value) if value else queryset


@admin.register(AccountEvent)
class AccountEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "kind", "role", "actor", "reason")
    list_filter = ("kind", RoleFilter)
    search_fields = ("user__email", "actor__email", "reason")
    readonly_fields = ("created_at", "user", "kind", "role", "changes", "actor", "reason")
