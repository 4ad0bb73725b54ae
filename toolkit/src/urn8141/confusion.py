"""NIDs that could be confused with something that exists: RFC 8141 sections 5.1 and 6.2.

Section 5.1 asks applicants and reviewers to be aware of NIDs that imply an
association with URI schemes, ISO 3166-1 country codes or existing identifier
systems; section 6.2 asks the experts to avoid races between requests. These
are *warnings*, never refusals: the only blocking rules are those of
:func:`urn8141.nid.check_formal_nid`.

:class:`ConfusionIndex` is built once from everything a NID can be confused
with (registered NIDs, NIDs proposed in open requests, URI scheme names,
country codes and names, well-known identifier systems, and the organisations
behind the NIDs) into hash indexes keyed by normalised forms, so that the
warnings for one NID cost a few dictionary look-ups and one vectorised
edit-distance scan (rapidfuzz), whatever the size of the registry. The open
requests change with every submission, the registry seldom: ``set_requested``
indexes only the requests that came or went, so a submission costs the index
what it changed, not a rebuild of the whole registry's entries.

No Django import: the web app builds the index from the database
(``registry/namespaces/advice.py``); the tests and ``bench/confusion.py``
build it from plain lists.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rapidfuzz import process
from rapidfuzz.distance import OSA

from urn8141.nid import Problem, nid_key

RFC8141 = "https://www.rfc-editor.org/rfc/rfc8141"
URI_SCHEMES_REGISTRY = "https://www.iana.org/assignments/uri-schemes/uri-schemes.xhtml"
ISO_3166 = "https://www.iso.org/iso-3166-country-codes.html"

# Warning codes, as other code, the JSON API and the tests name them.
DUPLICATE_REQUEST = "duplicate_request"
SAME_WITHOUT_HYPHENS = "same_without_hyphens"
LOOK_ALIKE = "look_alike"
PLURAL = "plural"
PREFIX_SUFFIX = "prefix_or_suffix"
NEAR_SPELLING = "near_spelling"
EMBEDS_NID = "embeds_registered_nid"
LOOKS_LIKE_URI_SCHEME = "uri_scheme"
LOOKS_LIKE_COUNTRY_CODE = "country_code"
COUNTRY_NAME = "country_name"
IDENTIFIER_SYSTEM = "identifier_system"
EMBEDS_IDENTIFIER_SYSTEM = "embeds_identifier_system"
SAME_ORGANISATION = "same_organisation"

# Near-duplicate relations, strongest first: one NID is reported under the
# strongest relation it has with the proposal, never twice.
_NEAR_ORDER = (DUPLICATE_REQUEST, SAME_WITHOUT_HYPHENS, LOOK_ALIKE, PLURAL, PREFIX_SUFFIX,
               NEAR_SPELLING, EMBEDS_NID)

# Well-known identifier systems a NID could be taken to stand for (section 5.1:
# "existing identifier systems"), with what they are. Registered NIDs need not
# be listed: they are checked as registered NIDs.
IDENTIFIER_SYSTEMS: dict[str, str] = {
    "ark": "Archival Resource Key",
    "arxiv": "arXiv identifier",
    "bibcode": "Astrophysics Data System bibcode",
    "doi": "Digital Object Identifier (ISO 26324)",
    "ean": "International Article Number (EAN)",
    "gln": "GS1 Global Location Number",
    "gtin": "GS1 Global Trade Item Number",
    "handle": "Handle System identifier",
    "iban": "International Bank Account Number (ISO 13616)",
    "iccid": "Integrated Circuit Card Identifier",
    "imei": "International Mobile Equipment Identity",
    "imsi": "International Mobile Subscriber Identity",
    "isan": "International Standard Audiovisual Number (ISO 15706)",
    "isbn": "International Standard Book Number (ISO 2108)",
    "isil": "International Standard Identifier for Libraries (ISO 15511)",
    "isin": "International Securities Identification Number (ISO 6166)",
    "ismn": "International Standard Music Number (ISO 10957)",
    "isni": "International Standard Name Identifier (ISO 27729)",
    "isrc": "International Standard Recording Code (ISO 3901)",
    "issn": "International Standard Serial Number (ISO 3297)",
    "istc": "International Standard Text Code (ISO 21047)",
    "iswc": "International Standard Musical Work Code (ISO 15707)",
    "lei": "Legal Entity Identifier (ISO 17442)",
    "lsid": "Life Science Identifier",
    "meid": "Mobile Equipment Identifier",
    "oid": "Object Identifier (ITU-T X.660)",
    "orcid": "Open Researcher and Contributor ID",
    "pmid": "PubMed identifier",
    "purl": "Persistent URL",
    "ror": "Research Organization Registry identifier",
    "sici": "Serial Item and Contribution Identifier",
    "upc": "Universal Product Code",
    "uuid": "Universally Unique Identifier (RFC 9562)",
    "vin": "Vehicle Identification Number (ISO 3779)",
    "wikidata": "Wikidata item identifier",
}

# Look-alike characters (section 5.1 "could cause confusion"): each maps to one
# representative, multi-character sequences first.
_LOOK_ALIKE_SEQUENCES = (("rn", "m"), ("vv", "w"))
_LOOK_ALIKE_CHARS = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l"})

# Words an organisation's name carries without telling it apart from another.
_ORGANISATION_NOISE = frozenset((
    "the", "of", "and", "for", "a", "an", "inc", "incorporated", "ltd", "limited", "llc", "llp",
    "plc", "gmbh", "ag", "sa", "nv", "bv", "srl", "spa", "corp", "corporation", "co", "company",
    "forum", "organization", "organisation", "org", "association", "assoc", "consortium",
    "foundation", "group", "international", "intl",
))
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_PARENTHESISED = re.compile(r"\(([^()]*)\)")


def flat(nid: str) -> str:
    """The case-folded NID without hyphens: "ISBN-X" -> "isbnx"."""
    return nid_key(nid).replace("-", "")


def skeleton(nid: str) -> str:
    """The flat NID with look-alike characters folded together (0/o, 1/l/i, rn/m)."""
    text = flat(nid)
    for sequence, replacement in _LOOK_ALIKE_SEQUENCES:
        text = text.replace(sequence, replacement)
    return text.translate(_LOOK_ALIKE_CHARS)


def singular(text: str) -> str:
    """A crude English singular of a flat NID: "registries" -> "registry"."""
    if len(text) > 4 and text.endswith("ies"):
        return text[:-3] + "y"
    if len(text) > 4 and text.endswith(("sses", "xes", "ches", "shes")):
        return text[:-2]
    if len(text) > 3 and text.endswith("s") and not text.endswith("ss"):
        return text[:-1]
    return text


def max_distance(length: int) -> int:
    """The edit distance under which two NIDs of this length look like one
    another: none for three characters or fewer, one up to seven, two beyond."""
    if length <= 3:
        return 0
    return 1 if length <= 7 else 2


def organisation_keys(name: str) -> frozenset[str]:
    """Normalised forms of an organisation's name, for "the same body": accents,
    punctuation, case and words like "Inc.", "Ltd", "Forum" or "Organization" do
    not count, and a parenthesised acronym is a name of its own
    ("Third Generation Partnership Project 2 (3GPP2)" -> both)."""
    if not name:
        return frozenset()
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    text = text.replace("&", " and ")
    candidates = [_PARENTHESISED.sub(" ", text), *_PARENTHESISED.findall(text)]
    keys = set()
    for candidate in candidates:
        words = [w for w in _NON_ALNUM.split(candidate) if w and w not in _ORGANISATION_NOISE]
        key = " ".join(words)
        if len(key) >= 2:
            keys.add(key)
    return frozenset(keys)


def rule_link(section: str) -> str:
    return f"{RFC8141}#section-{section}"


@dataclass(frozen=True, slots=True)
class Holder:
    """Something a NID is held by: a registered namespace or an open request."""

    nid: str
    link: str = ""
    organisation: str = ""
    requested: bool = False  # proposed in an open request, not registered
    ref: str = ""  # identifies the holder for ``exclude`` (e.g. "request:12")

    def describe(self) -> str:
        if self.requested:
            where = f" ({self.ref.replace('request:', 'request #')})" if self.ref else ""
            return f'"{self.nid}", proposed in another open request{where}'
        return f'the registered NID "{self.nid}"'


@dataclass(slots=True)
class _Lookup:
    by_key: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    by_flat: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    by_skeleton: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    by_singular: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    # Hyphen-bounded prefixes and suffixes ("isbn" for "isbn-x") of each NID.
    by_affix: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    by_organisation: dict[str, list[Holder]] = field(default_factory=lambda: defaultdict(list))
    # Distinct flat NIDs by length, for the edit-distance scan of nearby lengths only.
    flats_by_length: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))

    def _entries(self, holder: Holder) -> Iterator[tuple[dict[str, list[Holder]], str]]:
        """Each (index, key) ``holder`` is filed under (by_flat apart)."""
        key = nid_key(holder.nid)
        yield self.by_key, key
        yield self.by_skeleton, skeleton(holder.nid)
        yield self.by_singular, singular(skeleton(holder.nid))
        parts = key.split("-")
        for i in range(1, len(parts)):
            for affix in ("-".join(parts[:i]), "-".join(parts[i:])):
                if len(affix) >= 3:
                    yield self.by_affix, affix
        for org in organisation_keys(holder.organisation):
            yield self.by_organisation, org

    def add(self, holder: Holder) -> None:
        f = flat(holder.nid)
        if f not in self.by_flat:
            self.flats_by_length[len(f)].append(f)
        self.by_flat[f].append(holder)
        for index, key in self._entries(holder):
            index[key].append(holder)

    def remove(self, holder: Holder) -> None:
        """Undo ``add(holder)``; a key left with no holder is dropped."""
        f = flat(holder.nid)
        for index, key in [(self.by_flat, f), *self._entries(holder)]:
            holders = index.get(key)
            if holders is not None and holder in holders:
                holders.remove(holder)
                if not holders:
                    del index[key]
        if f not in self.by_flat and f in self.flats_by_length.get(len(f), ()):
            self.flats_by_length[len(f)].remove(f)


class ConfusionIndex:
    """Everything a proposed NID could be confused with, indexed for fast look-up."""

    def __init__(
        self,
        *,
        registered: Iterable[Holder] = (),
        requested: Iterable[Holder] = (),
        uri_schemes: Iterable[str] = (),
        country_codes: Iterable[str] = (),
        country_names: Iterable[str] = (),
        identifier_systems: dict[str, str] | None = None,
    ) -> None:
        self._holders = _Lookup()
        # set_requested changes the index in place: a lookup never sees it half done.
        self._lock = threading.RLock()
        self._requested: dict[Holder, None] = {}
        for holder in registered:
            self._holders.add(holder)
        self.set_requested(requested)
        self.uri_schemes = {nid_key(s): s for s in uri_schemes}
        self.uri_schemes_flat = {flat(s): s for s in uri_schemes}
        self.country_codes = {nid_key(c): c for c in country_codes}
        self.country_names = {_NON_ALNUM.sub("", nid_key(n)): n for n in country_names}
        self.identifier_systems = dict(
            IDENTIFIER_SYSTEMS if identifier_systems is None else identifier_systems)

    def set_requested(self, requested: Iterable[Holder]) -> None:
        """Make the open requests' NIDs exactly ``requested``, indexing only those
        that came and unindexing those that went (a request whose NID or organisation
        changed is both)."""
        wanted = dict.fromkeys(Holder(h.nid, h.link, h.organisation, True, h.ref)
                               for h in requested)
        with self._lock:
            for holder in [h for h in self._requested if h not in wanted]:
                self._holders.remove(holder)
            for holder in [h for h in wanted if h not in self._requested]:
                self._holders.add(holder)
            self._requested = wanted

    # -- the checks --------------------------------------------------------

    def warnings(self, nid: str, *, organisation: str = "",
                 exclude: Iterable[str] = ()) -> list[Problem]:
        """Every section 5.1 / 6.2 warning for ``nid``, strongest first. ``exclude``
        names holders (by ``ref``) not to compare with, such as the request itself;
        ``organisation`` is the proposing body's name."""
        if not isinstance(nid, str) or not nid or len(nid) > 64:
            return []
        excluded = frozenset(exclude)
        with self._lock:
            out = self._near_duplicates(nid, excluded)
            out += self._uri_scheme(nid)
            out += self._country(nid)
            out += self._identifier_systems(nid, {w.matched for w in out})
            out += self._same_organisation(nid, organisation, excluded)
        return out

    def _near_duplicates(self, nid: str, excluded: frozenset[str]) -> list[Problem]:
        index = self._holders
        key, f, skel = nid_key(nid), flat(nid), skeleton(nid)
        found: dict[Holder, str] = {}

        def note(holders: Iterable[Holder], code: str) -> None:
            for holder in holders:
                if holder.ref in excluded and holder.ref:
                    continue
                if nid_key(holder.nid) == key and not holder.requested:
                    continue  # the same registered NID: check_formal_nid refuses it
                current = found.get(holder)
                if current is None or _NEAR_ORDER.index(code) < _NEAR_ORDER.index(current):
                    found[holder] = code

        note(index.by_key.get(key, ()), DUPLICATE_REQUEST)
        note((h for h in index.by_flat.get(f, ()) if nid_key(h.nid) != key),
             SAME_WITHOUT_HYPHENS)
        note((h for h in index.by_skeleton.get(skel, ()) if flat(h.nid) != f), LOOK_ALIKE)
        note((h for h in index.by_singular.get(singular(skel), ()) if flat(h.nid) != f), PLURAL)
        # "isbn" is a prefix of "isbn-x", and "isbn-x" starts with "isbn".
        note(index.by_affix.get(key, ()), PREFIX_SUFFIX)
        parts = key.split("-")
        for i in range(1, len(parts)):
            for affix in ("-".join(parts[:i]), "-".join(parts[i:])):
                note(index.by_key.get(affix, ()), PREFIX_SUFFIX)
        limit = max_distance(len(f))
        for length in range(len(f) - limit, len(f) + limit + 1) if limit else ():
            candidates = index.flats_by_length.get(length)
            if not candidates:
                continue
            for other, distance, _ in process.extract(
                    f, candidates, scorer=OSA.distance, score_cutoff=limit, limit=None):
                if distance:
                    note(index.by_flat[other], NEAR_SPELLING)
        for sub in _substrings(skel, 4):  # "my1sbn" contains a look-alike of "isbn"
            if sub != skel:
                note((h for h in index.by_skeleton.get(sub, ()) if not h.requested), EMBEDS_NID)
        for part in parts:  # a three-character NID counts only as a whole hyphen part
            if len(part) == 3 and part != key:
                note((h for h in index.by_key.get(part, ()) if not h.requested), EMBEDS_NID)
        order = sorted(found.items(), key=lambda item: (_NEAR_ORDER.index(item[1]),
                                                       item[0].requested, nid_key(item[0].nid)))
        return [_near_problem(nid, holder, code) for holder, code in order]

    def _uri_scheme(self, nid: str) -> list[Problem]:
        scheme = self.uri_schemes.get(nid_key(nid)) or self.uri_schemes_flat.get(flat(nid))
        if scheme is None:
            return []
        return [Problem(
            LOOKS_LIKE_URI_SCHEME,
            f'"{nid}" is also the name of a registered URI scheme ("{scheme}"); the NID may '
            "imply an association with it.",
            "5.1", matched=scheme, link=URI_SCHEMES_REGISTRY,
        )]

    def _country(self, nid: str) -> list[Problem]:
        key = nid_key(nid)
        code = self.country_codes.get(key)
        if code is not None:
            return [Problem(
                LOOKS_LIKE_COUNTRY_CODE,
                f'"{nid}" is an ISO 3166-1 country code; it may be construed as registered '
                "under the authority of that country.",
                "5.1", matched=code, link=ISO_3166,
            )]
        parts = key.split("-")
        for length in range(len(parts), 0, -1):
            for start in range(len(parts) - length + 1):
                name = self.country_names.get("".join(parts[start:start + length]))
                if name is not None:
                    whole = length == len(parts)
                    return [Problem(
                        COUNTRY_NAME,
                        f'"{nid}" {"is" if whole else "contains"} the name of a country '
                        f'("{name}", ISO 3166-1); it may be construed as registered under the '
                        "authority of that country.",
                        "5.1", matched=name, link=ISO_3166,
                    )]
        return []

    def _identifier_systems(self, nid: str, already: set[str]) -> list[Problem]:
        f = flat(nid)
        key = nid_key(nid)
        if f in self.identifier_systems:
            if f in {flat(m) for m in already} or self._holders.by_flat.get(f):
                return []
            return [Problem(
                IDENTIFIER_SYSTEM,
                f'"{nid}" is the name of an existing identifier system '
                f"({self.identifier_systems[f]}); only its own authority should register it.",
                "5.1", matched=f, link=rule_link("5.1"),
            )]
        parts = set(key.split("-"))
        for sub in sorted(set(_substrings(f, 3)), key=len, reverse=True):
            if sub not in self.identifier_systems or sub in already:
                continue
            if len(sub) == 3 and sub not in parts:
                continue
            if any(h for h in self._holders.by_flat.get(sub, ()) if not h.requested):
                continue  # already reported as embedding a registered NID
            return [Problem(
                EMBEDS_IDENTIFIER_SYSTEM,
                f'"{nid}" contains "{sub}", the name of an existing identifier system '
                f"({self.identifier_systems[sub]}); the NID may imply an association with it.",
                "5.1", matched=sub, link=rule_link("5.1"),
            )]
        return []

    def _same_organisation(self, nid: str, organisation: str,
                           excluded: frozenset[str]) -> list[Problem]:
        key = nid_key(nid)
        seen: dict[Holder, None] = {}
        for org in organisation_keys(organisation):
            for holder in self._holders.by_organisation.get(org, ()):
                if nid_key(holder.nid) != key and not (holder.ref and holder.ref in excluded):
                    seen[holder] = None
        out = []
        for holder in sorted(seen, key=lambda h: (h.requested, nid_key(h.nid))):
            verb = "also proposes" if holder.requested else "already holds"
            out.append(Problem(
                SAME_ORGANISATION,
                f'This body already holds "{holder.nid}"; why a second one?' if not
                holder.requested else
                f'This body {verb} "{holder.nid}" in another open request; why a second one?',
                "6.2", matched=holder.nid, link=holder.link,
            ))
        return out


def _substrings(text: str, shortest: int) -> Iterable[str]:
    for length in range(shortest, len(text) + 1):
        for start in range(len(text) - length + 1):
            yield text[start:start + length]


def _affix_reason(nid: str, holder: Holder) -> str:
    mine, theirs = nid_key(nid), nid_key(holder.nid)
    other = holder.describe()
    if mine.startswith(theirs):
        return f"starts with {other}"
    if mine.endswith(theirs):
        return f"ends with {other}"
    if theirs.startswith(mine):
        return f"is the beginning of {other}"
    return f"is the end of {other}"


def _near_problem(nid: str, holder: Holder, code: str) -> Problem:
    other = holder.describe()
    reason = {
        DUPLICATE_REQUEST: f"is the same NID as {other}: only one of them can be registered",
        SAME_WITHOUT_HYPHENS: f"is the same as {other} once hyphens are removed",
        LOOK_ALIKE: f"looks like {other} (0/o, 1/l/i and rn/m are easily confused)",
        PLURAL: f"is a singular or plural form of {other}",
        PREFIX_SUFFIX: _affix_reason(nid, holder),
        NEAR_SPELLING: f"is spelled within a character or two of {other}",
        EMBEDS_NID: f"contains {other}",
    }[code]
    section = "6.2" if code == DUPLICATE_REQUEST else "5.1"
    return Problem(code, f'"{nid}" {reason}.', section, matched=holder.nid, link=holder.link)


def advise_formal_nid(
    nid: str,
    *,
    uri_schemes: Iterable[str] = (),
    country_codes: Iterable[str] = (),
    index: ConfusionIndex | None = None,
    organisation: str = "",
    exclude: Iterable[str] = (),
) -> list[Problem]:
    """Warnings for applicants and reviewers (sections 5.1 and 6.2), never reasons
    to refuse. Pass a prepared ``index`` to compare with the registry; the short
    form compares only with the given URI scheme names and country codes."""
    if index is None:
        index = ConfusionIndex(uri_schemes=uri_schemes, country_codes=country_codes,
                               identifier_systems={})
    return index.warnings(nid, organisation=organisation, exclude=exclude)
