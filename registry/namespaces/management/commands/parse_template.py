"""Read registration templates from text files and print what was read.

    python manage.py parse_template [--json] FILE...

Each FILE is a template in the RFC 8141 Appendix A, RFC 3406 or RFC 2611
layout, as plain RFC text, markdown, kramdown or xml2rfc XML
(registry.templates_text). With --json, prints one JSON list with an object
per file: file, nid, version, date (ISO 8601 when the text gives a real date,
else as written), registrant_organisation, contact_email, fields (RFC 8141
field -> text), unmapped, problems. A file that cannot be read at all (missing,
empty, binary, too large) gets its reason in ``problems`` and the command
exits with status 1 after printing the others.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry.templates_text import MAX_BYTES, TemplateTextError, parse_template


def read_file(path: Path) -> dict:
    """One file's result as the JSON object the command prints."""
    try:
        if not path.is_file():
            raise TemplateTextError("No such file.")
        if path.stat().st_size > MAX_BYTES:
            raise TemplateTextError(f"The file is larger than {MAX_BYTES // 1000} kB; "
                                    "give only the registration template.")
        return parse_template(path.read_bytes()).as_json(str(path))
    except (TemplateTextError, OSError) as exc:
        return {"file": str(path), "nid": "", "version": "", "date": "",
                "registrant_organisation": "", "contact_email": "", "fields": {},
                "unmapped": [], "problems": [str(exc)], "error": True}


class Command(BaseCommand):
    help = "Read registration templates from text files (RFC 8141, 3406 or 2611 layout)."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def handle(self, *args, files, **options):
        results = [read_file(Path(name)) for name in files]
        failed = [r["file"] for r in results if r.pop("error", False)]
        if options["json"]:
            self.stdout.write(json.dumps(results, indent=2, ensure_ascii=False))
        else:
            for result in results:
                self.stdout.write(f"{result['file']}: NID {result['nid'] or '?'}, version "
                                  f"{result['version'] or '?'}, date {result['date'] or '?'}, "
                                  f"{result['registrant_organisation'] or '?'} "
                                  f"<{result['contact_email'] or '?'}>")
                for name in result["fields"]:
                    self.stdout.write(f"  {name}: {len(result['fields'][name])} characters")
                for part in result["unmapped"]:
                    label = part["label"] or "(before the first field)"
                    self.stdout.write(f"  not mapped: {label}")
                for problem in result["problems"]:
                    self.stdout.write(f"  problem: {problem}")
        if failed:
            raise CommandError(f"Could not read {len(failed)} of {len(results)} files: "
                               + ", ".join(failed))
