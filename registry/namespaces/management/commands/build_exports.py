"""Build the current registry generation's export files now (after a deploy, so that
no request has to make every fragment of a big registry for the first time)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from registry.namespaces.export_files import build_current_exports


class Command(BaseCommand):
    help = "Build the export files (registry.xml, the CSVs) of the current generation."

    def handle(self, *args, **options):
        started = time.monotonic()
        directory = build_current_exports()
        self.stdout.write(f"Exports of generation {directory.name} in {directory} "
                          f"({time.monotonic() - started:.1f} s).")
