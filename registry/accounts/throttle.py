"""Failed log-ins, counted so that nobody can lock a person out from elsewhere.

allauth counts failed log-ins before it checks the password (ACCOUNT_RATE_LIMITS's
``login_failed``), and the registry's adapter (registry/accounts/adapter.py) decides
what it counts per:

- ``10/m/ip``: one address (an IPv6 /64: registry.proxies.client_key) trying many
  accounts;
- ``5/5m/key``, the key being the account *and* the address together: one address
  guessing one account's password gets 5 tries, then one a minute. Wrong passwords
  from anywhere else leave the owner's own count alone, so they never stop the owner
  typing the right one;
- ``login_failed_account`` (``LOGIN_ACCOUNT_CEILING``, 50 an hour): one account's
  failures from every address that has never signed in to it, a ceiling on guessing
  from many addresses at once. It is no lock-out tool: an address the account signed
  in from (or reset its password from) in the last ``KNOWN_DAYS`` is not subject to it,
  so its owner signs in as usual while a crowd of addresses is held off.

A successful log-in gives back what it counted (allauth rolls its usage back) and
remembers the address for the account, in the default cache (Redis in production, which
never evicts): one entry per account and address that actually signed in.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

KNOWN_DAYS = 90
CEILING_ACTION = "login_failed_account"


def _known_key(login: str, client: str) -> str:
    digest = hashlib.sha256(f"{login.lower()}\n{client}".encode()).hexdigest()[:40]
    return f"login-known:{digest}"


def is_known_address(login: str, client: str) -> bool:
    """Has the account of ``login`` signed in from ``client`` (a client_key) lately?"""
    return bool(client) and cache.get(_known_key(login, client)) is not None


def remember_address(login: str, client: str) -> None:
    if client:
        cache.set(_known_key(login, client), 1, KNOWN_DAYS * 24 * 60 * 60)
