"""Which NSS grammars Python's own ``re`` may match, and the pattern it is given.

``re`` is a backtracking engine: on a pattern such as ``(?:a*)*b`` it tries every
way of splitting a run of ``a`` between the two stars, and the time doubles with
each added character. RE2 (grammar.py) never backtracks, but each call through
its Python binding costs several times a call of ``re``. So a grammar is given
to ``re`` only when it is **LL(1)**: every choice the matcher makes (which option
of an alternation, whether an optional or repeated part is taken once more or
left) is decided by the next character alone (or by the end of the text)::

    Alt(o1, ..., ok):   at most one option can match the empty string, and the
                        sets FIRST(oi), plus FOLLOW for that option, are disjoint;
    Repeat(m, n, x):    when n > m, x cannot match the empty string and
                        FIRST(x) is disjoint from FOLLOW (iterate or leave).

FIRST(x) is the set of characters that can begin a match of x; FOLLOW is the set
that can come after it in the whole grammar (END at the end of the text).

Why that makes ``re`` linear, whatever the text: at each choice, an option whose
set does not hold the next character cannot consume it, so it fails at its first
character test, having consumed nothing. With at most one option able to go on
without consuming, and loop bodies that cannot be empty, the path taken before
such a failure visits each point of the pattern at most once. So the search
has one path that consumes characters, and every other branch dies after a
number of steps bounded by the size of the pattern, not of the text: the time is
at most (text length) x (pattern size) x a constant. ``(?:a*)*b`` is refused (its
inner star can be empty), as is ``[0-9]|[0-9][0-9]`` (FIRST sets overlap);
toolkit/tests/test_deterministic.py checks the refusals and times the accepted
patterns on inputs built from their own literals.

1-unambiguity (a deterministic Glushkov automaton) would not be enough: it
accepts ``(?:a*)*b``, on which ``re`` takes exponential time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from urn8141.grammar_tree import Alt, Chars, Node, Ref, Repeat, Rule, Seq, code_ranges

T = TypeVar("T")

END = -1  # the end of the text, in FIRST/FOLLOW sets


class _Analysis:
    def __init__(self) -> None:
        self._nullable: dict[int, bool] = {}
        self._first: dict[int, frozenset[int]] = {}
        self._keep: list[Node] = []  # the ids above stay valid while this lives

    def _memo(self, table: dict[int, T], compute: Callable[[Node], T], node: Node) -> T:
        key = id(node)
        known = table.get(key)
        if known is None:
            known = table[key] = compute(node)
            self._keep.append(node)
        return known

    def nullable(self, node: Node) -> bool:
        return self._memo(self._nullable, self._compute_nullable, node)

    def _compute_nullable(self, node: Node) -> bool:
        if isinstance(node, Chars):
            return False
        if isinstance(node, Rule):
            return self.nullable(node.item)
        if isinstance(node, Seq):
            return all(self.nullable(n) for n in node.items)
        if isinstance(node, Alt):
            return any(self.nullable(n) for n in node.options)
        if isinstance(node, Repeat):
            return node.low == 0 or node.high == 0 or self.nullable(node.item)
        raise TypeError(f"unresolved rule {node!r}")

    def first(self, node: Node) -> frozenset[int]:
        return self._memo(self._first, self._compute_first, node)

    def _compute_first(self, node: Node) -> frozenset[int]:
        if isinstance(node, Chars):
            return node.codes
        if isinstance(node, Rule):
            return self.first(node.item)
        if isinstance(node, Seq):
            out: set[int] = set()
            for item in node.items:
                out |= self.first(item)
                if not self.nullable(item):
                    break
            return frozenset(out)
        if isinstance(node, Alt):
            return frozenset().union(*(self.first(n) for n in node.options))
        if isinstance(node, Repeat):
            return frozenset() if node.high == 0 else self.first(node.item)
        raise TypeError(f"unresolved rule {node!r}")

    def conflict(self, node: Node, follow: frozenset[int]) -> str | None:
        """A description of the first choice in ``node`` that the next character
        does not decide, or None when there is none (the grammar is LL(1))."""
        if isinstance(node, Chars):
            return None
        if isinstance(node, Rule):
            return self.conflict(node.item, follow)
        if isinstance(node, Seq):
            after = follow
            found = None
            for item in reversed(node.items):
                found = self.conflict(item, after) or found
                after = self.first(item) | after if self.nullable(item) else self.first(item)
            return found
        if isinstance(node, Alt):
            seen: set[int] = set()
            nullable = 0
            for option in node.options:
                can = self.first(option)
                if self.nullable(option):
                    nullable += 1
                    can = can | follow
                if nullable > 1:
                    return "two options of an alternation can both match nothing"
                if seen & can:
                    return "two options of an alternation can start with the same character"
                seen |= can
            for option in node.options:
                if (found := self.conflict(option, follow)) is not None:
                    return found
            return None
        if isinstance(node, Repeat):
            if node.high == 0:
                return None
            if node.high is None or node.high > node.low:
                if self.nullable(node.item):
                    return "a repeated part can match nothing"
                if self.first(node.item) & follow:
                    return ("a repeated part can start with a character that may also "
                            "follow it")
            inner = follow
            if node.high is None or node.high > 1:
                inner = inner | self.first(node.item)
            return self.conflict(node.item, inner)
        if isinstance(node, Ref):
            return f'the rule "{node.name}" is not resolved'
        raise TypeError(node)


def _run(node: Node) -> tuple[frozenset[int], int, int | None] | None:
    """(characters, low, high) when ``node`` is a run of one character set."""
    if isinstance(node, Chars):
        return node.codes, 1, 1
    if isinstance(node, Repeat) and isinstance(node.item, Chars):
        return node.item.codes, node.low, node.high
    return None


def _seq(items: list[Node]) -> Node:
    """A sequence, its adjacent runs of one character set joined ([0-9][0-9]{2} is
    [0-9]{3}), and nested sequences flattened."""
    out: list[Node] = []
    for item in items:
        for part in item.items if isinstance(item, Seq) else (item,):
            run, last = _run(part), _run(out[-1]) if out else None
            if run and last and run[0] == last[0]:
                high = None if run[2] is None or last[2] is None else run[2] + last[2]
                out[-1] = Repeat(last[1] + run[1], high, Chars(run[0]))
            else:
                out.append(part)
    return out[0] if len(out) == 1 else Seq(tuple(out))


UNROLL = 16  # a fixed repetition of at most this many characters is written out


def _width(node: Node) -> int | None:
    """How many characters ``node`` always matches, or None if that varies."""
    if isinstance(node, Chars):
        return 1
    if isinstance(node, Seq):
        widths = [_width(n) for n in node.items]
        return None if None in widths else sum(w for w in widths if w is not None)
    if isinstance(node, Repeat) and node.low == node.high:
        inner = _width(node.item)
        return None if inner is None else inner * node.low
    return None


def simplify(node: Node) -> Node:
    """The same language, in a shape Python's ``re`` runs faster: rule names dropped,
    the single characters of an alternation in one set, runs of one set joined, short
    fixed repetitions written out, and ``(C|R)*`` with C a set as ``C*(?:R C*)*``
    (one test per character of C instead of a pass through the alternation)."""
    if isinstance(node, Rule):
        return simplify(node.item)
    if isinstance(node, Seq):
        return _seq([simplify(n) for n in node.items])
    if isinstance(node, Alt):
        options: list[Node] = []
        for option in map(simplify, node.options):
            options.extend(option.options if isinstance(option, Alt) else (option,))
        chars = frozenset().union(*(o.codes for o in options if isinstance(o, Chars)))
        rest = [o for o in options if not isinstance(o, Chars)]
        merged = ([Chars(chars)] if chars else []) + rest
        return merged[0] if len(merged) == 1 else Alt(tuple(merged))
    if isinstance(node, Repeat):
        item = simplify(node.item)
        if node.high == 0:
            return Seq(())
        width = _width(item)
        if node.low == node.high and width is not None and width * node.low <= UNROLL:
            return _seq([item] * node.low)
        if node.high is None and node.low <= 1 and isinstance(item, Alt) and \
                isinstance(item.options[0], Chars):
            others = item.options[1:]
            star = Repeat(0, None, item.options[0])
            body = others[0] if len(others) == 1 else Alt(others)
            loop = Repeat(0, None, _seq([body, star]))
            return _seq([item, star, loop] if node.low else [star, loop])
        return Repeat(node.low, node.high, item)
    return node


# --- left factoring: alternations whose options start alike ------------------------

EMPTY = Seq(())                # matches the empty text only
NOTHING = Chars(frozenset())   # matches no text
MAX_FACTOR_DEPTH = 12          # characters of a common beginning taken out of options
MAX_FACTORED_SIZE = 4000       # nodes in a factored tree; beyond, the grammar stays RE2's
MAX_FACTOR_WORK = 5_000        # nodes the factoring may build on the way


def _nullable(node: Node) -> bool:
    return _Analysis().nullable(node)


def _mk_seq(items: list[Node]) -> Node:
    kept = [i for i in items if i != EMPTY]
    if any(i == NOTHING for i in kept):
        return NOTHING
    return EMPTY if not kept else _seq(kept)


def _mk_alt(options: list[Node]) -> Node:
    kept: list[Node] = []
    for option in options:
        for part in option.options if isinstance(option, Alt) else (option,):
            if part != NOTHING and part not in kept:
                kept.append(part)
    return NOTHING if not kept else kept[0] if len(kept) == 1 else Alt(tuple(kept))


def _derive(node: Node, code: int) -> Node:
    """What is left of ``node`` after it has matched the character ``code`` (the
    Brzozowski derivative, as a tree)."""
    if isinstance(node, Chars):
        return EMPTY if code in node.codes else NOTHING
    if isinstance(node, Seq):
        if not node.items:
            return NOTHING
        head, rest = node.items[0], list(node.items[1:])
        first = _mk_seq([_derive(head, code), *rest])
        return _mk_alt([first, _derive(_mk_seq(rest), code)]) if _nullable(head) else first
    if isinstance(node, Alt):
        return _mk_alt([_derive(o, code) for o in node.options])
    if isinstance(node, Repeat):
        if node.high == 0:
            return NOTHING
        again = Repeat(max(node.low - 1, 0), None if node.high is None else node.high - 1,
                       node.item)
        return _mk_seq([_derive(node.item, code), again])
    raise TypeError(node)


def _first_sets(node: Node, out: list[frozenset[int]]) -> None:
    """Every character set that can match the first character of ``node``."""
    if isinstance(node, Chars):
        out.append(node.codes)
    elif isinstance(node, Seq):
        for item in node.items:
            _first_sets(item, out)
            if not _nullable(item):
                break
    elif isinstance(node, Alt):
        for option in node.options:
            _first_sets(option, out)
    elif isinstance(node, Repeat) and node.high != 0:
        _first_sets(node.item, out)


def _blocks(sets: list[frozenset[int]]) -> list[frozenset[int]]:
    """The coarsest partition of the sets' union in which each set is a union of blocks."""
    blocks: list[frozenset[int]] = []
    for new in sets:
        out = []
        rest = new
        for block in blocks:
            inside, outside = block & new, block - new
            out += [b for b in (inside, outside) if b]
            rest -= block
        blocks = out + ([rest] if rest else [])
    return blocks


def _size(node: Node) -> int:
    if isinstance(node, Seq):
        return 1 + sum(map(_size, node.items))
    if isinstance(node, Alt):
        return 1 + sum(map(_size, node.options))
    if isinstance(node, Repeat):
        return 1 + _size(node.item)
    return 1


class _TooLarge(Exception):
    pass


def _factor_alt(options: list[Node], depth: int, budget: list[int]) -> Node:
    """One alternation whose options may begin alike, as options that begin with
    disjoint character sets: [0-9]|[1-9][0-9]+ becomes 0|[1-9](?:|[0-9]+).
    ``budget`` counts down the nodes the factoring may still build."""
    analysis = _Analysis()
    firsts = [analysis.first(o) for o in options]
    if all(not (a & b) for i, a in enumerate(firsts) for b in firsts[i + 1:]):
        return _mk_alt(options)
    if depth >= MAX_FACTOR_DEPTH:
        raise _TooLarge
    sets: list[frozenset[int]] = []
    for option in options:
        _first_sets(option, sets)
    branches: list[Node] = []
    for block in _blocks(sets):
        code = min(block)
        rest = [_derive(o, code) for o, first in zip(options, firsts, strict=True)
                if code in first]
        rest = [r for r in rest if r != NOTHING]
        inner = _mk_alt(rest)
        budget[0] -= 1 + sum(map(_size, rest))
        if budget[0] < 0:
            raise _TooLarge
        if isinstance(inner, Alt):
            inner = _factor_alt(list(inner.options), depth + 1, budget)
        branches.append(_mk_seq([Chars(block), inner]))
    if any(analysis.nullable(o) for o in options):
        branches.append(EMPTY)
    return _mk_alt(branches)


def left_factor(node: Node) -> Node:
    """``node`` with each alternation left-factored (the same language), or ``node``
    itself when that grows beyond MAX_FACTORED_SIZE or MAX_FACTOR_DEPTH."""
    try:
        factored = _left_factor(node, [MAX_FACTOR_WORK])
    except _TooLarge:
        return node
    return factored if _size(factored) <= MAX_FACTORED_SIZE else node


def _left_factor(node: Node, budget: list[int]) -> Node:
    if isinstance(node, Seq):
        return _seq([_left_factor(n, budget) for n in node.items]) if node.items else node
    if isinstance(node, Alt):
        return _factor_alt([_left_factor(o, budget) for o in node.options], 0, budget)
    if isinstance(node, Repeat):
        return Repeat(node.low, node.high, _left_factor(node.item, budget))
    return node


def conflict(node: Node) -> str | None:
    """Why a backtracking matcher could take more than linear time on ``node``
    (a choice the next character does not decide), or None: it is LL(1)."""
    return _Analysis().conflict(node, frozenset({END}))


def _char(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _class(codes: frozenset[int]) -> str:
    if not codes:
        return "[^\\x00-\\U0010ffff]"
    ranges = code_ranges(codes)
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0])
    body = "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in ranges)
    return f"[{body}]"


def python_pattern(node: Node) -> str:
    """The tree as a pattern for Python's ``re``, choice for choice: the LL(1)
    analysis above is of exactly this pattern's alternations and repetitions, and
    only an LL(1) tree may be given (its repetitions are written possessive)."""
    if isinstance(node, Chars):
        return _class(node.codes)
    if isinstance(node, Rule):
        return python_pattern(node.item)
    if isinstance(node, Seq):
        return "".join(python_pattern(n) for n in node.items)
    if isinstance(node, Alt):
        # The option that can match nothing last: re tries the options in order, and
        # in an LL(1) tree the first one that takes the next character is then the
        # only one that can lead to a match (which is what lets repetitions be
        # possessive).
        options = sorted(node.options, key=_nullable)
        return "(?:" + "|".join(python_pattern(n) for n in options) + ")"
    if isinstance(node, Repeat):
        high = "" if node.high is None else str(node.high)
        bounds = {(0, ""): "*", (1, ""): "+", (0, "1"): "?"}.get((node.low, high)) or (
            f"{{{node.low}}}" if high == str(node.low) else f"{{{node.low},{high}}}")
        if high != str(node.low):
            # Possessive: in an LL(1) tree what follows a repetition never starts as its
            # body does, so giving an iteration back can never lead to a match.
            bounds += "+"
        inner = python_pattern(node.item)
        return f"{inner}{bounds}" if isinstance(node.item, Chars) else f"(?:{inner}){bounds}"
    raise TypeError(f"unresolved rule {node!r}")
