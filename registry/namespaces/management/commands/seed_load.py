"""``python manage.py seed_load --namespaces 10000 --versions 5``

Fills the registry with N formal namespaces of V versions each, of realistic size
(about 2 KB of template text a version, the same length as a real RFC template),
for the load benchmark (bench/load.py) and for demos of a big registry. The text
is made of plausible words, deterministic for a given --seed, and every version
differs from the one before in its purpose, syntax and revision information.

Writes through ``namespaces_bulk_register`` (multi-row INSERTs, event rows
included, in batches of a transaction each). NIDs are ``<prefix>-<word>-<n>``;
running it again adds only those that are missing."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from registry.namespaces.actions import RegistryError, namespaces_bulk_register
from registry.namespaces.models import Namespace
from registry.namespaces.sample_text import registration, seed_nid

BATCH = 500


class Command(BaseCommand):
    help = "Register N namespaces of V versions of realistic size (load benchmark, demos)."

    def add_arguments(self, parser):
        parser.add_argument("--namespaces", type=int, default=10_000)
        parser.add_argument("--versions", type=int, default=5)
        parser.add_argument("--prefix", default="load",
                            help="NIDs are <prefix>-<word>-<n> (default: load)")
        parser.add_argument("--seed", type=int, default=8141)

    def handle(self, *args, namespaces: int, versions: int, prefix: str, seed: int, **options):
        if namespaces < 0 or not 1 <= versions <= 50:
            raise CommandError("--namespaces must be 0 or more and --versions 1 to 50.")
        started = time.monotonic()
        taken = {nid.lower() for nid in Namespace.objects.values_list("nid", flat=True)}
        missing = [n for n in range(1, namespaces + 1)
                   if seed_nid(prefix, n).lower() not in taken]
        made = 0
        for start in range(0, len(missing), BATCH):
            batch = [registration(prefix, n, versions, seed) for n in missing[start:start + BATCH]]
            try:
                made += namespaces_bulk_register(registrations=batch)
            except RegistryError as exc:
                raise CommandError(str(exc)) from None
            if options["verbosity"] > 1:
                self.stdout.write(f"{made} of {len(missing)}")
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:  # what autovacuum would do on a live database
                cursor.execute("ANALYZE")
        self.stdout.write(
            f"Registered {made} namespaces of {versions} versions "
            f"({namespaces - len(missing)} were there already) "
            f"in {time.monotonic() - started:.0f} s.")
