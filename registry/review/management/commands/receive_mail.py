"""Take in one RFC 5322 message from standard input (or from files), the way an
MTA pipes mail to a program:

    urn-registry: "|/srv/registry/.venv/bin/python /srv/registry/manage.py receive_mail"

The message goes on its request's timeline, or is recorded for staff with the
reason it was not (malformed and oversized mail included: it waits in the staff
quarantine); it is never lost. Exit status: 0 when the message was kept (whatever
became of it), 65 (EX_DATAERR) for an empty input or one larger than the command
reads, 75 (EX_TEMPFAIL) when it could not be stored (the database is down), so the
MTA tries again later.

``--recipient ADDRESS`` (repeatable) passes the envelope recipient, as Postfix's
``${recipient}`` or Exim's ``$local_part@$domain``: the reply and return addresses
that attribute a reply or a bounce are read from it as well as from the headers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import InterfaceError, OperationalError

EX_DATAERR = 65
EX_TEMPFAIL = 75
MAX_BYTES = 50 * 1024 * 1024


class Command(BaseCommand):
    help = ("Read one mail message on standard input (or each FILE) and add it to its "
            "request's timeline, or record it for staff.")

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", metavar="FILE",
                            help="messages to read instead of standard input (.eml)")
        parser.add_argument("--recipient", action="append", default=[], metavar="ADDRESS",
                            help="the envelope recipient the MTA delivered the message to")

    def handle(self, *args, files: list[str], recipient: list[str], **options) -> None:
        from registry.review.actions import inbound_mail_receive

        sources: list[tuple[str, Path | None]] = (
            [(name, Path(name)) for name in files] or [("standard input", None)])
        for name, path in sources:
            try:
                raw = (path.read_bytes() if path is not None
                       else sys.stdin.buffer.read(MAX_BYTES + 1))
            except OSError as exc:
                raise CommandError(f"{name}: {exc.strerror or exc}", returncode=EX_DATAERR) \
                    from exc
            if not raw.strip():
                raise CommandError(f"{name}: no message (the input is empty).",
                                   returncode=EX_DATAERR)
            if len(raw) > MAX_BYTES:
                raise CommandError(f"{name}: the message is larger than {MAX_BYTES} bytes.",
                                   returncode=EX_DATAERR)
            try:
                record = inbound_mail_receive(raw=raw, source="pipe",
                                              envelope_recipients=tuple(recipient))
            except (OperationalError, InterfaceError) as exc:
                raise CommandError(f"{name}: could not store the message ({exc}); try again "
                                   "later.", returncode=EX_TEMPFAIL) from exc
            where = f" on request #{record.registration_id}" if record.registration_id else ""
            self.stdout.write(f"{name}: {record.message_id} {record.get_outcome_display()}"
                              f"{where}" + (f" ({record.reason})" if record.reason else ""))
