"""URN syntax (RFC 8141 section 2) and URN-equivalence (section 3).

The grammar, with the prose of sections 2.3.1-2.3.3 applied::

    namestring    = assigned-name [ rq-components ] [ "#" f-component ]
    assigned-name = "urn" ":" NID ":" NSS
    NID           = (alphanum) 0*30(ldh) (alphanum)
    ldh           = alphanum / "-"
    NSS           = pchar *(pchar / "/")
    rq-components = [ "?+" r-component ] [ "?=" q-component ]
    r-component   = pchar *( pchar / "/" / "?" )   ; ends at "?=" or "#"
    q-component   = pchar *( pchar / "/" / "?" )   ; ends at "#"
    f-component   = fragment                       ; RFC 3986: *( pchar / "/" / "?" )

The r-component is introduced by "?+" (section 2.3.1 and the published RFC's
ABNF); a "?" after the NSS that is followed by neither "+" nor "=" is a syntax
error (section 2, "SHOULD be treated as a syntax error by URN-specific parsers").

Valid input takes one compiled regular expression (the fast path); only input
that fails it is walked character by character, to say where and why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

# RFC 3986: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"
_PCHAR_SET = "A-Za-z0-9\\-._~!$&'()*+,;=:@"
_PCHAR_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@"
)
_HEX = frozenset("0123456789abcdefABCDEF")

# Percent signs are let through the character classes and checked by _BAD_PCT,
# which is much faster than an alternation per character. The components' runs are
# possessive ("*+"): what may follow a run ("?+", "?=", "#" or the end) cannot
# continue it, so giving characters back could never lead to a match, and a text
# that fails (a bad character at the end of a long NSS) fails without walking back
# over the NSS one character at a time (ten times faster there; the same groups).
_URN_RE = re.compile(
    r"(?i:urn):"
    r"([A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]):"
    rf"([{_PCHAR_SET}%][{_PCHAR_SET}%/]*+)"
    rf"(?:\?\+([{_PCHAR_SET}%](?:[{_PCHAR_SET}%/]|\?(?!=))*+))?"
    rf"(?:\?=([{_PCHAR_SET}%][{_PCHAR_SET}%/?]*+))?"
    rf"(?:#([{_PCHAR_SET}%/?]*+))?"
)
_fullmatch = _URN_RE.fullmatch
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PCT = re.compile(r"%[0-9a-fA-F]{2}")
_plain_run = re.compile(f"[{_PCHAR_SET}]*").match
_ldh_run = re.compile("[A-Za-z0-9-]*").match


def _run_end(run: Callable[[str, int], re.Match[str] | None], text: str, i: int) -> int:
    m = run(text, i)  # a run of "*" always matches, if only the empty text
    return m.end() if m else i


class URNSyntaxError(ValueError):
    """The text is not a URN. ``offset`` is the index of the first bad character."""

    __slots__ = ("reason", "offset", "text")  # set faster than in the instance's dict

    def __init__(self, message: str, offset: int, text: str = "") -> None:
        ValueError.__init__(self, f"{message} (at character {offset + 1})")
        self.reason = message
        self.offset = offset
        self.text = text


class URN(NamedTuple):
    """A parsed URN. Components that are absent are ``None``; the f-component
    may be present and empty (``""``), which RFC 3986's fragment allows.

    A named tuple rather than a frozen dataclass: as immutable, and built from the
    match's groups in one C call (a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__`` and cost more than the match itself)."""

    nid: str
    nss: str
    r_component: str | None = None
    q_component: str | None = None
    f_component: str | None = None

    def __str__(self) -> str:
        parts = ["urn:", self.nid, ":", self.nss]
        if self.r_component is not None:
            parts += ["?+", self.r_component]
        if self.q_component is not None:
            parts += ["?=", self.q_component]
        if self.f_component is not None:
            parts += ["#", self.f_component]
        return "".join(parts)

    @property
    def assigned_name(self) -> str:
        """``urn:NID:NSS`` as written (scheme in lower case)."""
        return f"urn:{self.nid}:{self.nss}"

    def normal_form(self) -> str:
        """The section 3.1 equivalence key of this URN."""
        return _normal(self.nid, self.nss)


_new = tuple.__new__


def _normal(nid: str, nss: str) -> str:
    if "%" in nss:
        nss = _PCT.sub(lambda m: m.group(0).upper(), nss)
    return f"urn:{nid.lower()}:{nss}"


def parse(text: str) -> URN:
    """Parse ``text`` as a URN (section 2), or raise :class:`URNSyntaxError`."""
    try:
        m = _fullmatch(text)
    except TypeError:  # not text (cheaper to catch than to test each time)
        raise URNSyntaxError(f"a URN is text, not {type(text).__name__}", 0) from None
    if m is None or ("%" in text and _BAD_PCT.search(text)):
        raise _diagnose(text)
    return _new(URN, m.groups())


def normalize(text: str) -> str:
    """The URN-equivalence form of section 3.1: "urn" and the NID in lower case,
    percent-encoding hex digits in the NSS in upper case, the r-, q- and
    f-components dropped. Nothing is percent-decoded."""
    if isinstance(text, str):
        m = _fullmatch(text)
        if m is not None and not ("%" in text and _BAD_PCT.search(text)):
            return _normal(m.group(1), m.group(2))
    return parse(text).normal_form()  # raises with a diagnosis


def equivalent(a: str, b: str) -> bool:
    """Whether two URNs are URN-equivalent (section 3.1)."""
    return normalize(a) == normalize(b)


# --- diagnosis: only for text the fast path rejected ------------------------


def _describe(ch: str) -> str:
    code = ord(ch)
    if code > 0x7F:
        encoded = "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        return (
            f"the character {ch!r} (U+{code:04X}) is outside ASCII; "
            f"percent-encode it as {encoded} (RFC 8141 section 2)"
        )
    if code < 0x20 or code == 0x7F:
        return f"the control character U+{code:04X} is not allowed in a URN"
    if ch == " ":
        return "a space is not allowed in a URN; percent-encode it as %20"
    return f"the character {ch!r} is not allowed here"


def _scan(text: str, i: int, extra: str, what: str, *, first: bool, q_ends: bool = False) -> int:
    """Walk one component from ``i`` and return the index where it stops.

    A component holds pchar and the ``extra`` characters; it ends at "#", at a
    "?" that ``extra`` does not allow, or (``q_ends``: the r-component) at "?=".
    ``first`` demands a pchar as the first character (the ABNF's leading pchar)."""
    start = i
    n = len(text)
    while i < n:
        i = _run_end(_plain_run, text, i)  # the pchar other than "%", at C speed
        if i == n:
            break
        ch = text[i]
        if ch == "#":
            break
        if ch == "?" and ("?" not in extra or (q_ends and text[i + 1 : i + 2] == "=")):
            break
        if ch == "%":
            if not (text[i + 1 : i + 2] in _HEX and text[i + 2 : i + 3] in _HEX):
                raise URNSyntaxError(
                    f'"%" must be followed by two hexadecimal digits (in the {what})', i, text
                )
            i += 3
            continue
        if ch in _PCHAR_CHARS:
            i += 1
            continue
        if ch in extra:
            if i == start and first:
                raise URNSyntaxError(f"the {what} cannot start with {ch!r}", i, text)
            i += 1
            continue
        raise URNSyntaxError(f"{_describe(ch)} (in the {what})", i, text)
    if first and i == start:
        raise URNSyntaxError(f"the {what} is empty", i, text)
    return i


def _diagnose(text: str) -> URNSyntaxError:
    try:
        _walk(text)
    except URNSyntaxError as exc:
        return exc
    # _walk and _URN_RE describe one grammar; reaching here is a bug, and the
    # property tests make sure it is never reached.
    return URNSyntaxError("not a URN", 0, text)


def _walk(text: str) -> None:
    n = len(text)
    if n == 0:
        raise URNSyntaxError("empty: a URN starts with 'urn:'", 0, text)
    if text[:4].lower() != "urn:":
        for k, expected in enumerate("urn:"):
            if k >= n or text[k].lower() != expected:
                break
        raise URNSyntaxError('a URN starts with "urn:"', min(k, n), text)
    # NID
    i = _run_end(_ldh_run, text, 4)
    if i - 4 > 32:
        raise URNSyntaxError("the NID is longer than 32 characters (section 2)", 4 + 32, text)
    if i < n and text[i] != ":":
        ch = text[i]
        if ch in "?#/":
            raise URNSyntaxError(
                f"the NID ends at {ch!r} without the ':' that separates it from the NSS",
                i,
                text,
            )
        raise URNSyntaxError(
            f"{_describe(ch)}: a NID has only letters, digits and hyphens (section 2.1)",
            i,
            text,
        )
    nid = text[4:i]
    if not nid:
        raise URNSyntaxError("the NID is empty", 4, text)
    if i == n:
        raise URNSyntaxError("no ':' after the NID: a URN is urn:NID:NSS", n, text)
    if len(nid) < 2:
        raise URNSyntaxError("a NID has at least two characters (section 2)", 4, text)
    if nid[0] == "-":
        raise URNSyntaxError("a NID cannot start with '-' (section 2)", 4, text)
    if nid[-1] == "-":
        raise URNSyntaxError("a NID cannot end with '-' (section 2, Appendix B)", i - 1, text)
    # NSS
    i = _scan(text, i + 1, "/", "NSS", first=True)
    if text.startswith("?+", i):
        i = _scan(text, i + 2, "/?", "r-component", first=True, q_ends=True)
    if text.startswith("?=", i):
        i = _scan(text, i + 2, "/?", "q-component", first=True)
    elif i < n and text[i] == "?":
        raise URNSyntaxError(
            '"?" after the NSS must begin "?+" (r-component) or "?=" (q-component); '
            "percent-encode a literal question mark as %3F",
            i,
            text,
        )
    if i < n and text[i] == "#":
        i = _scan(text, i + 1, "/?", "f-component", first=False)
    if i < n:
        raise URNSyntaxError(_describe(text[i]), i, text)
