"""Section 2 syntax, table-driven from the RFC's own examples."""

import pytest

from urn8141 import URN, URNSyntaxError, parse

# (text, nid, nss, r, q, f) -- every URN example of RFC 8141 sections 2, 3.2 and 5.
VALID = [
    # 2.2: "/" in the NSS encapsulates hierarchical names
    ("urn:example:1/406/47452/2", "example", "1/406/47452/2", None, None, None),
    # 2.3.1: r-component
    ("urn:example:foo-bar-baz-qux?+CCResolve:cc=uk", "example", "foo-bar-baz-qux",
     "CCResolve:cc=uk", None, None),
    # 2.3.2: q-component, as the published RFC writes it ("?=")
    ("urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
     "example", "weather", None, "op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
     None),
    # 2.3.3: f-component
    ("urn:example:foo-bar-baz-qux#somepart", "example", "foo-bar-baz-qux", None, None,
     "somepart"),
    # 3.2
    ("urn:example:a123,z456", "example", "a123,z456", None, None, None),
    ("URN:example:a123,z456", "example", "a123,z456", None, None, None),
    ("urn:EXAMPLE:a123,z456", "EXAMPLE", "a123,z456", None, None, None),
    ("urn:example:a123,z456?+abc", "example", "a123,z456", "abc", None, None),
    ("urn:example:a123,z456?=xyz", "example", "a123,z456", None, "xyz", None),
    ("urn:example:a123,z456#789", "example", "a123,z456", None, None, "789"),
    ("urn:example:a123,z456/foo", "example", "a123,z456/foo", None, None, None),
    ("urn:example:a123%2Cz456", "example", "a123%2Cz456", None, None, None),
    ("URN:EXAMPLE:a123%2cz456", "EXAMPLE", "a123%2cz456", None, None, None),
    ("urn:example:%D0%B0123,z456", "example", "%D0%B0123,z456", None, None, None),
    # 5: colons in the NSS carry no implicit structure
    ("urn:example:apple:pear:plum:cherry", "example", "apple:pear:plum:cherry", None, None, None),
    # 5.2: informal NIDs are ordinary NIDs to the syntax
    ("urn:urn-7:3gpp-service.ims.icsi.mmtel", "urn-7", "3gpp-service.ims.icsi.mmtel",
     None, None, None),
    # Appendix B: "/", "~" and "&" now allowed in the NSS; "?" and "#" as delimiters
    ("urn:example:a/b~c&d", "example", "a/b~c&d", None, None, None),
    ("urn:example:a?+r?x?=q?y/z#f?/", "example", "a", "r?x", "q?y/z", "f?/"),
    # the grammar's edges
    ("urn:example:a#", "example", "a", None, None, ""),
    ("urn:example:a?=q?+notr", "example", "a", None, "q?+notr", None),
    ("urn:ab:x", "ab", "x", None, None, None),
    ("urn:" + "a" * 32 + ":x", "a" * 32, "x", None, None, None),
    ("urn:a-b:x", "a-b", "x", None, None, None),
]


@pytest.mark.parametrize(("text", "nid", "nss", "r", "q", "f"), VALID)
def test_rfc_examples_parse(text, nid, nss, r, q, f):
    assert parse(text) == URN(nid, nss, r, q, f)


# (text, offset of the first bad character, a word of the message)
INVALID = [
    # 2.3.2 as this copy of the draft prints it: "?" followed by neither "+" nor "="
    ("urn:example:weather?op=map&lat=39.56", 19, '"?+"'),
    ("", 0, "empty"),
    ("urn", 3, "urn:"),
    ("url:example:a", 2, "urn:"),
    ("urn::a", 4, "empty"),
    ("urn:example", 11, "no ':'"),
    ("urn:example:", 12, "NSS is empty"),
    ("urn:x:a", 4, "two characters"),
    ("urn:-ab:x", 4, "start with '-'"),
    # Appendix B: "-" no longer allowed at the end of a NID
    ("urn:ab-:x", 6, "end with '-'"),
    ("urn:" + "a" * 33 + ":x", 36, "32"),
    ("urn:ex_ample:x", 6, "letters, digits"),
    ("urn:example:a b", 13, "space"),
    ("urn:example:caf\u00e9", 15, "%C3%A9"),
    ("urn:example:a%2", 13, "hexadecimal"),
    ("urn:example:a%zz", 13, "hexadecimal"),
    ("urn:example:/a", 12, "cannot start with '/'"),
    ("urn:example:a?+", 15, "r-component is empty"),
    ("urn:example:a?+?=q", 15, "r-component"),
    ("urn:example:a?=", 15, "q-component is empty"),
    ("urn:example:a?+r?=", 18, "q-component is empty"),
    ("urn:example:a#b#c", 15, "#"),
    ("urn:example:a[1]", 13, "'['"),
    ("urn:example:a\x00", 13, "control character"),
    ("urn:example:a\n", 13, "control character"),
]


@pytest.mark.parametrize(("text", "offset", "word"), INVALID)
def test_invalid_urns_say_where_and_why(text, offset, word):
    with pytest.raises(URNSyntaxError) as info:
        parse(text)
    assert info.value.offset == offset
    assert word in info.value.reason
    assert isinstance(info.value, ValueError)


def test_a_non_string_is_a_syntax_error_not_a_crash():
    with pytest.raises(URNSyntaxError):
        parse(b"urn:example:a")  # type: ignore[arg-type]


def test_str_writes_the_urn_back_with_its_components():
    urn = parse("URN:Example:a?+r?=q#f")
    assert str(urn) == "urn:Example:a?+r?=q#f"
    assert urn.assigned_name == "urn:Example:a"


def test_urn_is_immutable():
    urn = parse("urn:example:a")
    with pytest.raises(AttributeError):
        urn.nss = "b"  # type: ignore[misc]
