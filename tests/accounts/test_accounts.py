"""Sign-up with email verification, log-in, log-out, reset, throttling, roles and the
navigation each role is offered."""

import re

import lxml.html
import pytest
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from registry.accounts.models import User
from registry.review import workflow
from tests.factories import PASSWORD
from tests.html import links, one, page, text, texts

USER_MENU = "//nav[@aria-label='Main']//ul[@aria-labelledby='who']"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


def link_in(message):
    """The path of the account link in ``message`` (on SITE_URL, where every link points)."""
    return re.search(re.escape(settings.SITE_URL.rstrip("/")) + r"(/accounts/\S+)",
                     message.body).group(1)


def test_sign_up_needs_email_verification(client, db, mailoutbox):
    response = client.post("/accounts/signup/", {
        "email": "new@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "Nora", "last_name": "New", "organisation": "New Standards Body"})
    assert response.status_code == 302
    assert len(mailoutbox) == 1 and "new@example.org" in mailoutbox[0].to
    # Not verified yet: logging in sends the person back to verification.
    client.logout()
    response = client.post("/accounts/login/", {"login": "new@example.org",
                                                "password": PASSWORD})
    assert "/accounts/confirm-email/" in response["Location"]
    confirm = link_in(mailoutbox[0])
    client.post(confirm)
    response = client.post("/accounts/login/", {"login": "new@example.org",
                                                "password": PASSWORD})
    assert response["Location"] == "/requests/"
    assert User.objects.get(email="new@example.org").username  # generated, never shown


def test_confirming_the_address_after_sign_up_signs_the_person_in(client, db, mailoutbox):
    client.post("/accounts/signup/", {
        "email": "new@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "Nora", "last_name": "New", "organisation": "New Standards Body"})
    assert "_auth_user_id" not in client.session  # not before the address is confirmed
    response = client.post(link_in(mailoutbox[0]))
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(email="new@example.org").pk)
    assert response["Location"] == "/requests/"


def test_a_confirmation_link_opened_elsewhere_signs_no_one_in(client, db, mailoutbox,
                                                              django_user_model):
    from django.test import Client

    client.post("/accounts/signup/", {
        "email": "new@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "Nora", "last_name": "New", "organisation": "New Standards Body"})
    elsewhere = Client()
    elsewhere.post(link_in(mailoutbox[0]))
    assert "_auth_user_id" not in elsewhere.session
    assert django_user_model.objects.get(email="new@example.org").emailaddress_set.get().verified


def test_log_in_and_out(client, registrant):
    response = client.post("/accounts/login/", {"login": registrant.email,
                                                "password": PASSWORD})
    assert response.status_code == 302
    signed_in = page(client.get("/requests/"))
    assert registrant.email in text(one(signed_in, f"{USER_MENU}/li[1]"))
    client.post("/accounts/logout/")
    assert client.get("/requests/").status_code == 302


def test_password_reset_sends_a_link(client, registrant, mailoutbox):
    client.post("/accounts/password/reset/", {"email": registrant.email})
    assert len(mailoutbox) == 1
    assert "/accounts/password/reset/key/" in mailoutbox[0].body


def test_repeated_failed_log_ins_are_throttled(client, registrant, settings):
    for _ in range(5):
        response = client.post("/accounts/login/", {"login": registrant.email,
                                                    "password": "wrong"})
        assert response.status_code == 200
    response = client.post("/accounts/login/", {"login": registrant.email,
                                                "password": PASSWORD})
    [refusal] = texts(page(response), "//main//form//*[contains(@class, 'alert-danger')]")
    assert "Too many failed log-ins from this address" in refusal
    assert "_auth_user_id" not in client.session


# The navigation's links to role pages, each with the workflow's predicate for its page.
ROLE_PAGES = {"review:dashboard": workflow.can_see_dashboard,
              "review:staff-queue": workflow.can_see_staff_queue}


@pytest.mark.parametrize("persona", ["registrant", "standards_body", "expert", "staff"])
def test_the_navigation_links_the_pages_the_workflow_lets_each_persona_see(
        client, request, persona):
    user = request.getfixturevalue(persona)
    assert not user.is_superuser  # a role is its group, as seed_demo gives it
    client.force_login(user)
    for path in ("/", "/requests/"):  # a cached public page, a page rendered per request
        bar = one(page(client.get(path)), "//nav[@aria-label='Main']")
        menu = links(bar, ".//a[@class='nav-link']")
        for name, may_see in ROLE_PAGES.items():
            assert (reverse(name) in menu) == may_see(user), (persona, path, name)
    for name, may_see in ROLE_PAGES.items():
        assert client.get(reverse(name)).status_code == (200 if may_see(user) else 403)


def test_sign_up_asks_name_and_organisation_and_keeps_them(client, db, mailoutbox):
    page = lxml.html.fromstring(client.get("/accounts/signup/").content)
    assert {"first_name", "last_name", "organisation"} <= set(page.xpath("//input/@name"))
    refused = client.post("/accounts/signup/", {
        "email": "nora@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "", "last_name": "New", "organisation": "New Standards Body"})
    page = lxml.html.fromstring(refused.content)
    assert page.xpath("//input[@name='organisation']/@value") == ["New Standards Body"]
    first_name = page.xpath("//input[@name='first_name']")[0]
    assert "is-invalid" in first_name.get("class")
    assert "required" in first_name.getnext().text_content()  # the error at the field
    client.post("/accounts/signup/", {
        "email": "nora@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "Nora", "last_name": "New", "organisation": "New Standards Body"})
    user = User.objects.get(email="nora@example.org")
    assert (user.get_full_name(), user.organisation) == ("Nora New", "New Standards Body")
    assert user.account_events.get().kind == "signed_up"
    body = mailoutbox[-1].body
    assert body.startswith("Hello Nora New,") and "URN Namespace Registry" in body
    assert "Hello from" not in body and "testserver!" not in body
    assert mailoutbox[-1].subject.startswith("[URN Namespace Registry] ")


@pytest.mark.parametrize(("persona", "landing"), [
    ("registrant", "/requests/"), ("expert", "/requests/dashboard/"),
    ("staff", "/requests/iana/"),
])
def test_each_role_lands_on_its_own_page(client, request, persona, landing):
    user = request.getfixturevalue(persona)
    response = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert response["Location"] == landing


def test_navigation_names_who_is_signed_in_and_their_role(client, registrant, expert, staff,
                                                          standards_body):
    for user, role in ((registrant, "registrant"), (expert, "designated expert"),
                       (staff, "IANA staff"), (standards_body, "standards body")):
        client.force_login(user)
        page = lxml.html.fromstring(client.get("/").content)
        who = page.get_element_by_id("who")
        assert user.get_full_name() in who.text_content()
        assert who.xpath(".//*[@data-role]")[0].text_content() == role


def test_no_one_can_claim_an_address_they_have_not_verified(client, registrant, mailoutbox):
    """Account pre-hijacking: an attacker adds a future victim's address to their own
    account; the victim's sign-up and password reset must never lead into it."""
    from allauth.account.models import EmailAddress

    victim = "future-victim@example.org"
    client.force_login(registrant)
    client.post("/accounts/email/", {"email": victim, "action_add": ""})
    assert not EmailAddress.objects.filter(email__iexact=victim).exists()
    assert mailoutbox == []  # nothing even asks the victim to confirm the attacker's claim
    client.logout()

    # The victim's password reset finds no account, so no link into the attacker's.
    client.post("/accounts/password/reset/", {"email": victim})
    assert all("/accounts/password/reset/key/" not in m.body for m in mailoutbox)

    # The victim's sign-up makes the victim's own account.
    mailoutbox.clear()
    client.post("/accounts/signup/", {"email": victim, "password1": PASSWORD,
                                      "password2": PASSWORD, "first_name": "Vic"})
    account = User.objects.get(email=victim)
    assert account.pk != registrant.pk
    client.post(link_in(mailoutbox[0]))
    assert EmailAddress.objects.get(email=victim).user_id == account.pk
    response = client.post("/accounts/login/", {"login": victim, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/requests/").wsgi_request.user.pk == account.pk


@pytest.mark.parametrize("email", ["new\u202e@example.org", "pat@\u202egro.live",
                                   "bell\x07@example.org"])
def test_account_fields_follow_the_text_policy(client, db, email):
    response = client.post("/accounts/signup/", {"email": email, "password1": PASSWORD,
                                                 "password2": PASSWORD})
    assert response.status_code == 200
    assert not User.objects.filter(email=email).exists()
    import lxml.html

    doc = lxml.html.fromstring(response.content)
    field = doc.get_element_by_id("id_email")
    assert field.get("value") == email.replace("\x07", "\ufffd") or "\x07" in email


URL = re.compile(r"https?://[^\s<>\"]+")


def test_every_account_mail_links_to_site_url_whatever_the_host(client, registrant, settings,
                                                                mailoutbox):
    """A forged Host must not put its address in a verification or password-reset link
    (password-reset poisoning): every link of every account mail is on SITE_URL."""
    settings.SITE_URL = "https://urn.example.org"
    settings.ALLOWED_HOSTS = ["testserver", "attacker.example"]
    host = {"HTTP_HOST": "attacker.example"}
    client.post("/accounts/password/reset/", {"email": registrant.email}, **host)
    client.post("/accounts/password/reset/", {"email": "nobody@example.org"}, **host)
    for email in ("new@example.org", registrant.email):  # a new address, a taken one
        client.post("/accounts/signup/", {"email": email, "password1": PASSWORD,
                                          "password2": PASSWORD, "first_name": "Nora"}, **host)
    assert len(mailoutbox) == 4
    found = [url for message in mailoutbox for url in URL.findall(message.body)]
    assert any("/accounts/password/reset/key/" in url for url in found)
    assert any("/accounts/confirm-email/" in url for url in found)
    assert found and all(url.startswith("https://urn.example.org/") for url in found), found
    assert all("attacker.example" not in message.body for message in mailoutbox)


def test_sign_up_takes_as_long_for_a_taken_address_as_for_a_new_one(client, registrant,
                                                                     monkeypatch):
    """The answer is the same page either way; the work is the same too (the password is
    hashed for a taken address as for a new account), so the delay tells nothing."""
    from django.contrib.auth.hashers import get_hasher

    hasher = type(get_hasher("default"))
    hashed = []
    encode = hasher.encode
    monkeypatch.setattr(hasher, "encode",
                        lambda self, *a, **k: hashed.append(1) or encode(self, *a, **k))
    answers = []
    for email in ("new@example.org", registrant.email):
        hashed.clear()
        response = client.post("/accounts/signup/", {
            "email": email, "password1": PASSWORD, "password2": PASSWORD, "first_name": "N"})
        answers.append((response.status_code, response["Location"], len(hashed)))
    assert answers[0] == answers[1]
    assert answers[0][2] >= 1


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_confirmation_link_opened_again_says_it_is_confirmed_already(client, db, mailoutbox,
                                                                       method):
    client.post("/accounts/signup/", {
        "email": "twice@example.org", "password1": PASSWORD, "password2": PASSWORD,
        "first_name": "Tess", "last_name": "Twice", "organisation": ""})
    confirm = link_in(mailoutbox[0])
    assert client.post(confirm).status_code == 302
    for who in (client, client.__class__()):  # signed in now, or in another browser
        response = getattr(who, method)(confirm)
        assert response.status_code == 200
        doc = page(response)
        said = text(one(doc, "//main//*[@data-already-confirmed]"))
        assert said.startswith("This address is confirmed already")
        assert "expired or is invalid" not in text(one(doc, "//main"))
    # A link that never was one is still refused as before.
    forged = confirm.rstrip("/")[:-3] + "xyz/"
    assert "expired or is invalid" in text(one(page(client.get(forged)), "//main"))
