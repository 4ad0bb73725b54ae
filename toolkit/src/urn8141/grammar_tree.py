"""The tree an NSS syntax is read into (grammar.py), whether written as ABNF or as
a regular expression: character sets, sequences, alternations, bounded
repetitions and named rules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Chars:
    codes: frozenset[int]


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    low: int
    high: int | None  # None: no upper bound
    item: Node


@dataclass(frozen=True, slots=True)
class Rule:
    """A named rule, kept so that a mismatch can name the rule it happened in."""

    name: str
    item: Node


@dataclass(frozen=True, slots=True)
class Ref:
    """A rule named in ABNF, before it is resolved."""

    name: str


Node = Chars | Seq | Alt | Repeat | Rule | Ref


def code_ranges(codes: frozenset[int]) -> list[tuple[int, int]]:
    """The code points as runs (first, last), in order: a character class's ranges."""
    ranges: list[tuple[int, int]] = []
    for code in sorted(codes):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return ranges
