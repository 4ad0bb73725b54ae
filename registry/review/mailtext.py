"""Plain text of mail, both ways: wrapping what we send for the list, and reading
what people send (format=flowed, HTML-only mail, quotes and signatures).

No Django here: these are rules on strings, tested table-driven."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

WIDTH = 72

# --- outgoing --------------------------------------------------------------


def in_sentence(label: str) -> str:
    """A label (a state, a button) inside a sentence: its first letter in lower case,
    unless its first word is a name written in capitals ("IANA", "IESG"): "Ready for
    IANA to register" becomes "ready for IANA to register", never "ready for iana"."""
    first = label.split(" ", 1)[0]
    if not first or (len(first) > 1 and first.isupper()):
        return label
    return label[0].lower() + label[1:]


# A tag of HTML lxml could not read; it stops at the next "<", so "<" repeated with no
# ">" is read once (linear), not rescanned to the end from each one.
_TAG = re.compile(r"<[^<>]*>")

def wrap_lines(text: str, width: int = WIDTH) -> str:
    """Wrap each over-long line of prose at ``width`` for the list's readers.

    Line breaks the writer made are kept (no reflow); indented lines (preformatted
    text, ABNF), quoted lines and lines without a space to break at (URLs) are kept
    as they are."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width or line[:1] in (" ", "\t", ">") or " " not in line.strip():
            out.append(line)
            continue
        out.extend(textwrap.wrap(line, width=width, break_long_words=False,
                                 break_on_hyphens=False) or [""])
    return "\n".join(out)


def wrap_except(text: str, verbatim: dict[str, str], width: int = WIDTH) -> str:
    """Wrap ``text`` whose placeholders (keys of ``verbatim``) stand alone on their
    lines, then put back each placeholder's text exactly as given."""
    wrapped = wrap_lines(text, width)
    for token, original in verbatim.items():
        wrapped = wrapped.replace(token, original.rstrip("\n"))
    return wrapped


# --- incoming --------------------------------------------------------------


def unflow(text: str, *, delsp: bool = False) -> str:
    """Undo format=flowed (RFC 3676): join soft line breaks (a line ending in a
    space), keeping quote depth and the signature separator."""
    out: list[str] = []
    # The soft-broken lines of the paragraph being joined, kept as a list and joined
    # once: adding each line to a growing string would be quadratic.
    pending: list[str] = []
    pending_depth = -1
    for raw in text.split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        line = raw[depth:]
        if line.startswith(" "):
            line = line[1:]  # space-stuffing
        flowed = line.endswith(" ") and line != "-- "
        if pending and depth == pending_depth:
            line = "".join(pending) + line if not flowed else line
        elif pending:
            out.append(">" * pending_depth + (" " if pending_depth else "")
                       + "".join(pending).rstrip())
            pending = []
        if flowed:
            if not pending:
                pending_depth = depth
            pending.append(line[:-1] if delsp else line)
            continue
        pending = []
        out.append(">" * depth + (" " if depth and line else "") + line)
    if pending:
        out.append(">" * pending_depth + (" " if pending_depth else "")
                   + "".join(pending).rstrip())
    return "\n".join(out)


# Elements that stand apart as paragraphs, and those that only start a new line.
_PARAGRAPH_TAGS = {"p", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "hr",
                   "blockquote", "dl"}
_LINE_TAGS = {"div", "br", "tr", "li", "section", "article", "header", "footer", "address",
              "dd", "dt"}
_SKIP_TAGS = {"script", "style", "head", "title", "meta", "noscript", "template"}


def html_to_text(html: str) -> str:
    """HTML-only mail reduced to plain text: blocks become lines, ``<blockquote>``
    becomes ``> `` lines (so quotes fold like plain-text ones), links keep their
    address, everything else is its text."""
    import lxml.html
    from lxml import etree

    html = html.strip()
    if not html:
        return ""
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return _TAG.sub("", html)

    def walk(element, out: list[str]) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.lower()
        if tag in _SKIP_TAGS or not isinstance(element.tag, str):
            if element.tail:
                out.append(element.tail)
            return
        gap = _PARA if tag in _PARAGRAPH_TAGS else _LINE if tag in _LINE_TAGS else ""
        if tag == "br":
            out.append(_BREAK)
            gap = ""
        out.append(gap)
        if tag == "li":
            out.append("- ")
        if tag == "blockquote":
            inner: list[str] = []
            inner.append(element.text or "")
            for child in element:
                walk(child, inner)
            text = _squeeze(_breaks("".join(inner)))
            out.append("\n".join("> " + line if line else ">" for line in text.split("\n")))
        else:
            if element.text:
                out.append(element.text)
            for child in element:
                walk(child, out)
            href = element.get("href", "") if tag == "a" else ""
            if href.startswith(("http://", "https://")) and href not in (element.text_content()
                                                                          or ""):
                out.append(f" <{href}>")
        out.append(gap)
        if element.tail:
            out.append(element.tail)

    parts: list[str] = []
    body = root.find("body")
    walk(body if body is not None else root, parts)
    return _squeeze(_breaks("".join(parts)))


# Markers for where lines break, resolved once the whole text is known, so that the
# ends and starts of neighbouring blocks make one break, not one each.
_PARA, _LINE, _BREAK = "\x02", "\x01", "\x03"
_MARKERS = re.compile(r"[\x01\x02\x03][\x01\x02\x03\s]*")


def _breaks(text: str) -> str:
    def resolve(match: re.Match) -> str:
        run = match.group(0)
        count = run.count(_BREAK) + (1 if _LINE in run else 0)
        return "\n" * max(2 if _PARA in run else 0, count, 1)

    return _MARKERS.sub(resolve, text)


def _squeeze(text: str) -> str:
    """Collapse HTML whitespace: spaces within lines, at most one blank line."""
    text = text.replace("\r", "").replace("\xa0", " ")
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()


@dataclass(frozen=True)
class Segment:
    """A run of a message's lines: ``text`` (what the sender wrote), ``quote``
    (what they quoted) or ``signature`` (their signature, or the list's footer)."""

    kind: str
    text: str


_ATTRIBUTION = re.compile(
    r"(wrote|writes|a écrit|schrieb|escribió|scritto|schreef|skrev|napisał)\s*:\s*$",
    re.IGNORECASE)
_ON_DATE = re.compile(r"^(On|Le|Am|El|Il|Op|Den|W dniu)\s", re.IGNORECASE)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*(Original Message|Forwarded message|Ursprüngliche "
                       r"Nachricht|Message d'origine)\s*-{2,}\s*$", re.IGNORECASE)
_HEADER_LINE = re.compile(r"^\*?(From|De|Von|Van)\s*:\*?\s+\S", re.IGNORECASE)
_SENT_LINE = re.compile(r"^\*?(Sent|Date|Envoyé|Gesendet|Verzonden)\s*:\*?\s+\S", re.IGNORECASE)
_RULE = re.compile(r"^\s*_{10,}\s*$")
_LIST_FOOTER = re.compile(r"mailing list|listinfo|mailman|unsubscribe", re.IGNORECASE)


def split_quoted(text: str) -> list[Segment]:
    """Cut a mail body into segments, so quotes and signatures can be folded.

    Recognised: ``>`` quoting (inline or at the bottom) with its attribution line
    ("On ... wrote:", also wrapped over two lines, and its usual translations);
    Outlook's top-posting shapes ("-----Original Message-----", or a rule and a
    From:/Sent: header block: everything after is quoted); the ``-- `` signature
    separator; a list footer after a rule of underscores."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kinds = ["text"] * len(lines)
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if _ORIGINAL.match(line) or _is_outlook_header(lines, i):
            start = i - 1 if i > 0 and _RULE.match(lines[i - 1]) else i
            for j in range(start, n):
                kinds[j] = "quote"
            break
        if _RULE.match(line) and any(_LIST_FOOTER.search(lines[j])
                                     for j in range(i + 1, min(n, i + 5))):
            for j in range(i, n):
                kinds[j] = "signature"
            break
        if line in ("-- ", "--") and i > 0:
            end = i + 1
            while end < n and not lines[end].startswith(">"):
                end += 1
            for j in range(i, end):
                kinds[j] = "signature"
            i = end
            continue
        if stripped.startswith(">"):
            kinds[i] = "quote"
            _claim_attribution(lines, kinds, i)
        i += 1
    # Blank lines between two quoted lines belong to the quote.
    for i in range(1, n - 1):
        if not lines[i].strip() and kinds[i] == "text":
            before = next((kinds[j] for j in range(i - 1, -1, -1) if lines[j].strip()), None)
            after = next((kinds[j] for j in range(i + 1, n) if lines[j].strip()), None)
            if before == after == "quote":
                kinds[i] = "quote"
    return _runs(lines, kinds)


def _is_outlook_header(lines: list[str], i: int) -> bool:
    """A "From: ..." line followed within two lines by "Sent:"/"Date:", at the start
    of a line after a rule or a blank line: the top of an Outlook-style quote."""
    if not _HEADER_LINE.match(lines[i]):
        return False
    if i > 0 and lines[i - 1].strip() and not _RULE.match(lines[i - 1]):
        return False
    return any(_SENT_LINE.match(lines[j]) for j in range(i + 1, min(len(lines), i + 3)))


def _claim_attribution(lines: list[str], kinds: list[str], i: int) -> None:
    """Mark the "On ... wrote:" line(s) just above the quoted line ``i`` as quote."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or kinds[j] != "text":
        return
    if _ATTRIBUTION.search(lines[j]):
        kinds[j] = "quote"
        if j > 0 and _ON_DATE.match(lines[j - 1]) and not _ON_DATE.match(lines[j]):
            kinds[j - 1] = "quote"


def _runs(lines: list[str], kinds: list[str]) -> list[Segment]:
    segments: list[Segment] = []
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or kinds[i] != kinds[start]:
            chunk = "\n".join(lines[start:i]).strip("\n")
            if chunk.strip():
                if segments and segments[-1].kind == kinds[start]:
                    chunk = segments.pop().text + "\n\n" + chunk
                segments.append(Segment(kinds[start], chunk.rstrip()))
            start = i
    return segments
