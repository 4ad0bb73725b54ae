"""urn8141.grammar: ABNF (RFC 5234) and regular expressions compiled to a
linear-time matcher, with a diagnosis that points at the first bad character."""

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from urn8141.grammar import (
    MAX_ALTERNATIVES,
    MAX_DEPTH,
    MAX_DFA_STATES,
    MAX_NESTING,
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
    from urn8141.profiles import profile_problems

    assert profile_problems(data, "ab") == []


def test_what_urn8141_grammar_offered_is_still_importable_from_it():
    """The DFAs live in urn8141.dfa; what urn8141.grammar offered before is still there."""
    from urn8141 import dfa, grammar

    for name in ("Mismatch", "MAX_DFA_STATES", "MAX_TABLE_STATES", "MAX_TABLE_WORK"):
        assert getattr(grammar, name) is getattr(dfa, name)


def test_a_table_too_costly_to_build_is_given_up_and_the_python_path_checks():
    """A grammar whose whole ASCII DFA would cost seconds to build (about 19,000 NFA
    states, every state a closure of thousands) is refused by the work bound, not built
    inside a request."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    parts = "".join(f"[{(letters[3 * i:] + letters[:3 * i])[:31]}](?:z?){{235}}"
                    for i in range(20))
    grammar = compile_syntax("regex", f"[{letters}]*[{letters[:31]}]{parts}")
    assert grammar.ascii_table() is None


# --- bounds: nesting, width and numbers, refused before anything recurses ---------


def deep_stack(frames, fn):
    """``fn`` called with ``frames`` more frames on the stack (a server's request)."""
    return fn() if frames == 0 else deep_stack(frames - 1, fn)


HOSTILE = [
    # reader, text, what the message says (each was a RecursionError, a ValueError or
    # seconds of work before)
    ("regex", "(" * 600 + "a" + ")" * 600, "nested more than"),
    ("regex", "(?:" * 30 + "a" + ")" * 30, "nested more than"),
    ("regex", "[(]" + "(" * 25 + "a" + ")" * 25, "nested more than"),
    ("regex", "|".join(f"x{i}" for i in range(MAX_ALTERNATIVES + 1)), "more than 256 options"),
    ("regex", "a{99999999999999999999}", "not a regular expression"),
    ("regex", "(?:(?:a{1000}){1000}){1000}", "too large"),
    ("abnf", "a = " + "(" * 2400 + '"a"' + ")" * 2400, "nested more than"),
    ("abnf", "a = " + "[" * 30 + '"a"' + "]" * 30, "nested more than"),
    ("abnf", "\n".join(f"r{i} = r{i + 1}" for i in range(900)) + '\nr900 = "a"', "longer than"),
    ("abnf", "\n".join(f"r{i} = r{i + 1}" for i in range(70)) + '\nr70 = "a"', "64 levels"),
    ("abnf", 'a = b b\nb = "x" c\n' + "\n".join(f'c{i} = ("y" c{i + 1})' if i else
                                                 f'c = ("y" c{i + 1})' for i in range(40))
     + '\nc40 = "z"', "64 levels"),
    ("abnf", "a = " + " / ".join(f'"x{i}"' for i in range(MAX_ALTERNATIVES + 1)),
     "more than 256 options"),
    ("abnf", 'a = "x"\n' + "".join(f'a =/ "y{i}"\n' for i in range(MAX_ALTERNATIVES)),
     "more than 256 options"),
    ("abnf", "a = " + "9" * 5000 + '"a"', "out of range"),
    ("abnf", "a = 1*" + "9" * 5000 + '"a"', "out of range"),
    ("abnf", "a = %d" + "9" * 5000, "not a character"),
    ("abnf", "a = %x41-" + "F" * 5000, "not a character"),
    ("abnf", "a = %b" + "1" * 30, "not a character"),
    ("abnf", 'a = 1000(1000(1000"a"))', "too large"),
]


@pytest.mark.parametrize("kind, text, message", HOSTILE,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(HOSTILE)])
def test_hostile_grammars_are_refused_with_a_message(kind, text, message):
    with pytest.raises(GrammarError, match=message):
        deep_stack(300, lambda: compile_syntax(kind, text))


@pytest.mark.parametrize("kind, text, example", [
    ("regex", "(?:x|y(?:" * (MAX_NESTING // 2) + "z" + ")*)" * (MAX_NESTING // 2), "yyx"),
    ("regex", "".join("(?:x|y" for _ in range(MAX_NESTING)) + "z" + ")*" * MAX_NESTING, "x"),
    ("abnf", "a = " + '( "x" / *' * MAX_NESTING + '"y"' + ")" * MAX_NESTING, "x"),
    ("abnf", "\n".join(f'r{i} = "a" r{i + 1} / "b"' for i in range(20)) + '\nr20 = "c"',
     "a" * 20 + "c"),
    ("abnf", "a = " + " / ".join(f'"p" 1*DIGIT "{i}"' for i in range(MAX_ALTERNATIVES)),
     "p10"),
    ("regex", "|".join(f"p[0-9]+{i}" for i in range(MAX_ALTERNATIVES)), "p10"),
])
def test_grammars_at_the_bounds_compile_on_a_deep_stack(kind, text, example):
    """As deep and as wide as the bounds let a grammar be, with 600 frames already on
    the stack: every step (reading, resolving, the NFA, the LL(1) analysis, factoring,
    the patterns) stays within Python's stack, in well under a second."""
    start = time.perf_counter()
    grammar = deep_stack(600, lambda: compile_syntax(kind, text))
    assert time.perf_counter() - start < 10  # 0.3 s for the widest on a quiet machine
    assert grammar.matches(example)


def test_the_shipped_profiles_are_well_within_the_bounds():
    import json

    from urn8141.grammar import _height, parse_abnf, parse_regex
    from urn8141.store import SHIPPED_PROFILES

    for data in json.loads(SHIPPED_PROFILES.read_text())["profiles"].values():
        if "syntax" in data:
            kind = "abnf" if "abnf" in data["syntax"] else "regex"
            tree = (parse_abnf if kind == "abnf" else parse_regex)(data["syntax"][kind])
            assert _height(tree) <= MAX_DEPTH // 2
