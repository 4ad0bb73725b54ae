"""The Celery application: ``celery -A registry.celery worker`` and, on one machine,
``celery -A registry.celery beat`` (the Procfile, deploy/, docs/operations.md)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Celery's "current app" is per thread; without this, shared tasks sent from any
# thread but the first (threaded servers, our concurrency tests) would fall back
# to a default app with an AMQP broker on localhost.
app.set_default()
