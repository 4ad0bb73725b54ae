"""Failed log-ins counted per account and address together (registry/accounts/throttle.py):
an attacker is held off, and nobody can lock an expert out from elsewhere."""

import re

import pytest
from django.core.cache import cache
from django.test import Client

from tests.factories import PASSWORD
from tests.html import page, texts

OWNER = "203.0.113.10"
REFUSAL = "//main//form//*[contains(@class, 'alert-danger')]"


@pytest.fixture(autouse=True)
def _fresh_counts():
    cache.clear()
    yield
    cache.clear()


def log_in(email, password, address):
    """A log-in from ``address`` (a browser of its own there): whether it signed in,
    and the form's refusal."""
    client = Client(REMOTE_ADDR=address)
    response = client.post("/accounts/login/", {"login": email, "password": password})
    return "_auth_user_id" in client.session, " ".join(texts(page(response), REFUSAL)) \
        if response.status_code == 200 else ""


def test_wrong_passwords_from_elsewhere_never_stop_the_owner(expert):
    # From one other address, then from five: the account's own count is the owner's.
    for _ in range(5):
        assert log_in(expert.email, "wrong", "198.51.100.1")[0] is False
    for n in range(2, 7):
        assert log_in(expert.email, "wrong", f"198.51.100.{n}")[0] is False
    assert log_in(expert.email, PASSWORD, OWNER) == (True, "")


def test_one_address_guessing_one_account_is_held_off(expert, registrant):
    for _ in range(5):
        assert log_in(expert.email, "wrong", "198.51.100.1")[0] is False
    signed_in, refusal = log_in(expert.email, PASSWORD, "198.51.100.1")
    assert not signed_in and "Too many failed log-ins from this address" in refusal
    # Another account from that address is not this account's count.
    assert log_in(registrant.email, PASSWORD, "198.51.100.1") == (True, "")


def test_one_address_trying_many_accounts_is_held_off(db):
    for n in range(10):
        log_in(f"nobody{n}@example.org", "wrong", "198.51.100.1")
    signed_in, refusal = log_in("nobody10@example.org", "wrong", "198.51.100.1")
    assert "Too many failed log-ins from this address" in refusal


def test_the_per_account_ceiling_spares_addresses_the_account_knows(expert, settings):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS,
                                    "login_failed_account": "3/h/key"}
    assert log_in(expert.email, PASSWORD, OWNER) == (True, "")  # the owner's address, known
    for n in range(1, 4):  # a crowd of addresses, one guess each
        log_in(expert.email, "wrong", f"198.51.100.{n}")
    signed_in, refusal = log_in(expert.email, PASSWORD, "192.0.2.77")
    assert not signed_in and "for this account from elsewhere" in refusal
    assert log_in(expert.email, PASSWORD, OWNER) == (True, "")


def test_a_password_reset_makes_the_address_one_the_account_knows(expert, settings, mailoutbox):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS,
                                    "login_failed_account": "3/h/key"}
    for n in range(1, 4):
        log_in(expert.email, "wrong", f"198.51.100.{n}")
    travelling = Client(REMOTE_ADDR="192.0.2.77")
    travelling.post("/accounts/password/reset/", {"email": expert.email})
    link = re.search(re.escape(settings.SITE_URL.rstrip("/")) + r"(/accounts/\S+)",
                     mailoutbox[-1].body).group(1)
    form = travelling.get(link, follow=True)
    travelling.post(form.redirect_chain[-1][0] if form.redirect_chain else link,
                    {"password1": "a new one, 8141 and more", "password2":
                     "a new one, 8141 and more"})
    assert log_in(expert.email, "a new one, 8141 and more", "192.0.2.77") == (True, "")

