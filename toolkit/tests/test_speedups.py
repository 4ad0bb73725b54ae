"""The C path of the URN check (urn8141/_speedups.c) against its reference,
the Python path (``check_python``): the same ``Checked`` (components, verdict,
namespace normal form) or the same refusal, for every URN of the corpus, every
shipped profile's examples and counter-examples, every normal-form step the C
applies, and random text; and a malformed profile table refused, never read past."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from urn8141 import URNSyntaxError
from urn8141.check import ACCELERATED, Checked, check, check_python
from urn8141.profiles import STEPS, TABLE_STEPS, compile_profile
from urn8141.store import SHIPPED_PROFILES

CORPUS = Path(__file__).resolve().parent / "corpus"
SHIPPED = {nid: compile_profile(data, nid) for nid, data in
           json.loads(SHIPPED_PROFILES.read_text())["profiles"].items()}

needs_c = pytest.mark.skipif(not ACCELERATED, reason="the C path is not built here")


def outcome(fn, text, profiles):
    try:
        return fn(text, profiles)
    except URNSyntaxError as exc:
        return ("refused", exc.reason, exc.offset)


def assert_same(text, profiles=SHIPPED):
    fast, reference = outcome(check, text, profiles), outcome(check_python, text, profiles)
    assert fast == reference, text
    if isinstance(fast, tuple) and fast[0] != "refused":
        assert type(fast) is Checked


def corpus_urns() -> list[str]:
    found = []
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in ("valid", "invalid", "unjudged"):
            found += [entry[0] for entry in data.get(key, [])]
        found += [urn for entry in data.get("pairs", []) for urn in entry[:2]]
    return found


def test_ci_runs_the_c_path():
    """CI has a C compiler: there, the C path must have been built and be in use (a
    build that silently failed would leave every speed figure on the Python path)."""
    if os.environ.get("CI", "").lower() != "true":
        pytest.skip("outside CI the C path is optional")
    assert ACCELERATED


def test_urn_speedups_0_turns_the_c_path_off():
    code = "from urn8141.check import ACCELERATED; print(ACCELERATED)"
    env = {**os.environ, "URN_SPEEDUPS": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


def test_urn_speedups_is_0_or_1():
    code = "import urn8141.check"
    env = {**os.environ, "URN_SPEEDUPS": "no"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode != 0
    assert "URN_SPEEDUPS is 0" in done.stderr


def test_the_table_steps_are_steps():
    assert set(TABLE_STEPS) <= set(STEPS)


@needs_c
def test_every_shipped_profile_but_those_with_a_regex_step_has_a_table():
    declined = {nid for nid, profile in SHIPPED.items() if profile._machine is None}
    expected = {nid for nid, profile in SHIPPED.items()
                if any(name not in TABLE_STEPS for name, _ in profile.steps)}
    assert declined == expected


@pytest.mark.parametrize("text", corpus_urns())
def test_the_corpus(text):
    assert_same(text)


@pytest.mark.parametrize("text", [text for profile in SHIPPED.values()
                                  for key in ("examples", "counter_examples")
                                  for text in profile.data.get(key, [])])
def test_the_shipped_examples(text):
    assert_same(text)
    assert_same(text.upper())
    assert_same(text.lower())


NSS_CHARS = "aAbBfFxXzZ09-._~:@!$&'()*+,;=/%?#"


@st.composite
def near_urns(draw, nids):
    scheme = draw(st.sampled_from(["urn", "URN", "uRn", "urn", "ur", "urnx"]))
    nid = draw(st.sampled_from(nids))
    nid = draw(st.sampled_from([nid, nid.upper(), nid.title()]))
    sep = draw(st.sampled_from([":", ":", ":", "", "::"]))
    pieces = draw(st.lists(st.one_of(
        st.sampled_from(list(NSS_CHARS)),
        st.sampled_from(["%2c", "%2C", "%e9", "%A", "%g1", "?+", "?=", "#", "é", " ", "\n"])),
        max_size=24))
    return f"{scheme}:{nid}{sep}" + "".join(pieces)


@given(near_urns([*SHIPPED, "urn-7", "x", "unregistered", "a-b"]))
@settings(max_examples=3000, deadline=None)
def test_random_text_near_a_urn(text):
    assert_same(text)


@pytest.mark.parametrize("step", sorted(TABLE_STEPS))
@given(nss=st.lists(st.sampled_from(
    ["a", "B", "x", "X", "f", "F", "-", ":", "%2c", "%aF", "%3A", "%2D", "z", "9"]),
    min_size=1, max_size=16).map("".join))
@settings(max_examples=300, deadline=None)
def test_each_step_the_c_applies(step, nss):
    profile = compile_profile({"equivalence": [{"step": step, "cite": "a test"}]}, "test")
    profiles = {"test": profile}
    assert_same(f"urn:test:{nss}", profiles)
    assert_same(f"URN:Test:{nss}?+r#f", profiles)


def test_steps_in_their_order():
    steps = [{"step": "uppercase-x", "cite": "c"}, {"step": "case-insensitive-nss", "cite": "c"}]
    one = {"test": compile_profile({"equivalence": steps}, "test")}
    other = {"test": compile_profile({"equivalence": steps[::-1]}, "test")}
    assert check("urn:test:aXb", one).normal_form == "urn:test:axb"
    assert check("urn:test:aXb", other).normal_form == "urn:test:aXb"
    assert_same("urn:test:aXb", one)
    assert_same("urn:test:aXb", other)


def test_not_text_is_refused_as_the_python_path_refuses_it():
    for value in (None, 42, b"urn:isbn:0451450523"):
        with pytest.raises(URNSyntaxError):
            check(value, SHIPPED)  # type: ignore[arg-type]


@needs_c
@pytest.mark.parametrize("machine", [
    (b"\x00" * 127, b"", b"\x00\x01", 1, b"", (), True),           # classes too short
    (b"\x00" * 128, b"\x00\x00", b"\x00\x01", 1, b"", (), True),   # transitions too short
    (b"\x05" * 128, b"\x00\x00" * 2, b"\x00\x01", 1, b"", (), True),  # a class past the table
    (b"\x00" * 128, b"\x00\x00\x09\x00", b"\x00\x01", 1, b"", (), True),  # a state past it
    (None, b"", b"", 1, b"\x63", (), False),                        # an unknown step
    (None, b"", b"", 1, b"", (), False, "one too many"),
])
def test_a_malformed_table_is_refused_not_read_past(machine):
    from urn8141 import _speedups

    profiles = {"test": SimpleNamespace(_machine=machine)}
    with pytest.raises(ValueError, match="profile table"):
        _speedups.check("urn:test:abc", profiles)


@needs_c
def test_a_long_nss_beyond_the_stack_buffer():
    nss = "FI-" + "a%2c" * 5000
    assert_same(f"urn:nbn:{nss}")
    assert_same(f"urn:example:{nss}")
    assert check(f"urn:example:{nss}", SHIPPED).normal_form.endswith("a%2C")
