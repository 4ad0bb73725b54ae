"""Namespace profiles in the registry: shipped and imported through the actions
(history kept), carried by template versions, used by /api/check, /api/equivalent,
/resolve/ and shown on the namespace page and in /profiles.json."""

import datetime as dt
import json
from io import StringIO
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.core.management import call_command

from registry.namespaces.actions import (
    RecordInvalid,
    namespace_register,
    namespace_set_profile,
    version_publish,
)
from registry.namespaces.models import Namespace, NamespaceEvent
from registry.namespaces.profiles import (
    SHIPPED_PROFILES,
    import_shipped_profiles,
    shipped_profiles,
)
from tests.factories import complete_values
from tests.html import find, one, page, text

SHIPPED = shipped_profiles()
DEMO_PROFILE = {
    "syntax": {"abnf": 'nss = 1*DIGIT "-" 1*DIGIT\n', "cite": "Syntax field"},
    "equivalence": [{"step": "remove-hyphens", "cite": "Syntax field"}],
    "examples": ["urn:demo:12-34"],
    "counter_examples": ["urn:demo:12"],
    "resolvers": [{"url": "https://archive.example/{nss}", "name": "Archive"}],
}


def test_import_registry_publishes_the_shipped_profiles_through_the_action(registry, staff):
    with_profile = dict(Namespace.objects.exclude(profile={}).values_list("nid", "profile"))
    assert {nid.lower() for nid in with_profile} == set(SHIPPED) & {
        nid.lower() for nid in Namespace.objects.values_list("nid", flat=True)}
    assert len(with_profile) >= 15
    isbn = Namespace.objects.by_nid("isbn").get()
    event = isbn.events.get(kind=NamespaceEvent.Kind.PROFILE_SHIPPED)
    assert event.changes == {"profile": [{}, SHIPPED["isbn"]]}
    assert SHIPPED_PROFILES.name in event.comment
    # Again: nothing changes, and a profile changed since is kept, never overwritten.
    namespace_set_profile(namespace=isbn, profile=SHIPPED["isbn"] | {"examples": []},
                          reason="A correction.", actor=staff)
    events = NamespaceEvent.objects.count()
    call_command("import_registry", str(settings.BASE_DIR / "fixtures" /
                                        "iana-urn-namespaces.json"), stdout=StringIO())
    assert NamespaceEvent.objects.count() == events
    assert Namespace.objects.by_nid("isbn").get().profile["examples"] == []


def shipped_file(tmp_path, **changed):
    """A shipped-profiles file like urn8141's, with some profiles changed."""
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps({"profiles": {**SHIPPED, **changed}}), encoding="utf-8")
    return path


def corrected(nid):
    """The shipped profile of ``nid`` as a later release corrects it."""
    return {**SHIPPED[nid], "examples": SHIPPED[nid]["examples"][:1]}


def test_a_reimport_replaces_a_shipped_profile_that_the_file_now_corrects(registry, tmp_path):
    path = shipped_file(tmp_path, isbn=corrected("isbn"))
    assert import_shipped_profiles(path) == ["isbn"]
    isbn = Namespace.objects.by_nid("isbn").get()
    assert isbn.profile == corrected("isbn")
    event = isbn.events.order_by("-id").first()
    assert event.kind == NamespaceEvent.Kind.PROFILE_SHIPPED
    assert event.changes == {"profile": [SHIPPED["isbn"], corrected("isbn")]}
    assert "replaces the one shipped before" in event.comment
    # Again: nothing left to do, nothing written.
    events = NamespaceEvent.objects.count()
    assert import_shipped_profiles(path) == []
    assert NamespaceEvent.objects.count() == events
    # And back to the file of this release: the shipped one is replaced once more.
    assert import_shipped_profiles() == ["isbn"]
    assert Namespace.objects.by_nid("isbn").get().profile == SHIPPED["isbn"]


def test_a_reimport_never_overwrites_a_profile_that_came_through_review_or_staff(
        registry, staff, registrant, tmp_path):
    # IANA staff correct isbn's profile; a reviewed revision of issn brings its own;
    # staff withdraw uuid's; a namespace registered here came with one.
    reviewed_issn = {**SHIPPED["issn"], "examples": ["urn:issn:2070-1721"]}
    namespace_set_profile(namespace=Namespace.objects.by_nid("isbn").get(),
                          profile=corrected("isbn") | {"resolvers": []},
                          reason="A correction.", actor=staff)
    version_publish(namespace=Namespace.objects.by_nid("issn").get(),
                    values=complete_values(registrant, profile=json.dumps(reviewed_issn)),
                    date=dt.date(2026, 11, 1), actor=staff)
    namespace_set_profile(namespace=Namespace.objects.by_nid("uuid").get(), profile={},
                          reason="Withdrawn pending review.", actor=staff)
    namespace_register(kind="formal", nid="demo", date=dt.date(2026, 11, 1), actor=staff,
                       values=complete_values(registrant, profile=json.dumps(DEMO_PROFILE)))
    before = dict(Namespace.objects.values_list("nid", "profile"))
    events = NamespaceEvent.objects.count()
    path = shipped_file(tmp_path, isbn=corrected("isbn"), issn=corrected("issn"),
                        uuid=corrected("uuid"),
                        demo={**DEMO_PROFILE, "examples": ["urn:demo:1-2"]})
    assert import_shipped_profiles(path) == []
    assert dict(Namespace.objects.values_list("nid", "profile")) == before
    assert NamespaceEvent.objects.count() == events
    assert Namespace.objects.by_nid("issn").get().profile == reviewed_issn
    assert Namespace.objects.by_nid("uuid").get().profile == {}


@pytest.mark.parametrize("change, words", [
    ({"examples": ["urn:isbn:0451450524"]}, "fails its own profile"),
    # a RecursionError (a 500) before the grammar readers bounded nesting
    ({"syntax": {"regex": "(" * 600 + "1" + ")" * 600, "cite": "c"}}, "nested more than 20"),
    ({"syntax": {"abnf": "n = " + "(" * 2400 + "DIGIT" + ")" * 2400, "cite": "c"}},
     "nested more than 20"),
])
def test_an_unsound_profile_is_refused_by_the_action(registry, staff, change, words):
    isbn = Namespace.objects.by_nid("isbn").get()
    broken = {**SHIPPED["isbn"], **change}
    with pytest.raises(RecordInvalid) as exc:
        namespace_set_profile(namespace=isbn, profile=broken, reason="x", actor=staff)
    assert exc.value.field == "profile" and words in str(exc.value)
    assert Namespace.objects.by_nid("isbn").get().profile == SHIPPED["isbn"]


def test_versions_carry_the_profile_forward_and_a_change_is_in_the_history(db, staff,
                                                                          registrant):
    values = complete_values(registrant, profile=json.dumps(DEMO_PROFILE))
    ns = namespace_register(kind="formal", nid="demo", values=values,
                            date=dt.date(2026, 11, 1), actor=staff)
    assert ns.profile == DEMO_PROFILE
    assert json.loads(ns.versions.get(number=1).profile) == DEMO_PROFILE
    # A template read from text says nothing of a profile: it is carried forward.
    text_only = complete_values(registrant, revision_information="Text only.")
    version_publish(namespace=ns, values=text_only, date=dt.date(2026, 11, 2), actor=staff)
    assert json.loads(ns.versions.get(number=2).profile) == DEMO_PROFILE
    assert ns.events.get(version__number=2).changes == {}
    # A revision that withdraws it says so in the event.
    version_publish(namespace=ns, values={**text_only, "profile": ""},
                    date=dt.date(2026, 11, 3), actor=staff)
    ns.refresh_from_db()
    assert ns.profile == {} and ns.versions.get(number=3).profile == ""
    assert ns.events.get(version__number=3).changes == {"profile": [DEMO_PROFILE, {}]}


def results(client, *urns):
    response = client.get("/api/check", {"urn": list(urns)})
    assert response.status_code == 200
    return response.json()["results"]


def test_api_check_judges_the_nss_by_the_profile(client, registry):
    bad, good, upper, unknown, no_profile = results(
        client, "urn:isbn:0451450524", "urn:ISBN:0-451-45052-3",
        "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", "urn:xyzzy:1", "urn:lex:it:stato")
    assert (bad["nss_valid"], good["nss_valid"], upper["nss_valid"]) == (False, True, True)
    assert (unknown["nss_valid"], no_profile["nss_valid"]) == (None, None)
    [error] = bad["nss_errors"]
    assert error["rule"] == "isbn" and error["offset"] == len("urn:isbn:045145052")
    assert "check digit" in error["message"] and "RFC 3187" in error["cite"]
    assert good["namespace_normal_form"] == "urn:isbn:0451450523"
    assert upper["namespace_normal_form"] == "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    assert upper["normalized"] == "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"
    assert unknown["namespace_normal_form"] == unknown["normalized"]
    [rfc] = results(client, "urn:ietf:rfc:8141")
    assert rfc["resolves_to"] == [{"name": "RFC Editor",
                                   "url": "https://www.rfc-editor.org/rfc/rfc8141"}]
    [syntax] = results(client, "urn:oid:1..3")
    assert syntax["nss_errors"][0]["offset"] == len("urn:oid:1.")
    assert syntax["nss_errors"][0]["rule"] == "number"


@pytest.mark.parametrize("a, b, same, same_by_rfc8141, steps", [
    ("urn:isbn:0-395-36341-1", "URN:ISBN:0395363411", True, False,
     ["remove-hyphens", "uppercase-x"]),
    ("urn:ietf:rfc:2648", "urn:ietf:RFC:2648", True, False, ["case-insensitive-urn"]),
    ("urn:oid:1.3.6.1", "URN:OID:1.3.6.1", True, True, []),
    ("urn:isbn:0395363411", "urn:issn:0395363411", False, False, []),
    ("urn:xyzzy:a", "urn:XYZZY:a", True, True, []),
    # The steps are lexical: they compare URNs that are not ISBNs (check digit) too.
    ("urn:isbn:0-451-45052-4", "urn:isbn:0451450524", True, False,
     ["remove-hyphens", "uppercase-x"]),
])
def test_api_equivalent(client, registry, a, b, same, same_by_rfc8141, steps):
    response = client.get("/api/equivalent", {"a": a, "b": b})
    data = response.json()
    assert response.status_code == 200
    assert (data["equivalent"], data["rfc8141_equivalent"]) == (same, same_by_rfc8141)
    assert [s["step"] for s in data["steps"]] == steps
    assert all(s["cite"] for s in data["steps"])


def test_api_equivalent_refuses_what_is_not_a_urn(client, db):
    response = client.get("/api/equivalent", {"a": "urn:isbn:1", "b": "isbn:1"})
    assert response.status_code == 400 and response.json()["which"] == "b"
    assert client.get("/api/equivalent", {"a": "urn:isbn:1"}).status_code == 400
    assert client.post("/api/equivalent", {"a": "x", "b": "y"}).status_code == 405


def test_resolve(client, registry):
    one_resolver = client.get("/resolve/urn:ietf:rfc:2648")
    assert one_resolver.status_code == 303
    assert one_resolver["Location"] == "https://www.rfc-editor.org/rfc/rfc2648"
    assert client.get("/resolve/", {"urn": "urn:ietf:rfc:2648"})["Location"] == \
        one_resolver["Location"]
    several = client.get("/resolve/", {"urn": "URN:NBN:fi-fe19981001"})
    assert several.status_code == 200
    assert [a.get("href") for a in find(page(several), "//main//li/a")] == [
        "https://urn.fi/urn:nbn:fi-fe19981001",
        "https://nbn-resolving.org/urn:nbn:fi-fe19981001"]
    none = client.get("/resolve/urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    assert none.status_code == 404 and "declares no resolver" in text(
        one(page(none), "//main//*[contains(@class, 'alert')]"))
    unregistered = client.get("/resolve/urn:xyzzy:1")
    assert unregistered.status_code == 404 and "not registered here" in text(
        one(page(unregistered), "//main//*[contains(@class, 'alert')]"))
    invalid = client.get("/resolve/urn:ietf:rfc:")
    assert invalid.status_code == 404 and "not valid" in text(
        one(page(invalid), "//main//*[contains(@class, 'alert')]"))
    for hostile in ("https://evil.example/", "//evil.example", "urn:ietf:rfc:"):
        response = client.get("/resolve/", {"urn": hostile})
        assert response.status_code in (400, 404) and not response.has_header("Location")


def test_the_empty_resolve_form_is_the_form_with_a_word_not_an_error(client, db):
    asked = client.get("/resolve/")
    assert asked.status_code == 200
    doc = page(asked)
    assert one(doc, "//main//form//input[@name='urn']").get("value") == ""
    assert find(doc, "//main//*[@data-empty]") == []
    sent_empty = client.get("/resolve/", {"urn": "  "})
    assert sent_empty.status_code == 200 and not sent_empty.has_header("Location")
    assert text(one(page(sent_empty), "//main//*[@data-empty]")).startswith(
        "Type a URN to resolve")


@pytest.mark.parametrize("encoded", ["%0D%0A", "%0A", "%0D"])
def test_an_encoded_line_break_in_the_resolve_path_is_the_sites_400_as_in_the_form(
        client, registry, encoded):
    """/resolve/<urn> answers what /resolve/?urn= answers: the site's page saying the
    URN is not one, not the URLconf's 404."""
    by_path = client.get(f"/resolve/urn:ietf:rfc:2648{encoded}Set-Cookie:x=1")
    by_form = client.get("/resolve/", {"urn": unquote(f"urn:ietf:rfc:2648{encoded}Set-Cookie:x=1")})
    assert by_path.status_code == 400 == by_form.status_code
    alert = text(one(page(by_path), "//main//*[contains(@class, 'alert-danger')]"))
    assert "is not a URN" in alert
    assert not by_path.has_header("Location") and not by_path.has_header("Set-Cookie")


def test_profiles_json_exports_every_published_profile(client, registry):
    data = client.get("/profiles.json").json()
    assert data["profiles"] == dict(Namespace.objects.exclude(profile={}).values_list(
        "nid", "profile"))


def test_the_namespace_page_and_api_show_the_profile(client, registry):
    doc = page(client.get("/namespaces/isbn/"))
    section = one(doc, "//section[@id='profile']")
    assert "ABNF" in text(one(section, ".//dt[1]"))
    rows = find(section, ".//table/tbody/tr")
    assert len(rows) == len(SHIPPED["isbn"]["examples"]) + len(
        SHIPPED["isbn"]["counter_examples"])
    assert all("passes" in text(r) or "as it should" in text(r) for r in rows)
    assert [text(li).split(":")[0] for li in find(section, ".//ol/li")] == [
        s["step"] for s in SHIPPED["isbn"]["equivalence"]]
    api = client.get("/api/namespaces/isbn/").json()
    assert api["profile"] == SHIPPED["isbn"] and api["has_profile"] is True
