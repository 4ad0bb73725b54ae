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


def missing_numbers(params, items: list, *, number=lambda item: item.number) -> list[str]:
    """The ``?a=&b=`` values that name none of ``items`` (to say so rather than show
    other versions than the ones asked for)."""
    known = {str(number(item)) for item in items}
    return [params[name] for name in ("a", "b") if params.get(name, "") not in ("", *known)]


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
