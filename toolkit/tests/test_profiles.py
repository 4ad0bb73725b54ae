"""urn8141.profiles, table-driven from the registrations' own examples: the
shipped profiles (urn8141/data/profiles.json) judge each RFC's URNs as the RFC does, and
namespace equivalence differs from RFC 8141's where the registration says so."""

import json
import random

import pytest

from urn8141 import equivalent as rfc8141_equivalent
from urn8141 import parse
from urn8141.profiles import (
    MAX_PROFILE_CHARS,
    PROFILE_KEYS,
    STEPS,
    VALIDATORS,
    ProfileError,
    compile_profile,
    json_depth,
    profile_problems,
    read_json,
)
from urn8141.store import SHIPPED_PROFILES

SHIPPED = json.loads(SHIPPED_PROFILES.read_text())["profiles"]


def profile_of(urn: str):
    nid = parse(urn).nid.lower()
    return compile_profile(SHIPPED[nid], nid)


def nss_valid(urn: str) -> bool:
    return not profile_of(urn).check_nss(parse(urn).nss)


def equivalent(a: str, b: str) -> bool:
    ua, ub = parse(a), parse(b)
    if ua.nid.lower() != ub.nid.lower():
        return False
    return profile_of(a).equivalent(ua, ub)


def test_at_least_fifteen_shipped_profiles_every_one_sound_and_cited():
    assert len(SHIPPED) >= 15
    for nid, data in SHIPPED.items():
        assert profile_problems(data, nid) == [], nid
        assert data["syntax"]["cite"].strip(), nid
        assert all(step["cite"].strip() for step in data.get("equivalence", [])), nid


@pytest.mark.parametrize("nid", sorted(SHIPPED))
def test_each_shipped_profile_passes_its_examples_and_fails_its_counter_examples(nid):
    profile = compile_profile(SHIPPED[nid], nid)
    for urn in SHIPPED[nid]["examples"]:
        assert profile.check_nss(parse(urn).nss) == [], urn
    for urn in SHIPPED[nid].get("counter_examples", []):
        assert profile.check_nss(parse(urn).nss) != [], urn


# (URN, valid by its namespace's registration): the RFCs' own examples first.
VALIDITY = [
    ("URN:ISBN:0-395-36341-1", True),             # RFC 3187 section 2
    ("urn:isbn:0451450523", True),
    ("urn:isbn:0451450524", False),               # wrong check digit (modulus 11)
    ("urn:isbn:0-8044-2957-X", True),             # X for 10
    ("urn:isbn:978-0-395-36341-6", True),         # ISBN-13
    ("urn:isbn:978-0-395-36341-5", False),
    ("urn:isbn:0-395-36341", False),
    ("urn:ISSN:1560-1560", True),                 # RFC 3044
    ("urn:issn:0317-8471", True),
    ("urn:issn:0317-8472", False),
    ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6", True),   # RFC 9562 section 4
    ("urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", True),   # case-insensitive on input
    ("urn:uuid:g81d4fae-7dec-11d0-a765-00a0c91e6bf6", False),
    ("urn:uuid:f81d4fae7dec11d0a76500a0c91e6bf6", False),
    ("urn:oid:1.3.6.1", True),                    # RFC 3061 section 1
    ("urn:oid:0.9.2342.19200300.100.4", True),
    ("urn:oid:1..3", False),
    ("urn:oid:1.03", False),                      # no leading zero (RFC 3061 ABNF)
    ("urn:ietf:rfc:2648", True),                  # RFC 2648 section 2
    ("urn:ietf:std:50", True),
    ("urn:ietf:id:ietf-urn-ietf-06", True),
    ("urn:ietf:mtg:41-urn", True),
    ("urn:ietf:rfc:abc", False),
    ("urn:ietf:params:xml:ns:netconf:base:1.0", True),          # RFC 3553
    ("URN:NBN:fi-fe19981001", True),              # RFC 3188 / RFC 8458
    ("urn:nbn:de:bvb:19-146642", True),
    ("urn:nbn:fi", False),
    ("urn:service:sos.police", True),             # RFC 5031
    ("urn:service:sos..police", False),
    ("urn:dev:mac:0024befffe804ff1", True),       # RFC 9039
    ("urn:dev:Mac:0024befffe804ff1", False),
]


@pytest.mark.parametrize("urn, valid", VALIDITY)
def test_nss_validity_as_the_registration_says(urn, valid):
    assert nss_valid(urn) is valid


# (a, b, equivalent by the namespace, equivalent by RFC 8141 section 3.1)
EQUIVALENCE = [
    ("URN:ISBN:0-395-36341-1", "urn:isbn:0395363411", True, False),  # RFC 3187: hyphens
    ("urn:isbn:0-8044-2957-x", "urn:isbn:080442957X", True, False),  # and X upper-cased
    ("urn:isbn:0395363411", "URN:ISBN:0395363411", True, True),
    ("urn:ISSN:1560-1560", "urn:issn:15601560", True, False),        # RFC 3044
    ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
     "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", True, False),  # RFC 9562
    ("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
     "URN:UUID:f81d4fae-7dec-11d0-a765-00a0c91e6bf6", True, True),
    ("urn:ietf:rfc:2648", "URN:IETF:RFC:2648", True, False),         # RFC 2648: whole URN
    ("urn:oid:1.3.6.1", "urn:OID:1.3.6.1", True, True),              # RFC 3061: exact
    ("urn:oid:1.3.6.1", "urn:oid:1.3.6.01", False, False),
    ("URN:NBN:FI-fe19981001", "urn:nbn:fi-fe19981001", True, False), # prefix case
    ("urn:nbn:fi-fe19981001", "urn:nbn:fi-FE19981001", False, False),
    ("urn:example:a%2c", "urn:example:a%2C", True, True),            # RFC 8141 3.1
    ("urn:example:a?+r=1?=q#f", "urn:example:a", True, True),        # r, q, f ignored
    ("urn:example:a", "urn:example:A", False, False),
    ("urn:service:SOS.Police", "urn:service:sos.police", True, False),
    ("urn:isbn:0395363411", "urn:issn:0395363411", False, False),
]


@pytest.mark.parametrize("a, b, same, same_by_rfc8141", EQUIVALENCE)
def test_equivalence_by_the_namespace_and_by_rfc_8141(a, b, same, same_by_rfc8141):
    assert rfc8141_equivalent(a, b) is same_by_rfc8141
    assert equivalent(a, b) is same
    assert equivalent(b, a) is same


@pytest.mark.parametrize("a, b, by_namespace", [
    ("urn:isbn:0-395-36341-1", "URN:ISBN:0395363411", True),
    ("urn:isbn:0-395-36341-1", "urn:isbn:0-451-45052-3", False),
    # Lexical rules, whatever the check digit says: not ISBNs, and still the same string.
    ("urn:isbn:0-451-45052-4", "urn:isbn:0451450524", True),
    ("urn:uuid:F81D4FAE7DEC11D0A76500A0C91E6BF6", "urn:uuid:f81d4fae7dec11d0a76500a0c91e6bf6",
     True),
    ("urn:isbn:0395363411", "urn:issn:0395363411", False),
])
def test_a_namespaces_steps_compare_any_two_of_its_urns(a, b, by_namespace):
    assert profile_of(a).equivalent(parse(a), parse(b)) is by_namespace
    assert profile_of(a).equivalent(parse(b), parse(a)) is by_namespace


def test_a_profile_without_syntax_applies_its_steps_to_every_urn():
    steps_only = compile_profile({"equivalence": [{"step": "case-insensitive-nss", "cite": "c"}]})
    assert steps_only.equivalent(parse("urn:demo:ABC"), parse("urn:demo:abc")) is True


@pytest.mark.parametrize("name, nss, ok", [
    ("isbn", "0-395-36341-1", True), ("isbn", "0395363412", False),
    ("isbn", "9780395363416", True), ("isbn", "9770395363416", False), ("isbn", "12345", False),
    ("isbn", "0-3-9536341-1", True), ("isbn", "0-3-9-536341-1", False),        # four parts
    ("isbn", "978-0-395-36341-6", True), ("isbn", "978-0-3-9-536341-6", False),  # five
    ("isbn-10", "080442957x", True), ("isbn-13", "0395363411", False),
    ("issn", "2049-3630", True), ("issn", "2049-3631", False), ("issn", "1234567", False),
    ("luhn", "imei:49015420323751", True), ("luhn", "imei:49015420323752", False),
])
def test_validators(name, nss, ok):
    assert (VALIDATORS[name][1](nss) is None) is ok


def test_every_step_is_described_and_keeps_percent_encodings_upper_case():
    for name, (description, step) in STEPS.items():
        assert description, name
        assert "%2F" in step("ab%2Fcd") or name == "remove-hyphens"


def test_check_errors_name_the_rule_and_point_at_the_character():
    profile = profile_of("urn:ietf:rfc:1")
    [error] = profile.check_nss("rfc:12a")
    assert (error.rule, error.offset) == ("rfc-nss", 6)
    assert "expected a digit" in error.message and "RFC 2648" in error.cite
    assert error.as_dict(base=9)["offset"] == 15          # into "urn:ietf:rfc:12a"
    [digit] = profile_of("urn:isbn:1").check_nss("0451450524")
    assert digit.rule == "isbn" and digit.offset == 9 and "check digit" in digit.message


def test_resolvers_percent_encode_what_they_insert_and_choose_by_prefix():
    ietf = profile_of("urn:ietf:rfc:1")
    assert ietf.resolve(parse("urn:IETF:RFC:2648")) == [
        ("RFC Editor", "https://www.rfc-editor.org/rfc/rfc2648")]
    assert ietf.resolve(parse("urn:ietf:mtg:41-urn")) == []
    nbn = profile_of("urn:nbn:fi-1")
    assert [url for _, url in nbn.resolve(parse("urn:nbn:de:bvb:19-146642"))] == [
        "https://nbn-resolving.org/urn:nbn:de:bvb:19-146642"]
    assert len(nbn.resolve(parse("URN:NBN:fi-fe19981001"))) == 2
    hostile = compile_profile({"resolvers": [{"url": "https://r.example.org/x/{nss}?u={urn}"}]})
    [(_, url)] = hostile.resolve(parse("urn:example:..%2F..%2Fevil/x@y"))
    assert url == ("https://r.example.org/x/..%252F..%252Fevil%2Fx@y"
                   "?u=urn:example:..%252F..%252Fevil%2Fx@y")


@pytest.mark.parametrize("url, message", [
    ("http://r.example.org/{nss}", "https://"),
    ("https://{nss}.example.org/", "a variable cannot be part of the host: write the host in "
                                   "full and the variable after it"),
    ("https://evil@r.example.org/{nss}", "not a host name"),
    ("https://r.example.org/{path}", "unknown variable"),
    ("https://r.example.org/", "inserts the URN"),
    ("https://r.example.org/{nss", "braces"),
    ("https://r.example.org/ {nss}", "spaces"),
])
def test_resolver_templates_that_could_redirect_anywhere_are_refused(url, message):
    [(field, problem)] = profile_problems({"resolvers": [{"url": url}]})
    assert field == "resolvers" and message in problem


@pytest.mark.parametrize("data, field, message", [
    ([], "profile", "a JSON object"),
    ({"syntax": {"abnf": 'a = "x"'}, "colour": 1}, "profile", "unknown key 'colour'"),
    ({"syntax": {"abnf": 'a = "x"'}}, "syntax", "say where the registration says so"),
    ({"syntax": {"abnf": "a = a", "cite": "c"}}, "syntax", "refers to itself"),
    ({"equivalence": [{"step": "fold", "cite": "c"}]}, "equivalence", "unknown step"),
    ({"equivalence": [{"step": "remove-hyphens"}]}, "equivalence", "say where"),
    ({"validators": [{"name": "crc32"}]}, "validators", "unknown validator"),
    ({"syntax": {"abnf": "a = 1*DIGIT", "cite": "c"}, "examples": ["urn:demo:12a"]},
     "examples", "fails its own profile"),
    ({"syntax": {"abnf": "a = 1*DIGIT", "cite": "c"}, "examples": ["urn:other:1"]},
     "examples", "not in the demo namespace"),
    ({"syntax": {"abnf": "a = 1*DIGIT", "cite": "c"}, "examples": ["not a urn"]},
     "examples", "is not a URN"),
    ({"syntax": {"abnf": "a = 1*DIGIT", "cite": "c"}, "counter_examples": ["urn:demo:1"]},
     "counter_examples", "passes the profile; it should fail"),
])
def test_unsound_profiles_are_refused_at_their_field(data, field, message):
    problems = profile_problems(data, "demo")
    assert any(f == field and message in m for f, m in problems), problems
    with pytest.raises(ProfileError):
        compile_profile(data, "demo")


def test_the_profile_keys_are_the_ones_the_shipped_profiles_use():
    used = {key for data in SHIPPED.values() for key in data}
    assert used <= set(PROFILE_KEYS)


def test_checking_is_linear_in_the_nss_length():
    """A long NSS costs in proportion to its length, on the fast and the slow path."""
    import time

    profile = profile_of("urn:nbn:fi-1")
    timings = []
    for size in (10_000, 100_000):
        nss = "fi-" + "a" * size
        start = time.perf_counter()
        assert profile.check_nss(nss) == []
        assert profile.check_nss(nss + " ")  # the NFA walk to the last character
        timings.append(time.perf_counter() - start)
    assert timings[1] < timings[0] * 40 + 0.5


@pytest.mark.parametrize("nss, ok", [
    ("10.5240:7791-8534-2C23-9030-8610-5", True),    # RFC 7972 section 2, its example
    ("10.5240:7791-8534-2c23-9030-8610-5", True),    # ABNF HEXDIG: either case
    ("10.5240:7791-8534-2C23-9030-8610-6", False),   # ISO 7064 MOD 37,36 gives 5
    ("10.5240:7791-8534-2C23-9030-861G-5", False),
    ("10.5240:7791-8534-2C23-9030-8610", False),
    ("10.5241:opaque", True),                        # another prefix: an opaque suffix
])
def test_the_eidr_check_character(nss, ok):
    assert (VALIDATORS["eidr"][1](nss) is None) is ok


@pytest.mark.parametrize("step, nss, result", [
    ("case-insensitive-first-part", "Example.COM:2002:A572007", "example.com:2002:A572007"),
    ("case-insensitive-first-part", "MPEG7:schema:2001", "mpeg7:schema:2001"),
    ("case-insensitive-first-part", "A%2fB:C", "a%2Fb:C"),
    ("ignore-vers-0", "imei:90420156-025763-0;vers=0", "imei:90420156-025763-0"),
    ("ignore-vers-0", "imei:90420156-025763-0;svn=42;VERS=0", "imei:90420156-025763-0;svn=42"),
    ("ignore-vers-0", "imei:ext;vers=01", "imei:ext;vers=01"),
])
def test_the_steps_of_rfc_4198_3614_4195_and_7254(step, nss, result):
    assert STEPS[step][1](nss) == result


@pytest.mark.parametrize("nss, result", [
    ("iptc.org:20001006:NewsMLv1.0:1U", "iptc.org:20001006:NewsMLv1.0:1"),     # RFC 3085
    ("iptc.org:20001006:NewsMLv1.0:12a", "iptc.org:20001006:NewsMLv1.0:12"),
    ("iptc.org:20001006:NewsMLv1.0:1", "iptc.org:20001006:NewsMLv1.0:1"),
    ("iptc.org:20001006:ItemU:1", "iptc.org:20001006:ItemU:1"),               # not a flag
    ("iptc.org:20001006:NewsMLv1.0:0U", "iptc.org:20001006:NewsMLv1.0:0U"),   # no posint
    ("iptc.org:20001006:x:1UA", "iptc.org:20001006:x:1UA"),
])
def test_the_update_flag_step_of_rfc_3085(nss, result):
    assert STEPS["ignore-update-flag"][1](nss) == result


# (step, NSS, what it gives): the NSS with and without percent-encodings, whose hex
# digits stay upper case whatever the step does to the rest.
STEP_TABLE = [
    ("case-insensitive-nss", "SOS.Police", "sos.police"),
    ("case-insensitive-nss", "AB%2fCD", "ab%2Fcd"),
    ("case-insensitive-urn", "RFC:2648", "rfc:2648"),
    ("case-insensitive-prefix", "FI-FE19981001", "fi-FE19981001"),
    ("case-insensitive-prefix", "F%49-FE%2f", "f%49-FE%2F"),
    ("case-insensitive-prefix", "FI-A%41-B", "fi-A%41-B"),
    # Only up to the first hyphen, also when the prefix holds a percent-encoding.
    ("case-insensitive-prefix", "A%41B-C%42D-E", "a%41b-C%42D-E"),
    ("remove-hyphens", "0-395-36341-1", "0395363411"),
    ("uppercase-x", "0-8044-2957-x", "0-8044-2957-X"),
    ("uppercase-x", "x%2cx", "X%2CX"),
    ("lowercase-hex", "F81D4FAE-7DEC", "f81d4fae-7dec"),
    ("lowercase-hex", "ABCDEFG%2F", "abcdefG%2F"),
]


@pytest.mark.parametrize("step, nss, expected", STEP_TABLE)
def test_each_step_on_the_nss_outside_its_percent_encodings(step, nss, expected):
    profile = compile_profile({"equivalence": [{"step": step, "cite": "RFC 8141 3.2"}]})
    assert profile.normal_form(parse(f"urn:example:{nss}")) == f"urn:example:{expected}"


def _bench_like(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdefXYZ0123456789-._~:@!$&'()*+,;=/%2C"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
            for _ in range(count)]


@pytest.mark.parametrize("nid", sorted(SHIPPED))
def test_the_verdict_alone_agrees_with_the_errors(nid):
    """nss_ok (the verdict, the fast path) says yes exactly when check_nss finds
    nothing; an error comes out the same the second time (from the message cache)."""
    profile = compile_profile(SHIPPED[nid], nid)
    nsss = [parse(u).nss for u in SHIPPED[nid]["examples"] +
            SHIPPED[nid].get("counter_examples", [])]
    for nss in nsss + [n + "[" for n in nsss] + _bench_like(len(nid), 300):
        errors = profile.check_nss(nss)
        assert profile.nss_ok(nss) is (not errors), nss
        assert profile.check_nss(nss) == errors


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000, "nests arrays and objects more than 16 deep"),
    ('{"syntax": ' * 17 + "1" + "}" * 17, "more than 16 deep"),
    ("x" * (MAX_PROFILE_CHARS + 1), "longer than"),
    ("{'a': 1}", "is not JSON"),
])
def test_profile_text_is_read_within_bounds(text, message):
    with pytest.raises(ProfileError, match=message) as exc:
        read_json(text)
    assert exc.value.problems[0][0] == "profile"


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"syntax": {"regex": "[[[[" * 50 + "\\\\\"{" * 50, "cite": "["}})
    assert json_depth(text) == 2
    assert read_json(text) == json.loads(text)


@pytest.mark.parametrize("syntax", [{"regex": "(" * 600 + "a" + ")" * 600},
                                    {"abnf": "a = " + "(" * 2400 + '"a"' + ")" * 2400}])
def test_a_profile_nested_too_deep_is_a_problem_at_its_syntax(syntax):
    problems = profile_problems({"syntax": {**syntax, "cite": "a test"}}, "example")
    assert problems == [("syntax", "groups are nested more than 20 deep (at character "
                                   f"{21 if 'regex' in syntax else 25} of the "
                                   f"{'REGEX' if 'regex' in syntax else 'ABNF'})")]
