"""The Appendix A form: drafts, submission, bad input, stale forms, privacy."""

import pytest
from django.urls import reverse
from lxml.html import HtmlElement

from registry.namespaces.template import STORED_FIELDS
from registry.review import actions
from registry.review.forms import RequestForm
from registry.review.models import RegistrationRequest, State
from tests.factories import complete_values, make_registration
from tests.html import field_errors, field_value, find, links, one, page, text, texts
from tests.review.helpers import readable, sent_summaries, textarea_text

TYPED = complete_values()


def form_data(edit_version=0, **overrides):
    data = {"kind": "formal", "proposed_nid": "formnid", "edit_version": edit_version,
            **complete_values()}
    data.update(overrides)
    return data


@pytest.fixture
def logged_in(client, registrant):
    client.force_login(registrant)
    return client


def test_the_form_shows_every_appendix_a_field_with_guidance(logged_in):
    doc = page(logged_in.get(reverse("review:new")))
    labelled = {text(label).rstrip("*"): label.get("for")
                for label in find(doc, "//form//label")}
    form = RequestForm()
    for name in STORED_FIELDS:
        if name == "revision_information":  # a first version revises nothing
            continue
        label = str(form.fields[name].label)
        assert label in labelled, label
        one(doc, f"//form//*[@id='{labelled[label]}'][self::input or self::textarea]")
    assert text(one(doc, "//*[@id='id_purpose_helptext']")).startswith("Section 6.4.1")
    assert text(one(doc, "//*[@id='id_resolution_helptext']")).startswith(
        "Section 6.4.6 (required)")
    assert one(doc, "//input[@name='proposed_nid']").get("data-nid-check") == "1"
    script = one(doc, "//script[contains(@src, '/nid-check.js')]")
    assert script.get("src").endswith("/nid-check.js")
    assert script.get("data-url") == reverse("nid-check")
    assert script.get("data-registration") is None  # a new request: none to leave out


def test_a_partial_draft_saves(logged_in, registrant):
    response = logged_in.post(reverse("review:new"), {"kind": "formal", "proposed_nid": "",
                                                      "edit_version": 0, "purpose": "Half."})
    registration = RegistrationRequest.objects.get(registrant=registrant)
    assert response.status_code == 302
    assert response["Location"] == f"/requests/{registration.pk}/edit/"
    assert registration.state == State.DRAFT and registration.purpose == "Half."
    # Its live check leaves the request itself out of the comparison.
    script = one(page(logged_in.get(response["Location"])),
                 "//script[contains(@src, '/nid-check.js')]")
    assert script.get("data-registration") == str(registration.pk)


def test_submitting_from_the_form(logged_in, registrant, expert, mailoutbox,
                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(reverse("review:new"), form_data(submit="1"))
    registration = RegistrationRequest.objects.get(registrant=registrant)
    assert response["Location"] == f"/requests/{registration.pk}/"
    assert registration.state == State.IN_REVIEW
    assert sent_summaries(mailoutbox) == [
        "[urn] Registration request for URN NID formnid",
        f"Received: your URN namespace request #{registration.pk} is in public review"]


def at_fields(doc: HtmlElement, message: str) -> list[str]:
    """The fields that show ``message`` at the field, each also linked, once, from the
    error summary at the top of the form."""
    marked = [node.get("id").removesuffix("_error")
              for node in find(doc, "//div[contains(@class, 'invalid-feedback')]")
              if message in text(node)]
    linked = [a.get("href").removeprefix("#") for a in find(doc, "//*[@id='error-summary']//a")
              if message in text(a)]
    assert linked == marked
    return marked


def test_submitting_an_incomplete_template_marks_each_missing_field(logged_in):
    data = form_data(submit="1", purpose="", resolution="", syntax="   ")
    response = logged_in.post(reverse("review:new"), data)
    doc = page(response)
    assert response.status_code == 400
    assert at_fields(doc, "Required before you submit.") == ["id_purpose", "id_syntax",
                                                             "id_resolution"]
    assert field_value(doc, "purpose") == ""  # purpose was emptied
    assert TYPED["purpose"] not in readable(doc)
    assert field_value(doc, "assignment") == TYPED["assignment"]  # what was typed is kept
    assert not RegistrationRequest.objects.exists()


@pytest.mark.parametrize(
    ("nid", "words"),
    [
        ("ab", "more than two characters"),
        ("urn-9", 'cannot start with "urn-"'),
        ("X-thing", 'cannot start with "X-"'),
        ("xn--abc", "two letters and a hyphen"),
        ("de-foo", "two letters and a hyphen"),
        ("bad_nid", "not allowed"),
        ("-abc", "cannot start with a hyphen"),
        ("abc-", "cannot end with a hyphen"),
        ("a" * 33, "at most 32"),
        ("ISBN", "already registered"),
    ],
)
def test_each_nid_rule_is_a_message_at_the_field(logged_in, registry, nid, words):
    response = logged_in.post(reverse("review:new"), form_data(proposed_nid=nid))
    doc = page(response)
    assert response.status_code == 400
    (error,) = field_errors(doc, "proposed_nid")
    assert words in error
    messages = texts(doc, "//*[@id='id_proposed_nid_error']/span")  # one per rule broken
    said = [message for message in messages if words in message]
    assert said, messages
    assert all("RFC 8141 section" in message for message in said)  # each cites its rule
    assert field_value(doc, "proposed_nid") == nid  # the typed NID is kept
    assert field_value(doc, "purpose") == TYPED["purpose"]


def test_a_1mb_field_is_refused_at_the_field_and_kept(logged_in):
    big = "x" * 1_000_000
    response = logged_in.post(reverse("review:new"), form_data(purpose=big))
    doc = page(response)
    assert response.status_code == 400
    assert "at most 20000 characters (it has 1000000)" in " ".join(field_errors(doc, "purpose"))
    assert field_value(doc, "purpose") == big
    assert not RegistrationRequest.objects.exists()


def test_nul_bytes_are_refused_at_the_field(logged_in):
    response = logged_in.post(reverse("review:new"), form_data(syntax="a\x00b",
                                                               proposed_nid="nul\x00nid"))
    doc = page(response)
    assert response.status_code == 400
    assert at_fields(doc, "Null characters are not allowed.") == ["id_proposed_nid",
                                                                  "id_syntax"]
    assert field_value(doc, "assignment") == TYPED["assignment"]


def test_a_stale_form_after_the_request_moved_on_keeps_the_text(logged_in, registrant):
    registration = make_registration(registrant, nid="stale", submit=False)
    version = registration.edit_version
    actions.registration_transition(registration=registration, transition="submit",
                                    actor=registrant)
    response = logged_in.post(reverse("review:edit", args=[registration.pk]),
                              form_data(version, proposed_nid="stale", purpose="My new text"))
    doc = page(response)
    assert response.status_code == 409
    assert "can no longer be edited" in text(one(doc, "//*[@id='error-summary']"))
    assert field_value(doc, "purpose") == "My new text"
    registration.refresh_from_db()
    assert registration.purpose != "My new text"


def test_a_form_from_another_tab_does_not_overwrite(logged_in, registrant):
    registration = make_registration(registrant, nid="twotabs", submit=False)
    first = logged_in.post(reverse("review:edit", args=[registration.pk]),
                           form_data(registration.edit_version, proposed_nid="twotabs",
                                     purpose="Tab one"))
    assert first.status_code == 302
    second = logged_in.post(reverse("review:edit", args=[registration.pk]),
                            form_data(registration.edit_version, proposed_nid="twotabs",
                                      purpose="Tab two"))
    assert second.status_code == 409
    doc = page(second)
    assert "another window or tab" in text(one(doc, "//*[@id='error-summary']"))
    assert field_value(doc, "purpose") == "Tab two"  # what was typed is kept
    registration.refresh_from_db()
    assert registration.purpose == "Tab one"


def test_a_tampered_edit_version_is_a_field_error_not_a_crash(logged_in, registrant):
    registration = make_registration(registrant, nid="tamper", submit=False)
    response = logged_in.post(reverse("review:edit", args=[registration.pk]),
                              form_data("not-a-number", proposed_nid="tamper"))
    assert response.status_code == 400


def test_other_registrants_drafts_are_invisible(client, registrant, other_registrant):
    draft = make_registration(registrant, nid="secret", submit=False)
    client.force_login(other_registrant)
    for url in (f"/requests/{draft.pk}/", f"/requests/{draft.pk}/edit/"):
        assert client.get(url).status_code == 404
    assert client.post(f"/requests/{draft.pk}/edit/", form_data(0, purpose="mine now")
                       ).status_code == 404
    assert client.post(f"/requests/{draft.pk}/do/withdraw/", {"comment": ""}).status_code == 404
    assert client.post(f"/requests/{draft.pk}/comment/",
                       {"body": "hi", "audience": "public"}).status_code == 404
    listing = client.get("/requests/")
    assert listing.status_code == 200
    assert "secret" not in readable(page(listing))
    draft.refresh_from_db()
    assert draft.purpose != "mine now" and draft.state == State.DRAFT


def test_other_registrants_cannot_edit_a_submitted_request(client, registrant,
                                                          other_registrant):
    registration = make_registration(registrant, nid="notyours")
    client.force_login(other_registrant)
    assert client.get(f"/requests/{registration.pk}/").status_code == 200  # public review
    assert client.post(f"/requests/{registration.pk}/edit/", form_data(0)).status_code == 404
    response = client.post(f"/requests/{registration.pk}/do/withdraw/", {"comment": ""})
    assert response.status_code == 403
    assert text(one(page(response), "//*[@id='refused']")).startswith("Only the registrant")
    registration.refresh_from_db()
    assert registration.state == State.IN_REVIEW


def test_anonymous_users_are_sent_to_log_in(client):
    response = client.get(reverse("review:new"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_conflicting_proposals_are_flagged_on_both(client, registrant, other_registrant, expert):
    first = make_registration(registrant, nid="clash")
    second = make_registration(other_registrant, nid="CLASH")
    client.force_login(expert)
    for registration, other in ((first, second), (second, first)):
        doc = page(client.get(registration.get_absolute_url()))
        flag = "//*[@id='conflict-flag']//a"
        assert links(doc, flag) == [other.get_absolute_url()]
        assert texts(doc, flag) == [f"#{other.pk} {other.proposed_nid}"]
    dashboard = page(client.get(reverse("review:dashboard")))
    flagged = find(dashboard, "//td[@data-label='Namespace'][.//*[@data-race='conflict']]")
    assert sorted(links(cell, ".//a[contains(@class, 'nid')]")[0] for cell in flagged) == \
        sorted([first.get_absolute_url(), second.get_absolute_url()])
    assert texts(dashboard, "//*[@data-race='conflict']") == ["NID conflict"] * 2
    assert text(dashboard).count("NID conflict") == 2


def test_revision_form_requires_revision_information_and_shows_a_diff(
        client, registrant, expert, staff):
    from registry.namespaces.models import Namespace
    from tests.factories import approve

    approve(make_registration(registrant, nid="revme"), expert, staff, register=True)
    client.force_login(registrant)
    assert client.get(reverse("review:new"), {"revises": "REVME"}).status_code == 302
    # A GET writes nothing.
    assert not RegistrationRequest.objects.filter(revises__isnull=False).exists()
    response = client.post(reverse("review:new"), {"revises": "REVME"})
    registration = RegistrationRequest.objects.get(revises=Namespace.objects.by_nid("revme").get())
    assert response["Location"] == f"/requests/{registration.pk}/edit/"
    data = form_data(registration.edit_version, submit="1", resolution="Now with a mirror.")
    data.pop("proposed_nid")
    data.pop("kind")
    response = client.post(f"/requests/{registration.pk}/edit/", data)
    doc = page(response)
    assert response.status_code == 400
    assert text(one(doc, "//label[@for='id_revision_information']")) == "Revision information"
    assert field_errors(doc, "revision_information") == ["Required before you submit."]
    assert at_fields(doc, "Required before you submit.") == ["id_revision_information"]
    (row,) = [tr for tr in find(doc, "//*[@id='revision-diff']/following-sibling::table[1]"
                                     "/tbody/tr")
              if text(one(tr, "./th")).startswith("Resolution")]
    drafted = one(row, "./td[2]")
    assert text(drafted) == "Now with a mirror."
    inserted = texts(drafted, ".//ins")
    assert inserted[0] == "Now" or inserted[0].startswith("Now with a mirror")


def test_my_requests_lists_only_mine_with_states(client, registrant, other_registrant):
    make_registration(registrant, nid="minea")
    make_registration(other_registrant, nid="theirs")
    client.force_login(registrant)
    doc = page(client.get(reverse("review:my-requests")))
    rows = {text(one(tr, "./td[@data-label='Namespace']//*[@class='nid']")):
            text(one(tr, "./td[@data-label='State']"))
            for tr in find(doc, "//table[@id='my-requests']/tbody/tr")}
    assert rows == {"minea": "In public review"}
    assert "theirs" not in readable(doc)


def test_fast_track_for_an_unrecognized_body_is_a_field_error_at_submission(logged_in):
    response = logged_in.post(reverse("review:new"), form_data(fast_track="on", submit="1"))
    assert response.status_code == 400
    doc = page(response)
    error = " ".join(field_errors(doc, "fast_track"))
    assert "recorded as recognized (RFC 8141 section 6.3" in error
    assert error in text(one(doc, '//*[@id="div_id_fast_track"]'))  # said at the field
    assert one(doc, '//input[@name="fast_track"]').get("checked") is not None  # choice kept
    assert not RegistrationRequest.objects.exists()


def test_a_ticked_fast_track_box_does_not_block_saving_a_draft(logged_in, registrant):
    response = logged_in.post(reverse("review:new"), form_data(fast_track="on", save="1"))
    assert response.status_code == 302
    draft = RegistrationRequest.objects.get(registrant=registrant)
    assert draft.fast_track and draft.state == State.DRAFT


def test_a_recognized_body_may_ask_for_the_fast_track(client, standards_body):
    client.force_login(standards_body)
    response = client.post(reverse("review:new"), form_data(fast_track="on", submit="1"))
    registration = RegistrationRequest.objects.get()
    assert response.status_code == 302
    assert registration.fast_track and registration.state == "in_review"


def test_only_the_holder_can_start_a_revision_from_the_web(client, registrant,
                                                           other_registrant, expert, staff):
    from tests.factories import approve

    approve(make_registration(registrant, nid="heldns"), expert, staff, register=True)
    client.force_login(other_registrant)
    assert client.post(reverse("review:new"), {"revises": "heldns"}).status_code == 403
    assert client.post(reverse("review:new"), {"revises": "nosuchns"}).status_code == 404
    assert not RegistrationRequest.objects.filter(registrant=other_registrant).exists()
    client.force_login(registrant)
    doc = page(client.get("/namespaces/heldns/"))
    form = one(doc, "//main//form[@method='post'][@action='/requests/new/']")
    assert one(form, ".//input[@name='revises']").get("value") == "heldns"
    assert texts(form, ".//button") == ["Start a new version"]


def test_a_refused_decision_keeps_what_the_expert_typed_in_its_own_form(client, registrant,
                                                                      expert):
    registration = make_registration(registrant, nid="keepit")
    client.force_login(expert)
    response = client.post(f"/requests/{registration.pk}/do/approve/",
                           {"comment": "Sound and complete.", "early_reason": ""})
    assert response.status_code == 409
    doc = page(response)
    approve_comment = one(doc, '//*[@id="do-approve"]//textarea[@name="comment"]')
    assert textarea_text(approve_comment) == "Sound and complete."
    error = text(one(doc, '//*[@id="do-approve"]//*[@id="id_approve_early_reason-error"]'))
    assert "ends on" in error  # refused: the review period is not over, said at the field
    assert textarea_text(one(doc, '//*[@id="do-reject"]//textarea[@name="comment"]')) == ""
    assert textarea_text(one(doc, '//*[@id="comment-form"]//textarea[@name="body"]')) == ""
    registration.refresh_from_db()
    assert registration.state == "in_review"


def test_a_ready_draft_is_submitted_from_its_own_page(logged_in, registrant, expert):
    draft = make_registration(registrant, nid="frompage", submit=False)
    doc = page(logged_in.get(draft.get_absolute_url()))
    button = one(doc, "//*[@id='actions']//button[@name='do'][@value='submit']")
    assert text(button) == "Submit for public review"  # the form's words, and the README's
    response = logged_in.post(reverse("review:transition", args=[draft.pk, "submit"]),
                              {"do": "submit"})
    assert response.status_code == 302 and response["Location"] == draft.get_absolute_url()
    draft.refresh_from_db()
    assert draft.state == State.IN_REVIEW


def test_an_unready_draft_offers_the_form_not_the_button(logged_in, registrant):
    draft = make_registration(registrant, nid="halfdraft", submit=False, purpose="")
    doc = page(logged_in.get(draft.get_absolute_url()))
    assert not find(doc, "//*[@id='actions']//button[@value='submit']")
    assert links(doc, "//*[@id='actions']//a") == [reverse("review:edit", args=[draft.pk])]
