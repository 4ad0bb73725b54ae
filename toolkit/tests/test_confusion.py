"""Conflict warnings for a proposed NID (RFC 8141 sections 5.1 and 6.2), table-driven.

Each row: a proposed NID, the proposing organisation, and every warning the
index must give as (code, what it matched). An empty set: nothing to warn about.
"""

import pycountry
import pytest

from urn8141 import advise_formal_nid
from urn8141.confusion import (
    ConfusionIndex,
    Holder,
    flat,
    max_distance,
    organisation_keys,
    singular,
    skeleton,
)

REG = [
    Holder("isbn", "/namespaces/isbn/", "International ISBN Agency"),
    Holder("issn", "/namespaces/issn/", "ISSN International Centre"),
    Holder("example", "/namespaces/example/", "IETF"),
    Holder("xmpp", "/namespaces/xmpp/", "XMPP Standards Foundation"),
    Holder("3gpp", "/namespaces/3gpp/", "3rd Generation Partnership Project"),
    Holder("3gpp2", "/namespaces/3gpp2/", "Third Generation Partnership Project 2 (3GPP2)"),
    Holder("nbn", "/namespaces/nbn/", "National Library of Finland"),
    Holder("uuid", "/namespaces/uuid/", "IETF"),
    Holder("oid", "/namespaces/oid/", ""),
    Holder("ietf", "/namespaces/ietf/", "IETF"),
    Holder("mpeg", "/namespaces/mpeg/", "ISO/IEC JTC1/SC29/WG11"),
    Holder("ogc", "/namespaces/ogc/", "Open Geospatial Consortium, Inc."),
    Holder("dvb", "/namespaces/dvb/", "DVB Project"),
    Holder("oma", "/namespaces/oma/", "Open Mobile Alliance"),
    Holder("swift", "/namespaces/swift/", "S.W.I.F.T. SCRL"),
    Holder("urn-7", "/namespaces/urn-7/", ""),
]
REQ = [
    Holder("exlib", "/requests/1/", "Example Archive Foundation", True, "request:1"),
    Holder("open-archive", "/requests/2/", "Archive Forum Ltd.", True, "request:2"),
]


@pytest.fixture(scope="module")
def index():
    countries = list(pycountry.countries)
    return ConfusionIndex(
        registered=REG, requested=REQ,
        uri_schemes=["http", "https", "ftp", "mailto", "tag", "urn", "data", "git", "ssh",
                     "example"],
        country_codes=[c.alpha_2 for c in countries] + [c.alpha_3 for c in countries],
        country_names=[c.name for c in countries] +
        [c.common_name for c in countries if getattr(c, "common_name", "")],
    )


WARNINGS = [

    ('isbn-x', '', {('prefix_or_suffix', 'isbn')}),
    ('ISBN-X', '', {('prefix_or_suffix', 'isbn')}),
    ('x-isbn', '', {('prefix_or_suffix', 'isbn')}),
    ('isbnx', '', {('near_spelling', 'isbn')}),
    ('is-bn', '', {('near_spelling', 'issn'), ('same_without_hyphens', 'isbn')}),
    ('i-s-b-n', '', {('near_spelling', 'issn'), ('same_without_hyphens', 'isbn')}),
    ('1sbn', '', {('look_alike', 'isbn')}),
    ('isbm', '', {('near_spelling', 'isbn')}),
    ('ibsn', '', {('near_spelling', 'isbn'), ('near_spelling', 'issn')}),
    ('isbns', '', {('plural', 'isbn')}),
    ('issns', '', {('plural', 'issn')}),
    ('1ssn', '', {('look_alike', 'issn')}),
    ('exarnple', '', {('look_alike', 'example')}),
    ('examples', '', {('plural', 'example')}),
    ('EXAMPLE-2', '', {('prefix_or_suffix', 'example')}),
    ('xmpp3', '', {('near_spelling', 'xmpp')}),
    ('3gpp-x', '', {('near_spelling', '3gpp2'), ('prefix_or_suffix', '3gpp')}),
    ('3gpp3', '', {('near_spelling', '3gpp'), ('near_spelling', '3gpp2')}),
    ('urn-8', '', {('near_spelling', 'urn-7')}),
    ('ex-lib', '', {('same_without_hyphens', 'exlib')}),
    ('EXLIB', '', {('duplicate_request', 'exlib')}),
    ('exlibs', '', {('plural', 'exlib')}),
    ('openarchive', '', {('same_without_hyphens', 'open-archive')}),
    ('http', '', {('uri_scheme', 'http')}),
    ('HTTPS', '', {('uri_scheme', 'https')}),
    ('mailto', '', {('uri_scheme', 'mailto')}),
    ('git', '', {('uri_scheme', 'git')}),
    ('france', '', {('country_name', 'France')}),
    ('deu', '', {('country_code', 'DEU')}),
    ('fra', '', {('country_code', 'FRA')}),
    ('usa', '', {('country_code', 'USA')}),
    ('united-states', '', {('country_name', 'United States')}),
    ('germany-archive', '', {('country_name', 'Germany')}),
    ('myorcid', '', {('embeds_identifier_system', 'orcid')}),
    ('my1sbn', '', {('embeds_registered_nid', 'isbn')}),
    ('orcid', '', {('identifier_system', 'orcid')}),
    ('doi-names', '', {('embeds_identifier_system', 'doi')}),
    ('isni', '', {('identifier_system', 'isni')}),
    ('ietf-drafts', '', {('prefix_or_suffix', 'ietf')}),
    ('my-ietf-ids', '', {('embeds_registered_nid', 'ietf')}),
    ('oid-reg', '', {('prefix_or_suffix', 'oid')}),
    ('foo-oid', '', {('prefix_or_suffix', 'oid')}),
    ('mpeg-dash', '', {('prefix_or_suffix', 'mpeg')}),
    ('archive', '', {('prefix_or_suffix', 'open-archive')}),
    ('totally-fresh', '', set()),
    ('gits', '', set()),
    ('newxmpp', 'XMPP Standards Foundation, Inc.',
     {('embeds_registered_nid', 'xmpp'), ('same_organisation', 'xmpp')}),
    ('geo-thing', 'Open Geospatial Consortium', {('same_organisation', 'ogc')}),
    ('g3pp', '3GPP2', {('near_spelling', '3gpp'), ('same_organisation', '3gpp2')}),
    ('zzz-new', 'ietf',
     {('same_organisation', 'example'), ('same_organisation', 'ietf'),
      ('same_organisation', 'uuid')}),
    ('libre', 'Example Archive Foundation', {('same_organisation', 'exlib')}),
    ('fresh-name', 'Some Other Body Ltd', set()),
]


@pytest.mark.parametrize(("nid", "organisation", "expected"), WARNINGS)
def test_warnings(index, nid, organisation, expected):
    warnings = index.warnings(nid, organisation=organisation)
    assert {(w.code, w.matched) for w in warnings} == expected
    for w in warnings:  # every warning says which rule, what it matched, and links both
        assert w.section in ("5.1", "6.2") and w.rule_link.endswith(w.section)
        assert w.matched and w.link and w.message


def test_table_is_large_enough():
    assert len(WARNINGS) >= 40


def test_a_registered_nid_itself_is_refused_elsewhere_not_warned_about(index):
    assert [(w.code, w.matched) for w in index.warnings("ISBN")] == [("near_spelling", "issn")]


def test_a_request_is_not_compared_with_itself(index):
    assert index.warnings("exlib", exclude=["request:1"]) == []
    assert [w.code for w in index.warnings("exlib")] == ["duplicate_request"]


def test_the_same_body_is_named_once_per_nid_it_holds(index):
    messages = [w.message for w in index.warnings("geoinfo", organisation="OGC (Open Geospatial)")]
    assert messages == ['This body already holds "ogc"; why a second one?']


def test_strongest_relation_comes_first(index):
    codes = [w.code for w in index.warnings("is-bn")]
    assert codes == ["same_without_hyphens", "near_spelling"]


@pytest.mark.parametrize(("name", "keys"), [
    ("XMPP Standards Foundation, Inc.", {"xmpp standards"}),
    ("The XMPP Standards Foundation", {"xmpp standards"}),
    ("Third Generation Partnership Project 2 (3GPP2)",
     {"third generation partnership project 2", "3gpp2"}),
    ("Société Générale S.A.", {"societe generale s"}),
    ("Inc.", set()),
    ("", set()),
])
def test_organisation_keys(name, keys):
    assert organisation_keys(name) == keys


@pytest.mark.parametrize(("nid", "expected"), [
    ("ISBN", "lsbn"), ("1sbn", "lsbn"), ("exarnple", "example"), ("o-i-d", "old"),
])
def test_skeleton(nid, expected):
    assert skeleton(nid) == expected


@pytest.mark.parametrize(("word", "expected"), [
    ("isbns", "isbn"), ("registries", "registry"), ("boxes", "box"), ("class", "class"),
    ("ids", "ids"),
])
def test_singular(word, expected):
    assert singular(word) == expected


@pytest.mark.parametrize(("length", "limit"), [(3, 0), (4, 1), (7, 1), (8, 2), (32, 2)])
def test_edit_distance_scales_with_length(length, limit):
    assert max_distance(length) == limit


def test_short_form_compares_only_with_what_it_is_given():
    assert [w.code for w in advise_formal_nid("HTTP", uri_schemes=["http"])] == ["uri_scheme"]
    assert advise_formal_nid("orcid") == []



# Open requests come and go with every submission: set_requested indexes only the
# difference. Each row: the open requests before and after; the index updated in place
# must warn exactly as one built afresh from the requests after, for every NID of the
# table above and the requests' own.
MORE = Holder("open-archives", "/requests/3/", "Archive Forum Ltd.", True, "request:3")
RENAMED = Holder("exlibris", "/requests/1/", "Example Archive Foundation", True, "request:1")
MOVED = Holder("exlib", "/requests/1/", "Another Foundation", True, "request:1")
REQUESTS_CHANGE = [
    ("a request comes", REQ, [*REQ, MORE]),
    ("a request goes", [*REQ, MORE], REQ[1:]),
    ("every request goes", REQ, []),
    ("a request's NID changes", REQ, [RENAMED, REQ[1]]),
    ("a request's organisation changes", REQ, [MOVED, REQ[1]]),
    ("the same NID in two requests, one goes", [*REQ, Holder("exlib", "/requests/4/", "",
                                                             True, "request:4")], REQ),
]


@pytest.mark.parametrize(("case", "before", "after"), REQUESTS_CHANGE)
def test_open_requests_updated_in_place_warn_as_an_index_built_afresh(case, before, after):
    def built(requested):
        return ConfusionIndex(registered=REG, requested=requested, uri_schemes=["http"],
                              country_codes=["fr", "fra"], country_names=["France"])

    updated, fresh = built(before), built(after)
    updated.set_requested(after)
    nids = {nid for nid, _, _ in WARNINGS} | {h.nid for h in [*before, *after, MORE]}
    for nid in sorted(nids):
        for organisation in ("", "Example Archive Foundation", "Archive Forum Ltd."):
            assert (updated.warnings(nid, organisation=organisation)
                    == fresh.warnings(nid, organisation=organisation)), (case, nid)
    # Nothing of a request that went is left behind to be scanned.
    gone = {flat(h.nid) for h in before} - {flat(h.nid) for h in [*after, *REG]}
    assert not gone & {f for flats in updated._holders.flats_by_length.values() for f in flats}
    assert all(updated._holders.by_key.values())
