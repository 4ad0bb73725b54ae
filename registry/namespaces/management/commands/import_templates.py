"""Attach registration templates, as text, to the namespaces they register.

    python manage.py import_templates DIR [--dry-run]

Reads every file in DIR (registry.templates_text: RFC 8141, 3406 or 2611
layout; RFC text, markdown, kramdown or XML) and publishes each template as a
version of the namespace its NID names, under the version number the template
gives, oldest first, through ``version_publish``, so an imported namespace
(``isbn``, ``xmpp``, ``3gpp``...) shows its real text and history. Idempotent:
a version already published is left alone, never overwritten. A file that
cannot be read, names no registered NID, has no real date, or would not fit
gets a message on stderr and imports nothing; the command exits with status 1
if any file failed. Parts the reader could not map to an Appendix A field are
kept, under their own labels, in "Additional Information".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from registry.namespaces.actions import RegistryError, version_publish
from registry.namespaces.models import Namespace
from registry.namespaces.template import (
    FIELD_MAX_CHARS,
    SINGLE_LINE_FIELDS,
    TEXT_FIELDS,
    TemplateFields,
)
from registry.templates_text import MAX_BYTES, ParsedTemplate, TemplateTextError, parse_templates
from registry.text_policy import text_problem

IMPORT_NOTE = ("Imported from {source}. The template does not describe its differences from "
               "the prior version.")


@dataclass
class Candidate:
    path: Path
    parsed: ParsedTemplate
    namespace: Namespace
    number: int
    date: dt.date


class Skip(Exception):
    """A file this run does not import; the message says why."""


class NotOurs(Skip):
    """Not a failure: a file that is no template (a README), or the template of a
    namespace this registry does not hold."""


def _values(parsed: ParsedTemplate, source: str, has_prior: bool) -> dict[str, str]:
    values = {name: parsed.fields.get(name, "") for name in TEXT_FIELDS}
    extra = [f"{part['label'] or 'Text before the first field'}:\n{part['text']}"
             for part in parsed.unmapped if part["text"].strip()]
    if extra:
        values["additional_information"] = "\n\n".join(
            x for x in (values["additional_information"], *extra) if x)
    if has_prior and not values["revision_information"].strip():
        values["revision_information"] = IMPORT_NOTE.format(source=source)
    for name in TEXT_FIELDS:
        problem = text_problem(values[name], single_line=name in SINGLE_LINE_FIELDS)
        if problem:
            raise Skip(f"its {name.replace('_', ' ')} cannot be published: {problem}")
        limit = getattr(TemplateFields._meta.get_field(name), "max_length", None) or \
            FIELD_MAX_CHARS
        if len(values[name]) > limit:
            raise Skip(f"its {name.replace('_', ' ')} has {len(values[name])} characters, "
                       f"more than the {limit} a template field holds")
    return values


class Command(BaseCommand):
    help = "Publish registration templates from text files as versions of their namespaces."

    def add_arguments(self, parser):
        parser.add_argument("directory", metavar="DIR")
        parser.add_argument("--dry-run", action="store_true",
                            help="say what would be imported, import nothing")

    def handle(self, *args, directory, dry_run=False, **options):
        root = Path(directory)
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory.")
        failures = 0
        candidates: list[Candidate] = []
        for path in sorted(p for p in root.iterdir() if p.is_file()):
            try:
                templates = self._read(path)
            except Skip as exc:
                failures += 1
                self.stderr.write(f"{path.name}: not imported: {exc}.")
                continue
            # A file may hold several templates (an RFC registering two namespaces):
            # each is a candidate of its own, never merged with the others.
            for n, parsed in enumerate(templates, start=1):
                where = path.name if len(templates) == 1 else f"{path.name} (template {n})"
                try:
                    candidates.append(self._candidate(path, parsed))
                except NotOurs as exc:
                    self.stdout.write(f"{where}: skipped: {exc}.")
                except Skip as exc:
                    failures += 1
                    self.stderr.write(f"{where}: not imported: {exc}.")
        published = present = 0
        for c in sorted(candidates, key=lambda c: (c.namespace.pk, c.number)):
            if c.namespace.versions.filter(number=c.number).exists():
                present += 1
                self.stdout.write(f"{c.path.name}: {c.namespace.nid} version {c.number} is "
                                  "already published; left as it is.")
                continue
            try:
                has_prior = c.namespace.versions.exists()
                values = _values(c.parsed, c.path.name, has_prior)
                if not dry_run:
                    version_publish(namespace=c.namespace, values=values, date=c.date,
                                    actor=None, number=c.number, nid=c.parsed.nid)
            except (Skip, RegistryError) as exc:
                failures += 1
                self.stderr.write(f"{c.path.name}: not imported: {exc}")
                continue
            published += 1
            self.stdout.write(f"{c.path.name}: {'would publish' if dry_run else 'published'} "
                              f"{c.namespace.nid} version {c.number} ({c.date.isoformat()}).")
            for problem in c.parsed.problems:
                self.stdout.write(f"  note: {problem}")
        summary = (f"{published} version{'s' if published != 1 else ''} "
                   f"{'to publish' if dry_run else 'published'}, {present} already present, "
                   f"{failures} file{'s' if failures != 1 else ''} not imported.")
        if failures:
            raise CommandError(summary)
        self.stdout.write(self.style.SUCCESS(summary))

    def _read(self, path: Path) -> list[ParsedTemplate]:
        try:
            if path.stat().st_size > MAX_BYTES:
                raise Skip(f"larger than {MAX_BYTES // 1000} kB")
            return parse_templates(path.read_bytes())
        except TemplateTextError as exc:
            raise Skip(str(exc).rstrip(".")) from None
        except OSError as exc:
            raise Skip(f"cannot be read ({exc.strerror})") from None

    def _candidate(self, path: Path, parsed: ParsedTemplate) -> Candidate:
        if not parsed.layout_found:
            raise NotOurs("not a registration template (none of its labels were found)")
        if not parsed.nid:
            raise Skip("no NID found in its Namespace Identifier part")
        namespace = Namespace.objects.by_nid(parsed.nid).first()
        if namespace is None:
            raise NotOurs(f'"{parsed.nid}" is not a registered NID')
        if namespace.kind != Namespace.Kind.FORMAL:
            raise Skip(f"{namespace.nid} is an informal namespace")
        date = parsed.date_value or namespace.template_date
        if date is None:
            raise Skip(f'no real date in it ("{parsed.date or "none"}"), and the registry '
                       "gives none")
        number = parsed.version_number or 1
        return Candidate(path, parsed, namespace, number, date)
