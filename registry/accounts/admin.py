from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from registry.accounts.models import User


@admin.register(User)
class RegistryUserAdmin(UserAdmin):
    list_display = ("email", "first_name", "last_name", "organisation",
                    "recognized_standards_body", "is_staff")
    list_filter = ("recognized_standards_body", "groups", "is_staff", "is_active")
    search_fields = ("email", "first_name", "last_name", "organisation")
    ordering = ("email",)
    fieldsets = UserAdmin.fieldsets + (
        ("Registrant", {"fields": ("organisation", "recognized_standards_body")}),
    )
