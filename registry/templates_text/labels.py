"""The labels registration templates use, and the RFC 8141 field each one fills.

Three generations of the template: RFC 2611 (1999), RFC 3406 (2002) and RFC
8141 Appendix A (2017). The older labels fold into the RFC 8141 field whose
section (6.4.1 to 6.4.7) covers the same matter; their text keeps the old label
as a heading, so nothing a registrant wrote changes meaning silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Pseudo-fields: parts of the template that are not text fields of the app.
NID = "nid"
VERSION = "version"
DATE = "date"
REGISTRATION = "registration_information"  # 3406: version and date together
REGISTRANT = "registrant"


@dataclass(frozen=True, slots=True)
class Label:
    target: str  # a pseudo-field above, or a text field of registry.namespaces.template
    old: bool  # a label of RFC 2611/3406, kept as a heading when folded


_LABELS: dict[str, Label] = {}


def _add(target: str, old: bool, *names: str) -> None:
    for name in names:
        _LABELS[name] = Label(target, old)


_add(NID, False, "namespace identifier", "namespace identifier (nid)", "namespace id",
     "namespace id (nid)", "nid", "requested nid", "requested namespace identifier",
     "namespace name")
_add(VERSION, False, "version", "version number", "registration version number",
     "registration version", "template version")
_add(DATE, False, "date", "registration date", "date of registration", "request date")
_add(REGISTRATION, True, "registration information", "registration info")
_add(REGISTRANT, False, "registrant", "registrant information", "registrant of the namespace",
     "declared registrant of the namespace", "declared registrant of namespace",
     "declared registrant", "declared registration of the namespace",
     "declared registrant of the name space", "declared registrant of the urn namespace")
_add("purpose", False, "purpose")
_add("purpose", True, "scope")
_add("syntax", False, "syntax")
_add("syntax", True, "declaration of syntactic structure", "declaration of syntax",
     "declaration of structure", "syntactic structure", "rules for lexical equivalence",
     "lexical equivalence", "rules for lexical equivalence (normalization)",
     "conformance with urn syntax", "conformity with urn syntax", "validation mechanism",
     "validation mechanisms")
_add("assignment", False, "assignment", "identifier assignment")
_add("assignment", True, "process of identifier assignment", "process for identifier assignment",
     "identifier assignment process", "identifier uniqueness considerations",
     "uniqueness considerations", "identifier persistence considerations",
     "persistence considerations")
_add("security", False, "security and privacy", "security and privacy considerations",
     "security", "security considerations", "privacy considerations", "privacy")
_add("interoperability", False, "interoperability", "interoperability considerations")
_add("resolution", False, "resolution", "identifier resolution")
_add("resolution", True, "process for identifier resolution",
     "process of identifier resolution", "identifier resolution process")
_add("documentation", False, "documentation")
_add("documentation", True, "relevant ancillary documentation", "ancillary documentation",
     "relevant documentation")
_add("additional_information", False, "additional information")
_add("revision_information", False, "revision information", "revision history")

# The template text fields the labels fill, in the order they are added above.
TEXT_TARGETS: tuple[str, ...] = tuple(dict.fromkeys(
    label.target for label in _LABELS.values()
    if label.target not in (NID, VERSION, DATE, REGISTRATION, REGISTRANT)))

# Longest first, so "registration version number" wins over "version".
_NAMES = sorted(_LABELS, key=len, reverse=True)
_LABEL_RE = re.compile(
    r"(?P<label>" + "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in _NAMES) + r")"
    r"(?P<note>\s*\((?:optional|required|mandatory)\))?"
    r"(?:\s*:\s*|\s*$)(?P<rest>.*)$",
    re.IGNORECASE,
)
# What may come before a label: a section number ("3.1."), a letter ("a)"),
# a list bullet, markdown emphasis.
_LEAD_RE = re.compile(
    r"^(?:(?P<number>(?:[A-Z]\.)?\d+(?:\.\d+)*\.?|[a-z]\)|\([a-z0-9]+\))\s+)?"
    r"(?P<bullet>[-*+\u2022o]\s+)?[*_`\"']*",
)


@dataclass(frozen=True, slots=True)
class LabelMatch:
    label: str  # as written
    spec: Label
    rest: str  # the text after the label and its colon, on the same line
    numbered: bool
    colon: bool


def match_label(line: str) -> LabelMatch | None:
    """The template label at the start of ``line`` (indentation already removed)."""
    lead = _LEAD_RE.match(line)
    start = lead.end() if lead else 0
    m = _LABEL_RE.match(line, start)
    if m is None:
        return None
    rest = m.group("rest")
    written = m.group("label")
    colon = line[m.end("label"):m.start("rest")].strip().endswith(":") or \
        (bool(m.group("note")) and ":" in line[m.end("note"):m.start("rest")])
    rest = re.sub(r"^[*_`]+\s*", "", rest)  # the closing "**" of "**Label:**"
    if not colon and rest.strip():
        return None
    key = re.sub(r"\s+", " ", written.lower())
    return LabelMatch(written.strip(), _LABELS[key], rest.strip(), bool(lead and lead.group(
        "number")), colon)


def heading_label(title: str) -> Label | None:
    """The field an explicit heading (markdown, XML, numbered RFC section) names."""
    m = match_label(title.strip().rstrip(":").strip() + ":")
    if m is None or m.rest:
        return None
    return m.spec


def strip_numbering(title: str) -> str:
    lead = _LEAD_RE.match(title)
    return title[lead.end():].strip() if lead and lead.group("number") else title.strip()
