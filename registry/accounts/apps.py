from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "registry.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        from django.db.models.signals import m2m_changed

        from registry.accounts.models import User
        from registry.accounts.signals import roles_changed

        # The registry page names the designated experts: a change of role moves the
        # registry generation (registry/namespaces/public_cache.py); a change of name,
        # user_update_profile.
        m2m_changed.connect(roles_changed, sender=User.groups.through,
                            dispatch_uid="registry-roles-changed")

        from registry.accounts.roles import sync_role_groups

        # After every migrate (and every test-database flush) the role groups exist with
        # exactly their permissions, so IANA staff never need to be superusers.
        post_migrate.connect(sync_role_groups, dispatch_uid="registry_sync_role_groups")
