"""Arbitrary text into every input a visitor controls: no 500, and what was typed
comes back to the person who typed it."""

import urllib.parse

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.http_semantics import MAX_QUERY_BYTES
from registry.namespaces.api import QUERY_URN
from registry.namespaces.template import TEXT_FIELDS
from registry.review import workflow
from tests.html import field_value, page

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
# Any code point, surrogates excluded (they cannot be encoded in a request at all).
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)


def api_status(query: dict[str, str], status: int) -> int:
    """What the API answers ``query``: ``status``, or 414 when its query string is
    longer than the API reads (http_semantics.MAX_QUERY_BYTES)."""
    return 414 if len(urllib.parse.urlencode(query)) > MAX_QUERY_BYTES else status


@FUZZ
@given(nid=texts, purpose=texts, kind=st.sampled_from(["formal", "informal", "", "nonsense"]),
       edit_version=st.one_of(texts, st.integers(-5, 5).map(str)))
def test_the_request_form_never_crashes(client, registrant, nid, purpose, kind, edit_version):
    client.force_login(registrant)
    data = {"kind": kind, "proposed_nid": nid, "purpose": purpose,
            "edit_version": edit_version, "save": "1"}
    response = client.post(reverse("review:new"), data)
    assert response.status_code in (302, 400)
    if response.status_code == 400 and "\x00" not in purpose and purpose.strip():
        # The field shows what was typed, as a browser reads it (HTML makes CR LF and a
        # lone CR a newline).
        shown = purpose.replace("\r\n", "\n").replace("\r", "\n")
        assert field_value(page(response), "purpose") == shown


@FUZZ
@given(q=texts)
def test_search_and_lookups_never_crash(client, db, q):
    assert client.get("/search/", {"q": q}).status_code in (200, 302)
    assert client.get("/api/nid-check", {"nid": q}).status_code == api_status({"nid": q}, 200)
    api = client.get("/api/check", {"urn": q})
    assert api.status_code == api_status({"urn": q}, 200 if QUERY_URN.fullmatch(q) else 400)
    assert api.json()["results" if api.status_code == 200 else "error"]
    assert client.post("/check/", {"urns": q}).status_code == 200


@FUZZ
@given(values=st.fixed_dictionaries({name: texts for name in TEXT_FIELDS}))
def test_every_template_field_round_trips_through_a_draft(client, registrant, values):
    from registry.review.models import RegistrationRequest

    client.force_login(registrant)
    data = {"kind": "formal", "proposed_nid": "", "edit_version": 0, "save": "1", **values}
    response = client.post(reverse("review:new"), data)
    if response.status_code == 302:
        saved = RegistrationRequest.objects.filter(registrant=registrant).latest("pk")
        for name, value in values.items():
            expected = value.strip().replace("\r\n", "\n").replace("\r", "\n")
            stored = getattr(saved, name).replace("\r\n", "\n")
            if name == "contact_email":
                continue  # an email field normalises what it accepts
            if name == "revision_information":
                assert stored == ""  # not a field of a first version: never stored
                continue
            assert stored == expected, name
    else:
        assert response.status_code == 400


@pytest.mark.parametrize("path", ["/namespaces/%ZZ/", "/namespaces/%C0%AF/", "/requests/abc/",
                                  "/requests/999999/", "/namespaces/x/v/999999999999999999999/"])
def test_odd_urls_are_404s(client, db, path):
    assert client.get(path).status_code == 404


HUGE = "99999999999999999999999"


@pytest.mark.parametrize("suffix", [f"v/{HUGE}/", f"v/{HUGE}/template.txt", "v/0/",
                                    f"diff/?a={HUGE}&b=-1"])
def test_huge_version_numbers_are_404s_not_overflows(client, registry, suffix):
    # A query value that is no version number is a 400 naming it (query_params.py).
    assert client.get(f"/namespaces/isbn/{suffix}").status_code in (
        (400,) if "?" in suffix else (200, 404))


# Hostile payloads, by class: anything the attack pass tried, and mixtures of them.
CONTROLS = "".join(chr(c) for c in [*range(0, 32), *range(127, 160)])
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
HTML = ["<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "javascript:alert(1)",
        "]]>", "<![CDATA[", "&amp;&#0;&#x1F;", "=cmd|' /C calc'!A0", "{{ 7*7 }}", "%(x)s"]
hostile = st.one_of(
    texts,
    st.text(st.sampled_from(CONTROLS + BIDI + "aé日<>&\"'\r\n\t"), max_size=60),
    st.sampled_from(HTML),
    st.builds(lambda n, ch: ch * n, st.integers(20_001, 60_000), st.sampled_from("x[\u202e")),
    st.lists(st.sampled_from(HTML + ["gro.live\u202e", "ok"]), max_size=5).map("".join),
)
deep_json = st.integers(1, 200_000).flatmap(
    lambda depth: st.sampled_from(["[" * depth, "[" * depth + "]" * depth,
                                   '{"urns":' * depth, '["a",' * depth]))


def _exports_parse(client):
    import feedparser
    from lxml import etree

    etree.fromstring(client.get("/registry.xml").getvalue())
    feed = feedparser.parse(client.get("/feed.atom").content)
    assert not feed.bozo, feed.get("bozo_exception")
    assert client.get("/registry.csv").status_code == 200
    assert client.get("/api/namespaces/").status_code == 200


@pytest.fixture
def review_people(registrant, expert, staff):
    return {"registrant": registrant, "expert": expert, "staff": staff}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(values=st.fixed_dictionaries({name: hostile for name in TEXT_FIELDS}))
def test_what_the_form_accepts_never_breaks_an_export(client, review_people, values):
    from registry.review import actions
    from registry.review.models import RegistrationRequest

    registrant = review_people["registrant"]
    client.force_login(registrant)
    response = client.post(reverse("review:new"), {
        "kind": "informal", "edit_version": 0, "save": "1", **values})
    assert response.status_code in (302, 400)
    if response.status_code != 302:
        return
    registration = RegistrationRequest.objects.filter(registrant=registrant).latest("pk")
    if workflow.submission_problems(registration):
        return  # a draft that cannot be submitted never reaches an export
    for name, who in [("submit", "registrant"), ("approve", "expert"), ("register", "staff")]:
        registration = actions.registration_transition(registration=registration, transition=name,
                                                       actor=review_people[who], comment="Fine.",
                                                       early_reason="Fuzzing.")
    _exports_parse(client)


@FUZZ
@given(body=hostile, audience=st.sampled_from(["public", "registrant", "experts", "x"]),
       transition=st.sampled_from(["request_changes", "approve", "reject", "withdraw",
                                   "nonsense"]), involved=hostile)
def test_comments_and_decisions_never_crash(client, registrant, expert, body, audience,
                                            transition, involved):
    from tests.factories import make_registration

    registration = make_registration(registrant, nid=None, kind="informal")
    client.force_login(expert)
    for url, data in [
        (reverse("review:comment", args=[registration.pk]), {"body": body, "audience": audience}),
        (reverse("review:transition", args=[registration.pk, transition]),
         {"comment": body, "early_reason": body}),
        (reverse("review:standardisation", args=[registration.pk]),
         {"involved": involved, "comment": body}),
    ]:
        # 409: refused now (a reason missing, the period not over), the form given back.
        assert client.post(url, data).status_code in (302, 400, 403, 404, 409), url
    assert client.get(registration.get_absolute_url()).status_code == 200


@FUZZ
@given(text=hostile)
def test_the_public_inputs_never_crash(client, db, text):
    assert client.get("/search/", {"q": text}).status_code == 200
    assert client.get("/api/nid-check", {"nid": text}).status_code == api_status(
        {"nid": text}, 200)
    checked = client.get("/api/nid-check", {"nid": text, "kind": text})
    assert checked.status_code == api_status({"nid": text, "kind": text},
                                             200 if text in ("formal", "informal") else 400)
    assert client.get("/api/check", {"urn": text}).status_code in (200, 400, 414)
    assert client.post("/check/", {"urns": text}).status_code == 200
    for content_type in ("application/json", "text/plain"):
        response = client.post("/api/check", text, content_type=content_type)
        assert response.status_code in (200, 400)
    for url, data in [("/accounts/signup/", {"email": text, "password1": text,
                                             "password2": text}),
                      ("/accounts/login/", {"login": text, "password": text}),
                      ("/accounts/password/reset/", {"email": text})]:
        assert client.post(url, data).status_code in (200, 302, 429), url


@FUZZ
@given(body=deep_json)
def test_json_of_any_shape_and_depth_is_a_clear_400(client, db, body):
    response = client.post("/api/check", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]


@FUZZ
@given(raw=st.binary(max_size=400))
def test_bytes_in_any_encoding_never_crash(client, registrant, raw):
    client.force_login(registrant)
    form = "application/x-www-form-urlencoded"
    for url, ctype in [("/api/check", "application/json"), ("/api/check", "text/plain"),
                       ("/check/", form), (reverse("review:new"), f"{form}; charset=latin-1"),
                       (reverse("review:new"), form)]:
        response = client.generic("POST", url, b"purpose=" + raw + b"&urns=" + raw,
                                  content_type=ctype)
        assert response.status_code < 500, url


@pytest.mark.parametrize("payload", HTML + ["ünïcødé 日本語 العربية", "tab\tand\r\nCRLF",
                                            "\u200d\u200b zero width", "x" * 20_000])
def test_every_accepted_payload_in_every_field_keeps_the_exports_parsing(client, review_people,
                                                                        payload):
    from registry.review import actions
    from registry.review.models import RegistrationRequest

    client.force_login(review_people["registrant"])
    one_line = payload if len(payload) < 100 and "\n" not in payload else "Example"
    values = {name: one_line if name in ("registrant_organisation", "contact_name",
                                         "contact_phone") else payload
              for name in TEXT_FIELDS if name != "contact_email"}
    response = client.post(reverse("review:new"), {
        "kind": "informal", "edit_version": 0, "contact_email": "pat@example.org", **values})
    assert response.status_code == 302
    registration = RegistrationRequest.objects.latest("pk")
    for name, who in [("submit", "registrant"), ("approve", "expert"), ("register", "staff")]:
        registration = actions.registration_transition(registration=registration, transition=name,
                                                       actor=review_people[who], comment=payload,
                                                       early_reason="Fuzzing.")
    assert registration.state == "registered"
    _exports_parse(client)
