"""The registry in IANA's formats, written per record so that a document is its
frame plus one fragment per namespace (export_build.py assembles the files, copying
each unchanged fragment from the previous generation's):

- ``registry.xml``: ``urn-namespaces.xml`` exactly as IANA publishes it, valid
  against IANA's RELAX NG schema (``fixtures/iana/urn-namespaces.rng``):
  :func:`xml_frame` and one :func:`xml_fragment` per record. What that schema cannot
  hold (status, deprecation pointer, versions) is in the JSON API and the Atom feed.
- ``urn-namespaces-1.csv``, ``urn-namespaces-2.csv``: IANA's CSV of one sub-registry,
  IANA's columns first (:func:`iana_csv_fragment`).
- ``registry.csv``: both sub-registries in one file with a ``kind`` column and
  everything the registry knows of each row (:func:`csv_fragment`).

Stored text is made safe for its format here: characters XML 1.0 cannot carry are
dropped, and CSV cells that a spreadsheet would run as a formula are neutralised.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import xml.etree.ElementTree as ET  # noqa: S405 - used to write XML only
from collections.abc import Sequence

from django.conf import settings
from django.db.models import Count, Max
from django.http import HttpRequest
from django.urls import reverse

from registry.namespaces import xrefs
from registry.namespaces.iana import FORMAL_ID, INFORMAL_ID, XML_NS
from registry.namespaces.models import (
    Namespace,
    Person,
    RegistryMetadata,
    TemplateVersion,
)
from registry.namespaces.xrefs import Xref, xml_safe

REGISTRY_TITLE = "Uniform Resource Names (URN) Namespaces"
REGISTRY_CATEGORY = "Uniform Resource Names (URN)"
REGISTRY_NOTE = "This is the Official IANA Registry of URN Namespaces."
RFC8141: Xref = {"type": "rfc", "data": "rfc8141"}
SUB_REGISTRIES = {
    # kind: (id, title, registration rule after "Expert Review, per Section 6 of RFC 8141.")
    "formal": (FORMAL_ID, "Formal URN Namespaces",
               " \nFast-track procedure for standards organizations described in Section 6.3."),
    "informal": (INFORMAL_ID, "Informal URN Namespaces", ""),
}
SUB_REGISTRY_CSV_COLUMNS = ["URN Namespace", "Template", "Reference", "Date", "Updated"]
CSV_COLUMNS = ["kind", "nid", "informal_number", "date", "updated", "template_url",
               "references", "contact", "status", "status_note", "template_date",
               "registry_note"]
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


# --- what the exports share ---------------------------------------------------------


def exported_namespaces(kind: str | None = None):
    """The namespaces in IANA's order (formal by NID, informal by number), with the
    version facts the exports need, in one query."""
    queryset = Namespace.objects.with_version_facts()
    if kind == "formal":
        return queryset.formal().sorted_by("nid")
    if kind == "informal":
        return queryset.informal().sorted_by("number")
    return queryset.order_by("kind", "informal_number", "nid")


def exported_order(kind: str):
    """The namespaces of a sub-registry in IANA's order, without the version facts
    (what the export builder reads to know which records changed)."""
    queryset = Namespace.objects.all()
    if kind == "formal":
        return queryset.formal().sorted_by("nid")
    return queryset.informal().sorted_by("number")


def attach_version_facts(namespaces: list[Namespace]) -> None:
    """Set ``version_count`` and ``last_version_date`` on a page of namespaces in one
    query (a subquery per row would be computed for every row an OFFSET skips)."""
    facts = {row["namespace"]: row for row in TemplateVersion.objects.filter(
        namespace__in=[ns.pk for ns in namespaces]).order_by().values("namespace").annotate(
        n=Count("pk"), last=Max("date"))}
    for ns in namespaces:
        row = facts.get(ns.pk, {})
        ns.version_count = row.get("n", 0)  # type: ignore[attr-defined]
        ns.last_version_date = row.get("last")  # type: ignore[attr-defined]


def template_url(ns: Namespace) -> str:
    """Where the template is published: IANA's page for an imported row, this
    registry's plain-text template for one registered here."""
    if ns.template_url:
        return ns.template_url
    if getattr(ns, "version_count", 0):
        return settings.SITE_URL.rstrip("/") + reverse("namespaces:template-txt", args=[ns.nid])
    return ""


def record_updated(ns: Namespace) -> dt.date | None:
    """The record's ``updated`` date: IANA's, or the date of its latest revision here."""
    dates = [ns.record_updated]
    if getattr(ns, "version_count", 0) > 1:
        dates.append(getattr(ns, "last_version_date", None))
    return max((d for d in dates if d), default=None)


def _metadata() -> dict[str, RegistryMetadata]:
    return {m.key: m for m in RegistryMetadata.objects.all()}


def last_real_change(metadata: dict[str, RegistryMetadata] | None = None,
                     request: HttpRequest | None = None) -> dt.date | None:
    """The registry's ``updated`` date: the date IANA's registry gives, or the last
    change made here (the registry generation's ``real_change_at``), whichever is later."""
    from registry.namespaces.public_cache import current_generation

    metadata = _metadata() if metadata is None else metadata
    changed = current_generation(request).real_change_at
    dates = [metadata["registry"].updated if "registry" in metadata else None,
             changed.date() if changed else None]
    return max((d for d in dates if d), default=None)


def experts(kind: str, metadata: dict[str, RegistryMetadata] | None = None) -> str:
    """The sub-registry's designated experts, as IANA lists them (kept from IANA's
    file), else the accounts in the designated-expert role."""
    metadata = _metadata() if metadata is None else metadata
    if kind in metadata and metadata[kind].experts:
        return metadata[kind].experts
    from registry.namespaces.views import designated_experts

    return ", ".join(designated_experts())


def _typed(refs: list) -> list[Xref]:
    return [xrefs.from_label(r) if isinstance(r, str) else r for r in refs]


# --- XML ---------------------------------------------------------------------------
#
# Elements are written without a namespace and the root declares IANA's as its
# default one, so that a record serialised alone (a fragment) is the very text it
# is inside the document.

RECORD_INDENT = "\n    "  # what precedes each <record> in the indented document
_RECORDS_MARK = "records:{kind}"


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text:
        element.text = xml_safe(text)
    return element


def _xref(parent: ET.Element, xref: Xref) -> ET.Element:
    attrs = {"type": xref.get("type", "text")}
    if xref.get("type") != "text" and "data" in xref:
        attrs["data"] = xref["data"]
    for name in xrefs.FRAGMENT_ATTRIBUTES:
        if xref.get(name):
            attrs[name] = str(xref[name])  # type: ignore[literal-required]
    return _el(parent, "xref", xref.get("text") or None, **attrs)


def xml_frame(request: HttpRequest | None = None) -> list[str]:
    """IANA's ``urn-namespaces.xml`` without its records, cut where each
    sub-registry's records go: ``[head, between, tail]`` for the formal then the
    informal records, each written as ``RECORD_INDENT + xml_fragment``.
    (``request``: the one whose registry generation was read already.)"""
    root = ET.Element("registry", {"xmlns": XML_NS, "id": "urn-namespaces"})
    _el(root, "title", REGISTRY_TITLE)
    _el(root, "category", REGISTRY_CATEGORY)
    metadata = _metadata()
    if updated := last_real_change(metadata, request):
        _el(root, "updated", updated.isoformat())
    _el(root, "note", REGISTRY_NOTE)
    from_accounts: str | None = None  # the experts' accounts read at most once
    for kind, (sub_id, title, rule_tail) in SUB_REGISTRIES.items():
        sub = _el(root, "registry", id=sub_id)
        _el(sub, "title", title)
        _xref(sub, RFC8141)
        rule = _el(sub, "registration_rule", "Expert Review, per Section 6 of ")
        _xref(rule, RFC8141).tail = "." + rule_tail
        line = metadata[kind].experts if kind in metadata else ""
        if not line:
            from_accounts = experts(kind, metadata) if from_accounts is None else from_accounts
            line = from_accounts
        if line:
            _el(sub, "expert", line)
        sub.append(ET.Comment(_RECORDS_MARK.format(kind=kind)))
    people = _el(root, "people")
    for person in Person.objects.order_by("person_id"):
        element = _el(people, "person", id=person.person_id)
        if person.name:
            _el(element, "name", person.name)
        if person.org:
            _el(element, "org", person.org)
        for uri in person.uris:
            _el(element, "uri", uri)
        if person.updated:
            _el(element, "updated", person.updated.isoformat())
    ET.indent(root)
    text = ET.tostring(root, encoding="utf-8", xml_declaration=True).decode()
    parts = []
    for kind in SUB_REGISTRIES:
        head, text = text.split(RECORD_INDENT + f"<!--{_RECORDS_MARK.format(kind=kind)}-->", 1)
        parts.append(head)
    return [*parts, text]


def xml_fragment(ns: Namespace) -> str:
    """The namespace's ``<record>``, indented as it is inside the document."""
    attrs = {}
    if ns.registered_on:
        attrs["date"] = ns.registered_on.isoformat()
    if updated := record_updated(ns):
        attrs["updated"] = updated.isoformat()
    holder = ET.Element("sub")
    record = _el(holder, "record", **attrs)
    _el(record, "name", ns.nid)
    url = template_url(ns)
    references = _typed(ns.references)
    if ns.kind == "formal":
        if url:
            _xref(_el(record, "template"),
                  {"type": "uri", "data": url, "text": f"{ns.nid}-template"})
        for xref in references:
            _xref(record, xref)
    else:
        if url and not any(x.get("type") == "uri" and x.get("data") == url
                           for x in references):
            references = [{"type": "uri", "data": url, "text": ns.nid}, *references]
        for xref in references:
            _xref(record, xref)
        contact = _el(record, "contact")
        for xref in _typed(ns.contact):
            if xref.get("type") == "text":
                contact.text = xml_safe(xref.get("text", ""))
            else:
                _xref(contact, xref)
    ET.indent(record, level=2)
    return ET.tostring(record, encoding="unicode")


# --- CSV ---------------------------------------------------------------------------


def csv_cell(value: object) -> str:
    """A cell a spreadsheet shows as text: one that would start a formula (= + - @,
    tab, CR) gets a leading apostrophe (OWASP's guard against CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _bracketed(refs: list) -> str:
    """References as IANA's tables write them: [RFC6588][RFC Errata 3188]."""
    parts = []
    for xref in _typed(refs):
        text = xrefs.label(xref)
        parts.append(text if xref.get("type") == "text" else f"[{text}]")
    return "".join(parts)


def csv_line(row: Sequence[object]) -> str:
    """One CSV line (CRLF-terminated), every cell neutralised."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([csv_cell(v) for v in row])
    return out.getvalue()


def _iso(date: dt.date | None) -> str:
    return date.isoformat() if date else ""


def iana_csv_fragment(ns: Namespace) -> str:
    """The namespace's line of its sub-registry's CSV as IANA publishes it: URN
    Namespace, Template, Reference (for an informal namespace, its contact), then
    the record's Date and Updated."""
    url = template_url(ns)
    if ns.kind == "formal":
        template, reference = (f"{ns.nid}-template" if url else ""), _bracketed(ns.references)
    else:
        template = ns.nid if url else ""
        reference = _bracketed(ns.contact)
    return csv_line([ns.nid, template, reference, _iso(ns.registered_on),
                     _iso(record_updated(ns))])


def csv_fragment(ns: Namespace) -> str:
    """The namespace's line of the combined CSV: its ``kind``, the template URL, the
    status and the deprecation note beside IANA's columns."""
    return csv_line([
        ns.kind, ns.nid, ns.informal_number or "", _iso(ns.registered_on),
        _iso(record_updated(ns)), template_url(ns), _bracketed(ns.references),
        _bracketed(ns.contact), ns.status, ns.status_note, _iso(ns.template_date),
        ns.registry_note,
    ])
