"""Linear time on every input: each parser of outside text (bench/linear.py PARSERS)
against inputs generated from its own patterns' literals, whitespace runs and nested
brackets. Doubling the input may at most triple the time; a quadratic parser
quadruples it. bench/linear.py prints the same measurements with the worst case."""

from __future__ import annotations

import re

import pytest

from bench.linear import PARSERS, Family, measure, module_patterns, pattern_literals, sweep

# Doubling the input may at most triple the time (linear is 2, quadratic 4).
THRESHOLD = 3.0
# Characters of the smaller input (a parser too fast to time there gets a larger one);
# bench/linear.py measures at larger sizes and with every literal's every input.
SIZE = 2_000


@pytest.mark.parametrize("parser", PARSERS, ids=[p.name for p in PARSERS])
def test_doubling_the_input_at_most_triples_the_time(parser):
    measures = sweep(parser, size=min(parser.size, SIZE), threshold=THRESHOLD, compact=True)
    slow = [m for m in measures if m.ratio > THRESHOLD]
    assert not slow, [f"{m.family.name}: {m.size} -> {m.size * 2} characters took "
                      f"{m.small * 1000:.1f} -> {m.large * 1000:.1f} ms" for m in slow]


def test_the_literals_are_read_from_the_patterns_themselves():
    assert pattern_literals(r"<\?.*?\?>") == {"<?", "?>"}
    assert pattern_literals(r"(?:NID|namespace\s+ID)[^\]]*") >= {"NID", "namespace", "ID"}
    # Every module a parser runs has patterns, and every pattern gives the inputs literals.
    for parser in PARSERS:
        for module in parser.modules:
            patterns = module_patterns(module)
            assert patterns, module
            assert parser.literals() >= {lit for p in patterns for lit in pattern_literals(p)}


def test_the_harness_catches_a_quadratic_pattern():
    quadratic = re.compile(r"\[([^\]]+)\]\(")  # rescans the rest from every "["

    def parse(text: str) -> object:
        return quadratic.findall(text)

    family = Family("'[' repeated", "[")
    assert measure(parse, family, 3_000, runs=3).ratio > THRESHOLD
