"""Inbound mail from an IMAP mailbox, for sites with no MTA pipe (off by default).

Each unread message is fetched without marking it read, taken in by
``actions.inbound_mail_receive`` (which keeps it whatever becomes of it), and
only then flagged ``\\Seen``: a crash in between means the message is read again
next time, and a second reading of a placed message is recorded as a duplicate,
never added twice. A message that cannot be taken in for a reason of its own (not
the database being away) is flagged ``$RegistryPoison`` and left for staff in the
mailbox; the poll goes on to the next, and never fetches it again."""

from __future__ import annotations

import contextlib
import imaplib
import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError

logger = logging.getLogger(__name__)

POISON = "$RegistryPoison"


def connect() -> imaplib.IMAP4:
    if settings.MAIL_IMAP_SSL:
        return imaplib.IMAP4_SSL(settings.MAIL_IMAP_HOST, settings.MAIL_IMAP_PORT, timeout=60)
    connection = imaplib.IMAP4(settings.MAIL_IMAP_HOST, settings.MAIL_IMAP_PORT, timeout=60)
    connection.starttls()
    return connection


def poll_mailbox(limit: int = 200) -> int:
    """Take in up to ``limit`` unread messages; returns how many were taken in."""
    from registry.review.actions import inbound_mail_receive

    if not settings.MAIL_IMAP_HOST:
        return 0
    connection = connect()
    taken = 0
    try:
        connection.login(settings.MAIL_IMAP_USER, settings.MAIL_IMAP_PASSWORD)
        connection.select(settings.MAIL_IMAP_FOLDER)
        status, data = connection.uid("SEARCH", "UNSEEN", "UNKEYWORD", POISON)
        if status != "OK":
            raise imaplib.IMAP4.error(f"SEARCH answered {status}")
        for uid in (data[0] or b"").decode("ascii").split()[:limit]:
            status, parts = connection.uid("FETCH", uid, "(BODY.PEEK[])")
            raw = next((part[1] for part in parts or [] if isinstance(part, tuple)), None)
            if status != "OK" or raw is None:
                logger.warning("IMAP message %s could not be fetched: %s", uid, status)
                continue
            try:
                inbound_mail_receive(raw=raw, source="imap")
            except (OperationalError, InterfaceError):
                raise  # the database is away: stop, read everything again next time
            except Exception:
                logger.exception("IMAP message %s could not be taken in; flagged %s", uid,
                                 POISON)
                connection.uid("STORE", uid, "+FLAGS", f"({POISON})")
                continue
            connection.uid("STORE", uid, "+FLAGS", "(\\Seen)")
            taken += 1
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            connection.logout()
    return taken
