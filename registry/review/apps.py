from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "registry.review"
    label = "review"
    verbose_name = "Registration requests and review"

    def ready(self) -> None:
        # Load the Celery app so that shared tasks bind to it in web processes too.
        import registry.celery  # noqa: F401
        import registry.review.checks  # noqa: F401  (registers the system checks)
