"""Plausible registration templates of realistic size, deterministic for a seed:
the text of ``seed_load`` (the load benchmark's data, big demos). No Django here,
so bench/load.py can name the seeded NIDs without setting Django up."""

from __future__ import annotations

import datetime as dt
import random

WORDS = (
    "archive", "record", "collection", "library", "museum", "catalogue", "identifier", "object",
    "resource", "persistent", "digital", "document", "publication", "series", "volume", "issue",
    "article", "dataset", "sample", "specimen", "station", "sensor", "device", "component",
    "product", "part", "serial", "batch", "lot", "shipment", "location", "site", "region",
    "network", "service", "endpoint", "interface", "schema", "vocabulary", "term", "concept",
    "class", "property", "profile", "registry", "authority", "agency", "consortium",
    "institute", "foundation", "council", "society", "alliance", "standard", "specification",
    "version", "revision", "edition", "release", "assignment", "allocation", "holder",
    "resolver", "metadata", "description", "reference", "citation", "provenance", "rights",
    "licence", "access", "policy"
)
ORGANISATION_KINDS = ("Library", "Archive", "Institute", "Foundation", "Consortium", "Agency",
                      "Society", "Council", "Alliance", "Museum")
PLACES = ("Northern", "Southern", "Eastern", "Western", "Central", "National", "Regional",
          "International", "Coastal", "Metropolitan", "Alpine", "Baltic", "Pacific", "Atlantic")


def seed_nid(prefix: str, number: int) -> str:
    """The NID of the ``number``-th seeded namespace (the benchmark names them so)."""
    return f"{prefix}-{WORDS[number % len(WORDS)]}-{number}"


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choices(WORDS, k=words))
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(sentences))


def template_values(rng: random.Random, nid: str, number: int) -> dict[str, str]:
    """Version 1 of a plausible template, about 2 KB in all."""
    organisation = (f"{rng.choice(PLACES)} {rng.choice(WORDS).title()} "
                    f"{rng.choice(ORGANISATION_KINDS)}")
    documentation = (f"RFC {9000 + number % 900}" if number % 3 == 0
                     else f"https://{nid}.example.org/documentation/")
    return {
        "registrant_organisation": organisation,
        "registrant_address": f"{rng.randint(1, 400)} {rng.choice(WORDS).title()} Street, "
                              f"{rng.choice(PLACES)} City",
        "contact_name": f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}",
        "contact_email": f"registry@{nid}.example.org",
        "contact_phone": f"+1 555 {number % 10000:04d}",
        "contact_postal": "",
        "purpose": _paragraph(rng, 6),
        "syntax": f'<URN> ::= "urn:{nid}:" <NSS>\n' + _paragraph(rng, 3),
        "assignment": _paragraph(rng, 2),
        "security": _paragraph(rng, 2),
        "interoperability": _paragraph(rng, 1),
        "resolution": _paragraph(rng, 2),
        "documentation": documentation,
        "additional_information": _paragraph(rng, 1),
        "revision_information": "",
    }


def next_version(rng: random.Random, values: dict[str, str], number: int) -> dict[str, str]:
    changed = dict(values)
    changed["purpose"] = values["purpose"].rsplit(".", 2)[0] + ". " + _sentence(rng, 12)
    changed["syntax"] = values["syntax"] + " " + _sentence(rng, 10)
    changed["revision_information"] = (f"Version {number}: " + _sentence(rng, 14))
    return changed


def registration(prefix: str, number: int, versions: int, seed: int) -> dict:
    rng = random.Random(seed * 1_000_003 + number)
    nid = seed_nid(prefix, number)
    values = template_values(rng, nid, number)
    start = dt.date(2002, 1, 1) + dt.timedelta(days=number % 8000)
    history = [(start, values)]
    for version in range(2, versions + 1):
        values = next_version(rng, values, version)
        history.append((start + dt.timedelta(days=200 * (version - 1)), values))
    return {"nid": nid, "date": start, "versions": history}
