"""Compare IANA's current registry with this one, and bring this one in line.

    python manage.py sync_iana FILE_OR_URL [--apply]

Without --apply (the default) it only reports what differs: new NIDs, changed
dates, templates and references, informal contacts, people and designated
experts, and the NIDs only held here (registered here, or dropped from IANA's
registry: kept, the drop noted once in the namespace's history). With --apply it
records each change through the actions, one event each, in one transaction.
Without FILE_OR_URL it reads the IANA_SYNC_URL setting.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from registry.namespaces import sync
from registry.namespaces.iana import SourceError


class Command(BaseCommand):
    help = "Compare IANA's urn-namespaces.xml with the registry; --apply records the changes."

    def add_arguments(self, parser):
        parser.add_argument("source", nargs="?", help="a file path or an http(s) URL")
        parser.add_argument("--apply", action="store_true",
                            help="record the changes (default: report only)")

    def handle(self, *args, source=None, apply=False, **options):
        source = source or settings.IANA_SYNC_URL
        if not source:
            raise CommandError("Give a file or URL, or set IANA_SYNC_URL.")
        try:
            snapshot = sync.load(source)
            changes = sync.apply(snapshot) if apply else sync.compare(snapshot)
        except SourceError as exc:
            raise CommandError(f"Nothing changed. {exc}") from None
        for change in changes:
            self.stdout.write(str(change))
        recorded = [c for c in changes if not c.reported_only]
        if not recorded:
            self.stdout.write(self.style.SUCCESS(f"In line with {source}."))
        elif apply:
            self.stdout.write(self.style.SUCCESS(f"Recorded {len(recorded)} changes."))
        else:
            self.stdout.write(self.style.WARNING(
                f"{len(recorded)} differences; run again with --apply to record them."))
