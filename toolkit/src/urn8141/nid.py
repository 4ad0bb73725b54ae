"""Rules for Namespace Identifiers: RFC 8141 sections 2.1, 5.1 and 5.2.

Syntax (section 2): ``NID = (alphanum) 0*30(ldh) (alphanum)``, ASCII only.
NIDs compare case-insensitively (section 2.1), so every comparison here goes
through :func:`nid_key`.

Policy for a *formal* NID (section 5.1): never already registered, not
starting with "urn-" (reserved for informal namespaces), more than two
characters, not starting with ALPHA ALPHA "-" (country codes; which also covers
"xn--"), not starting with "X-" (RFC 3406 experimental namespaces).

An *informal* NID (section 5.2) is ``"urn-" Number`` with no leading zero,
assigned by the registry, never chosen by the registrant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

NID_MAX_LENGTH = 32

_NID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]")
_INFORMAL_RE = re.compile(r"(?i:urn)-([1-9][0-9]*)")
_COUNTRY_PREFIX_RE = re.compile(r"[A-Za-z]{2}-")
_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")

# Problem codes, exactly as other code and the tests name them.
SYNTAX = "syntax"
TOO_SHORT = "too_short"
RESERVED_URN_PREFIX = "reserved_urn_prefix"
RESERVED_EXPERIMENTAL_PREFIX = "reserved_experimental_prefix"
RESERVED_COUNTRY_CODE_PREFIX = "reserved_country_code_prefix"
ALREADY_REGISTERED = "already_registered"
# Advisory warnings (section 5.1: "applicants and reviewers ... should be aware")
# are the business of urn8141.confusion.


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a NID is not acceptable (or, from advise_formal_nid, a warning):
    which rule (``code``, RFC 8141 ``section``), and for a warning what it
    ``matched`` and a ``link`` to that."""

    code: str
    message: str
    section: str = ""
    matched: str = ""
    link: str = ""

    @property
    def rule_link(self) -> str:
        return f"https://www.rfc-editor.org/rfc/rfc8141#section-{self.section}" \
            if self.section else ""

    def __str__(self) -> str:
        where = f" (RFC 8141 section {self.section})" if self.section else ""
        return f"{self.message}{where}"


def nid_key(nid: str) -> str:
    """The case-folded form under which NIDs are compared and stored uniquely."""
    return nid.lower()


def is_informal(nid: str) -> bool:
    """Whether ``nid`` has the syntax of an informal NID (``urn-<n>``)."""
    return len(nid) <= NID_MAX_LENGTH and _INFORMAL_RE.fullmatch(nid) is not None


def informal_number(nid: str) -> int | None:
    """The number of an informal NID (``urn-7`` -> 7), or None."""
    m = _INFORMAL_RE.fullmatch(nid) if len(nid) <= NID_MAX_LENGTH else None
    return int(m.group(1)) if m else None


def informal_nid(number: int) -> str:
    """The informal NID for ``number`` (7 -> ``urn-7``)."""
    if number < 1:
        raise ValueError("informal NID numbers are positive integers (section 5.2)")
    nid = f"urn-{number}"
    if len(nid) > NID_MAX_LENGTH:
        raise ValueError("that number would make the NID longer than 32 characters")
    return nid


def _syntax_problems(nid: str) -> list[Problem]:
    if not isinstance(nid, str) or not nid:
        return [Problem(SYNTAX, "The NID is empty.", "2")]
    if _NID_RE.fullmatch(nid):
        return []
    for i, ch in enumerate(nid):
        if ch not in _ALLOWED:
            what = f"U+{ord(ch):04X}" if ord(ch) > 0x7E or ord(ch) < 0x21 else repr(ch)
            extra = " Characters outside ASCII are not permitted in NIDs." if ord(ch) > 0x7F else ""
            return [
                Problem(
                    SYNTAX,
                    f"The character {what} at position {i + 1} is not allowed: "
                    f"a NID has only ASCII letters, digits and hyphens.{extra}",
                    "2.1",
                )
            ]
    if len(nid) > NID_MAX_LENGTH:
        return [Problem(SYNTAX, f"The NID has {len(nid)} characters; at most 32 are allowed.", "2")]
    if len(nid) < 2:
        return [Problem(SYNTAX, "A NID has at least two characters.", "2")]
    if nid.startswith("-"):
        return [Problem(SYNTAX, "A NID cannot start with a hyphen.", "2")]
    return [Problem(SYNTAX, "A NID cannot end with a hyphen.", "2")]


def _registered_problem(nid: str, registered: Iterable[str]) -> list[Problem]:
    key = nid_key(nid)
    for other in registered:
        if nid_key(other) == key:
            return [
                Problem(
                    ALREADY_REGISTERED,
                    f'"{other}" is already registered; NIDs compare case-insensitively '
                    "and are never reassigned.",
                    "5.1",
                )
            ]
    return []


def check_formal_nid(nid: str, registered: Iterable[str] = ()) -> list[Problem]:
    """Every reason ``nid`` cannot be registered as a formal NID; [] means acceptable."""
    problems = _syntax_problems(nid)
    if not isinstance(nid, str):
        return problems
    lower = nid.lower()
    if len(nid) <= 2:
        problems.append(
            Problem(TOO_SHORT, "A formal NID must be more than two characters long.", "5.1")
        )
    if lower.startswith("urn-"):
        problems.append(
            Problem(
                RESERVED_URN_PREFIX,
                'A formal NID cannot start with "urn-": that prefix is reserved for informal '
                "namespaces, whose NIDs the registry assigns.",
                "5.1",
            )
        )
    if lower.startswith("x-"):
        problems.append(
            Problem(
                RESERVED_EXPERIMENTAL_PREFIX,
                'A formal NID cannot start with "X-", the prefix of the experimental namespaces '
                "of RFC 3406.",
                "5.1",
            )
        )
    if _COUNTRY_PREFIX_RE.match(nid):
        problems.append(
            Problem(
                RESERVED_COUNTRY_CODE_PREFIX,
                f'A formal NID cannot start with two letters and a hyphen ("{nid[:3]}"): such '
                'prefixes are reserved for country-code namespaces and, like "xn--", for '
                "DNS A-labels.",
                "5.1",
            )
        )
    problems += _registered_problem(nid, registered)
    return problems


def check_informal_nid(nid: str, registered: Iterable[str] = ()) -> list[Problem]:
    """Every reason ``nid`` is not an acceptable informal NID; [] means acceptable."""
    if not isinstance(nid, str) or not is_informal(nid):
        return _syntax_problems(nid) or [
            Problem(
                SYNTAX,
                'An informal NID is "urn-" followed by a number without leading zeros '
                '(e.g. "urn-7"), at most 32 characters in all.',
                "5.2",
            )
        ]
    return _registered_problem(nid, registered)
