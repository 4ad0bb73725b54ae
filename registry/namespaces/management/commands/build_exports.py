"""Build and store the current registry generation's exports now (after a deploy, so
that the first build, which serialises every record, is not waited for)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from registry.namespaces.export_build import build_current_exports


class Command(BaseCommand):
    help = "Build the exports (registry.xml, the CSVs) of the current generation and store them."

    def handle(self, *args, **options):
        started = time.monotonic()
        built = build_current_exports()
        if built is None:
            self.stdout.write("Another process is building the exports; it builds the "
                              "current generation after its own.")
            return
        self.stdout.write(f"Exports of generation {built.key} stored "
                          f"({time.monotonic() - started:.1f} s).")
