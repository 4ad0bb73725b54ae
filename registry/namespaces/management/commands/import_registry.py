"""Import the IANA "URN Namespaces" registry, idempotently.

    python manage.py import_registry [PATH]

PATH is IANA's published ``urn-namespaces.xml`` (or this registry's own
/registry.xml, which has the same shape), or JSON in the shape of
fixtures/iana-urn-namespaces.json. Without PATH the command reads
../shared/data/iana/urn-namespaces.xml when it exists, else the copy under
fixtures/iana/. The whole file is checked first and imported in one transaction:
anything it cannot import stops it with the file, the record and the reason, and
nothing is stored. Template text that is not in the source stays empty.

Then the machine-readable profiles shipped with urn8141 (its data/profiles.json) are
published on the namespaces they belong to that have none yet, or in place of a
profile shipped earlier that the file now corrects (never over one that came through
review or from IANA staff); ``--no-profiles`` skips this. Each goes through
namespace_set_profile(), so each is in its history.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from registry.namespaces import sync
from registry.namespaces.actions import RegistryError
from registry.namespaces.iana import SourceError
from registry.namespaces.models import Namespace
from registry.namespaces.profiles import import_shipped_profiles

DEFAULT_SOURCES = (
    settings.BASE_DIR.parent / "shared" / "data" / "iana" / "urn-namespaces.xml",
    settings.BASE_DIR / "fixtures" / "iana" / "urn-namespaces.xml",
)


class Command(BaseCommand):
    help = "Import IANA's URN Namespaces registry (its XML, or the JSON layout)."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="XML or JSON file; see the module docstring")
        parser.add_argument("--no-profiles", action="store_true",
                            help="do not publish the profiles shipped with urn8141")

    def handle(self, *args, path=None, no_profiles=False, **options):
        source = path or next((str(p) for p in DEFAULT_SOURCES if p.exists()),
                              str(DEFAULT_SOURCES[-1]))
        if not Path(source).is_file():
            raise CommandError(f"No registry file at {source}.")
        first = not Namespace.objects.exists()
        try:
            snapshot = sync.load(source)
            changes = sync.apply(snapshot, first_import=first)
        except SourceError as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        formal = sum(r.kind == "formal" for r in snapshot.records)
        new = sum(c.what == "new" for c in changes)
        changed = len({c.subject for c in changes if c.what == "changed"})
        self.stdout.write(self.style.SUCCESS(
            f"Imported {Path(source).name}: {formal} formal and "
            f"{len(snapshot.records) - formal} informal rows ({new} new, {changed} changed, "
            f"{len(snapshot.records) - new - changed} unchanged), {len(snapshot.people)} people."
        ))
        if no_profiles:
            return
        try:
            published = import_shipped_profiles()
        except RegistryError as exc:
            raise CommandError(f"The registry is imported; its profiles are not: {exc}") from None
        if published:
            self.stdout.write(f"Published {len(published)} machine-readable profiles: "
                              + ", ".join(published) + ".")
