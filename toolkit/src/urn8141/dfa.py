"""The DFAs a compiled NSS syntax (grammar.py) runs beside RE2, both built by subset
construction from the grammar's Thompson NFA:

* the diagnosis (``Diagnosis``): a DFA built lazily, a step at a time as texts need
  it, that walks an NSS to the first character no path through the grammar takes and
  says which rules were being matched there and what they expected (``Mismatch``);
* the whole DFA over ASCII (``ascii_table``), as the tables urn8141/_speedups.c runs.

Both are bounded (``MAX_*``), so a hostile grammar can make neither slow nor large.
An NFA is given as its edges (per state, ``(codes, target, rule)`` or None) and the
closure of a set of its states over its empty moves.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Sequence
from typing import NamedTuple

MAX_TABLE_STATES = 2048  # the whole ASCII DFA handed to urn8141/_speedups.c
MAX_TABLE_WORK = 6_000_000  # NFA states visited to build it, at most (under a second)
MAX_DFA_STATES = 4096  # per grammar: the lazily built DFA of the diagnosis

Edges = Sequence[tuple[frozenset[int], int, str] | None]
Closure = Callable[[set[int]], set[int]]


class Mismatch(NamedTuple):
    offset: int            # the first character no path takes (len(text): it ended early)
    rules: tuple[str, ...]  # the rules being matched there
    expected: frozenset[int]


_new = tuple.__new__  # a named tuple from its fields in one C call


class Diagnosis:
    """The NFA from ``start`` to ``accept`` as a DFA built lazily. ``top`` is the rule
    a mismatch names where no rule has a next character (the whole NSS)."""

    def __init__(self, edges: Edges, closure: Closure, start: int, accept: int,
                 top: str) -> None:
        self._edges = edges
        self._closure = closure
        self._start = start
        self._accept = accept
        self._top = top
        self._reset()

    def mismatch(self, text: str) -> Mismatch | None:
        """Where ``text`` leaves the grammar, or None if it matches. Linear in the text:
        each character is one step of the DFA (a step not seen before costs at most the
        NFA's size; the cache of steps is bounded)."""
        current = self._initial
        trans = self._trans
        for i, ch in enumerate(text):
            nxt = trans[current].get(ch)
            if nxt is None:
                current, nxt = self._step(current, ch)
                trans = self._trans  # the step may have started the cache afresh
            if nxt == self._dead:
                return self._stuck(current, i)
            current = nxt
        if self._accept in self._sets[current]:
            return None
        return self._stuck(current, len(text))

    def _intern(self, states: frozenset[int]) -> int:
        found = self._ids.get(states)
        if found is None:
            found = self._ids[states] = len(self._sets)
            self._sets.append(states)
            self._trans.append({})
        return found

    def _reset(self) -> None:
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._trans: list[dict[str, int]] = []  # per DFA state: character -> next state
        self._expected: dict[int, tuple[tuple[str, ...], frozenset[int]]] = {}
        self._dead = self._intern(frozenset())
        self._initial = self._intern(frozenset(self._closure({self._start})))

    def _step(self, current: int, ch: str) -> tuple[int, int]:
        """The DFA state after ``current`` reads ``ch``, as (current, next): when the
        cache is full it starts afresh, and ``current`` has a new number then."""
        code = ord(ch)
        edges = self._edges
        states = self._sets[current]
        moved = set()
        for s in states:
            edge = edges[s]
            if edge is not None and code in edge[0]:
                moved.add(edge[1])
        if len(self._sets) + 2 > MAX_DFA_STATES:  # keep memory bounded: start afresh
            self._reset()
            current = self._intern(states)
        target = self._intern(frozenset(self._closure(moved)) if moved else frozenset())
        self._trans[current][ch] = target
        return current, target

    def _stuck(self, current: int, offset: int) -> Mismatch:
        """What the rules being matched in DFA state ``current`` expected next."""
        known = self._expected.get(current)
        if known is None:
            expected: set[int] = set()
            rules: list[str] = []
            for s in sorted(self._sets[current]):
                edge = self._edges[s]
                if edge is not None:
                    expected |= edge[0]
                    if edge[2] and edge[2] not in rules:
                        rules.append(edge[2])
            # Stuck where no rule has a next character (the end of the first rule):
            # the first rule, the whole NSS, is the one not met.
            known = self._expected[current] = (tuple(rules) or (self._top,),
                                               frozenset(expected))
        return _new(Mismatch, (offset, *known))


def ascii_table(edges: Edges, closure: Closure, start: int,
                accept: int) -> tuple[bytes, bytes, bytes, int] | None:
    """The whole DFA over ASCII, as the tables urn8141/_speedups.c runs:
    ``classes`` (128 bytes: a character's class; characters that every NFA edge
    treats alike share one), ``trans`` (per state and class the next state, 16-bit
    little-endian; state 0 is dead, 1 the start), ``accept`` (a byte per state) and
    the number of classes. None when it would have more than MAX_TABLE_STATES states
    or when building it would visit more than MAX_TABLE_WORK NFA states (the Python
    path then checks that profile). Subset construction over the classes: states x
    classes steps, each bounded by the NFA."""
    takes: list[set[int]] = [set() for _ in range(128)]
    for state, edge in enumerate(edges):
        if edge is not None:
            for code in edge[0]:
                if code < 128:
                    takes[code].add(state)
    class_of: dict[frozenset[int], int] = {}
    members: list[frozenset[int]] = []
    classes = bytearray(128)
    for code in range(128):
        key = frozenset(takes[code])
        if key not in class_of:
            class_of[key] = len(members)
            members.append(key)
        classes[code] = class_of[key]
    first = frozenset(closure({start}))
    ids: dict[frozenset[int], int] = {frozenset(): 0, first: 1}
    order = [frozenset(), first]
    rows = array("H")
    at = 0
    work = 0
    while at < len(order):
        current = order[at]
        for taking in members:
            moved = {edges[s][1] for s in current & taking}  # type: ignore[index]
            target = frozenset(closure(moved)) if moved else frozenset()
            work += len(current) + len(target)
            if work > MAX_TABLE_WORK:  # a grammar whose table costs too much to build
                return None
            found = ids.get(target)
            if found is None:
                if len(order) >= MAX_TABLE_STATES:
                    return None
                found = ids[target] = len(order)
                order.append(target)
            rows.append(found)
        at += 1
    if sys.byteorder == "big":
        rows.byteswap()
    accepting = bytes(accept in states for states in order)
    return bytes(classes), rows.tobytes(), accepting, len(members)
