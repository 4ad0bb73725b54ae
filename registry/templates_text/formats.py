"""From what a registrant pastes or uploads to one list of lines.

Plain RFC text loses its page footers, headers and form feeds; markdown and
kramdown lose their markup; xml2rfc XML (v2 or v3) becomes text. Headings that
the format makes explicit (``## Syntax``, ``<section title="Syntax">``,
``3.4.  Syntax``) are kept as :class:`Line` objects with a level, so the parser
knows where a part starts and how deep it sits.
"""

from __future__ import annotations

import html
import re
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

MAX_BYTES = 1_000_000  # real templates are under 100 kB; whole RFCs under 500 kB


class TemplateTextError(ValueError):
    """Input that cannot be read as a template at all; the message says why."""


@dataclass(frozen=True, slots=True)
class Line:
    text: str  # with its indentation
    heading: int | None = None  # level of an explicit heading, else None

    @property
    def indent(self) -> int:
        return len(self.text) - len(self.text.lstrip(" "))


def decode(data: bytes | str) -> str:
    """Text from bytes: UTF-8 (with or without BOM), else Windows-1252. Refuses
    what is empty, too large or not text, with the reason."""
    if isinstance(data, str):
        if len(data) > MAX_BYTES:
            raise TemplateTextError(f"The template is larger than {MAX_BYTES // 1000} kB; "
                                    "paste only the registration template.")
        text = data
    else:
        if len(data) > MAX_BYTES:
            raise TemplateTextError(f"The file is larger than {MAX_BYTES // 1000} kB; "
                                    "upload only the registration template.")
        if b"\x00" in data[:8192] or data[:4] in (b"%PDF", b"PK\x03\x04") or \
                data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise TemplateTextError("This is not a text file (it looks binary: a PDF, a word "
                                    "processor document, an archive or UTF-16). Save the "
                                    "template as plain text, markdown or XML.")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    text = text.lstrip("\ufeff")
    controls = sum(1 for ch in text[:20_000] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > 20 or "\x00" in text:
        raise TemplateTextError("This does not look like text: it contains control "
                                "characters. Save the template as plain text, markdown or XML.")
    if not text.strip():
        raise TemplateTextError("The template is empty.")
    return text


def detect_format(text: str) -> str:
    """'xml', 'markdown' or 'text'."""
    head = text.lstrip()[:2000]
    if head.startswith("<") and re.search(r"<(t|section|rfc|dl|artwork|\?xml)\b", text):
        return "xml"
    if re.search(r"^(#{1,6}[ \t]+\S|[=-]{3,}[ \t]*$|:[ \t]+\S|>\s|\{:[^{}\n]*\}[ \t]*$|~~~|```)",
                 text, re.MULTILINE):
        return "markdown"
    return "text"


def to_lines(text: str, fmt: str) -> list[Line]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt != "text":  # a form feed only means something in RFC text (a page break)
        text = text.replace(_PAGE_BREAK, "\n")
    if fmt == "xml":
        return xml_lines(text)
    text = "\n".join(_expand_indent(line) for line in text.split("\n"))
    if fmt == "markdown":
        return markdown_lines(text)
    return text_lines(text)


def _expand_indent(line: str) -> str:
    """Tabs in the indentation become spaces (tab stops of 8); text is kept as is."""
    stripped = line.lstrip(" \t")
    lead = line[:len(line) - len(stripped)]
    return lead.expandtabs(8) + stripped.rstrip() if "\t" in lead else line.rstrip()


# -- plain RFC text -----------------------------------------------------------

_FOOTER = re.compile(r"^\S.*\s\[Page \d+\]\s*$|^\s*\[Page \d+\]\s*$")
_HEADER = re.compile(r"^(RFC \d+|Internet[- ]Draft|INTERNET[- ]DRAFT)\b.*\s(19|20)\d\d\s*$")
_NUMBERED = re.compile(r"^((?:[A-Z]\.)?\d+(?:\.\d+)*\.?)\s+(\S.*)$")
_PAGE_BREAK = "\x0c"


def strip_pages(text: str) -> list[str]:
    """The lines of RFC-formatted text without page footers, headers and form
    feeds; a paragraph cut by a page break is joined again."""
    lines = text.replace(_PAGE_BREAK, "\n" + _PAGE_BREAK + "\n").split("\n")
    out: list[str] = []
    breaking = False
    for line in lines:
        if line == _PAGE_BREAK or _FOOTER.match(line) or _HEADER.match(line):
            if not breaking:
                while out and not out[-1].strip():
                    out.pop()
            breaking = True
            continue
        if breaking:
            if not line.strip():
                continue
            previous = out[-1].rstrip() if out else ""
            continues = previous and not previous.endswith((".", ":", ";")) and \
                line.lstrip()[:1].islower()
            if out and not continues:
                out.append("")
            breaking = False
        out.append(line)
    return out


def text_lines(text: str) -> list[Line]:
    lines = []
    for raw in strip_pages(text):
        m = _NUMBERED.match(raw)
        # An RFC section heading starts in column 0: "3.4.  Syntax".
        if m and len(m.group(2)) < 80 and not m.group(2).rstrip().endswith((".", ",", ";")) \
                and len(m.group(2).split()) <= 8:
            level = m.group(1).rstrip(".").count(".") + 1
            lines.append(Line(m.group(2).strip(), heading=level))
        else:
            lines.append(Line(raw))
    return lines


# -- markdown and kramdown ------------------------------------------------------

_ATX = re.compile(r"(#{1,6})[ \t]")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_IAL = re.compile(r"^\s*\{:[^}]*\}\s*$|^\s*\{::[^}]*/\}\s*$|^\s*\{[a-z-]+=[^}]*\}\s*$")
# Linear time: a run that may fail to close stops at the character that opens the
# next attempt ("[^\[\]]", not "[^\]]"), so no text is scanned from each opener.
_HTML_TAG = re.compile(r"</?(?:br|p|b|i|em|strong|span|div|sup|sub|u|small)\b[^<>]*>",
                       re.IGNORECASE)
_LINK_EMPTY = re.compile(r"\[\]\(#([^()]+)\)")
_LINK_ANCHOR = re.compile(r"\[([^\[\]]+)\]\(#[^()]*\)")
_LINK_URL = re.compile(r"\[([^\[\]]+)\]\(([^()\s]+)\)")
_STRONG = re.compile(r"(\*\*|__)(.+?)\1")


def markdown_lines(text: str) -> list[Line]:
    text = drop_between(text, "<!--", "-->")
    raw = text.split("\n")
    lines: list[Line] = []
    fenced = False
    for i, line in enumerate(raw):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            lines.append(Line("    " + line))
            continue
        if _IAL.match(line):
            continue
        following = raw[i + 1] if i + 1 < len(raw) else ""
        if line.strip() and not line.startswith((" ", "-", "*", ">", ":")) and \
                _SETEXT.match(following) and len(following.strip()) >= 3:
            lines.append(Line(_inline(line.strip()), heading=1 if following[0] == "=" else 2))
            continue
        if _SETEXT.match(line) and lines and lines[-1].heading is not None:
            continue
        m = _ATX.match(line)
        if m:
            lines.append(Line(_inline(_atx_title(line[m.end():])), heading=len(m.group(1))))
            continue
        # kramdown definitions (": text") and block quotes ("> text") become
        # indentation of the same width.
        stripped = line.lstrip(" ")
        lead = len(line) - len(stripped)
        if stripped.startswith(":") and stripped[1:2] in (" ", "\t", ""):
            line = " " * (lead + 1) + stripped[1:]
        while True:
            stripped = line.lstrip(" ")
            if not stripped.startswith(">"):
                break
            line = " " * (len(line) - len(stripped) + 1) + stripped[1:]
        lines.append(Line(_inline(line.rstrip())))
    return lines


def _atx_title(text: str) -> str:
    """The title of "## Syntax ##": without its closing hashes and spaces (string
    methods, not a pattern: three overlapping runs of spaces were cubic)."""
    return text.strip().rstrip("#").rstrip()


def _inline(text: str) -> str:
    text = _HTML_TAG.sub("", text)
    text = _LINK_EMPTY.sub(r"[\1]", text)
    text = _LINK_ANCHOR.sub(r"\1", text)
    text = _LINK_URL.sub(r"\1 <\2>", text)
    return _STRONG.sub(r"\2", text)


# -- xml2rfc ----------------------------------------------------------------------

_BLOCKS = {"t", "artwork", "sourcecode", "figure", "ul", "ol", "list", "dl", "blockquote",
           "texttable", "table", "aside"}


def xml_lines(text: str) -> list[Line]:
    body = drop_between(text, "<?", "?>")
    body = _drop_doctype(body)
    body = drop_between(body, "<!--", "-->")
    body = re.sub(r"&([A-Za-z][A-Za-z0-9]*);", _entity, body)
    try:
        root = SafeET.fromstring(f"<root>{body}</root>")
    except (ET.ParseError, DefusedXmlException):
        return _xml_by_regex(body)
    if _depth(root) > MAX_XML_DEPTH:  # the walk below recurses once per level
        return _xml_by_regex(body)
    out: list[Line] = []
    _walk(root, out, depth=0)
    return out


# Deeper XML is read by its tags: xml2rfc documents nest a few levels, not hundreds.
MAX_XML_DEPTH = 100


def _depth(root: ET.Element) -> int:
    deepest, stack = 0, [(root, 0)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element)
    return deepest


def drop_between(text: str, start: str, end: str) -> str:
    """``text`` without each ``start ... end`` (comments, processing instructions);
    an unclosed ``start`` and what follows it are kept. One pass with ``str.find``:
    a lazy ``start.*?end`` pattern rescans the rest of the text from every unclosed
    ``start`` (quadratic)."""
    out: list[str] = []
    position = 0
    while (opening := text.find(start, position)) >= 0:
        closing = text.find(end, opening + len(start))
        if closing < 0:
            break
        out.append(text[position:opening])
        position = closing + len(end)
    out.append(text[position:])
    return "".join(out)


def _drop_doctype(text: str) -> str:
    """The document type declaration, with its internal subset ``[...]``, removed."""
    opening = text.find("<!DOCTYPE")
    if opening < 0:
        return text
    bracket, close = text.find("[", opening), text.find(">", opening)
    if 0 <= bracket < close:
        subset_end = text.find("]", bracket)
        close = text.find(">", subset_end) if subset_end >= 0 else -1
    return text if close < 0 else text[:opening] + text[close + 1:]


def _entity(m: re.Match[str]) -> str:
    name = m.group(1)
    if name in ("lt", "gt", "amp", "quot", "apos"):
        return m.group(0)
    char = html.unescape(f"&{name};")
    return char if char != f"&{name};" else " "


def _walk(element: ET.Element, out: list[Line], depth: int) -> None:
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "section":
            title = child.get("title") or ""
            name = child.find("name")
            if name is not None:
                title = _flow(name)
            out.append(Line(""))
            if title.strip():
                out.append(Line(title.strip(), heading=depth + 1))
            _walk(child, out, depth + 1)
        elif tag in ("name", "references", "back", "front"):
            continue
        elif tag in _BLOCKS:
            _block(child, out, indent=0)
        else:
            _walk(child, out, depth)


def _block(element: ET.Element, out: list[Line], indent: int) -> None:
    tag = element.tag if isinstance(element.tag, str) else ""
    pad = " " * indent
    if tag in ("artwork", "sourcecode"):
        verbatim = textwrap.dedent("".join(element.itertext()).strip("\n"))
        out.append(Line(""))
        out.extend(Line(pad + "   " + line if line else "") for line in verbatim.split("\n"))
        out.append(Line(""))
    elif tag in ("figure", "blockquote", "aside", "texttable", "table"):
        for child in element:
            _block(child, out, indent)
    elif tag in ("ul", "ol", "list"):
        hanging = element.get("style") in ("hanging", "empty")
        for n, item in enumerate(element, start=1):
            if hanging:
                _paragraph_block(item, out, indent)
                continue
            marker = f"{n}. " if tag == "ol" or element.get("style") == "numbers" else "- "
            paragraphs = _paragraphs(item)
            for k, para in enumerate(paragraphs):
                out.append(Line(pad + (marker if k == 0 else "  ") + para))
        out.append(Line(""))
    elif tag == "dl":
        for child in element:
            if child.tag == "dt":
                term = _flow(child)
                out.append(Line(pad + term + ("" if term.endswith(":") else ":")))
            elif child.tag == "dd":
                _paragraph_block(child, out, indent + 3)
        out.append(Line(""))
    else:
        _paragraph_block(element, out, indent)


def _paragraph_block(element: ET.Element, out: list[Line], indent: int) -> None:
    pad = " " * indent
    nested = [c for c in element if isinstance(c.tag, str) and c.tag in _BLOCKS]
    if nested and element.tag != "t":
        if (element.text or "").strip():
            out.append(Line(pad + _squeeze(element.text or "")))
        for child in element:
            _block(child, out, indent)
        return
    paragraphs = _paragraphs(element)
    hang = _squeeze(element.get("hangText") or "")
    if hang:  # xml2rfc v2: <t hangText="Namespace ID:">foo</t> in a hanging list
        label = hang if hang.endswith(":") else hang + ":"
        paragraphs = [f"{label} {paragraphs[0]}" if paragraphs else label, *paragraphs[1:]]
    for para in paragraphs:
        out.append(Line(pad + para))
    for child in element:  # lists inside a v2 <t>
        if isinstance(child.tag, str) and child.tag in ("list", "figure", "artwork"):
            _block(child, out, indent + 3)
    out.append(Line(""))


def _paragraphs(element: ET.Element) -> list[str]:
    """The text of an element as paragraphs, <vspace/> and <br/> breaking them."""
    pieces: list[str] = []
    _flow_into(element, pieces)
    text = "".join(pieces)
    return [_squeeze(p) for p in text.split("\x00") if p.strip()]


def _squeeze(text: str) -> str:
    """XML's insignificant whitespace as single spaces (a no-break space stays)."""
    return " ".join(w for w in re.split(r"[ \t\r\n]+", text) if w)


def _flow(element: ET.Element) -> str:
    return _squeeze(" ".join(_paragraphs(element)))


def _flow_into(element: ET.Element, pieces: list[str]) -> None:
    pieces.append(element.text or "")
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in ("vspace", "br"):
            pieces.append("\x00")
        elif tag in ("list", "figure", "artwork", "ul", "ol", "dl"):
            pass  # laid out as blocks by the caller
        elif tag in ("xref", "relref"):
            inner = "".join(child.itertext()).strip()
            pieces.append(inner or f"[{child.get('target', '')}]")
        elif tag == "eref":
            inner = "".join(child.itertext()).strip()
            target = child.get("target", "")
            pieces.append(f"{inner} <{target}>" if inner and inner != target else f"<{target}>")
        elif tag == "iref":
            pass
        else:
            _flow_into(child, pieces)
        pieces.append(child.tail or "")


def _xml_by_regex(body: str) -> list[Line]:
    """Markup that does not parse as XML: tags stripped, sections still headings.
    Tags are found by ``<[^<>]*>`` and read one at a time, so a tag that never closes
    costs only its own length."""
    out: list[Line] = []
    body = _TAG.sub(_tag_text, body)
    body = html.unescape(re.sub(r"<[^<>]+>", "", body))
    for line in body.split("\n"):
        if line.startswith("\x01"):
            out.append(Line(line[1:].strip(), heading=1))
        else:
            out.append(Line(" ".join(line.split()) if line.strip() else ""))
    return out


_TAG = re.compile(r"<(/?)([A-Za-z][\w.:-]*)([^<>]*)>")
_ATTRIBUTE = re.compile(r"\b(title|target)=\"([^\"<>]*)\"")


def _tag_text(m: re.Match[str]) -> str:
    closing, name, rest = m.group(1), m.group(2).lower(), m.group(3)
    attributes = dict(_ATTRIBUTE.findall(rest))
    if name == "section" and not closing and "title" in attributes:
        return f"\n\x01{attributes['title']}\n"
    if name == "name":  # the v3 title of a section: a heading line of its own
        return "\n" if closing else "\n\x01"
    if name in ("vspace", "br", "t", "dl", "dt", "li", "ul", "ol"):
        return "\n"
    if name == "dd":
        return "" if closing else "\n   "
    if name == "xref" and not closing and "target" in attributes:
        return f"[{attributes['target']}]"
    return m.group(0)
