"""Load a backup written by ``backup`` into an empty, migrated database.

    python manage.py migrate && python manage.py restore FILE

It refuses a database that already holds registry data."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry.backup import BackupError, restore_backup


class Command(BaseCommand):
    help = "Restore a registry backup into an empty, migrated database."

    def add_arguments(self, parser):
        parser.add_argument("file", help="a file written by `manage.py backup`")

    def handle(self, *args, file: str, **options):
        try:
            counts = restore_backup(Path(file))
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        summary = ", ".join(f"{n} {label}" for label, n in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Restored {file}: {summary}."))
