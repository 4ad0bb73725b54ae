"""Celery tasks of the published registry: thin wrappers around the commands."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError


@shared_task(autoretry_for=(OSError,), retry_backoff=600, max_retries=3)
def sync_iana_task() -> None:
    """Daily (celery beat), where IANA_SYNC_URL is set: record IANA's changes."""
    if settings.IANA_SYNC_URL:
        call_command("sync_iana", settings.IANA_SYNC_URL, apply=True)


@shared_task(ignore_result=True, autoretry_for=(OSError, DatabaseError), retry_backoff=5,
             retry_backoff_max=300, max_retries=6)
def build_exports_task() -> None:
    """Right after a commit that moved the exports' generation, or queued by a request
    that found it unbuilt: build and store it (one builder in the cluster; a no-op when
    it is built or another builder is at work). A bad disk or a database that went away
    is tried again later, about 5 s to 5 min apart."""
    from registry.namespaces.export_build import build_current_exports

    build_current_exports()
