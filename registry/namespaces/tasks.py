"""Celery tasks of the published registry: thin wrappers around the commands."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.core.management import call_command


@shared_task(autoretry_for=(OSError,), retry_backoff=600, max_retries=3)
def sync_iana_task() -> None:
    """Daily (celery beat), where IANA_SYNC_URL is set: record IANA's changes."""
    if settings.IANA_SYNC_URL:
        call_command("sync_iana", settings.IANA_SYNC_URL, apply=True)


@shared_task(ignore_result=True)
def build_exports_task() -> None:
    """Right after a commit that moved the registry generation: build its exports
    (one builder at a time; a no-op when they are built already)."""
    from registry.namespaces.export_files import build_current_exports

    build_current_exports()
