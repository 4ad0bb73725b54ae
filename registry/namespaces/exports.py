"""The registry as IANA-style XML and CSV, generated from the same rows the
pages show, and the XML read back for import (round trip)."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET  # noqa: S405 - writing, and parsing our own export below
from collections.abc import Iterable

from registry.namespaces.models import Namespace

XML_NS = "http://www.iana.org/assignments"
REGISTRY_TITLE = "Uniform Resource Names (URN) Namespaces"
FORMAL_RULE = (
    "Expert Review, per Section 6 of RFC 8141. Fast-track procedure for standards "
    "organizations described in Section 6.3."
)
INFORMAL_RULE = "First Come First Served; the NID is assigned by IANA (RFC 8141 section 5.2)."
CSV_COLUMNS = ["kind", "name", "date", "refs", "template_url", "template_date", "registrant",
               "notes", "status"]
_RFC_REF = re.compile(r"RFC(\d+)")


def _rows(namespaces: Iterable[Namespace]) -> Iterable[tuple[str, dict]]:
    for ns in namespaces:
        yield ns.kind, {
            "name": ns.nid,
            "value": ns.informal_number,
            "date": ns.registered_on.isoformat() if ns.registered_on else "",
            "refs": list(ns.references),
            "template_url": ns.template_url,
            "template_date": ns.template_date.isoformat() if ns.template_date else "",
            "registrant": ns.organisation if ns.kind == "informal" else "",
            "notes": [n for n in ns.registry_note.split("; ") if n],
            "status": ns.status,
            "status_note": ns.status_note,
        }


def registry_csv(namespaces: Iterable[Namespace]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for kind, row in _rows(namespaces):
        writer.writerow([
            kind, row["name"], row["date"], "; ".join(row["refs"]), row["template_url"],
            row["template_date"], row["registrant"], "; ".join(row["notes"]), row["status"],
        ])
    return out.getvalue()


def registry_xml(namespaces: Iterable[Namespace], *, updated: str) -> bytes:
    ET.register_namespace("", XML_NS)
    root = ET.Element(f"{{{XML_NS}}}registry", id="urn-namespaces")
    ET.SubElement(root, f"{{{XML_NS}}}title").text = REGISTRY_TITLE
    ET.SubElement(root, f"{{{XML_NS}}}updated").text = updated
    subs = {}
    for index, (kind, title, rule) in enumerate(
        (("formal", "Formal URN Namespaces", FORMAL_RULE),
         ("informal", "Informal URN Namespaces", INFORMAL_RULE)), start=1
    ):
        sub = ET.SubElement(root, f"{{{XML_NS}}}registry", id=f"urn-namespaces-{index}")
        ET.SubElement(sub, f"{{{XML_NS}}}title").text = title
        ET.SubElement(sub, f"{{{XML_NS}}}registration_rule").text = rule
        subs[kind] = sub
    for kind, row in _rows(namespaces):
        attrs = {"date": row["date"]} if row["date"] else {}
        record = ET.SubElement(subs[kind], f"{{{XML_NS}}}record", attrs)
        if kind == "informal":
            ET.SubElement(record, f"{{{XML_NS}}}name").text = row["name"]
            ET.SubElement(record, f"{{{XML_NS}}}value").text = str(row["value"])
        else:
            ET.SubElement(record, f"{{{XML_NS}}}name").text = row["name"]
        if row["status"] != "active":
            status = ET.SubElement(record, f"{{{XML_NS}}}status", note=row["status_note"])
            status.text = row["status"]
        if row["template_url"]:
            file_attrs = {"type": "template"}
            if row["template_date"]:
                file_attrs["date"] = row["template_date"]
            ET.SubElement(record, f"{{{XML_NS}}}file", file_attrs).text = row["template_url"]
        if row["registrant"]:
            ET.SubElement(record, f"{{{XML_NS}}}registrant").text = row["registrant"]
        for ref in row["refs"]:
            m = _RFC_REF.fullmatch(ref)
            if m:
                ET.SubElement(record, f"{{{XML_NS}}}xref", type="rfc", data=f"rfc{m.group(1)}")
            else:
                ET.SubElement(record, f"{{{XML_NS}}}xref", type="text").text = ref
        for note in row["notes"]:
            ET.SubElement(record, f"{{{XML_NS}}}note").text = note
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def rows_from_registry_xml(text: str) -> tuple[list[dict], list[dict]]:
    """Registry rows, in the import command's shape, from :func:`registry_xml` output."""
    # Our own export: no DTD, no entities; ElementTree refuses external entities.
    root = ET.fromstring(text)  # noqa: S314
    q = f"{{{XML_NS}}}"
    formal: list[dict] = []
    informal: list[dict] = []
    for sub in root.findall(f"{q}registry"):
        target = informal if sub.get("id") == "urn-namespaces-2" else formal
        for record in sub.findall(f"{q}record"):
            file_el = record.find(f"{q}file")
            refs = []
            for xref in record.findall(f"{q}xref"):
                if xref.get("type") == "rfc":
                    refs.append("RFC" + xref.get("data", "")[3:])
                else:
                    refs.append(xref.text or "")
            row = {
                "name": record.findtext(f"{q}name", ""),
                "date": record.get("date", ""),
                "refs": refs,
                "template_url": file_el.text if file_el is not None else "",
                "template_date": file_el.get("date", "") if file_el is not None else "",
                "registrant": record.findtext(f"{q}registrant", ""),
                "notes": [n.text or "" for n in record.findall(f"{q}note")],
            }
            if target is informal:
                row["value"] = int(record.findtext(f"{q}value", "0"))
            target.append(row)
    if not formal and not informal:
        raise ValueError("no <record> elements")
    return formal, informal
