"""IANA's typed references (`<xref type=... data=...>text</xref>`), as the registry
stores them: a dict ``{"type": ..., "data": ..., "text": ...}`` per reference.

Pure functions, no database: labels for people and tables, links, the old label
strings ("RFC5279", "RFC Errata 3188", "Name <https://...>") read into typed form,
and the checks an import makes before it stores a reference.
"""

from __future__ import annotations

import re
from typing import TypedDict
from urllib.parse import urlsplit


class Xref(TypedDict, total=False):
    type: str
    data: str
    text: str
    section: str
    page: str
    appendix: str
    table: str
    figure: str
    anchor: str
    lastupdated: str


# Attributes an IANA xref may carry besides type and data (iana-registry.rng).
FRAGMENT_ATTRIBUTES = ("section", "page", "appendix", "table", "figure", "anchor",
                       "lastupdated")

_RFC_LABEL = re.compile(r"(RFC|BCP|STD)\s?(\d+)", re.IGNORECASE)
_ERRATA_LABEL = re.compile(r"RFC Errata (\d+)(?:\s*<[^>]*>)?", re.IGNORECASE)
_DRAFT = re.compile(r"(draft|RFC)(-[a-zA-Z0-9]+)+")
_PERSON_ID = re.compile(r"[A-Za-z][\w.\-]*_[\w.\-]+")
# XML 1.0 cannot carry these at all (section 2.2): C0 controls but tab, LF, CR;
# surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str | None) -> str:
    """``text`` without the characters XML 1.0 cannot carry (an export never fails
    on stored text; the forms refuse such characters at input)."""
    return _NOT_XML.sub("", text or "")


def _named_url(label: str) -> tuple[str, str] | None:
    """``Name <https://url>`` as (name, url), in one pass: what the pattern
    ``(.*?)\\s*<(https?://[^>\\s]+)>\\s*$`` matches, without its quadratic backtracking
    on long runs of spaces or of ``<http://`` (label is stripped)."""
    if not label.endswith(">"):
        return None
    start = len(label) - 1  # the URL's characters run back to a space or a ">"
    while start > 0 and not label[start - 1].isspace() and label[start - 1] != ">":
        start -= 1
    token = label[start:-1]
    at = token.find("<")
    while at != -1:
        url = token[at + 1:]
        if any(url.startswith(scheme) and len(url) > len(scheme)
               for scheme in ("http://", "https://")):
            name = label[:start + at].rstrip()
            return None if "\n" in name else (name, url)
        at = token.find("<", at + 1)
    return None


def from_label(label: str) -> Xref:
    """One of the registry's reference labels, typed as IANA types it."""
    label = label.strip()
    if m := _RFC_LABEL.fullmatch(label):
        return {"type": "rfc", "data": f"{m.group(1).lower()}{m.group(2)}"}
    if m := _ERRATA_LABEL.fullmatch(label):
        return {"type": "rfc-errata", "data": m.group(1)}
    if named := _named_url(label):
        return {"type": "uri", "data": named[1], "text": named[0]}
    if label.lower().startswith(("http://", "https://")) and " " not in label:
        return {"type": "uri", "data": label, "text": ""}
    if _DRAFT.fullmatch(label) and label.startswith("draft-"):
        return {"type": "draft", "data": label}
    if _PERSON_ID.fullmatch(label):
        return {"type": "person", "data": label}
    return {"type": "text", "text": label}


def organisation_named(references: list, people: dict[str, str] | None = None) -> str:
    """The body a registry row names in its references, for rows whose template is not
    held here (imported from IANA): a linked or plain name ("ISSN International Centre
    <http://www.issn.org>"), else the organisation of a person referred to (``people``:
    person id to organisation); "" when the row names only RFCs and drafts."""
    typed = [from_label(r) if isinstance(r, str) else r for r in references or []]
    for xref in typed:
        if xref.get("type") in ("uri", "text") and (name := (xref.get("text") or "").strip()):
            return name
    for xref in typed:
        if xref.get("type") == "person" and (org := (people or {}).get(xref.get("data", ""))):
            return org
    return ""


def label(xref: Xref) -> str:
    """How IANA's tables write a reference: RFC5279, RFC Errata 3188, the text of a
    link, a person's id."""
    kind, data, text = xref.get("type", ""), xref.get("data", ""), xref.get("text", "")
    if kind == "rfc":
        return data.upper() if data else text
    if kind == "rfc-errata":
        return f"RFC Errata {data}"
    if kind in ("person", "uri", "draft", "registry", "note", "unicode"):
        return text or data
    return text or data


def link(xref: Xref) -> str:
    """Where a reference points, or ""."""
    kind, data = xref.get("type", ""), xref.get("data", "")
    if kind == "rfc" and (m := re.fullmatch(r"(rfc|bcp|std)(\d+)", data)):
        if m.group(1) == "rfc":
            return f"https://www.rfc-editor.org/rfc/rfc{m.group(2)}"
        return f"https://www.rfc-editor.org/info/{m.group(1)}{m.group(2)}"
    if kind == "rfc-errata" and data.isdigit():
        return f"https://www.rfc-editor.org/errata/eid{data}"
    if kind == "draft" and data:
        return f"https://datatracker.ietf.org/doc/{data}"
    if kind == "uri" and is_web_url(data):
        return data
    return ""


def is_web_url(url: str) -> bool:
    """An absolute http(s) URL with a host: the only links the registry publishes."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and url == url.strip()


def problem(xref: Xref) -> str:
    """Why a reference cannot be stored, or "" when it can."""
    kind, data = xref.get("type", ""), xref.get("data", "")
    if not kind:
        return "a reference without a type"
    if kind == "uri" and not is_web_url(data):
        return f"a link that is not an http(s) URL: {data[:80]!r}"
    if kind == "rfc" and not re.fullmatch(r"(rfc|bcp|std)\d+", data):
        return f"an RFC reference that names no RFC: {data[:80]!r}"
    if kind == "rfc-errata" and not data.isdigit():
        return f"an errata reference that is not a number: {data[:80]!r}"
    if kind == "person" and not _NCNAME.fullmatch(data):
        return f"a person reference whose id is not an XML name: {data[:80]!r}"
    return ""


_NCNAME = re.compile(r"[A-Za-z_][\w.\-]*")


def person_id(name: str, taken: set[str]) -> str:
    """An IANA-style person id for ``name`` ("Juha Hakala" -> "Juha_Hakala"),
    distinct from every id in ``taken``."""
    base = re.sub(r"[^\w.\-]+", "_", name.strip()).strip("_.-") or "contact"
    if not re.match(r"[A-Za-z_]", base):
        base = f"_{base}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate
