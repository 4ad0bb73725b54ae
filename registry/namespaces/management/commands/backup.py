"""Write the whole registry and its history to one file.

    python manage.py backup FILE [--with-passwords]

See registry/backup.py for what is in it; ``restore`` reads it back."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry.backup import write_backup


class Command(BaseCommand):
    help = "Write the registry, its history and its accounts to FILE (JSON)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="where to write the backup")
        parser.add_argument("--with-passwords", action="store_true",
                            help="include password hashes (keep such a file secret)")

    def handle(self, *args, file: str, with_passwords: bool = False, **options):
        path = Path(file)
        if not path.parent.is_dir():
            raise CommandError(f"No directory {path.parent} to write {path.name} into.")
        counts = write_backup(path, with_passwords=with_passwords)
        summary = ", ".join(f"{n} {label}" for label, n in counts.items())
        self.stdout.write(self.style.SUCCESS(
            f"Wrote {path}: {summary}" + (" (with password hashes)" if with_passwords else
                                          " (without password hashes)") + "."))
