"""A new request's form is one write: created and submitted in one transaction, and the
same form posted again (a retry after a timeout, a double click) makes nothing more."""

import threading
import uuid

import pytest
from django.db import connection
from django.urls import reverse

from registry.review import actions, workflow
from registry.review.models import RegistrationRequest, RequestEvent, State
from tests.factories import complete_values
from tests.html import one, page
from tests.review.helpers import sent_summaries
from tests.review.test_request_form import form_data


@pytest.fixture
def logged_in(client, registrant):
    client.force_login(registrant)
    return client


def form_token(client) -> str:
    doc = page(client.get(reverse("review:new")))
    return one(doc, "//form//input[@type='hidden'][@name='form_token']").get("value")


def test_each_render_of_a_new_form_has_its_own_token(logged_in):
    tokens = {form_token(logged_in) for _ in range(3)}
    assert len(tokens) == 3 and all(uuid.UUID(token) for token in tokens)


def test_the_same_submit_posted_twice_makes_one_request(logged_in, registrant, expert,
                                                        mailoutbox,
                                                        django_capture_on_commit_callbacks):
    data = form_data(submit="1", form_token=form_token(logged_in))
    with django_capture_on_commit_callbacks(execute=True):
        first = logged_in.post(reverse("review:new"), data)
    mailed = sent_summaries(mailoutbox)
    with django_capture_on_commit_callbacks(execute=True):
        again = logged_in.post(reverse("review:new"), data)
    registration = RegistrationRequest.objects.get(registrant=registrant)
    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"] == registration.get_absolute_url()
    assert registration.state == State.IN_REVIEW
    kinds = list(RequestEvent.objects.filter(registration=registration)
                 .values_list("kind", flat=True).order_by("pk"))
    assert kinds.count(RequestEvent.Kind.CREATE) == 1 and len(kinds) == 2
    assert sent_summaries(mailoutbox) == mailed and len(mailed) == 2  # no mail twice


def test_the_same_draft_posted_twice_makes_one_draft(logged_in, registrant):
    data = form_data(save="1", form_token=form_token(logged_in))
    first = logged_in.post(reverse("review:new"), data)
    again = logged_in.post(reverse("review:new"), data)
    registration = RegistrationRequest.objects.get(registrant=registrant)
    assert first["Location"] == again["Location"] == reverse("review:edit",
                                                             args=[registration.pk])
    assert registration.state == State.DRAFT


def test_another_registrants_token_makes_their_own_request(client, registrant,
                                                           other_registrant):
    client.force_login(registrant)
    token = form_token(client)
    client.post(reverse("review:new"), form_data(save="1", form_token=token))
    client.force_login(other_registrant)
    client.post(reverse("review:new"), form_data(save="1", form_token=token,
                                                 proposed_nid="othernid"))
    assert RegistrationRequest.objects.of(other_registrant).count() == 1
    assert RegistrationRequest.objects.of(registrant).count() == 1


def test_a_refused_submission_leaves_no_stray_draft(logged_in, registrant, monkeypatch):
    def refuse(registration, name, user, **kwargs):
        raise workflow.TransitionRefused("Submissions are closed for a moment.")

    monkeypatch.setattr(actions.registrations, "enforce_transition", refuse)
    token = form_token(logged_in)
    response = logged_in.post(reverse("review:new"), form_data(submit="1", form_token=token))
    assert response.status_code == 409
    assert not RegistrationRequest.objects.exists()  # created and refused in one transaction
    doc = page(response)  # the typed text is still there, with the same form's token
    assert one(doc, "//input[@name='proposed_nid']").get("value") == "formnid"
    assert one(doc, "//input[@name='form_token']").get("value") == token


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_form_posted_at_once_makes_one_request(registrant):
    token = uuid.uuid4()
    made, errors = [], []

    def post():
        try:
            made.append(actions.registration_create(
                actor=registrant, proposed_nid="raced", values=complete_values(registrant),
                form_token=token, submit=True).pk)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(made)) == 1 and RegistrationRequest.objects.count() == 1
