"""The registry's own addresses for mail coming back, each carrying an HMAC under
the site's secret, so that only the one who was given an address can use it:

- a **reply address** per person and request (``reply+<request>.<person>.<version>.
  <mac>@MAIL_REPLY_DOMAIN``), the Reply-To of every message sent to that person: a
  reply to it is theirs, as reply-by-email works in Discourse and GitHub. The
  version is the person's ``ReplyKey``; raising it revokes every address given before.
- a **return address** per message (VERP: ``bounce+<message>.<mac>@...``), the
  envelope sender of each message: a delivery failure report is believed only when
  it comes back to it, never because it quotes a Message-ID (those are public).

The MTA delivers both forms to ``receive_mail`` (docs/operations.md). Addresses
are lower-case, so an MTA that folds case changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings
from django.utils.crypto import constant_time_compare, salted_hmac

_MAC_CHARS = 24  # 96 bits of HMAC-SHA256, as hex
_REPLY_SALT = "registry.review.mailaddress.reply"
_BOUNCE_SALT = "registry.review.mailaddress.bounce"


def _mac(salt: str, payload: str) -> str:
    return salted_hmac(salt, payload, algorithm="sha256").hexdigest()[:_MAC_CHARS]


def _domain() -> str:
    return settings.MAIL_REPLY_DOMAIN.lower()


@dataclass(frozen=True)
class ReplyToken:
    """Who was given a reply address, for which request, under which key version."""

    registration_pk: int
    user_pk: int
    version: int


def reply_address(*, registration_pk: int, user_pk: int, version: int) -> str:
    payload = f"{registration_pk}.{user_pk}.{version}"
    return f"reply+{payload}.{_mac(_REPLY_SALT, payload)}@{_domain()}"


def return_address(message_pk: int) -> str:
    payload = str(message_pk)
    return f"bounce+{payload}.{_mac(_BOUNCE_SALT, payload)}@{_domain()}"


_MAC = "([0-9a-f]{" + str(_MAC_CHARS) + "})"
_REPLY = re.compile(r"reply\+(\d{1,12})\.(\d{1,12})\.(\d{1,9})\." + _MAC + r"@(.{1,255})")
_RETURN = re.compile(r"bounce\+(\d{1,12})\." + _MAC + r"@(.{1,255})")


def read_reply_address(address: str) -> ReplyToken | None:
    """The token of a genuine reply address (its HMAC checked); None for anything else.
    Whether its version is still current is the caller's question (a database read)."""
    match = _REPLY.fullmatch(address.strip().lower())
    if match is None or match.group(5) != _domain():
        return None
    payload = ".".join(match.group(1, 2, 3))
    if not constant_time_compare(match.group(4), _mac(_REPLY_SALT, payload)):
        return None
    return ReplyToken(int(match.group(1)), int(match.group(2)), int(match.group(3)))


def read_return_address(address: str) -> int | None:
    """The outbox row a genuine return address was made for; None for anything else."""
    match = _RETURN.fullmatch(address.strip().lower())
    if match is None or match.group(3) != _domain():
        return None
    if not constant_time_compare(match.group(2), _mac(_BOUNCE_SALT, match.group(1))):
        return None
    return int(match.group(1))
