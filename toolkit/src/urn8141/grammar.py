"""An NSS syntax, written as ABNF (RFC 5234, with RFC 7405's %s/%i) or as a
regular expression, compiled into something that matches in linear time.

Both notations are read into one small tree of character sets, sequences,
alternations and bounded repetitions. From that tree come:

* a pattern for RE2 (``google-re2``), an automaton matcher whose running time
  is linear in the length of the text whatever the pattern: the fast path that
  answers "valid" for every URN checked;
* a Thompson NFA, from which dfa.py builds the DFA walked when the fast path says
  "no", to find the first character no path through the grammar can take, the rules
  that were being matched there and what they expected, and the ASCII tables of the
  C path.

ABNF rules that refer to themselves (directly or through others) describe no
regular language and are refused, as are prose values (``<...>``). Regular
expressions may use only what a regular language needs: no back-references,
look-around or anchors. Sizes are bounded (``MAX_*``), so a hostile grammar
cannot make the compiler or the matcher slow: the text's length, how deep groups
nest in it (checked before anything reads it recursively), how deep its tree is
once rule references are followed, how many options one alternation has, every
number in it, and the automata built from it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, cast

import re2

from urn8141.deterministic import conflict, left_factor, python_pattern, simplify
from urn8141.dfa import MAX_DFA_STATES as MAX_DFA_STATES
from urn8141.dfa import MAX_TABLE_STATES as MAX_TABLE_STATES
from urn8141.dfa import MAX_TABLE_WORK as MAX_TABLE_WORK
from urn8141.dfa import Diagnosis, ascii_table
from urn8141.dfa import Mismatch as Mismatch
from urn8141.grammar_tree import Alt, Chars, Node, Ref, Repeat, Rule, Seq, code_ranges

MAX_GRAMMAR_CHARS = 10_000
MAX_NFA_STATES = 20_000
MAX_REPEAT = 1000  # RE2's own limit on {m,n}
# Nesting and width, bounded before any recursive step sees them: every reader and
# analysis below recurses once or a few times per level of the tree, so these keep the
# whole compile within a few hundred frames of Python's stack however the grammar is
# written (the shipped profiles nest groups at most 3 deep, trees at most 25 levels,
# alternations at most 19 options).
MAX_NESTING = 20  # groups: "(" in a regular expression, "(" and "[" in ABNF
MAX_DEPTH = 64  # levels of the grammar's tree, each rule reference one more
MAX_ALTERNATIVES = 256  # options of one alternation
MAX_CODE = 0x10FFFF  # a number value of ABNF is a character
WALK_FIRST = 24  # characters: up to this, the DFA walk takes no longer than a call of RE2

# The characters an NSS can hold (RFC 8141 section 2: pchar and "/", and "%" of a
# percent-encoding); a grammar's sets are cut to these, since nothing else reaches it.
NSS_CHARS = frozenset(map(ord, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789-._~!$&'()*+,;=:@/%"))


class GrammarError(ValueError):
    """The syntax cannot be compiled; ``offset`` points into the grammar text."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


def _case_insensitive(ch: str) -> frozenset[int]:
    """The character and its other cases. A case that is more than one character ("ß"
    upper-cased is "SS") is not a case of one character: it is left out."""
    return frozenset(ord(c) for c in (ch, ch.lower(), ch.upper()) if len(c) == 1)


def _literal(text: str, *, sensitive: bool) -> Node:
    return Seq(tuple(Chars(frozenset({ord(c)}) if sensitive else _case_insensitive(c))
                     for c in text))


# --- ABNF -------------------------------------------------------------------

# RFC 5234 Appendix B.1 and the rules of RFC 3986 an NSS grammar usually names.
CORE_RULES = """
ALPHA = %x41-5A / %x61-7A
BIT = "0" / "1"
CHAR = %x01-7F
CR = %x0D
CRLF = CR LF
CTL = %x00-1F / %x7F
DIGIT = %x30-39
DQUOTE = %x22
HEXDIG = DIGIT / "A" / "B" / "C" / "D" / "E" / "F"
HTAB = %x09
LF = %x0A
OCTET = %x00-FF
SP = %x20
VCHAR = %x21-7E
WSP = SP / HTAB
alphanum = ALPHA / DIGIT
unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
pct-encoded = "%" HEXDIG HEXDIG
pchar = unreserved / pct-encoded / sub-delims / ":" / "@"
"""

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+|;[^\n]*)
  | (?P<repeat>\d*\*\d*|\d+)
  | (?P<name>[A-Za-z][A-Za-z0-9-]*)
  | (?P<string>(?:%[si])?"[^"\n]*")
  | (?P<num>%[xX][0-9A-Fa-f]+(?:(?:\.[0-9A-Fa-f]+)+|-[0-9A-Fa-f]+)?
           |%[dD][0-9]+(?:(?:\.[0-9]+)+|-[0-9]+)?
           |%[bB][01]+(?:(?:\.[01]+)+|-[01]+)?)
  | (?P<punct>[/()\[\]])
  | (?P<prose><[^>\n]*>)
""", re.VERBOSE)
_RULE_START = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*(=/|=)")


_DIGITS = {16: 6, 10: 7, 2: 21}  # at most as many as MAX_CODE has in each base


def _code(part: str, base: int, text: str, offset: int) -> int:
    """One number of a num-val, refused (before it is converted) beyond MAX_CODE."""
    value = int(part, base) if len(part.lstrip("0")) <= _DIGITS[base] else MAX_CODE + 1
    if value > MAX_CODE:
        raise GrammarError(f"{text} is not a character: a number value is at most %x10FFFF",
                           offset)
    return value


def _num_value(text: str, offset: int) -> Node:
    base = {"x": 16, "d": 10, "b": 2}[text[1].lower()]
    body = text[2:]
    if "-" in body:
        low, high = (_code(part, base, text, offset) for part in body.split("-"))
        if low > high:
            raise GrammarError(f"the range {text} runs backwards", offset)
        codes = frozenset(c for c in NSS_CHARS if low <= c <= high)
        return Chars(codes)
    return Seq(tuple(Chars(frozenset({_code(part, base, text, offset)}))
                     for part in body.split(".")))


class _AbnfParser:
    def __init__(self, text: str, base: int) -> None:
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise GrammarError(f"ABNF cannot have {text[pos]!r} here", base + pos)
            kind = m.lastgroup or ""
            if kind == "prose":
                raise GrammarError(
                    f"the prose value {m.group()} says in words what a machine cannot check; "
                    "write the rule out in ABNF", base + pos)
            if kind != "space":
                self.tokens.append((kind, m.group(), base + pos))
            pos = m.end()
        self.i = 0
        self.end = base + len(text)
        self.nesting = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def alternation(self) -> Node:
        options = [self.concatenation()]
        while (tok := self.peek()) is not None and tok[1] == "/":
            if len(options) >= MAX_ALTERNATIVES:
                raise GrammarError(f"an alternation has more than {MAX_ALTERNATIVES} options",
                                   tok[2])
            self.i += 1
            options.append(self.concatenation())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def concatenation(self) -> Node:
        items = []
        while (tok := self.peek()) is not None and tok[1] not in ("/", ")", "]"):
            items.append(self.repetition())
        if not items:
            tok = self.peek()
            raise GrammarError("an element is missing here", tok[2] if tok else self.end)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def repetition(self) -> Node:
        tok = self.peek()
        assert tok is not None
        if tok[0] == "repeat":
            self.i += 1
            low_text, star, high_text = tok[1].partition("*")
            if max(len(low_text.lstrip("0")), len(high_text.lstrip("0"))) > len(str(MAX_REPEAT)):
                raise GrammarError(f"the repetition {tok[1]} is out of range (at most "
                                   f"{MAX_REPEAT})", tok[2])
            low = int(low_text) if low_text else 0
            high = (int(high_text) if high_text else None) if star else low
            if high is not None and (high < low or high > MAX_REPEAT):
                raise GrammarError(f"the repetition {tok[1]} is out of range (at most "
                                   f"{MAX_REPEAT})", tok[2])
            if low > MAX_REPEAT:
                raise GrammarError(f"the repetition {tok[1]} is out of range", tok[2])
            return Repeat(low, high, self.element())
        return self.element()

    def element(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise GrammarError("an element is missing at the end", self.end)
        kind, text, offset = tok
        self.i += 1
        if kind == "name":
            return Ref(text.lower())
        if kind == "string":
            sensitive = text.startswith("%s")
            body = text[text.index('"') + 1:-1]
            if not body:
                raise GrammarError("an empty string matches nothing useful", offset)
            return _literal(body, sensitive=sensitive)
        if kind == "num":
            return _num_value(text, offset)
        if text in ("(", "["):
            self.nesting += 1
            if self.nesting > MAX_NESTING:
                raise GrammarError(f"groups are nested more than {MAX_NESTING} deep", offset)
            inner = self.alternation()
            self.nesting -= 1
            closing = ")" if text == "(" else "]"
            nxt = self.peek()
            if nxt is None or nxt[1] != closing:
                raise GrammarError(f"{text!r} is not closed by {closing!r}", offset)
            self.i += 1
            return inner if text == "(" else Repeat(0, 1, inner)
        raise GrammarError(f"ABNF cannot have {text!r} here", offset)


def _abnf_rules(text: str, base: int = 0) -> tuple[dict[str, Node], list[str]]:
    """Rule name (lower case) -> its tree, and the names in the order written."""
    rules: dict[str, Node] = {}
    order: list[str] = []
    # Join continuation lines (RFC 5234 section 4: a rule continues on indented lines).
    chunks: list[tuple[int, str]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.split(";", 1)[0] if '"' not in line else line
        if line[:1] in (" ", "\t") and chunks and line.strip():
            start, body = chunks[-1]
            gap = " " * max(pos - start - len(body) - 1, 0)
            chunks[-1] = (start, body + gap + "\n" + line.rstrip("\r\n"))
        elif stripped.strip():
            chunks.append((pos, line.rstrip("\r\n")))
        pos += len(line)
    for start, body in chunks:
        lead = len(body) - len(body.lstrip())
        m = _RULE_START.match(body, lead)
        if m is None:
            raise GrammarError("a rule starts with its name and '=' (RFC 5234 section 2.2)",
                               base + start + lead)
        name = m.group(1).lower()
        parser = _AbnfParser(body[m.end():], base + start + m.end())
        tree = parser.alternation()
        if parser.peek() is not None:
            leftover = parser.peek()
            assert leftover is not None
            raise GrammarError(f"unexpected {leftover[1]!r}", leftover[2])
        if m.group(2) == "=/":
            if name not in rules:
                raise GrammarError(f'"{m.group(1)} =/" adds to a rule not defined above',
                                   base + start + lead)
            previous = rules[name]
            options = previous.options if isinstance(previous, Alt) else (previous,)
            added = tree.options if isinstance(tree, Alt) else (tree,)
            if len(options) + len(added) > MAX_ALTERNATIVES:
                raise GrammarError(f'the rule "{m.group(1)}" has more than {MAX_ALTERNATIVES} '
                                   "options", base + start + lead)
            rules[name] = Alt((*options, tree))
        else:
            if name in rules:
                raise GrammarError(f'the rule "{m.group(1)}" is defined twice; use "=/" to '
                                   "add alternatives", base + start + lead)
            rules[name] = tree
            if name not in order:
                order.append(name)
    return rules, order


_CORE, _ = _abnf_rules(CORE_RULES)


def _too_deep() -> GrammarError:
    return GrammarError(f"the syntax nests more than {MAX_DEPTH} levels deep, counting each "
                        "rule it refers to")


def _resolve(node: Node, rules: dict[str, Node], stack: tuple[str, ...],
             done: dict[str, tuple[Node, int]], depth: int) -> tuple[Node, int]:
    """``node`` with its rule references resolved, and the height of that tree. ``depth``
    is where it stands in the whole tree: a node deeper than MAX_DEPTH, or one whose
    subtree would reach past it, is refused before the recursion can go on (a chain of
    rules, or a rule used again deep down, counts as its full height)."""
    if depth > MAX_DEPTH:
        raise _too_deep()
    if isinstance(node, Ref):
        name = node.name
        if name not in done:
            if name in stack:
                raise GrammarError(
                    f'the rule "{name}" refers to itself ({" -> ".join((*stack, name))}); '
                    "a recursive rule is not a regular syntax and cannot be matched in linear "
                    "time")
            if name not in rules:
                raise GrammarError(f'the rule "{name}" is used but not defined')
            inner, height = _resolve(rules[name], rules, (*stack, name), done, depth + 1)
            done[name] = (Rule(name, inner), height + 1)
        resolved, height = done[name]
    elif isinstance(node, Seq | Alt | Repeat):
        children = node.items if isinstance(node, Seq) else \
            node.options if isinstance(node, Alt) else (node.item,)
        parts = [_resolve(n, rules, stack, done, depth + 1) for n in children]
        nodes = tuple(part for part, _ in parts)
        height = 1 + max((h for _, h in parts), default=0)
        resolved = Seq(nodes) if isinstance(node, Seq) else Alt(nodes) \
            if isinstance(node, Alt) else Repeat(node.low, node.high, nodes[0])
    else:
        resolved, height = node, 1
    if depth + height > MAX_DEPTH + 1:
        raise _too_deep()
    return resolved, height


def parse_abnf(text: str) -> Node:
    """The first rule of ``text`` (the NSS), with every rule it uses resolved."""
    if len(text) > MAX_GRAMMAR_CHARS:
        raise GrammarError(f"the syntax is longer than {MAX_GRAMMAR_CHARS} characters")
    rules, order = _abnf_rules(text)
    if not order:
        raise GrammarError("the ABNF has no rule; the first rule describes the NSS")
    merged = {**_CORE, **rules}
    return _resolve(Ref(order[0]), merged, (), {}, 1)[0]


# --- regular expressions ----------------------------------------------------

_CATEGORIES = {
    sre_constants.CATEGORY_DIGIT: frozenset(range(0x30, 0x3A)),
    sre_constants.CATEGORY_WORD: frozenset(c for c in NSS_CHARS if chr(c).isalnum() or c == 0x5F),
}


def _category(value: object) -> frozenset[int]:
    if value in _CATEGORIES:
        return _CATEGORIES[value]
    if value == sre_constants.CATEGORY_NOT_DIGIT:
        return NSS_CHARS - _CATEGORIES[sre_constants.CATEGORY_DIGIT]
    if value == sre_constants.CATEGORY_NOT_WORD:
        return NSS_CHARS - _CATEGORIES[sre_constants.CATEGORY_WORD]
    raise GrammarError(f"the regular expression uses {value}, which an NSS cannot contain")


def _regex_node(items: list[tuple[object, object]], ignore_case: bool) -> Node:
    out: list[Node] = []
    for op, value in items:
        out.append(_regex_item(op, value, ignore_case))
    return out[0] if len(out) == 1 else Seq(tuple(out))


def _fold(codes: frozenset[int], ignore_case: bool) -> frozenset[int]:
    if not ignore_case:
        return codes
    return frozenset(c2 for c in codes for c2 in _case_insensitive(chr(c)))


def _regex_item(op: object, value: object, ignore_case: bool) -> Node:
    c = sre_constants
    if op == c.LITERAL:
        return Chars(_fold(frozenset({value}), ignore_case))  # type: ignore[arg-type]
    if op == c.NOT_LITERAL:
        return Chars(NSS_CHARS - _fold(frozenset({value}), ignore_case))  # type: ignore[arg-type]
    if op == c.ANY:
        return Chars(NSS_CHARS)
    if op == c.IN:
        codes: set[int] = set()
        negate = False
        for kind, arg in value:  # type: ignore[attr-defined]
            if kind == c.NEGATE:
                negate = True
            elif kind == c.LITERAL:
                codes.add(arg)
            elif kind == c.RANGE:
                codes.update(range(arg[0], arg[1] + 1))
            elif kind == c.CATEGORY:
                codes.update(_category(arg))
            else:
                raise GrammarError(f"the regular expression uses {kind} in a class")
        folded = _fold(frozenset(codes) & NSS_CHARS, ignore_case)
        return Chars(NSS_CHARS - folded if negate else folded)
    if op == c.BRANCH:
        if len(value[1]) > MAX_ALTERNATIVES:  # type: ignore[index]
            raise GrammarError(f"an alternation has more than {MAX_ALTERNATIVES} options")
        return Alt(tuple(_regex_node(list(branch), ignore_case) for branch in value[1]))  # type: ignore[index]
    if op == c.SUBPATTERN:
        group = cast("tuple[Any, int, int, Any]", value)
        add, remove, pattern = group[1], group[2], group[3]
        inner_case = (ignore_case or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
        return _regex_node(list(pattern), inner_case)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, high, pattern = cast("tuple[int, int, Any]", value)
        if low > MAX_REPEAT or (high != c.MAXREPEAT and high > MAX_REPEAT):
            raise GrammarError(f"a repetition is out of range (at most {MAX_REPEAT})")
        return Repeat(low, None if high == c.MAXREPEAT else high,
                      _regex_node(list(pattern), ignore_case))
    names = {c.AT: "an anchor (^, $ or \\b); the pattern always matches the whole NSS",
             c.GROUPREF: "a back-reference", c.ASSERT: "a look-ahead or look-behind",
             c.ASSERT_NOT: "a look-ahead or look-behind", c.GROUPREF_EXISTS: "a conditional"}
    raise GrammarError(f"the regular expression uses {names.get(op, str(op))}, which a "
                       "linear-time matcher cannot have")


def _group_nesting(text: str) -> int | None:
    """Where a group of ``text`` opens more than MAX_NESTING deep (None: nowhere): read
    before Python's own parser, which recurses once per group and would exhaust the
    stack on a few hundred. Escapes and character classes hold no groups; a "(" that is
    not one (in a comment) is counted all the same, which only refuses sooner."""
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class: "]" first (after "^") is a member; it ends at the next "]"
            i += 1
            if text.startswith("^", i):
                i += 1
            if text.startswith("]", i):
                i += 1
            while i < n and text[i] != "]":
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            depth += 1
            if depth > MAX_NESTING:
                return i
        elif ch == ")":
            depth -= 1
        i += 1
    return None


def _height(node: Node) -> int:
    """The number of levels of ``node``'s tree, without recursion (it is not yet known
    to be shallow)."""
    heights: dict[int, int] = {}
    todo: list[tuple[Node, bool]] = [(node, False)]
    while todo:
        current, expanded = todo.pop()
        children: tuple[Node, ...] = (
            current.items if isinstance(current, Seq) else
            current.options if isinstance(current, Alt) else
            (current.item,) if isinstance(current, Repeat | Rule) else ())
        if expanded:
            heights[id(current)] = 1 + max((heights[id(c)] for c in children), default=0)
        elif id(current) not in heights:
            todo.append((current, True))
            todo.extend((c, False) for c in children)
    return heights[id(node)]


def parse_regex(text: str) -> Node:
    if len(text) > MAX_GRAMMAR_CHARS:
        raise GrammarError(f"the pattern is longer than {MAX_GRAMMAR_CHARS} characters")
    if (deep := _group_nesting(text)) is not None:
        raise GrammarError(f"groups are nested more than {MAX_NESTING} deep", deep)
    try:
        parsed = sre_parse.parse(text)
    except re.error as exc:
        raise GrammarError(f"not a regular expression: {exc.msg}", exc.pos or 0) from None
    except OverflowError as exc:  # a number past C's: "the repetition number is too large"
        raise GrammarError(f"not a regular expression: {exc}") from None
    if parsed.state.flags & ~(re.IGNORECASE | re.UNICODE):
        raise GrammarError("only the (?i) flag is allowed")
    tree = Rule("pattern", _regex_node(list(parsed), bool(parsed.state.flags & re.IGNORECASE)))
    if _height(tree) > MAX_DEPTH:
        raise _too_deep()
    return tree


# --- RE2 pattern ------------------------------------------------------------


def _class(codes: frozenset[int]) -> str:
    if not codes:
        return r"[^\x00-\x{10FFFF}]"
    ranges = code_ranges(codes)
    body = "".join(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}"
                   for a, b in ranges)
    return f"[{body}]"


def to_pattern(node: Node) -> str:
    if isinstance(node, Chars):
        return _class(node.codes)
    if isinstance(node, Rule):
        return to_pattern(node.item)
    if isinstance(node, Ref):
        raise GrammarError(f'the rule "{node.name}" is not resolved')
    if isinstance(node, Seq):
        return "".join(to_pattern(n) for n in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(to_pattern(n) for n in node.options) + ")"
    high = "" if node.high is None else str(node.high)
    bounds = {(0, ""): "*", (1, ""): "+", (0, "1"): "?"}.get(
        (node.low, high), f"{{{node.low},{high}}}" if high != str(node.low) else f"{{{node.low}}}")
    return f"(?:{to_pattern(node.item)}){bounds}"


# --- NFA, for the diagnosis -------------------------------------------------


class _Nfa:
    """States 0..n-1. ``edges[s]``: (codes, target, rule) or None; ``eps[s]``: targets."""

    def __init__(self) -> None:
        self.edges: list[tuple[frozenset[int], int, str] | None] = []
        self.eps: list[list[int]] = []

    def state(self) -> int:
        if len(self.edges) >= MAX_NFA_STATES:
            raise GrammarError("the syntax is too large once its repetitions are expanded")
        self.edges.append(None)
        self.eps.append([])
        return len(self.edges) - 1

    def build(self, node: Node, start: int, rule: str) -> int:
        """Add ``node`` from ``start``; return its end state."""
        if isinstance(node, Chars):
            end = self.state()
            self.edges[start] = (node.codes, end, rule)
            return end
        if isinstance(node, Ref):
            raise GrammarError(f'the rule "{node.name}" is not resolved')
        if isinstance(node, Rule):
            inner = self.state()
            self.eps[start].append(inner)
            # Core rules (DIGIT, ALPHA...) are not what a message should name.
            named = rule if node.name in _CORE and rule else node.name
            return self.build(node.item, inner, named)
        if isinstance(node, Seq):
            at = start
            for item in node.items:
                nxt = self.state()
                self.eps[at].append(nxt)
                at = self.build(item, nxt, rule)
            return at
        if isinstance(node, Alt):
            end = self.state()
            for option in node.options:
                branch = self.state()
                self.eps[start].append(branch)
                self.eps[self.build(option, branch, rule)].append(end)
            return end
        at = start
        for _ in range(node.low):
            nxt = self.state()
            self.eps[at].append(nxt)
            at = self.build(node.item, nxt, rule)
        if node.high is None:
            loop = self.state()
            self.eps[at].append(loop)
            body_end = self.build(node.item, loop, rule)
            self.eps[body_end].append(at)
            return at
        end = self.state()
        self.eps[at].append(end)
        for _ in range(node.high - node.low):
            nxt = self.state()
            self.eps[at].append(nxt)
            at = self.build(node.item, nxt, rule)
            self.eps[at].append(end)
        return end

    def closure(self, states: set[int]) -> set[int]:
        todo = list(states)
        seen = set(states)
        while todo:
            for t in self.eps[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen


_ANCHOR_BOTH = re2._Anchor.ANCHOR_BOTH
_NULL_SPAN = re2._NULL_SPAN
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused grammar is the registrant's message, not a log line


class Grammar:
    """A compiled NSS syntax: ``matches()`` (linear time) and ``mismatch()``.

    ``fullmatch(text)`` is the verdict alone, truthy when the whole text fits: Python's
    ``re`` when the grammar is LL(1) (deterministic.py proves ``re`` linear on those, and
    a call costs a fraction of RE2's), RE2 otherwise. ``backtrack_conflict`` says why
    RE2 was chosen (None when ``re`` is used)."""

    def __init__(self, node: Node) -> None:
        self._nfa = _Nfa()  # first: it bounds the size of what RE2 is given
        self._start = self._nfa.state()
        self._accept = self._nfa.build(node, self._start, "")
        # Where ``text`` leaves the grammar, or None if it matches: linear in the text.
        self.mismatch: Callable[[str], Mismatch | None] = Diagnosis(
            self._nfa.edges, self._nfa.closure, self._start, self._accept,
            node.name if isinstance(node, Rule) else "nss").mismatch
        self.pattern = to_pattern(node)
        try:
            self._re = re2.compile(self.pattern, _RE2_OPTIONS)
        except re2.error as exc:  # beyond RE2's own limits
            raise GrammarError(f"the syntax cannot be compiled: {exc}") from None
        self._full = self._re._regexp.Match
        simple = simplify(left_factor(simplify(node)))
        self.backtrack_conflict = conflict(simple)
        self.fullmatch: Callable[[str], object]
        if self.backtrack_conflict is None:
            self.python_pattern = python_pattern(simple)
            self.fullmatch = re.compile(self.python_pattern).fullmatch
        else:
            self.fullmatch = self._re2_fullmatch

    def _re2_fullmatch(self, text: str) -> bool:
        """RE2's verdict. An NSS is ASCII (RFC 8141), which is matched through RE2's own
        call, without the wrapper's offset work (the offsets are those of the bytes)."""
        if text.isascii():
            data = text.encode("ascii")
            return bool(self._full(_ANCHOR_BOTH, data, 0, len(data))[0] != _NULL_SPAN)
        return self._re.fullmatch(text) is not None

    def matches(self, text: str) -> bool:
        """Whether the whole text fits (linear time)."""
        return bool(self.fullmatch(text))

    def diagnose(self, text: str) -> Mismatch | None:
        """``mismatch(text)``, the quickest way: the verdict first, unless it is RE2's
        and the text short, where the walk alone costs about what one call of RE2 does."""
        if self.backtrack_conflict is not None and len(text) <= WALK_FIRST:
            return self.mismatch(text)
        return None if self.fullmatch(text) else self.mismatch(text)

    def ascii_table(self) -> tuple[bytes, bytes, bytes, int] | None:
        """The whole DFA over ASCII as the tables urn8141/_speedups.c runs, or None
        beyond their bounds (``dfa.ascii_table``). Built once per profile, on its
        first URN."""
        return ascii_table(self._nfa.edges, self._nfa.closure, self._start, self._accept)


def compile_syntax(kind: str, text: str) -> Grammar:
    """``kind`` is "abnf" or "regex"."""
    if kind == "abnf":
        return Grammar(parse_abnf(text))
    if kind == "regex":
        return Grammar(parse_regex(text))
    raise GrammarError(f'a syntax is "abnf" or "regex", not {kind!r}')


@functools.lru_cache(maxsize=1024)
def describe_chars(codes: frozenset[int]) -> str:
    """A short English description of a set of characters, for messages."""
    if not codes:
        return "the end of the NSS"
    parts = []
    rest = set(codes)
    for name, group in (("a digit", set(range(0x30, 0x3A))),
                        ("a letter", set(range(0x41, 0x5B)) | set(range(0x61, 0x7B))),
                        ("an upper-case letter", set(range(0x41, 0x5B))),
                        ("a lower-case letter", set(range(0x61, 0x7B))),
                        ("a hexadecimal digit", set(map(ord, "0123456789abcdefABCDEF")))):
        if group <= rest:
            parts.append(name)
            rest -= group
    if {0x30, 0x31, 0x32} <= rest and len(rest) > 6:
        parts.append("a digit")
        rest -= set(range(0x30, 0x3A))
    shown = sorted(rest)
    parts += [repr(chr(c)) for c in shown[:8]]
    if len(shown) > 8:
        parts.append(f"{len(shown) - 8} other characters")
    return " or ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " or " + parts[-1]
