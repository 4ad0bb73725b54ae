"""Section 5.1's "should be aware" warnings, with the data they need: IANA's URI
scheme names (fixtures/uri-schemes.txt, from shared/data) and ISO 3166-1 codes
(pycountry). Warnings inform applicants and experts; they never refuse a NID."""

from __future__ import annotations

from functools import lru_cache

import pycountry
from django.conf import settings

from registry.urns import Problem, advise_formal_nid

URI_SCHEMES_FILE = settings.BASE_DIR / "fixtures" / "uri-schemes.txt"


@lru_cache(maxsize=1)
def uri_schemes() -> frozenset[str]:
    lines = URI_SCHEMES_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines
                     if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def country_codes() -> frozenset[str]:
    return frozenset(code.lower() for country in pycountry.countries
                     for code in (country.alpha_2, country.alpha_3))


def nid_warnings(nid: str) -> list[Problem]:
    if not nid:
        return []
    return advise_formal_nid(nid, uri_schemes=uri_schemes(), country_codes=country_codes())
