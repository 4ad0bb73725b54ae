"""registry.urns.grammar: ABNF (RFC 5234) and regular expressions compiled to a
linear-time matcher, with a diagnosis that points at the first bad character."""

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.urns.grammar import (
    MAX_DFA_STATES,
    MAX_REPEAT,
    GrammarError,
    compile_syntax,
    describe_chars,
    parse_abnf,
)

IETF = """NSS = rfc-nss / other-nss
rfc-nss = "rfc:" 1*DIGIT
other-nss = string ; a comment
           ; a continued comment
string = 1*(DIGIT / ALPHA / "-")
"""


@pytest.mark.parametrize("text, matches", [
    ("rfc:2648", True),
    ("RFC:2648", True),        # a quoted string is case-insensitive (RFC 5234 2.3)
    ("rfc:26a", False),
    ("draft-x", True),
    ("", False),
    ("a:b", False),
])
def test_abnf_matches_as_rfc_5234_says(text, matches):
    assert compile_syntax("abnf", IETF).matches(text) is matches


def test_abnf_case_sensitive_strings_num_values_repetition_and_options():
    grammar = compile_syntax("abnf", 'x = %s"ab" 2*3%x30-32 ["." %d65.66] *1"z"\n')
    assert grammar.matches("ab00")
    assert grammar.matches("ab012.ABz")
    assert not grammar.matches("AB00")        # %s: case-sensitive (RFC 7405)
    assert not grammar.matches("ab0")         # 2*3: at least two
    assert not grammar.matches("ab0123")      # and at most three
    assert not grammar.matches("ab00.ab")     # %d65.66 is "AB" exactly


def test_incremental_alternatives_and_core_rules():
    grammar = compile_syntax("abnf", 'a = "x"\na =/ HEXDIG 1*pchar\n')
    assert grammar.matches("x") and grammar.matches("f%41") and not grammar.matches("g1")


@pytest.mark.parametrize("abnf, message", [
    ('a = "x" a\n', "refers to itself"),
    ('a = b\nb = "(" a ")"\n', "refers to itself"),
    ("a = <a prose value>\n", "prose value"),
    ("a = b\n", 'the rule "b" is used but not defined'),
    ('a = "x"\na = "y"\n', "defined twice"),
    ('a = ("x"\n', "not closed"),
    (f'a = {MAX_REPEAT + 1}"x"\n', "out of range"),
    ("= x\n", "a rule starts with its name"),
    ("a = %x39-30\n", "runs backwards"),
    ("", "no rule"),
])
def test_abnf_that_is_not_a_regular_syntax_is_refused(abnf, message):
    with pytest.raises(GrammarError) as exc:
        compile_syntax("abnf", abnf)
    assert message in str(exc.value)


@pytest.mark.parametrize("pattern, message", [
    (r"(a)\1", "back-reference"),
    (r"a(?=b)", "look-ahead"),
    (r"^a$", "anchor"),
    (r"(", "not a regular expression"),
    (r"(?m)a", "only the (?i) flag"),
])
def test_regex_features_a_linear_matcher_cannot_have_are_refused(pattern, message):
    with pytest.raises(GrammarError) as exc:
        compile_syntax("regex", pattern)
    assert message in str(exc.value)


def test_regex_with_ignore_case_and_classes():
    grammar = compile_syntax("regex", r"(?i)[0-9a-f]{8}-\d+")
    assert grammar.matches("F81D4FAE-12") and not grammar.matches("F81D4FAG-12")


def test_mismatch_points_at_the_first_character_no_path_takes_and_names_the_rule():
    grammar = compile_syntax("abnf", IETF)
    miss = grammar.mismatch("rfc:12a4")
    assert miss is not None and miss.offset == 6
    assert miss.rules == ("rfc-nss",)       # the core DIGIT is not what a reader needs
    assert describe_chars(miss.expected) == "a digit"
    ended = grammar.mismatch("rfc:")
    assert ended is not None and ended.offset == 4
    assert grammar.mismatch("rfc:12") is None


HEX_GRAMMAR = compile_syntax("abnf", 'u = 2(4HEXDIG "-") *2("." 1*DIGIT)\n')


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0aF-.9g", max_size=20))
def test_the_nfa_and_the_re2_pattern_agree(text):
    """The fast path (RE2) and the diagnosis (NFA) are built from one tree: one says
    "matches" exactly when the other finds no mismatch."""
    for grammar in (HEX_GRAMMAR, compile_syntax("abnf", IETF)):
        assert grammar.matches(text) is (grammar.mismatch(text) is None)


def test_matching_is_linear_in_the_length_of_the_text():
    """A pattern that makes a backtracking matcher exponential: RE2 and the NFA
    take time proportional to the text (here far under a second for 200 kB)."""
    grammar = compile_syntax("regex", r"(a|a)*(a|a)*b")
    for size in (20_000, 200_000):
        text = "a" * size
        start = time.perf_counter()
        assert not grammar.matches(text)
        assert grammar.mismatch(text) is not None
        elapsed = time.perf_counter() - start
        assert elapsed < 10, (size, elapsed)


def test_a_grammar_too_large_once_expanded_is_refused():
    with pytest.raises(GrammarError, match="too large"):
        compile_syntax("abnf", 'a = 1000(1000"x")\n')
    assert parse_abnf('a = 1000(1000"x")\n')  # reading it is fine; expanding it is not


def test_the_diagnosis_stays_right_when_its_cache_of_states_starts_afresh():
    """[ab]*a[ab]{12} needs 2^13 DFA states, more than MAX_DFA_STATES: the lazily built
    DFA is dropped and rebuilt mid-walk, and must still stop where RE2 says no."""
    grammar = compile_syntax("regex", "[ab]*a[ab]{12}")
    rng = random.Random(3)
    for _ in range(3):
        text = "".join(rng.choice("ab") for _ in range(3 * MAX_DFA_STATES))
        assert (grammar.mismatch(text) is None) is grammar.matches(text)
        bad = text + "c"
        miss = grammar.mismatch(bad)
        assert miss is not None and miss.offset == len(text)


@pytest.mark.parametrize("data", [
    {"syntax": {"regex": "(?i)ß", "cite": "a test"}},
    {"syntax": {"abnf": 'nss = "ß" / "ﬀ"', "cite": "a test"}},
])
def test_a_character_whose_other_case_is_two_characters_is_not_a_crash(data):
    """"ß" upper-cased is "SS": not a case of one character, so left out, never a 500
    on the profile form."""
    from registry.urns.profiles import profile_problems

    assert profile_problems(data, "ab") == []


def test_a_table_too_costly_to_build_is_given_up_and_the_python_path_checks():
    """A grammar whose whole ASCII DFA would cost seconds to build (about 19,000 NFA
    states, every state a closure of thousands) is refused by the work bound, not built
    inside a request."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    parts = "".join(f"[{(letters[3 * i:] + letters[:3 * i])[:31]}](?:z?){{235}}"
                    for i in range(20))
    grammar = compile_syntax("regex", f"[{letters}]*[{letters[:31]}]{parts}")
    assert grammar.ascii_table() is None
