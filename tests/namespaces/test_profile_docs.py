"""toolkit/README.md's table of a profile's keys (the one description of the format, which
docs/api.md links to) names exactly what urn8141.profiles accepts: the keys, the closed
set of validators, the equivalence steps and the resolver variables. A validator, a step,
a variable or a key added to the code fails here until the README has it, and one the code
drops fails until the README drops it.

The table is the one whose heading row is ``| key | what |``; the names are read from its
cells' backquoted words."""

import re

from django.conf import settings

from urn8141.profiles import PROFILE_KEYS, RESOLVER_VARIABLES, STEPS, VALIDATORS

README = settings.BASE_DIR / "toolkit" / "README.md"
HEADING = "| key | what |"


def _rows() -> dict[str, str]:
    """Each key the table names, with the text of its row's second cell."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert HEADING in lines, f"toolkit/README.md has no table headed {HEADING!r}"
    rows: dict[str, str] = {}
    for line in lines[lines.index(HEADING) + 2:]:
        if not line.startswith("|"):
            break
        _, keys, what, *_ = line.split("|")
        for key in re.findall(r"`([^`]+)`", keys):
            rows[key] = what
    return rows


def _names(cell: str, pattern: str) -> set[str]:
    return {word for word in re.findall(r"`([^`]+)`", cell) if re.fullmatch(pattern, word)}


def test_the_table_has_a_row_per_key():
    assert sorted(_rows()) == sorted(PROFILE_KEYS)


def test_the_closed_sets_are_the_codes():
    rows = _rows()
    assert _names(rows["validators"], r"[a-z0-9-]+") == set(VALIDATORS)
    assert _names(rows["equivalence"], r"[a-z0-9-]+") == set(STEPS)
    assert _names(rows["resolvers"], r"\{[a-z_]+\}") == {f"{{{v}}}" for v in RESOLVER_VARIABLES}
