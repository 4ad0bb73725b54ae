"""Write the states and transitions tables of docs/workflow.md from the workflow's tables.

    python manage.py docs_tables [--check]

``--check`` changes nothing and fails, naming each table, when the document differs from
the code (see registry/review/workflow_docs.py)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from registry.review.workflow_docs import MarkersMissing, stale


class Command(BaseCommand):
    help = "Write docs/workflow.md's states and transitions tables from the code."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true",
                            help="fail if a table differs from the code; write nothing")

    def handle(self, *args, check: bool = False, **options):
        try:
            differing = stale(settings.BASE_DIR, write=not check)
        except MarkersMissing as exc:
            raise CommandError(str(exc)) from None
        if check and differing:
            raise CommandError("Not what the code says (run python manage.py docs_tables): "
                               + "; ".join(differing) + ".")
        if differing:
            self.stdout.write("Rewrote " + "; ".join(differing) + ".")
        elif not check:
            self.stdout.write("The tables already say what the code says.")
