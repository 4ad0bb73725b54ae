"""Section 3: URN-equivalence, from the five groups of examples in 3.2."""

import itertools

import pytest

from urn8141 import URNSyntaxError, equivalent, normalize

# Each inner list is one equivalence class of section 3.2; members of different
# classes are not equivalent.
CLASSES = [
    [  # first and second groups
        "urn:example:a123,z456",
        "URN:example:a123,z456",
        "urn:EXAMPLE:a123,z456",
        "urn:example:a123,z456?+abc",
        "urn:example:a123,z456?=xyz",
        "urn:example:a123,z456#789",
    ],
    ["urn:example:a123,z456/foo"],  # third group: "/" and what follows counts
    ["urn:example:a123,z456/bar"],
    ["urn:example:a123,z456/baz"],
    ["urn:example:a123%2Cz456", "URN:EXAMPLE:a123%2cz456"],  # fourth: never decoded
    ["urn:example:A123,z456"],  # fifth: the NSS is case-sensitive
    ["urn:example:a123,Z456"],
    ["urn:example:%D0%B0123,z456"],  # sixth: CYRILLIC SMALL LETTER A, percent-encoded
]


@pytest.mark.parametrize("members", CLASSES)
def test_members_of_a_class_are_equivalent(members):
    for a, b in itertools.product(members, repeat=2):
        assert equivalent(a, b), (a, b)


@pytest.mark.parametrize(("one", "other"), list(itertools.combinations(range(len(CLASSES)), 2)))
def test_members_of_different_classes_are_not(one, other):
    for a, b in itertools.product(CLASSES[one], CLASSES[other]):
        assert not equivalent(a, b), (a, b)


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("URN:EXAMPLE:a123%2cz456", "urn:example:a123%2Cz456"),
        ("urn:example:a123,z456?+abc?=xyz#789", "urn:example:a123,z456"),
        ("urn:ISBN:0-395-36341-1", "urn:isbn:0-395-36341-1"),
        ("urn:example:%e2%82%ac/%ab", "urn:example:%E2%82%AC/%AB"),
        ("urn:example:ABC", "urn:example:ABC"),
    ],
)
def test_normalize(text, normal):
    assert normalize(text) == normal


def test_normalize_does_not_touch_percent_signs_in_components():
    assert normalize("urn:example:a?=%2f#%2f") == "urn:example:a"


@pytest.mark.parametrize("bad", ["", "urn:example", "not a urn", "urn:example:a b"])
def test_normalize_and_equivalent_refuse_non_urns(bad):
    with pytest.raises(URNSyntaxError):
        normalize(bad)
    with pytest.raises(URNSyntaxError):
        equivalent("urn:example:a", bad)
