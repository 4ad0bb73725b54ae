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
from registry.text_policy import text_problem

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
        created = updated = refused = 0
        for kind, rows in (("formal", formal), ("informal", informal)):
            for number, row in enumerate(rows, start=1):
                problem = row_problem(row)
                if problem:
                    refused += 1
                    self.stderr.write(f"{kind} row {number} ({str(row.get('name'))[:64]!r}) "
                                      f"not imported: {problem}")
                    continue
                _, was_created = namespace_import(row=row, kind=kind)
                created += was_created
                updated += not was_created
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {source.name}: {len(formal)} formal and {len(informal)} informal rows "
                f"({created} new, {updated} already present"
                + (f", {refused} refused: see above" if refused else "") + ")."
            )
        )


def row_problem(row: dict) -> str | None:
    """The registry's text policy (registry/text_policy.py) on every text of one row."""
    texts = [("name", row.get("name"), True),
             ("registrant", row.get("registrant"), True), ("date", row.get("date"), True),
             ("template_url", row.get("template_url"), True),
             ("template_date", row.get("template_date"), True)]
    texts += [("refs", ref, True) for ref in row.get("refs") or []]
    texts += [("notes", note, False) for note in row.get("notes") or []]
    for field, value, single_line in texts:
        if value is None:
            continue
        if not isinstance(value, str):
            return f"{field} is not text"
        problem = text_problem(value, single_line=single_line)
        if problem:
            return f"{field}: {problem}"
    return None
