"""A registration template, as text, into the fields of RFC 8141 Appendix A."""

from __future__ import annotations

import datetime as dt
import re
import textwrap
from dataclasses import dataclass, field

from registry.templates_text import labels as L
from registry.templates_text.formats import (
    Line,
    TemplateTextError,
    decode,
    detect_format,
    to_lines,
)
from registry.templates_text.registrant import FIELDS as REGISTRANT_FIELDS
from registry.templates_text.registrant import MAX_CHARS as REGISTRANT_MAX_CHARS
from registry.templates_text.registrant import Registrant, parse_registrant

# The app's text fields (registry.namespaces.template.TEXT_FIELDS), in order: the
# registrant's, then those the labels fill. Derived from the parser's own tables
# (this package imports nothing from Django); tests/templates_text assert it equals
# the model's list, so a new template field cannot be missed here.
TEXT_FIELDS: tuple[str, ...] = REGISTRANT_FIELDS + L.TEXT_TARGETS

_NID_TOKEN = r"[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]"  # noqa: S105 (a pattern)
_QUOTED_NID = re.compile(r"[\"'\u201c\u2018`]\s*(" + _NID_TOKEN + r")\s*[\"'\u201d\u2019`]")
_URN_NID = re.compile(r"\burn:(" + _NID_TOKEN + r")(?![A-Za-z0-9-])", re.IGNORECASE)
_NAMED_NID = re.compile(r"\b(?:NID|namespace ID|namespace identifier)\s+(?:is\s+)?"
                        r"[\"'\u201c]?(" + _NID_TOKEN + r")\b", re.IGNORECASE)
_WORDS_NOT_NIDS = frozenset(("the", "this", "a", "an", "to", "be", "is", "it", "tbd", "tba",
                             "none", "n/a", "urn", "namespace", "identifier", "requested",
                             "assigned", "see", "iana", "by", "of", "nid", "id", "formal",
                             "informal"))
_VERSION = re.compile(r"\bversion(?:\s+number)?\s*(?:[:#=]|is)?\s*(\d+)\b", re.IGNORECASE)
_DATE_LABEL = re.compile(r"\b(?:registration\s+)?date\s*:?\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_PLACEHOLDER = re.compile(
    r"\b(?:TBD|TBA|TBC|TODO|FIXME)\b|\bYYYY-MM-DD\b|\b(?:19|20)[\d?X]{0,2}\?[-\d?X]*|"
    r"\bRFC\s?(?:X{3,4}|N{3,4}|\?{3,4})\b|\[\s*RFC\s*Editor[^\[\]]*\]|"
    r"\bRFC\s+Editor:\s*please\s+replace\b|\bXXXX+\b|"
    r"^\s*to be (?:assigned|determined|supplied)\b", re.IGNORECASE)
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), start=1)}
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASHED = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")
_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b")
_MDY = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_DATE_WRITTEN = re.compile(r"[\d?X]{4}-[\d?X]{1,2}-[\d?X]{1,2}|YYYY-MM-DD|\S.*", re.IGNORECASE)
_TITLE_LINE = re.compile(r"template|^\s*[=\-_*#~]{3,}\s*$|^namespace definition\b",
                         re.IGNORECASE)


@dataclass
class ParsedTemplate:
    """What the reader took from one template. Empty strings: the text does not say."""

    nid: str = ""
    version: str = ""
    date: str = ""  # ISO 8601 when the text gives a real date, else as written
    registrant_organisation: str = ""
    contact_email: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    unmapped: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    layout: str = ""  # "8141" or "3406" (RFC 2611 templates use the same labels)
    format: str = ""  # "text", "markdown" or "xml"
    layout_found: bool = True  # False: no label of any template layout in the text

    def as_json(self, file: str = "") -> dict:
        return {
            "file": file, "nid": self.nid, "version": self.version, "date": self.date,
            "registrant_organisation": self.registrant_organisation,
            "contact_email": self.contact_email, "fields": self.fields,
            "unmapped": self.unmapped, "problems": self.problems,
            "layout": self.layout, "format": self.format,
        }

    @property
    def date_value(self) -> dt.date | None:
        try:
            return dt.date.fromisoformat(self.date)
        except ValueError:
            return None

    @property
    def version_number(self) -> int | None:
        return int(self.version) if self.version.isdigit() else None


@dataclass
class _Part:
    label: str
    spec: L.Label | None
    level: int | None  # heading level, or None for a label within the text
    lines: list[str] = field(default_factory=list)

    def text(self) -> str:
        return _clean_block(self.lines)


# More templates than this in one text are refused: no RFC registers that many
# namespaces, and each would be a choice on the request form.
MAX_TEMPLATES = 20


def parse_templates(data: bytes | str) -> list[ParsedTemplate]:
    """Every template in a text, in order (at least one). A text may hold several
    (RFC 5134 registers two namespaces): each starts at its Namespace ID label,
    and none is merged into another. Raises TemplateTextError for input that is
    not a template at all (empty, binary, too large, too many templates);
    anything else is reported in ``problems`` and ``unmapped``, never dropped."""
    text = decode(data)
    fmt = detect_format(text)
    groups = split_templates(segment(to_lines(text, fmt)))
    if len(groups) > MAX_TEMPLATES:
        raise TemplateTextError(f"This text holds {len(groups)} templates; paste at most "
                                f"{MAX_TEMPLATES}, or one at a time.")
    results = []
    for parts in groups:
        result = ParsedTemplate(format=fmt)
        assemble(parts, result)
        if not any(p.spec for p in parts):
            result.layout_found = False
            result.problems.insert(0, "No label of a registration template (RFC 8141 "
                                      "Appendix A, RFC 3406 or RFC 2611) was found in this "
                                      "text.")
        results.append(result)
    return results


def parse_template(data: bytes | str) -> ParsedTemplate:
    """The first template of a text (see :func:`parse_templates`); when the text
    holds more, the first problem says so and names the others."""
    templates = parse_templates(data)
    first = templates[0]
    if len(templates) > 1:
        first.problems.insert(0, several_templates(templates, chosen=0))
    return first


def several_templates(templates: list[ParsedTemplate], chosen: int) -> str:
    """"This text holds 2 templates (epc, epcglobal); this is the first, epc."."""
    names = ", ".join(t.nid or f"template {n} (no NID)" for n, t in enumerate(templates, 1))
    which = templates[chosen].nid or "the one without an NID"
    return (f"This text holds {len(templates)} templates ({names}); this is number "
            f"{chosen + 1}, {which}. Nothing from the others is used.")


# -- segmentation -------------------------------------------------------------------

def segment(lines: list[Line]) -> list[_Part]:
    parts = [_Part("", None, None)]
    base_indent: int | None = None
    for line in lines:
        current = parts[-1]
        stripped = line.text.strip()
        if line.heading is not None:
            title = L.strip_numbering(stripped)
            spec = L.heading_label(title)
            if spec is None:
                m = L.match_label(title)
                if m is not None and m.colon:
                    parts.append(_Part(m.label, m.spec, line.heading,
                                       [m.rest] if m.rest else []))
                    continue
            if spec is not None:
                parts.append(_Part(title.rstrip(":").strip(), spec, line.heading))
            elif current.level is not None and line.heading > current.level:
                current.lines += ["", stripped, ""]  # a sub-heading of the current part
            elif current.spec is None and current.label == "" and not stripped:
                continue
            else:
                parts.append(_Part(title, None, line.heading))
            continue
        m = L.match_label(stripped) if stripped else None
        if m is not None and (m.colon or not m.rest) and \
                (base_indent is None or line.indent <= base_indent + 1):
            if base_indent is None:
                base_indent = line.indent
            if current.spec == m.spec and not current.text() and m.rest:
                current.lines.append(m.rest)  # "Purpose" heading, then "Purpose: ..."
                continue
            if current.spec == m.spec and not current.text() and not m.rest:
                continue
            # A label inside a heading's section sits at that heading's depth.
            parts.append(_Part(m.label, m.spec, current.level, [m.rest] if m.rest else []))
            continue
        current.lines.append(line.text)
    return parts


def split_templates(parts: list[_Part]) -> list[list[_Part]]:
    """The parts of each template: a Namespace ID part after the one of the template
    being read starts the next template, taking with it the unlabelled parts just
    before it (its title, "5. The EPCglobal namespace"). A second Namespace ID with
    no other field after it is not a template of its own."""
    groups: list[list[_Part]] = [[]]
    for part in parts:
        current = groups[-1]
        is_nid = part.spec is not None and part.spec.target == L.NID
        if is_nid and any(p.spec is not None and p.spec.target == L.NID for p in current):
            cut = len(current)
            while cut > 0 and current[cut - 1].spec is None:
                cut -= 1
            groups.append(current[cut:])
            del current[cut:]
        groups[-1].append(part)
    merged = [groups[0]]
    for group in groups[1:]:
        fields = sum(1 for p in group if p.spec is not None and p.spec.target != L.NID)
        if fields:
            merged.append(group)
        else:
            merged[-1].extend(group)
    return merged


def _clean_block(lines: list[str]) -> str:
    lines = [line.rstrip() for line in lines]
    # Blank lines around the block dropped by index (slicing one at a time is quadratic).
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    lines = lines[start:end]
    if not lines:
        return ""
    if len(lines) > 1 and lines[0] == lines[0].lstrip():
        # "Label: first line" then indented lines: dedent the rest on their own.
        rest = textwrap.dedent("\n".join(lines[1:]))
        first = lines[0].strip()
        return (first + "\n" + rest).strip("\n") if rest.strip() else first
    return textwrap.dedent("\n".join(lines)).strip("\n").rstrip()


# -- from parts to fields -----------------------------------------------------------------

def assemble(parts: list[_Part], result: ParsedTemplate) -> None:
    chunks: dict[str, list[str]] = {}
    registration: list[str] = []
    registrant_texts: list[str] = []
    nid_texts: list[str] = []
    old = new = 0
    for part in parts:
        text = part.text()
        if part.spec is None:
            # A heading with nothing under it is a title ("Namespace Registration Template").
            if text and not (part.label == "" and _only_titles(text)):
                result.unmapped.append({"label": part.label, "text": text})
            continue
        target = part.spec.target
        old += part.spec.old
        new += not part.spec.old and target in ("purpose", "syntax", "assignment", "security",
                                                 "interoperability", "resolution")
        if target == L.NID:
            nid_texts.append(text)
        elif target in (L.VERSION, L.DATE, L.REGISTRATION):
            registration.append(f"{part.label}: {text}" if target != L.REGISTRATION else text)
        elif target == L.REGISTRANT:
            registrant_texts.append(text)
        elif text:
            chunk = f"{part.label}:\n{text}" if part.spec.old else text
            chunks.setdefault(target, []).append(chunk)
    result.layout = "3406" if old > new else "8141"
    result.nid, nid_rest = _nid(nid_texts)
    if nid_rest:
        result.unmapped.append({"label": "Namespace ID", "text": nid_rest})
    _registration(registration, result)
    registrant_text = "\n\n".join(t for t in registrant_texts if t)
    registrant = parse_registrant(registrant_text)
    if len(registrant_text) > REGISTRANT_MAX_CHARS:
        result.problems.append(f"The registrant part is longer than {REGISTRANT_MAX_CHARS:,} "
                               "characters, so it was not read field by field: it is shown "
                               "below as it is.")
    _apply_registrant(registrant, result)
    for name in TEXT_FIELDS:
        if name in chunks:
            result.fields[name] = "\n\n".join(chunks[name])
    if registrant.registrant_organisation:
        result.registrant_organisation = registrant.registrant_organisation
    result.contact_email = registrant.contact_email
    _report(result, nid_texts, registration)


def _only_titles(text: str) -> bool:
    return all(_TITLE_LINE.search(line) or not line.strip() for line in text.splitlines())


def _apply_registrant(registrant: Registrant, result: ParsedTemplate) -> None:
    for name in REGISTRANT_FIELDS:
        value = getattr(registrant, name)
        if value:
            result.fields[name] = value
    if registrant.leftover:
        result.unmapped.append({"label": "Registrant", "text": registrant.leftover})


_BULLET = re.compile(r"^(\s*)[-*+\u2022]\s+")


def unbullet(line: str) -> str:
    """A line without its list marker: "- Version: 1" -> "Version: 1"."""
    return _BULLET.sub(r"\1", line)


def _nid(texts: list[str]) -> tuple[str, str]:
    """The NID a "Namespace ID" part gives, and what else it says."""
    for text in texts:
        if not text:
            continue
        first, _, rest = text.partition("\n")
        first = unbullet(first).strip()
        candidates = [m.group(1) for m in _QUOTED_NID.finditer(first)]
        candidates += [m.group(1) for m in _URN_NID.finditer(first)]
        candidates += [m.group(1) for m in _NAMED_NID.finditer(first)]
        tokens = re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*", first)
        if tokens and len(first.split()) <= 3:
            candidates += tokens
        candidates += [t for t in tokens if t.lower() not in _WORDS_NOT_NIDS and
                       re.fullmatch(_NID_TOKEN, t) and (t.isupper() or any(c.isdigit() for c in t))
                       and len(first.split()) <= 6]
        for candidate in candidates:
            if candidate.lower() not in _WORDS_NOT_NIDS and re.fullmatch(_NID_TOKEN, candidate):
                leftover = rest.strip() if _says_only_nid(first, candidate) else text
                return candidate, leftover
        return "", text
    return "", ""


def _says_only_nid(first: str, nid: str) -> bool:
    words = re.sub(r"[\"'\u201c\u201d\u2018\u2019`.:]", " ", first).lower().split()
    filler = {"the", "namespace", "id", "identifier", "nid", "is", "has", "been", "requested",
              "assigned", "requests", "request", "this", "document", "proposed", "urn"}
    return all(w in filler or w == nid.lower() for w in words)


def _registration(texts: list[str], result: ParsedTemplate) -> None:
    leftover = []
    texts = ["\n".join(unbullet(line) for line in text.splitlines()) for text in texts]
    joined = "\n".join(texts)
    for text in texts:
        for line in text.splitlines():
            low = line.strip().lower()
            if not low:
                continue
            if _VERSION.search(line) or re.match(r"^(registration\s+)?(version|date)\b", low) \
                    or re.fullmatch(r"\d+", low):
                continue
            if re.match(r"^(version|date|registration date|registration version number)\s*:",
                        low):
                continue
            leftover.append(line.strip())
    m = _VERSION.search(joined)
    if m:
        result.version = m.group(1)
    else:
        for text in texts:
            label, _, value = text.partition(":")
            if "version" in label.lower() and value.strip():
                written = value.strip().splitlines()[0].strip()
                result.version = written.split()[0] if written.split()[0].isdigit() else written
                break
    for text in texts:
        date_text = ""
        m = _DATE_LABEL.search(text)
        if m:
            date_text = m.group(1).strip()
        elif texts and text is texts[-1] and _find_date(text):
            date_text = text
        if date_text:
            found = _find_date(date_text)
            if found:
                result.date = found.isoformat()
            else:
                w = _DATE_WRITTEN.search(date_text)
                result.date = w.group(0).strip() if w else date_text
            break
    if leftover:
        result.unmapped.append({"label": "Registration Information", "text": "\n".join(leftover)})


def _find_date(text: str) -> dt.date | None:
    for pattern, order in ((_ISO, "ymd"), (_SLASHED, "ymd"), (_DMY, "dmy"), (_MDY, "mdy")):
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups(), strict=True))
            month = parts["m"]
            if not month.isdigit():
                month = _MONTHS.get(month.lower()) or next(
                    (n for name, n in _MONTHS.items() if name.startswith(month.lower()[:3])), 0)
            try:
                return dt.date(int(parts["y"]), int(month), int(parts["d"]))
            except ValueError:
                continue
    return None


def _report(result: ParsedTemplate, nid_texts: list[str], registration: list[str]) -> None:
    problems = result.problems
    if not nid_texts:
        problems.append("No Namespace Identifier was found.")
    elif not result.nid:
        problems.append("The Namespace Identifier part names no NID: "
                        f"\"{_short(nid_texts[0])}\".")
    if not result.version:
        problems.append("No version number was found.")
    elif result.version_number is None:
        problems.append(f'The version is not a number: "{_short(result.version)}".')
    if not result.date:
        problems.append("No date was found.")
    elif result.date_value is None:
        problems.append(f'The date is not a real date: "{_short(result.date)}" '
                        "(write it as YYYY-MM-DD).")
    seen = set()
    where = [("Namespace Identifier", t) for t in nid_texts] + \
        [("Registration", t) for t in registration] + \
        [(name, result.fields[name]) for name in TEXT_FIELDS if name in result.fields]
    for label, text in where:
        for m in _PLACEHOLDER.finditer(text):
            key = (label, m.group(0).lower())
            if key in seen or (label == "Registration" and m.group(0) in result.date):
                continue
            seen.add(key)
            problems.append(f'Placeholder "{m.group(0)}" in {label.replace("_", " ")}: '
                            "replace it with the real value.")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
