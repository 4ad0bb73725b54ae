"""Properties that must hold for every string, found by hypothesis."""

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from urn8141 import URNSyntaxError, equivalent, normalize, parse
from urn8141.syntax import _URN_RE, _walk

PCHAR = "abcXYZ019-._~!$&'()*+,;=:@"
pct = st.sampled_from(["%2c", "%2C", "%e2", "%Ab", "%00"])
pchar = st.one_of(st.sampled_from(list(PCHAR)), pct)
nid = st.from_regex(re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]"), fullmatch=True)


def component(extra):
    return st.tuples(pchar, st.lists(st.one_of(pchar, st.sampled_from(extra)), max_size=8)).map(
        lambda t: t[0] + "".join(t[1])
    )


@st.composite
def urns(draw):
    text = draw(st.sampled_from(["urn", "URN", "Urn"])) + ":" + draw(nid) + ":"
    text += draw(component(["/"]))
    if draw(st.booleans()):
        text += "?+" + draw(component(["/", "?"])).replace("?=", "?")
        text = text.rstrip("?") if text.endswith("?") and draw(st.booleans()) else text
    if draw(st.booleans()):
        text += "?=" + draw(component(["/", "?"]))
    if draw(st.booleans()):
        text += "#" + "".join(draw(st.lists(st.one_of(pchar, st.sampled_from("/?")), max_size=6)))
    return text


# Strings near the grammar: URN pieces glued with characters that are not allowed.
noise = st.text(alphabet=st.sampled_from(list(PCHAR + "%?#/ \u00e9\x00[]urnURN")), max_size=30)
near_urns = st.one_of(urns(), noise, st.builds(lambda a, b: a + b, urns(), noise))


@settings(max_examples=400)
@given(urns())
def test_generated_urns_parse_and_round_trip(text):
    urn = parse(text)
    assert parse(str(urn)) == urn


@settings(max_examples=400)
@given(urns())
def test_normalize_is_idempotent(text):
    once = normalize(text)
    assert normalize(once) == once
    assert equivalent(text, once)


@settings(max_examples=200)
@given(urns(), urns(), urns())
def test_equivalent_is_an_equivalence_relation(a, b, c):
    assert equivalent(a, a)
    assert equivalent(a, b) == equivalent(b, a)
    if equivalent(a, b) and equivalent(b, c):
        assert equivalent(a, c)


@settings(max_examples=1000)
@given(near_urns)
@example("urn:example:a?+?=q")
@example("urn:ab:c?+r?")
def test_the_regex_and_the_diagnosing_walk_agree(text):
    accepted = _URN_RE.fullmatch(text) is not None and not re.search(r"%(?![0-9A-Fa-f]{2})", text)
    try:
        _walk(text)
        walked = True
    except URNSyntaxError:
        walked = False
    assert accepted == walked, text


@settings(max_examples=500)
@given(st.text(max_size=60))
def test_any_text_parses_or_raises_urn_syntax_error_with_an_offset(text):
    try:
        parse(text)
    except URNSyntaxError as exc:
        assert 0 <= exc.offset <= len(text)
        assert exc.reason != "not a URN"
