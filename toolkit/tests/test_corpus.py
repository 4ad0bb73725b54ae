"""The corpus (tests/corpus/: URNs and pairs from each namespace's RFCs, each entry
cited) against the toolkit alone, offline, with the shipped profiles: every verdict
and every equivalence as the RFCs give them. (The registry runs the same files through
its /api/check and /api/equivalent.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from urn8141.store import SHIPPED_PROFILES, load_profiles

CORPUS = Path(__file__).resolve().parent / "corpus"
PROFILES = load_profiles(SHIPPED_PROFILES)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_the_toolkit_agrees_with_the_corpus(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    expected = {**{e[0]: None for e in data.get("unjudged", [])},
                **{e[0]: True for e in data.get("valid", [])},
                **{e[0]: False for e in data.get("invalid", [])}}
    wrong = [f"{urn}: {PROFILES.check(urn).nss_valid}, the corpus says {verdict}"
             for urn, verdict in expected.items() if PROFILES.check(urn).nss_valid is not verdict]
    for a, b, same, _, cite in data.get("pairs", []):
        for x, y in ((a, b), (b, a)):
            if PROFILES.equivalent(x, y) is not same:
                wrong.append(f"{x} ~ {y}: {not same}, the corpus says {same} ({cite})")
    assert not wrong
