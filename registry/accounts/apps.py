from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "registry.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        from registry.accounts.roles import sync_role_groups

        # After every migrate (and every test-database flush) the role groups exist with
        # exactly their permissions, so IANA staff never need to be superusers.
        post_migrate.connect(sync_role_groups, dispatch_uid="registry_sync_role_groups")
