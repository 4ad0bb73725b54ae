"""Sections 2.1, 5.1 and 5.2: what a formal or informal NID may be."""

import pytest

from urn8141 import (
    advise_formal_nid,
    check_formal_nid,
    check_informal_nid,
    informal_nid,
    informal_number,
    is_informal,
    nid_key,
)

REGISTERED = ["ISBN", "urn-7", "example"]


@pytest.mark.parametrize(
    ("nid", "codes"),
    [
        ("racefoo", []),
        ("abc", []),
        ("3gpp", []),
        ("a-b", []),
        ("broadband-forum-org", []),
        ("a" * 32, []),
        # 2.1 / section 2 syntax
        ("", ["syntax", "too_short"]),
        ("a", ["syntax", "too_short"]),
        ("ab", ["too_short"]),
        ("-abc", ["syntax"]),
        ("abc-", ["syntax"]),
        ("a" * 33, ["syntax"]),
        ("ab_c", ["syntax"]),
        ("abc:d", ["syntax"]),
        ("caf\u00e9", ["syntax"]),
        ("ab c", ["syntax"]),
        # 5.1 rule 1: already registered, case-insensitively
        ("isbn", ["already_registered"]),
        ("Example", ["already_registered"]),
        # 5.1 rule 2: "urn-" is for informal namespaces
        ("urn-8", ["reserved_urn_prefix"]),
        ("URN-foo", ["reserved_urn_prefix"]),
        ("urn-7", ["reserved_urn_prefix", "already_registered"]),
        # 5.1 rule 3: more than two characters, no ALPHA ALPHA "-"
        ("de-foo", ["reserved_country_code_prefix"]),
        ("xn--abc", ["reserved_country_code_prefix"]),
        ("XN--abc", ["reserved_country_code_prefix"]),
        ("ab-", ["syntax", "reserved_country_code_prefix"]),
        ("a1-b", []),
        ("12-b", []),
        # 5.1 rule 4: "X-" was experimental under RFC 3406
        ("X-foo", ["reserved_experimental_prefix"]),
        ("x-foo", ["reserved_experimental_prefix"]),
    ],
)
def test_check_formal_nid(nid, codes):
    problems = check_formal_nid(nid, REGISTERED)
    assert [p.code for p in problems] == codes
    assert all(p.message and p.section for p in problems)


@pytest.mark.parametrize(
    ("nid", "codes"),
    [
        ("urn-8", []),
        ("URN-8", []),  # ABNF literals are case-insensitive
        ("urn-1234567890", []),
        ("urn-" + "9" * 28, []),
        ("urn-" + "9" * 29, ["syntax"]),  # 33 characters
        ("urn-0", ["syntax"]),
        ("urn-07", ["syntax"]),
        ("urn-", ["syntax"]),
        ("urn--1", ["syntax"]),
        ("urn-1a", ["syntax"]),
        ("urn8", ["syntax"]),
        ("isbn", ["syntax"]),
        ("urn-7", ["already_registered"]),
        ("URN-7", ["already_registered"]),
    ],
)
def test_check_informal_nid(nid, codes):
    assert [p.code for p in check_informal_nid(nid, REGISTERED)] == codes


def test_informal_numbers():
    assert informal_nid(8) == "urn-8"
    assert informal_number("URN-57") == 57
    assert informal_number("urn-07") is None
    assert is_informal("urn-1") and not is_informal("urn-0")
    with pytest.raises(ValueError):
        informal_nid(0)
    with pytest.raises(ValueError):
        informal_nid(10**29)


def test_nid_key_folds_case():
    assert nid_key("ISBN") == nid_key("isbn") == "isbn"


def test_advice_for_reviewers():
    codes = [w.code for w in advise_formal_nid("HTTP", uri_schemes=["http"], country_codes=[])]
    assert codes == ["uri_scheme"]
    codes = [w.code for w in advise_formal_nid("deu", uri_schemes=[], country_codes=["DEU"])]
    assert codes == ["country_code"]
    assert advise_formal_nid("racefoo", uri_schemes=["http"], country_codes=["DEU"]) == []
