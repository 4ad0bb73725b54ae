"""The corpus files of tests/urns/corpus/ (URNs and URN pairs from each namespace's RFCs),
through the real endpoints on a database installed as a fresh one is (migrate, then
import_registry, which publishes the shipped profiles through the actions).

The layout is the corpus harness's::

    {"nid": "...", "about": "...",
     "valid":   [[urn, cite], ...],                        # nss_valid true
     "invalid": [[urn, rule broken, cite], ...],           # nss_valid false
     "pairs":   [[a, b, equivalent, rfc8141_equivalent, cite], ...]}

"Judgement: ..." in a cite marks a call the RFC leaves open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.namespaces.profiles import shipped_profiles

CORPUS = Path(__file__).resolve().parents[1] / "urns" / "corpus"
FILES = {path.stem: path for path in sorted(CORPUS.glob("*.json"))}
SHIPPED = shipped_profiles()


def load(name: str) -> dict:
    data = json.loads(FILES[name].read_text(encoding="utf-8"))
    for key, size in (("valid", 2), ("invalid", 3), ("pairs", 5)):
        for entry in data.get(key, []):
            assert len(entry) == size and entry[-1].strip(), (name, key, entry)
    return data


@pytest.mark.parametrize("name", sorted(set(FILES) & set(SHIPPED)))
def test_a_profiles_examples_are_in_its_corpus_on_the_same_side(name):
    data = load(name)
    assert set(SHIPPED[name].get("examples", [])) <= {u for u, _ in data["valid"]}
    assert set(SHIPPED[name].get("counter_examples", [])) <= {e[0] for e in data["invalid"]}


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_checker_and_the_equivalence_agree_with_the_corpus(client, registry, name):
    data = load(name)
    expected = {u: True for u, _ in data.get("valid", [])}
    expected.update({e[0]: False for e in data.get("invalid", [])})
    response = client.post("/api/check", json.dumps(list(expected)),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    results = {r["urn"]: r for r in response.json()["results"]}
    wrong = [f"{urn}: nss_valid {results[urn].get('nss_valid')!r}, corpus {valid!r} "
             f"{results[urn].get('nss_errors') or ''}"
             for urn, valid in expected.items()
             if results[urn]["valid"] is not True or results[urn]["nss_valid"] is not valid]
    wrong += [f"{urn}: invalid without an error saying why" for urn, valid in expected.items()
              if valid is False and results[urn]["valid"] and not results[urn]["nss_errors"]]
    for a, b, same, same_by_rfc8141, cite in data.get("pairs", []):
        for x, y in ((a, b), (b, a)):
            answer = client.get("/api/equivalent", {"a": x, "b": y}).json()
            if (answer["equivalent"], answer["rfc8141_equivalent"]) != (same, same_by_rfc8141):
                wrong.append(f"{x} ~ {y}: {answer['equivalent']}, "
                             f"{answer['rfc8141_equivalent']}; corpus {same}, "
                             f"{same_by_rfc8141} ({cite})")
    assert not wrong, f"{name}.json:\n" + "\n".join(wrong)
