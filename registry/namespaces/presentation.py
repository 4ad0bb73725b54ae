"""Text shown to people: per-field diffs of two templates and search highlights.

Both the public version history and the experts' round comparison use
``field_diffs``; everything returned is escaped HTML, safe to mark safe."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from registry.namespaces.template import TEXT_FIELDS, field_label

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class FieldDiff:
    name: str
    label: str
    old: SafeString
    new: SafeString
    changed: bool


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def _side_by_side(old: str, new: str) -> tuple[SafeString, SafeString]:
    a, b = _tokens(old), _tokens(new)
    left: list[str] = []
    right: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        old_part = escape("".join(a[i1:i2]))
        new_part = escape("".join(b[j1:j2]))
        if op == "equal":
            left.append(old_part)
            right.append(new_part)
            continue
        if old_part:
            left.append(f"<del>{old_part}</del>")
        if new_part:
            right.append(f"<ins>{new_part}</ins>")
    return mark_safe("".join(left)), mark_safe("".join(right))  # noqa: S308 - escaped above


def field_diffs(old: dict[str, str], new: dict[str, str],
                fields: tuple[str, ...] = TEXT_FIELDS) -> list[FieldDiff]:
    result = []
    for name in fields:
        a, b = old.get(name, "") or "", new.get(name, "") or ""
        left, right = _side_by_side(a, b) if a != b else (escape(a), escape(b))
        result.append(FieldDiff(name, field_label(name), left, right, a != b))
    return result


def pick_pair(params, items: list, *, number=lambda item: item.number) -> tuple:
    """The (old, new) pair to compare from ``?a=&b=``, among ``items`` newest first;
    by default the previous and the latest. Unknown or malformed numbers fall back."""
    by_number = {number(item): item for item in items}

    def pick(name, default):
        try:
            return by_number.get(int(params.get(name, default)), by_number[default])
        except (TypeError, ValueError):
            return by_number[default]

    return pick("a", number(items[1])), pick("b", number(items[0]))


def highlight(text: str, query: str, *, width: int = 180) -> SafeString:
    """A snippet of ``text`` around the first query word found, words marked."""
    text = text or ""
    words = [re.escape(w) for w in (query or "").split() if len(w) > 1][:10]
    if not words:
        return escape(text[:width])
    pattern = re.compile("|".join(words), re.IGNORECASE)
    m = pattern.search(text)
    start = max(0, (m.start() if m else 0) - width // 3)
    snippet = text[start:start + width]
    out, last = [], 0
    for hit in pattern.finditer(snippet):
        out.append(escape(snippet[last:hit.start()]))
        out.append(f"<mark>{escape(hit.group(0))}</mark>")
        last = hit.end()
    out.append(escape(snippet[last:]))
    prefix = "… " if start else ""
    suffix = " …" if start + width < len(text) else ""
    return mark_safe(prefix + "".join(out) + suffix)  # noqa: S308 - escaped above


def registry_rows(namespaces, *, informal: bool = False) -> SafeString:
    """The rows of a registry table (formal: NID, date, reference, template;
    informal: NID, value, date, registrant, template) as escaped HTML.

    Built here rather than in a template loop: a page has 250 rows, and the
    template engine would spend most of a cold page's time on them."""
    from django.urls import reverse

    detail = reverse("namespaces:detail", args=["NID"])
    text = reverse("namespaces:template-txt", args=["NID"])
    out = []
    for ns in namespaces:
        nid = escape(ns.nid)
        deprecated = ns.is_deprecated
        link = f'<a class="nid" href="{detail.replace("NID", nid)}">{nid}</a>'
        if deprecated:
            link += ' <span class="badge text-bg-warning">deprecated</span>'
        date = ns.registered_on.isoformat() if ns.registered_on else ""
        if getattr(ns, "version_count", 0):
            template = f'<a href="{text.replace("NID", nid)}">version {ns.version_count}</a>'
        elif ns.template_url:
            template = (f'<a href="{escape(ns.template_url)}" '
                        'title="The template as IANA publishes it">IANA</a>')
        else:
            template = '<span class="text-body-secondary">—</span>'
        if informal:
            cells = [link, str(ns.informal_number), date, escape(ns.organisation), template]
        else:
            refs = ", ".join(f'<a href="{escape(url)}">{escape(label)}</a>' if url
                             else escape(label) for label, url in ns.reference_links)
            cells = [link, date, refs, template]
        row_class = ' class="text-body-secondary"' if deprecated else ""
        out.append(f"<tr{row_class}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return mark_safe("\n".join(out))  # noqa: S308 - every value escaped above
