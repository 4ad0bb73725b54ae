from django.apps import AppConfig


class NamespacesConfig(AppConfig):
    name = "registry.namespaces"
    label = "namespaces"
    verbose_name = "Published registry"

    def ready(self) -> None:
        from django.db.models import CharField
        from django.db.models.functions import Lower

        # ``nid__lower=key`` uses the functional unique index on LOWER(nid).
        CharField.register_lookup(Lower)
