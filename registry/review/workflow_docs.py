"""The states and transitions tables of docs/workflow.md, written from the workflow's
own tables (registry/review/workflow/tables.py), so the manual cannot drift from them.

``python manage.py docs_tables`` rewrites each table between its markers in the document;
``--check`` fails, naming the table, when the document differs from what the code says
(the suite runs it). A new column of either table shows up in the document by itself.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from registry.accounts.roles import EXPERT_ROLE, REGISTRANT_ROLE, STAFF_ROLE
from registry.review.models import State
from registry.review.workflow.tables import (
    COMMUNITY,
    EXPERTS,
    FAST_TRACK,
    IESG,
    REGISTRANT,
    REVIEW_LIST,
    STAFF,
    STATES,
    TRANSITIONS,
    StateMeaning,
    Transition,
)

# What the document calls a column of STATES; a new column without a heading here is
# headed by its name.
STATE_HEADINGS: dict[str, str] = {
    "initial": "where a request starts",
    "open": "open (dashboard, assignable)",
    "final": "final",
    "editable": "registrant edits the template",
    "reminds": "reminded first when idle",
    "public_review": "on the public review page",
    "answered_by_mail": "registrant's mail answers the experts",
    "staff_next_step": "in IANA staff's queue: what their mail says next",
    "standardisation_open": "experts set standardisation",
    "review_clock": "review period runs",
}
ROLE_NAMES = {REGISTRANT_ROLE: "registrant", EXPERT_ROLE: "designated expert",
              STAFF_ROLE: "IANA staff"}
PATH_NAMES = {COMMUNITY: "community", FAST_TRACK: "fast track"}
AUDIENCE_NAMES = {REVIEW_LIST: "review list (`REVIEW_LIST_ADDRESS`)", REGISTRANT: "registrant",
                  EXPERTS: "experts", STAFF: "IANA staff", IESG: "the IESG (`IESG_ADDRESS`)"}


@dataclass(frozen=True)
class DocTable:
    name: str  # its markers: <!-- generated: NAME --> ... <!-- end generated: NAME -->
    path: str  # the document, from the project's root
    lines: tuple[str, ...]


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _table(heads: list[str], rows: Iterable[Iterable[str]]) -> tuple[str, ...]:
    return (_row(heads), _row("---" for _ in heads), *(_row(r) for r in rows))


def _state(name: str) -> str:
    return str(State(name).label) if name in State.values else name


def _states(names: Iterable[str]) -> str:
    order = list(STATES)
    return ", ".join(_state(n) for n in sorted(names, key=order.index))


def states_table() -> tuple[str, ...]:
    flags = [f.name for f in dataclasses.fields(StateMeaning)
             if f.name not in ("state", "badge")]
    heads = ["state", *(STATE_HEADINGS.get(f, f.replace("_", " ")) for f in flags)]
    return _table(heads, ([f"{row.label} (`{name}`)", *(_cell(getattr(row, f)) for f in flags)]
                          for name, row in STATES.items()))


def _cell(value: bool | str) -> str:
    """A flag is "yes" or blank; an audience (who is reminded) is named; a text (what
    staff's mail says next) is itself."""
    if isinstance(value, str):
        return AUDIENCE_NAMES.get(value, value)
    return "yes" if value else ""


def _requires(t: Transition) -> list[str]:
    needs = []
    if t.needs_comment:
        needs.append(f"a comment ({t.needs_comment})")
    if t.decision:
        needs.append("the review period over, or a reason")
    if t.standardisation is not None:
        needs.append("standardisation involved" if t.standardisation
                     else "no standardisation")
    if t.complete_template:
        needs.append("a complete template")
    if t.independent:
        needs.append("not the request's registrant")
    if t.overtaken_only:
        needs.append("a race for its NID, or a holder change of the namespace it revises")
    if t.needs_free_nid:
        needs.append("the NID still free")
    return needs


def _does(t: Transition) -> list[str]:
    return [what for flag, what in ((t.creates_round, "a new round of review"),
                                    (t.publishes, "publishes the namespace")) if flag]


def transitions_table() -> tuple[str, ...]:
    heads = ["transition", "from", "to", "who", "path", "requires", "does", "mailed"]
    rows = []
    for name, t in TRANSITIONS.items():
        paths = ("both" if len(t.paths) > 1 else
                 ", ".join(PATH_NAMES.get(p, p) for p in sorted(t.paths)))
        rows.append([f"{t.label} (`{name}`)", _states(t.sources), _state(t.target),
                     " or ".join(ROLE_NAMES.get(r, r) for r in sorted(t.roles)), paths,
                     "; ".join(_requires(t)), "; ".join(_does(t)),
                     ", ".join(AUDIENCE_NAMES.get(a, a) for a in t.mail)])
    return _table(heads, rows)


def tables() -> list[DocTable]:
    return [DocTable("states table", "docs/workflow.md", states_table()),
            DocTable("transitions table", "docs/workflow.md", transitions_table())]


def begin(name: str) -> str:
    return f"<!-- generated: {name} (python manage.py docs_tables; edit the code, not this) -->"


def end(name: str) -> str:
    return f"<!-- end generated: {name} -->"


class MarkersMissing(Exception):
    pass


def rewrite(text: str, table: DocTable) -> str:
    """``text`` with ``table`` between its markers."""
    pattern = re.compile(re.escape(begin(table.name)) + r"\n.*?" + re.escape(end(table.name)),
                         re.DOTALL)
    if not pattern.search(text):
        raise MarkersMissing(f"{table.path} has no markers for the {table.name}: "
                             f"{begin(table.name)!r} ... {end(table.name)!r}")
    body = "\n".join((begin(table.name), *table.lines, end(table.name)))
    return pattern.sub(lambda _: body, text, count=1)


def stale(root: Path, *, write: bool) -> list[str]:
    """The tables whose document differs from the code (rewritten when ``write``)."""
    differing = []
    for table in tables():
        path = root / table.path
        text = path.read_text(encoding="utf-8")
        wanted = rewrite(text, table)
        if wanted != text:
            differing.append(f"{table.path}: {table.name}")
            if write:
                path.write_text(wanted, encoding="utf-8")
    return differing
