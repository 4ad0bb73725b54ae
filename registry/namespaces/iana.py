"""Reading IANA's registry: its published ``urn-namespaces.xml`` (and this
registry's own ``/registry.xml``, which has the same shape) or the older JSON
layout of ``fixtures/iana-urn-namespaces.json``.

Everything is checked before anything is stored: :func:`read_registry` returns a
:class:`Snapshot` or raises :class:`SourceError` naming the file, the record and
what is wrong with it. Unknown elements and reference types that may appear in a
newer file are kept as they are, never a reason to stop.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import xml.etree.ElementTree as ET  # noqa: S405 - no DTDs or entities are resolved
from dataclasses import dataclass, field
from typing import Any

from registry.namespaces import xrefs
from registry.namespaces.xrefs import Xref
from registry.text_policy import text_problem
from urn8141 import check_informal_nid, informal_number

XML_NS = "http://www.iana.org/assignments"
Q = f"{{{XML_NS}}}"
FORMAL_ID, INFORMAL_ID = "urn-namespaces-1", "urn-namespaces-2"
_NID_SYNTAX = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]")


class SourceError(ValueError):
    """A registry file that cannot be imported; the message says where and why."""


@dataclass
class Record:
    """One row of a sub-registry, in the registry's terms."""

    kind: str
    name: str
    date: dt.date | None = None
    updated: dt.date | None = None
    references: list[Xref] = field(default_factory=list)
    template_url: str = ""
    contact: list[Xref] = field(default_factory=list)
    # Only the JSON layout carries these; None means "the source does not say".
    template_date: dt.date | None = None
    notes: str | None = None
    organisation: str | None = None

    @property
    def number(self) -> int | None:
        return informal_number(self.name) if self.kind == "informal" else None


@dataclass
class Person:
    person_id: str
    name: str = ""
    org: str = ""
    uris: list[str] = field(default_factory=list)
    updated: dt.date | None = None


@dataclass
class Snapshot:
    source: str
    updated: dt.date | None = None
    experts: dict[str, str] = field(default_factory=dict)  # "formal"/"informal" -> line
    records: list[Record] = field(default_factory=list)
    people: list[Person] = field(default_factory=list)


def read_registry(data: bytes, source: str) -> Snapshot:
    """The registry in ``data`` (IANA's XML, or the JSON layout), checked."""
    head = data.lstrip()[:1]
    if head == b"<":
        return _from_xml(data, source)
    if head in (b"{", b"["):
        return _from_json(data, source)
    raise SourceError(f"{source}: neither XML nor JSON (it starts with {data[:20]!r}).")


# --- XML --------------------------------------------------------------------------


def _from_xml(data: bytes, source: str) -> Snapshot:
    if b"<!DOCTYPE" in data[:2000] or b"<!ENTITY" in data:
        raise SourceError(f"{source}: a DOCTYPE or entity declaration; IANA's file has none.")
    try:
        root = ET.fromstring(data)  # noqa: S314 - checked above: no DTD, no entities
    except ET.ParseError as exc:
        raise SourceError(f"{source}: not well-formed XML ({exc}).") from None
    if root.tag != f"{Q}registry":
        raise SourceError(f"{source}: the root element is <{_local(root.tag)}>, not IANA's "
                          f"<registry xmlns=\"{XML_NS}\">.")
    snapshot = Snapshot(source=source,
                        updated=_date(root.findtext(f"{Q}updated"), source, "<updated>"))
    subs = {sub.get("id"): sub for sub in root.findall(f"{Q}registry")}
    if FORMAL_ID not in subs and INFORMAL_ID not in subs:
        raise SourceError(f"{source}: no sub-registry {FORMAL_ID!r} or {INFORMAL_ID!r}.")
    for sub_id, kind in ((FORMAL_ID, "formal"), (INFORMAL_ID, "informal")):
        sub = subs.get(sub_id)
        if sub is None:
            continue
        for child in sub:
            if child.tag != f"{Q}record":
                _check_text(child, f"{source}: sub-registry {sub_id}")
        experts = sub.findtext(f"{Q}expert")
        if experts is not None:
            snapshot.experts[kind] = " ".join(experts.split())
        for position, element in enumerate(sub.findall(f"{Q}record"), start=1):
            snapshot.records.append(_xml_record(element, kind, position, source))
    people = root.find(f"{Q}people")
    for element in people.findall(f"{Q}person") if people is not None else []:
        pid = element.get("id", "")
        where = f"{source}: person {pid or '(no id)'}"
        _check_text(element, where)
        if not pid or xrefs.problem({"type": "person", "data": pid}):
            raise SourceError(f"{where}: the id is not an XML name.")
        snapshot.people.append(Person(
            person_id=pid,
            name=_text(element.findtext(f"{Q}name")),
            org=_text(element.findtext(f"{Q}org")),
            uris=[_text(u.text) for u in element.findall(f"{Q}uri") if _text(u.text)],
            updated=_date(element.findtext(f"{Q}updated"), where, "<updated>"),
        ))
    _check_unique(snapshot)
    return snapshot


def _xml_record(element: ET.Element, kind: str, position: int, source: str) -> Record:
    name = _text(element.findtext(f"{Q}name"))
    where = f"{source}: {kind} record {position} ({name[:64] or 'no <name>'})"
    _check_text(element, where)
    record = Record(
        kind=kind, name=name,
        date=_date(element.get("date"), where, "date"),
        updated=_date(element.get("updated"), where, "updated"),
        references=[_xref(x, where) for x in element.findall(f"{Q}xref")],
    )
    template = element.find(f"{Q}template")
    if template is not None:
        links = [_xref(x, where) for x in template.findall(f"{Q}xref")]
        uri = next((x for x in links if x.get("type") == "uri"), None)
        if uri is None:
            raise SourceError(f"{where}: <template> without an <xref type=\"uri\">.")
        record.template_url = uri["data"]
    contact = element.find(f"{Q}contact")
    if contact is not None:
        record.contact = [_xref(x, where) for x in contact.findall(f"{Q}xref")]
        if not record.contact and _text(contact.text):
            record.contact = [{"type": "text", "text": _text(contact.text)}]
    if kind == "informal" and not record.template_url:
        # IANA links an informal template as the record's first <xref type="uri">.
        # Kept as the template URL; the export writes it back in the same place.
        uri = next((x for x in record.references if x.get("type") == "uri"), None)
        if uri is not None:
            record.template_url = uri["data"]
            record.references.remove(uri)
    _check_record(record, where)
    return record


def _xref(element: ET.Element, where: str) -> Xref:
    xref: Xref = {"type": element.get("type", "")}
    if element.get("data") is not None:
        xref["data"] = element.get("data", "").strip()
    for name in xrefs.FRAGMENT_ATTRIBUTES:  # section="3", lastupdated=..., as given
        if element.get(name):
            xref[name] = element.get(name, "").strip()  # type: ignore[literal-required]
    text = _text(element.text)
    if text:
        xref["text"] = text
    if problem := xrefs.problem(xref):
        raise SourceError(f"{where}: {problem}.")
    return xref


# --- JSON (the older layout) ----------------------------------------------------


def _from_json(data: bytes, source: str) -> Snapshot:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{source}: not JSON ({exc}).") from None
    if not isinstance(doc, dict) or not ({"formal", "informal"} & set(doc)):
        raise SourceError(f'{source}: expected an object with "formal" and "informal" lists.')
    snapshot = Snapshot(source=source, updated=_date(doc.get("updated"), source, "updated"))
    experts = doc.get("designated_experts")
    if isinstance(experts, list) and all(isinstance(e, str) for e in experts):
        snapshot.experts["formal"] = _text(", ".join(experts))
    for kind in ("formal", "informal"):
        rows = doc.get(kind) or []
        if not isinstance(rows, list):
            raise SourceError(f'{source}: "{kind}" is not a list.')
        for position, row in enumerate(rows, start=1):
            snapshot.records.append(_json_record(row, kind, position, source))
    _check_unique(snapshot)
    return snapshot


def _json_record(row: Any, kind: str, position: int, source: str) -> Record:
    if not isinstance(row, dict):
        raise SourceError(f"{source}: {kind} record {position} is not an object.")
    name = _text(str(row.get("name") or ""))
    where = f"{source}: {kind} record {position} ({name[:64] or 'no name'})"
    _check_json_texts(row, where)
    refs = row.get("refs") or []
    if not isinstance(refs, list) or not all(isinstance(r, str | dict) for r in refs):
        raise SourceError(f'{where}: "refs" is not a list of references.')
    references = [xrefs.from_label(r) if isinstance(r, str) else dict(r) for r in refs]
    for ref in references:
        if problem := xrefs.problem(ref):  # type: ignore[arg-type]
            raise SourceError(f"{where}: {problem}.")
    registrant = _text(str(row.get("registrant") or ""))
    record = Record(
        kind=kind, name=name,
        date=_date(row.get("date"), where, "date"),
        updated=_date(row.get("updated"), where, "updated"),
        references=references,  # type: ignore[arg-type]
        template_url=_text(str(row.get("template_url") or "")),
        contact=[{"type": "text", "text": registrant}] if kind == "informal" and registrant
        else [],
        template_date=_date(row.get("template_date"), where, "template_date"),
        notes="; ".join(str(n) for n in row.get("notes") or []),
        organisation=registrant,
    )
    if kind == "informal" and row.get("value") not in (None, "") and \
            str(row.get("value")) != str(record.number):
        raise SourceError(f"{where}: value {row.get('value')!r} is not the number in its name.")
    _check_record(record, where)
    return record


# --- checks -------------------------------------------------------------------------


def _check_text(element: ET.Element, where: str) -> None:
    """The registry's text policy (registry/text_policy.py) on every text and attribute
    of ``element``, as the file has them: what the forms refuse, an import refuses."""
    for node in element.iter():
        values = [("text", node.text), ("text", node.tail if node is not element else None),
                  *((f"attribute {k}", v) for k, v in node.attrib.items())]
        for what, value in values:
            if value and (problem := text_problem(value)):
                raise SourceError(f"{where}: <{_local(node.tag)}> {what}: {problem}")


def _check_json_texts(row: dict[str, Any], where: str) -> None:
    texts: list[tuple[str, Any, bool]] = [
        (key, row.get(key), True) for key in ("name", "registrant", "date", "template_url",
                                              "template_date", "updated")]
    texts += [("refs", ref, True) for ref in row.get("refs") or [] if isinstance(ref, str)]
    texts += [("notes", note, False) for note in row.get("notes") or []]
    for key, value, single_line in texts:
        if value is None:
            continue
        if not isinstance(value, str):
            raise SourceError(f"{where}: {key} is not text.")
        if problem := text_problem(value, single_line=single_line):
            raise SourceError(f"{where}: {key}: {problem}")


def _check_record(record: Record, where: str) -> None:
    if not record.name:
        raise SourceError(f"{where}: no name.")
    if record.kind == "informal":
        problems = check_informal_nid(record.name)
        if problems:
            raise SourceError(f"{where}: {problems[0]}")
    elif not _NID_SYNTAX.fullmatch(record.name):
        raise SourceError(f"{where}: {record.name[:40]!r} is not a NID (RFC 8141 section 2).")
    if record.template_url and not xrefs.is_web_url(record.template_url):
        raise SourceError(f"{where}: the template URL {record.template_url[:80]!r} is not an "
                          "http(s) URL; only those are published as links.")


def _check_unique(snapshot: Snapshot) -> None:
    seen: dict[str, Record] = {}
    for record in snapshot.records:
        key = record.name.lower()
        if key in seen:
            raise SourceError(f"{snapshot.source}: the NID {record.name!r} appears twice "
                              f"({seen[key].kind} and {record.kind}; NIDs compare "
                              "case-insensitively).")
        seen[key] = record
    ids = [p.person_id for p in snapshot.people]
    if len(ids) != len(set(ids)):
        raise SourceError(f"{snapshot.source}: a person id appears twice in <people>.")


def _date(text: Any, where: str, what: str) -> dt.date | None:
    """IANA's dates: YYYY-MM-DD, or YYYY-MM (taken as its first day); empty is None."""
    text = _text(str(text)) if text is not None else ""
    if not text:
        return None
    try:
        if re.fullmatch(r"\d{4}-\d{2}", text):
            return dt.date.fromisoformat(f"{text}-01")
        return dt.date.fromisoformat(text)
    except ValueError:
        raise SourceError(f"{where}: {what} {text[:20]!r} is not a date (YYYY-MM-DD).") from None


def _text(text: str | None) -> str:
    return " ".join((text or "").split())


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
