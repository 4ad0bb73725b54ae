"""Import the IANA "URN Namespaces" registry, idempotently.

    python manage.py import_registry [PATH]

PATH is IANA's registry as JSON (the shape of shared/data/iana-urn-namespaces.json)
or this registry's own /registry.xml export. Without PATH the command reads
../shared/data/iana-urn-namespaces.json when it exists, else the copy under
fixtures/. Only registry rows are imported: template text that is not in the
source stays empty, never invented.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from registry.namespaces.actions import namespace_import
from registry.namespaces.exports import rows_from_registry_xml

DEFAULT_SOURCES = (
    settings.BASE_DIR.parent / "shared" / "data" / "iana-urn-namespaces.json",
    settings.BASE_DIR / "fixtures" / "iana-urn-namespaces.json",
)


class Command(BaseCommand):
    help = "Import the IANA URN Namespaces registry (JSON, or this registry's XML export)."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="JSON or XML file; see the module docstring")

    def handle(self, *args, path=None, **options):
        source = Path(path) if path else next((p for p in DEFAULT_SOURCES if p.exists()), None)
        if source is None or not source.exists():
            raise CommandError(f"No registry file at {source or DEFAULT_SOURCES[-1]}.")
        text = source.read_text(encoding="utf-8")
        try:
            if source.suffix.lower() == ".xml":
                formal, informal = rows_from_registry_xml(text)
            else:
                data = json.loads(text)
                formal, informal = data.get("formal", []), data.get("informal", [])
        except (ValueError, KeyError) as exc:
            raise CommandError(f"{source} is not a registry file: {exc}") from exc
        created = updated = 0
        for kind, rows in (("formal", formal), ("informal", informal)):
            for row in rows:
                _, was_created = namespace_import(row=row, kind=kind)
                created += was_created
                updated += not was_created
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {source.name}: {len(formal)} formal and {len(informal)} informal rows "
                f"({created} new, {updated} already present)."
            )
        )
