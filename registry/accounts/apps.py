from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "registry.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"
