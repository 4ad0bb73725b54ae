from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "registry.accounts"
    label = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        from django.db.models.signals import m2m_changed, post_save

        from registry.accounts.models import User
        from registry.accounts.signals import expert_changed, roles_changed

        # The registry page names the designated experts: a change of role or of an
        # expert's name moves the registry generation (registry/namespaces/public_cache.py).
        m2m_changed.connect(roles_changed, sender=User.groups.through,
                            dispatch_uid="registry-roles-changed")
        post_save.connect(expert_changed, sender=User, dispatch_uid="registry-expert-changed")
