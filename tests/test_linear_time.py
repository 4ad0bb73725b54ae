"""Linear time on every input: each parser of outside text (bench/linear.py PARSERS)
against inputs generated from its own patterns' literals, whitespace runs and nested
brackets. Doubling the input may at most triple the time; a quadratic parser
quadruples it. bench/linear.py prints the same measurements with the worst case."""

from __future__ import annotations

import os
import re

import pytest

from bench.linear import (
    PARSERS,
    Family,
    confirmed,
    measure,
    module_patterns,
    pattern_literals,
    sweep,
)

# Doubling the input may at most triple the time (linear is 2, quadratic 4).
THRESHOLD = 3.0
# Characters of the smaller input (a parser too fast to time there gets a larger one);
# bench/linear.py measures at larger sizes and with every literal's every input.
SIZE = 2_000


# The parser with its format detected runs the same code as the three with the
# format forced; the bench sweeps it too.
SWEPT = [p for p in PARSERS if p.name != "template (detected format)"]


@pytest.mark.skipif(not os.environ.get("LINEAR_SWEEP"),
                    reason="the full sweep takes many minutes on a shared 2-core machine: run "
                           "it with LINEAR_SWEEP=1, or bench/linear.py")
@pytest.mark.parametrize("parser", SWEPT, ids=[p.name for p in SWEPT])
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
    # The highest of up to three measures: load on a shared machine can slow the smaller
    # input's run and hide a quadratic ratio once (2.3 seen in CI), never three times.
    ratios = []
    for _ in range(3):
        ratios.append(measure(parse, family, 3_000, runs=3).ratio)
        if ratios[-1] > THRESHOLD:
            break
    assert max(ratios) > THRESHOLD, ratios


def test_a_confirmed_ratio_still_catches_a_quadratic_pattern():
    """Confirming in turns lowers a linear parser's noise, never a quadratic's ratio."""
    quadratic = re.compile(r"\[([^\]]+)\]\(")

    def parse(text: str) -> object:
        return quadratic.findall(text)

    family = Family("'[' repeated", "[")
    # Its ratio is 4 at double the input; a burst on the sibling hardware thread can halve
    # one measure (1.97 seen once in the full suite; 2.4, 2.5 and 2.9 in a row on a 2-core
    # machine running at half its speed), so the claim is asked up to five times, about
    # a minute: longer than such a burst lasted.
    ratios = []
    for _ in range(5):
        ratios.append(confirmed(parse, measure(parse, family, 3_000, runs=3), THRESHOLD).ratio)
        if ratios[-1] > THRESHOLD:
            break
    assert ratios[-1] > THRESHOLD, ratios
    # A first measure that looked too slow for a linear parser is measured again.
    linear = re.compile(r"\[")
    inflated = measure(linear.findall, family, 20_000)
    inflated = type(inflated)(inflated.family, inflated.size, inflated.small,
                              inflated.small * 10)
    assert confirmed(linear.findall, inflated, THRESHOLD).ratio <= THRESHOLD


# The shapes issue 20 reproduced (cubic heading, quadratic "<?" and "<name>"), and the
# unclosed openers fixed since, through the parser as a POST to /requests/new/ runs it.
REPORTED = [Family("heading then spaces", " ", head="# Namespace ID:", tail="x"),
            Family("'<?' repeated", "<?"), Family("'<name>' repeated", "<name>"),
            Family("'[' repeated", "[", head="# x\n"), Family("'<!--' repeated", "<!--"),
            Family("'<section' repeated", "<section title=", head="<t>")]


@pytest.mark.parametrize("family", REPORTED, ids=[f.name for f in REPORTED])
def test_the_reported_template_attacks_take_linear_time(family):
    (parser,) = [p for p in PARSERS if p.name == "template (detected format)"]
    func = parser.load()
    result = confirmed(func, measure(func, family, 20_000), THRESHOLD)
    assert result.ratio <= THRESHOLD, (result.size, result.small, result.large)


# Two patterns found quadratic after the sweep was written: a reference label "Name <url>"
# (a long run of spaces, or "<http://" repeated) and an HTML part lxml cannot read ("<"
# repeated with no ">"). Each is timed at n and 2n.
def _reference_label(text: str) -> object:
    from registry.namespaces.xrefs import from_label

    return from_label(text)


def _html_without_a_parse(text: str) -> object:
    from registry.review.mailtext import _TAG

    return _TAG.sub("", text)


def _accept_encoding(text: str) -> object:
    from registry.http_semantics import accepted_codings

    return accepted_codings(text)


FOUND_LATER = [(_reference_label, Family("spaces before '<'", " ", head="a", tail="<x")),
               # Accept-Encoding (issue 31's fourth pass): a coding, spaces, junk.
               (_accept_encoding, Family("spaces after a coding", " ", head="gzip",
                                         tail="x")),
               (_reference_label, Family("'<http://' repeated", "<http://a", tail=">")),
               (_html_without_a_parse, Family("'<' repeated", "<"))]


@pytest.mark.parametrize(("func", "family"), FOUND_LATER,
                         ids=[f.name for _, f in FOUND_LATER])
def test_reference_labels_and_unparsed_html_take_linear_time(func, family):
    result = confirmed(func, measure(func, family, 20_000), THRESHOLD)
    assert result.ratio <= THRESHOLD, (result.size, result.small, result.large)


@pytest.mark.parametrize("label", [
    "Example <https://a.example/x>", "Name  <http://x.y>", "<https://only>", "a <http://a<b>",
    "a <b <https://c>", "x\n <https://y>", "x\ny <https://z>", "a<https://>", "no <ftp://x>",
    "t <https://a>b>", "sp\t<https://q>", ">", "a >< https://x>"])
def test_a_named_url_is_read_as_the_pattern_it_replaced_read_it(label):
    from registry.namespaces.xrefs import _named_url

    old = re.compile(r"(.*?)\s*<(https?://[^>\s]+)>\s*$").fullmatch(label)
    assert _named_url(label) == ((old.group(1), old.group(2)) if old else None)
