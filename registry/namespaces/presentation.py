"""Text shown to people: a template's fields as the pages show them, per-field diffs
of two templates and search highlights.

Both the public version history and the experts' round comparison use
``field_diffs``; everything returned is escaped HTML, safe to mark safe."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.db import models
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from registry.namespaces.template import (
    FAST_TRACK_NOTE,
    LINKED_FIELDS,
    SECTIONS,
    SHOWN_WHEN_FILLED,
    TEXT_FIELDS,
    TemplateFields,
    field_label,
    line_label,
)

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")

# The diff's cost is bounded whatever the input. difflib's matcher costs about the product
# of the two sequences' lengths (quadratic), so: strip the common head and tail (linear);
# compare word by word only where len(old) x len(new) is within one call's budget; else
# compare line by line first, and word by word only inside changed lines that fit; and stop
# doing detailed work once a page's total budget is spent. What is not compared in detail
# is shown whole (struck out on the left, inserted on the right) and marked ``coarse``.
# About 0.25 s of CPU per million units on the worst inputs measured.
CALL_BUDGET = 250_000
PAGE_BUDGET = 1_500_000


@dataclass(frozen=True)
class TemplateLine:
    """One field's value on a page: ``label`` is empty when the section's title names it."""

    name: str
    label: str
    value: str
    kind: str  # "email" (written harvest-resistant), "link" (addresses linked) or "text"


@dataclass(frozen=True)
class TemplateEntry:
    """One section of the template (a <dt> and its <dd>), in the order of ``SECTIONS``."""

    title: str
    lines: tuple[TemplateLine, ...]
    note: str = ""


def _kind(name: str) -> str:
    if isinstance(TemplateFields._meta.get_field(name), models.EmailField):
        return "email"
    return "link" if name in LINKED_FIELDS else "text"


def template_entries(values: object) -> list[TemplateEntry]:
    """The published fields of ``values`` (a request, a round or a version), section by
    section of ``SECTIONS``: what ``review/_template_fields.html`` writes."""
    entries = []
    for number, section in enumerate(SECTIONS):
        several = len(section.fields) > 1
        lines = tuple(
            TemplateLine(name, line_label(name) if several else "", value, _kind(name))
            for name in section.fields
            if (value := (getattr(values, name, "") or "").strip()) or not several)
        if all(name in SHOWN_WHEN_FILLED for name in section.fields) and not any(
                line.value for line in lines):
            continue
        note = FAST_TRACK_NOTE if number == 0 and getattr(values, "fast_track", False) else ""
        entries.append(TemplateEntry(section.title, lines, note))
    return entries


@dataclass(frozen=True)
class FieldDiff:
    name: str
    label: str
    old: SafeString
    new: SafeString
    changed: bool
    coarse: bool = False  # too large to compare in detail: changed parts shown whole


class DiffBudget:
    """Units of matcher work left for one page (one call of ``field_diffs``)."""

    def __init__(self, units: int = PAGE_BUDGET):
        self.units = units

    def take(self, a: int, b: int) -> bool:
        cost = a * b
        if cost > CALL_BUDGET or cost > self.units:
            return False
        self.units -= cost
        return True


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """Lengths of the common head and tail of two sequences (which never overlap)."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


class _Sides:
    def __init__(self) -> None:
        self.left: list[str] = []
        self.right: list[str] = []
        self.coarse = False

    def same(self, a: list[str], b: list[str]) -> None:
        self.left.append(escape("".join(a)))
        self.right.append(escape("".join(b)))

    def changed(self, a: list[str], b: list[str]) -> None:
        if a:
            self.left.append(f"<del>{escape(''.join(a))}</del>")
        if b:
            self.right.append(f"<ins>{escape(''.join(b))}</ins>")


def _opcodes(a: list[str], b: list[str]):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _by_tokens(sides: _Sides, a: list[str], b: list[str], budget: DiffBudget) -> bool:
    """Word-by-word comparison if it fits the budget; False (nothing written) if not."""
    if not budget.take(len(a), len(b)):
        return False
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            sides.same(a[i1:i2], b[j1:j2])
        else:
            sides.changed(a[i1:i2], b[j1:j2])
    return True


def _by_lines(sides: _Sides, old: str, new: str, budget: DiffBudget) -> None:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    if not budget.take(len(a), len(b)):
        sides.changed(a, b)
        sides.coarse = True
        return
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            sides.same(a[i1:i2], b[j1:j2])
        elif not _by_tokens(sides, _tokens("".join(a[i1:i2])), _tokens("".join(b[j1:j2])),
                            budget):
            sides.changed(a[i1:i2], b[j1:j2])
            sides.coarse = sides.coarse or (i2 > i1 and j2 > j1)


def _side_by_side(old: str, new: str,
                  budget: DiffBudget | None = None) -> tuple[SafeString, SafeString, bool]:
    budget = budget or DiffBudget()
    a, b = _tokens(old), _tokens(new)
    head, tail = _common_ends(a, b)
    sides = _Sides()
    sides.same(a[:head], b[:head])
    middle_a, middle_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if not _by_tokens(sides, middle_a, middle_b, budget):
        _by_lines(sides, "".join(middle_a), "".join(middle_b), budget)
    sides.same(a[len(a) - tail:], b[len(b) - tail:])
    return (mark_safe("".join(sides.left)), mark_safe("".join(sides.right)),  # noqa: S308
            sides.coarse)  # every piece was escaped in _Sides


def field_diffs(old: dict[str, str], new: dict[str, str],
                fields: tuple[str, ...] = TEXT_FIELDS) -> list[FieldDiff]:
    """One FieldDiff per field; the whole call stays within one page's diff budget."""
    budget = DiffBudget()
    result = []
    for name in fields:
        a, b = old.get(name, "") or "", new.get(name, "") or ""
        if a == b:
            result.append(FieldDiff(name, field_label(name), escape(a), escape(b), False))
            continue
        left, right, coarse = _side_by_side(a, b, budget)
        result.append(FieldDiff(name, field_label(name), left, right, True, coarse))
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
    out: list[str] = []
    last = 0
    for hit in pattern.finditer(snippet):
        out.append(escape(snippet[last:hit.start()]))
        out.append(f"<mark>{escape(hit.group(0))}</mark>")
        last = hit.end()
    out.append(escape(snippet[last:]))
    prefix = "… " if start else ""
    suffix = " …" if start + width < len(text) else ""
    return mark_safe(prefix + "".join(out) + suffix)  # noqa: S308 - escaped above


def nid_route(name: str) -> Callable[[str], str]:
    """The path of a per-NID route, reversed once for a whole list: a NID is letters,
    digits and hyphens only (RFC 8141 section 2), so it goes into the path as it is
    (reversing 250 rows one by one was a third of a list's time)."""
    from django.urls import reverse

    head, tail = reverse(name, args=["NID"]).split("NID", 1)
    return lambda nid: f"{head}{nid}{tail}"


def registry_rows(rows, *, informal: bool = False) -> SafeString:
    """The rows of a registry table (formal: NID, date, reference, template;
    informal: NID, value, date, registrant, template) as escaped HTML, from the
    dicts of ``Namespace.objects.table_rows()``.

    Built here rather than in a template loop: a page has 250 rows, and the
    template engine would spend most of a cold page's time on them."""
    from html import escape  # the standard library's: these rows are built, not rendered

    from registry.namespaces.models import Namespace, reference_link

    detail = nid_route("namespaces:detail")
    text = nid_route("namespaces:template-txt")
    out = []
    for row in rows:
        nid = escape(row["nid"])
        deprecated = row["status"] == Namespace.Status.DEPRECATED
        link = f'<a class="nid" href="{detail(nid)}">{nid}</a>'
        if deprecated:
            link += ' <span class="badge text-bg-warning">deprecated</span>'
        date = row["registered_on"].isoformat() if row["registered_on"] else ""
        if row["version_count"]:
            template = f'<a href="{text(nid)}">version {row["version_count"]}</a>'
        elif row["template_url"]:
            template = (f'<a href="{escape(row["template_url"])}" '
                        'title="The template as IANA publishes it">IANA</a>')
        else:
            template = '<span class="text-body-secondary">—</span>'
        if informal:
            cells = [link, str(row["informal_number"]), date,
                     f"<bdi>{escape(row['organisation'])}</bdi>", template]
        else:
            refs = ", ".join(f'<a href="{escape(url)}">{escape(label)}</a>' if url
                             else escape(label)
                             for label, url in map(reference_link, row["references"]))
            cells = [link, date, refs, template]
        row_class = ' class="text-body-secondary"' if deprecated else ""
        out.append(f"<tr{row_class}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return mark_safe("\n".join(out))  # noqa: S308 - every value escaped above
