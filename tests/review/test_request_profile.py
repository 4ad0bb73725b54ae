"""A registrant proposes a machine-readable profile with the request: refused at the
field while an example fails its own syntax, shown checked to the experts, carried
into the published version and used by the checker at once."""

import json

import pytest
from django.urls import reverse

from registry.namespaces.models import Namespace
from registry.review.models import RegistrationRequest
from tests.factories import approve, complete_values
from tests.html import field_errors, field_value, find, one, page, text

PROFILE = {
    "syntax": {"abnf": 'nss = 1*DIGIT "-" 1*DIGIT\n', "cite": "Syntax field"},
    "equivalence": [{"step": "remove-hyphens", "cite": "Syntax field: hyphens are optional"}],
    "examples": ["urn:profnid:12-34"],
    "counter_examples": ["urn:profnid:12"],
    "resolvers": [{"url": "https://archive.example/id/{nss}", "name": "Archive"}],
}


def form_data(**overrides):
    data = {"kind": "formal", "proposed_nid": "profnid", "edit_version": 0,
            **complete_values()}
    data.update(overrides)
    return data


@pytest.fixture
def logged_in(client, registrant):
    client.force_login(registrant)
    return client


def test_the_form_has_the_profile_field(logged_in):
    doc = page(logged_in.get(reverse("review:new")))
    one(doc, "//fieldset[legend[contains(., 'Machine-readable profile')]]"
             "//textarea[@name='profile']")


@pytest.mark.parametrize("profile, words", [
    ({**PROFILE, "examples": ["urn:profnid:12-3a"]}, "fails its own profile"),
    ({**PROFILE, "examples": ["urn:other:12-34"]}, "not in the profnid namespace"),
    ({**PROFILE, "resolvers": [{"url": "http://archive.example/{nss}"}]}, "https://"),
    ("{not json", "not JSON"),
    # nested past every parser's stack once (a 500 before): refused at the field
    ({**PROFILE, "syntax": {"regex": "(" * 600 + "1" + ")" * 600, "cite": "c"}},
     "nested more than 20 deep"),
    ({**PROFILE, "syntax": {"abnf": "nss = " + "(" * 2400 + "DIGIT" + ")" * 2400, "cite": "c"}},
     "nested more than 20 deep"),
    ({**PROFILE, "syntax": {"abnf": "nss = " + " / ".join(f'"{i}"' for i in range(300)),
                            "cite": "c"}}, "more than 256 options"),
    ({**PROFILE, "syntax": {"abnf": "nss = " + "9" * 5000 + "DIGIT", "cite": "c"}},
     "out of range"),
    ('{"syntax": ' + "[" * 5000 + "]" * 5000 + "}", "more than 16 deep"),
])
def test_an_unsound_profile_is_refused_at_the_field_and_kept(logged_in, profile, words):
    typed = profile if isinstance(profile, str) else json.dumps(profile)
    response = logged_in.post(reverse("review:new"), form_data(profile=typed))
    doc = page(response)
    assert response.status_code == 400
    assert any(words in error for error in field_errors(doc, "profile"))
    assert field_value(doc, "profile") == typed
    assert not RegistrationRequest.objects.exists()


def test_a_sound_profile_is_checked_for_experts_published_and_used_at_once(
        logged_in, client, registrant, expert, staff):
    response = logged_in.post(reverse("review:new"), form_data(
        profile=json.dumps(PROFILE), submit="1"))
    registration = RegistrationRequest.objects.get(registrant=registrant)
    assert response.status_code == 302 and json.loads(registration.profile) == PROFILE
    assert json.loads(registration.submitted_round.profile) == PROFILE
    client.force_login(expert)
    doc = page(client.get(registration.get_absolute_url()))
    section = one(doc, "//section[@id='profile']")
    assert [text(td) for td in find(section, ".//tbody/tr/td[3]")] == [
        "passes", "fails, as it should: the NSS ends too early: the rule \"nss\" of the "
        "ABNF syntax expected a digit or '-'"]
    approve(registration, expert, staff, register=True)
    namespace = Namespace.objects.by_nid("profnid").get()
    assert namespace.profile == PROFILE
    good, bad = client.get("/api/check", {"urn": ["urn:profnid:12-34", "urn:profnid:1234"]}
                           ).json()["results"]
    assert good["nss_valid"] is True and good["namespace_normal_form"] == "urn:profnid:1234"
    assert good["resolves_to"] == [{"name": "Archive",
                                    "url": "https://archive.example/id/12-34"}]
    assert bad["nss_valid"] is False
    assert client.get("/api/equivalent", {"a": "urn:profnid:12-34", "b": "urn:profnid:1234"}
                      ).json()["equivalent"] is True


def test_a_revision_starts_from_the_published_profile(client, registrant, expert, staff):
    from registry.review import actions
    from tests.factories import make_registration

    approve(make_registration(registrant, nid="profnid", profile=json.dumps(PROFILE)), expert,
            staff, register=True)
    revision = actions.registration_create(actor=registrant,
                                           revises=Namespace.objects.by_nid("profnid").get())
    assert json.loads(revision.profile) == PROFILE
