from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from registry.accounts.models import User
from registry.text_policy import TextPolicyForm


class UserAdminChangeForm(TextPolicyForm, UserChangeForm):
    pass


class UserAdminCreationForm(TextPolicyForm, AdminUserCreationForm):
    pass


@admin.register(User)
class RegistryUserAdmin(UserAdmin):
    form = UserAdminChangeForm
    add_form = UserAdminCreationForm
    list_display = ("email", "first_name", "last_name", "organisation",
                    "recognized_standards_body", "is_staff")
    list_filter = ("recognized_standards_body", "groups", "is_staff", "is_active")
    search_fields = ("email", "first_name", "last_name", "organisation")
    ordering = ("email",)
    fieldsets = UserAdmin.fieldsets + (
        ("Registrant", {"fields": ("organisation", "recognized_standards_body")}),
    )
