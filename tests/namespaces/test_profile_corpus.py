"""The corpus: URNs and URN pairs taken from each namespace's RFCs (tests/urns/corpus/),
run through the real endpoints (POST /api/check, GET /api/equivalent) on a database set
up as a fresh install is (migrate, then import_registry, which publishes the shipped
profiles through the actions). Every entry must agree: ``nss_valid``, ``equivalent`` and
``rfc8141_equivalent``.

One JSON file per namespace, ``<nid>.json`` (any other name for URNs of several
namespaces, e.g. ``informal.json``)::

    {"nid": "isbn", "about": "...",
     "valid":    [[urn, cite], ...],                 # nss_valid true
     "invalid":  [[urn, rule broken, cite], ...],    # nss_valid false (an RFC 8141 URN)
     "unjudged": [[urn, cite], ...],                 # nss_valid null (no profile)
     "pairs":    [[a, b, equivalent, rfc8141_equivalent, cite], ...]}

Each entry cites where its RFC says so; "Judgement: ..." marks a call the RFC leaves
open. Adding a namespace is adding a file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from registry.namespaces.checker import MAX_URNS
from registry.namespaces.profiles import shipped_profiles
from registry.urns import parse

CORPUS = Path(__file__).resolve().parents[1] / "urns" / "corpus"
FILES = sorted(CORPUS.glob("*.json"))
SHIPPED = shipped_profiles()


@dataclass
class Corpus:
    name: str
    nid: str | None
    valid: list[tuple[str, str]] = field(default_factory=list)
    invalid: list[tuple[str, str, str]] = field(default_factory=list)
    unjudged: list[tuple[str, str]] = field(default_factory=list)
    pairs: list[tuple[str, str, bool, bool, str]] = field(default_factory=list)

    @property
    def expected_nss_valid(self) -> dict[str, bool | None]:
        return {**{u: None for u, _ in self.unjudged}, **{u: True for u, _ in self.valid},
                **{u: False for u, _, _ in self.invalid}}


def load(path: Path) -> Corpus:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) <= {"nid", "about", "valid", "invalid", "unjudged", "pairs"}, path.name
    nid = data.get("nid")
    corpus = Corpus(path.stem, nid.lower() if nid else None)
    for key, size in (("valid", 2), ("invalid", 3), ("unjudged", 2), ("pairs", 5)):
        for entry in data.get(key, []):
            assert isinstance(entry, list) and len(entry) == size, (path.name, key, entry)
            assert isinstance(entry[-1], str) and entry[-1].strip(), \
                f"{path.name}: {entry!r} cites no source"
            getattr(corpus, key).append(tuple(entry))
    return corpus


CORPORA = {path.stem: load(path) for path in FILES}


def test_every_shipped_profile_has_its_corpus_file():
    """Derived from fixtures/profiles.json: a namespace with a shipped profile is tested
    against its RFCs' own URNs."""
    missing = sorted(nid for nid in SHIPPED if not (CORPUS / f"{nid}.json").is_file())
    assert not missing, f"no corpus file under {CORPUS} for: {', '.join(missing)}"


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_a_corpus_file_is_sound(name):
    corpus = CORPORA[name]
    if name != "informal":
        assert corpus.nid == name, f"{name}.json says it is the corpus of {corpus.nid!r}"
    judged = [u for u, _ in corpus.valid] + [u for u, _, _ in corpus.invalid]
    assert len(set(judged)) == len(judged), "a URN is listed twice"
    # Every entry is an RFC 8141 URN (the profile judges the rest), and of this namespace
    # (a pair's second URN may be of another, to show NIDs differ).
    for text in judged + [u for u, _ in corpus.unjudged] + [p[0] for p in corpus.pairs]:
        assert corpus.nid in (None, parse(text).nid.lower()), text
    for _, text, *_ in corpus.pairs:
        parse(text)
    for a, b, same, same_by_rfc8141, _ in corpus.pairs:
        assert isinstance(same, bool) and isinstance(same_by_rfc8141, bool), (a, b)
        # RFC 8141 section 3.1: a namespace's rules only remove false negatives.
        assert same or not same_by_rfc8141, (a, b)


@pytest.mark.parametrize("nid", sorted(set(SHIPPED) & set(CORPORA)))
def test_a_profiles_own_examples_agree_with_its_corpus(nid):
    """The examples a shipped profile checks itself against are in its corpus, on the
    same side: an example is a valid URN there, a counter-example an invalid one."""
    corpus = CORPORA[nid]
    valid = {u for u, _ in corpus.valid}
    invalid = {u for u, _, _ in corpus.invalid}
    profile = SHIPPED[nid]
    missing = sorted(set(profile.get("examples", [])) - valid)
    assert not missing, f"examples not among the corpus's valid URNs: {missing}"
    missing = sorted(set(profile.get("counter_examples", [])) - invalid)
    assert not missing, f"counter-examples not among the corpus's invalid URNs: {missing}"


def checked_by_api(client, urns: list[str]) -> dict[str, dict]:
    results = {}
    for start in range(0, len(urns), MAX_URNS):
        response = client.post("/api/check", json.dumps(urns[start:start + MAX_URNS]),
                               content_type="application/json")
        assert response.status_code == 200, response.content
        results.update((r["urn"], r) for r in response.json()["results"])
    return results


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_the_checker_agrees_with_the_corpus(client, registry, name):
    corpus = CORPORA[name]
    expected = corpus.expected_nss_valid
    results = checked_by_api(client, list(expected))
    disagreements = []
    for urn, nss_valid in expected.items():
        result = results[urn]
        if result["valid"] is not True or result["nss_valid"] is not nss_valid:
            disagreements.append(f"{urn}: nss_valid {result.get('nss_valid')!r}, corpus "
                                 f"{nss_valid!r} {result.get('nss_errors') or ''}")
        elif nss_valid is False and not result["nss_errors"]:
            disagreements.append(f"{urn}: invalid without an error saying why")
    for a, b, same, same_by_rfc8141, cite in corpus.pairs:
        response = client.get("/api/equivalent", {"a": a, "b": b})
        assert response.status_code == 200, (a, b, response.content)
        data = response.json()
        if (data["equivalent"], data["rfc8141_equivalent"]) != (same, same_by_rfc8141):
            disagreements.append(
                f"{a} ~ {b}: equivalent {data['equivalent']}, rfc8141 "
                f"{data['rfc8141_equivalent']}; corpus {same}, {same_by_rfc8141} ({cite})")
        reverse = client.get("/api/equivalent", {"a": b, "b": a}).json()
        if (reverse["equivalent"], reverse["rfc8141_equivalent"]) != (
                data["equivalent"], data["rfc8141_equivalent"]):
            disagreements.append(f"{a} ~ {b}: not symmetric")
    assert not disagreements, f"{name}.json:\n" + "\n".join(disagreements)
