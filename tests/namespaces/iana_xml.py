"""Reading IANA-format XML for comparison: every record, person and piece of
registry metadata as plain tuples, whitespace normalised (test helper)."""

from __future__ import annotations

from lxml import etree

NS = {"i": "http://www.iana.org/assignments"}


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _xrefs(element) -> list[tuple[str, str, str]]:
    return [(x.get("type"), x.get("data", ""), _norm(x.text))
            for x in element.findall("i:xref", NS)] if element is not None else []


def _mixed(element) -> str:
    """Text with its inline xrefs, as one normalised string."""
    if element is None:
        return ""
    parts = [element.text or ""]
    for child in element:
        parts.append(f"[{child.get('type')}:{child.get('data', '')}]{child.text or ''}")
        parts.append(child.tail or "")
    return _norm("".join(parts))


def summary(data: bytes) -> dict:
    root = etree.fromstring(data)
    result = {
        "title": _norm(root.findtext("i:title", namespaces=NS)),
        "category": _norm(root.findtext("i:category", namespaces=NS)),
        "updated": root.findtext("i:updated", namespaces=NS),
        "people": sorted(
            (p.get("id"), _norm(p.findtext("i:name", namespaces=NS)),
             tuple(_norm(u.text) for u in p.findall("i:uri", NS)),
             p.findtext("i:updated", namespaces=NS))
            for p in root.findall("i:people/i:person", NS)
        ),
    }
    for sub in root.findall("i:registry", NS):
        result[sub.get("id")] = {
            "title": _norm(sub.findtext("i:title", namespaces=NS)),
            "xrefs": _xrefs(sub),
            "rule": _mixed(sub.find("i:registration_rule", NS)),
            "expert": _norm(sub.findtext("i:expert", namespaces=NS)),
            "records": [
                {
                    "name": r.findtext("i:name", namespaces=NS),
                    "date": r.get("date"),
                    "updated": r.get("updated"),
                    "template": _xrefs(r.find("i:template", NS)),
                    "xrefs": _xrefs(r),
                    "contact": _mixed(r.find("i:contact", NS)) if r.find("i:contact", NS)
                    is not None else None,
                }
                for r in sub.findall("i:record", NS)
            ],
        }
    return result
