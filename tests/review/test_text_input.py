"""The text policy at every form of the review: refused at the field with a clear
message, nothing stored, and what was typed still there."""

import pytest
from django.urls import reverse

from registry.review import actions
from registry.review.models import Comment, RegistrationRequest, RequestEvent
from tests.factories import complete_values, make_registration
from tests.html import field_errors, page

RLO = "\u202e"
HOSTILE = {
    "bidi override": f"Evil {RLO}gro.live",
    "control character": "Bell\x07 and escape\x1b[31m",
    "NUL": "before\x00after",
}


def messages_of(doc):
    return " ".join(el.text_content() for el in doc.xpath("//*[@role='alert']"))


def textarea(doc, element_id):
    """A textarea's text as a browser has it (one leading newline is markup)."""
    text = doc.get_element_by_id(element_id).text_content()
    return text[1:] if text.startswith("\n") else text


@pytest.mark.parametrize("label", HOSTILE)
@pytest.mark.parametrize("field, one_line", [("registrant_organisation", True),
                                             ("contact_name", True), ("purpose", False),
                                             ("syntax", False)])
def test_the_request_form_refuses_at_the_field_and_keeps_the_text(client, registrant, field,
                                                                   one_line, label):
    client.force_login(registrant)
    typed = HOSTILE[label]
    data = {"kind": "formal", "proposed_nid": "policynid", "edit_version": 0,
            **complete_values(registrant), field: typed, "save": "1"}
    response = client.post(reverse("review:new"), data)
    assert response.status_code == 400
    assert not RegistrationRequest.objects.filter(registrant=registrant).exists()
    doc = page(response)
    widget = doc.get_element_by_id(f"id_{field}")
    assert "is-invalid" in widget.get("class").split()
    kept = widget.get("value") if one_line else textarea(doc, f"id_{field}")
    # The browser shows what was typed; NUL is the one character HTML cannot carry.
    assert kept.replace("\r\n", "\n") == typed.replace("\x00", "\ufffd") or "\x00" in typed
    feedback = doc.get_element_by_id(f"error_1_id_{field}").text_content()
    if label == "NUL":
        assert "Null characters are not allowed" in feedback
    else:
        assert "Character" in feedback and "Remove it" in feedback


def test_an_email_with_a_bidi_override_is_refused(client, registrant):
    client.force_login(registrant)
    data = {"kind": "formal", "proposed_nid": "policynid", "edit_version": 0,
            **complete_values(registrant), "contact_email": f"pat@{RLO}gro.live"}
    response = client.post(reverse("review:new"), data)
    assert response.status_code == 400
    doc = page(response)
    assert "is-invalid" in doc.get_element_by_id("id_contact_email").get("class").split()
    assert field_errors(doc, "contact_email")  # and a message says why, at the field


@pytest.mark.parametrize("label", HOSTILE)
def test_a_comment_is_refused_and_kept(client, registrant, other_registrant, label):
    registration = make_registration(registrant, nid="talkpolicy")
    client.force_login(other_registrant)
    typed = HOSTILE[label]
    response = client.post(reverse("review:comment", args=[registration.pk]),
                           {"body": typed, "audience": "public"})
    assert response.status_code == 400  # given back, the error at the field
    assert not Comment.objects.filter(registration=registration).exists()
    doc = page(response)
    error = doc.get_element_by_id("id_body-error").text_content()
    assert "Character" in error or "Null characters" in error
    kept = textarea(doc, "id_body")
    assert kept == typed.replace("\x00", "\ufffd") or "\x00" in typed


@pytest.mark.parametrize("label", HOSTILE)
def test_a_transition_comment_is_refused_and_kept(client, registrant, expert, label):
    registration = make_registration(registrant, nid="decidepolicy")
    client.force_login(expert)
    typed = HOSTILE[label]
    response = client.post(reverse("review:transition", args=[registration.pk, "request_changes"]),
                           {"comment": typed})
    assert response.status_code == 400  # given back, the error at the field
    registration.refresh_from_db()
    assert registration.state == "in_review"
    assert not RequestEvent.objects.filter(registration=registration,
                                           transition="request_changes").exists()
    doc = page(response)
    error = doc.get_element_by_id("id_request_changes_comment-error").text_content()
    assert "Character" in error or "Null characters" in error
    kept = textarea(doc, "id_request_changes_comment")
    assert kept == typed.replace("\x00", "\ufffd") or "\x00" in typed


@pytest.mark.parametrize("label", HOSTILE)
def test_the_standardisation_comment_is_refused_not_a_500(client, registrant, expert, label):
    registration = make_registration(registrant, nid="stdpolicy")
    client.force_login(expert)
    response = client.post(reverse("review:standardisation", args=[registration.pk]),
                           {"involved": "1", "comment": HOSTILE[label]})
    assert response.status_code == 400  # given back, the error at the field
    registration.refresh_from_db()
    assert not registration.standardisation
    error = page(response).get_element_by_id("id_comment-error").text_content()
    assert "Character" in error or "Null" in error


def test_the_standardisation_flag_still_works(client, registrant, expert):
    registration = make_registration(registrant, nid="stdworks")
    client.force_login(expert)
    client.post(reverse("review:standardisation", args=[registration.pk]),
                {"involved": "1", "comment": "An SDO is involved."})
    registration.refresh_from_db()
    assert registration.standardisation
    client.post(reverse("review:standardisation", args=[registration.pk]), {"involved": "0"})
    registration.refresh_from_db()
    assert not registration.standardisation


def test_short_fields_are_isolated_from_the_text_around_them(client, registrant):
    # Stored before the policy (or by any other path): still cannot reorder the page.
    # The submitted round is what others read (the working copy is its registrant's).
    draft = make_registration(registrant, nid="bdinid", submit=False)
    RegistrationRequest.objects.filter(pk=draft.pk).update(registrant_organisation=f"x{RLO}gro.live")
    registration = actions.registration_transition(registration=draft, transition="submit",
                                                   actor=registrant)
    for url in (registration.get_absolute_url(), reverse("review:public-review")):
        doc = page(client.get(url))
        isolated = [el.text_content() for el in doc.iter("bdi")]
        assert f"x{RLO}gro.live" in isolated, url
