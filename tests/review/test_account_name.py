"""An account's name is public only where its owner acts in public under it: as a
registrant they publish the template's Registrant, so the list posting, the public
timeline, the public review and the namespace's review record name that (or "the
registrant"), never the account's own name (workflow.public_name)."""

import pytest
from django.urls import reverse

from registry.review import actions, workflow
from registry.review.models import Comment
from tests.factories import approve, make_registration, make_user
from tests.html import page, text

NAME = ("Priya", "Personal")


@pytest.fixture
def priya(db):
    person = make_user("priya@home.example")
    person.first_name, person.last_name = NAME
    person.save(update_fields=["first_name", "last_name"])
    return person


def _public_text(client, url) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return text(page(response))


def test_the_registrants_account_name_reaches_no_public_channel(
        client, priya, expert, staff, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        registration = make_registration(priya, nid="priyans",
                                         registrant_organisation="Quiet Archive",
                                         contact_name="URN desk")
        actions.registration_comment(registration=registration, actor=priya,
                                     body="Happy to answer questions.",
                                     audience=Comment.Audience.PUBLIC)
        approve(registration, expert, staff, register=True)
    name = " ".join(NAME)
    assert mailoutbox
    for message in mailoutbox:  # her own mail greets her by her name
        if priya.email not in message.recipients():
            assert name not in message.message().as_string(), message.subject
    listing = next(m for m in mailoutbox if "asks for the registration" in m.body)
    assert "Quiet Archive asks for the registration" in listing.body
    for url in (registration.get_absolute_url(), reverse("review:public-review"),
                reverse("namespaces:detail", args=["priyans"]), reverse("namespaces:feed")):
        assert name not in client.get(url).content.decode(), url
    shown = _public_text(client, registration.get_absolute_url())
    assert f"Request #{registration.pk} by Quiet Archive" in shown
    assert workflow.public_name(priya, registration) == "Quiet Archive"
    assert workflow.public_name(expert, registration) == expert.display_name


def test_a_registrant_who_published_no_organisation_is_the_registrant(priya):
    registration = make_registration(priya, nid="anonns", submit=False)
    assert workflow.registrant_label(registration) == "the registrant"


@pytest.mark.parametrize("viewer, sees", [("priya", True), ("staff", True),
                                          ("expert", False), ("registrant", False)])
def test_who_may_read_an_account_name(request, priya, viewer, sees):
    assert workflow.can_see_account_name(priya, request.getfixturevalue(viewer)) == sees


@pytest.mark.parametrize("viewer", ["priya", "staff", "expert", "registrant"])
def test_the_pages_show_an_account_name_exactly_to_whom_the_policy_lets_read_it(
        client, request, priya, expert, staff, viewer):
    """can_see_account_name is the policy's statement; the pages answer it through
    public_name, the staff pages' gate and the visitor's own navigation. Here both
    ways on the pages that could name her (the canary crawl holds "never beyond it"
    on every page)."""
    registration = make_registration(priya, nid="priyans", registrant_organisation="Quiet Archive")
    actions.registration_comment(registration=registration, actor=priya, body="Ask me.",
                                 audience=Comment.Audience.PUBLIC)
    person = request.getfixturevalue(viewer)
    client.force_login(person)
    urls = (registration.get_absolute_url(), reverse("review:public-review"),
            reverse("accounts:account", args=[priya.pk]), "/")
    shown = [url for url in urls if " ".join(NAME) in client.get(url).content.decode()]
    assert bool(shown) == workflow.can_see_account_name(priya, person), shown
