"""Arbitrary text into every input a visitor controls: no 500, and what was typed
comes back to the person who typed it."""

import html as htmllib

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.namespaces.template import TEXT_FIELDS

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
# Any code point, surrogates excluded (they cannot be encoded in a request at all).
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)


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
        page = htmllib.unescape(response.content.decode())
        assert purpose.strip() in page.replace("\r\n", "\n")


@FUZZ
@given(q=texts)
def test_search_and_lookups_never_crash(client, db, q):
    assert client.get("/search/", {"q": q}).status_code in (200, 302)
    assert client.get("/api/nid-check", {"nid": q}).status_code == 200
    api = client.get("/api/check", {"urn": q})
    assert api.status_code == 200 or (api.status_code == 400 and not q.strip()
                                      and api.json()["error"])
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
    assert client.get(f"/namespaces/isbn/{suffix}").status_code in (200, 404)
