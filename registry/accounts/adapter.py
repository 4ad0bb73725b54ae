"""allauth, the registry's way: mail names the registry and links to SITE_URL (never
to the Host a request named: a forged Host must not put an attacker's address in a
password-reset or verification link), people land on their own queue after
logging in, and failed log-ins are counted per account and address together
(registry/accounts/throttle.py), the address being registry.proxies.client_key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context
from allauth.core.internal import ratelimit  # allauth's adapter's own (usage rolls back)
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import resolve_url
from django.urls import reverse

from registry.accounts import throttle
from registry.accounts.mail import account_mail_queue
from registry.accounts.roles import home_url_name
from registry.proxies import client_key


@dataclass(frozen=True)
class RegistrySite:
    """What allauth's mail calls ``current_site``: the registry's name and address."""

    name: str
    domain: str


# The links allauth's flows build from the request's Host and hand to send_mail, by
# mail template: the context name and the URL name it stands for.
REQUEST_BUILT_LINKS: dict[str, dict[str, str]] = {
    "account/email/account_already_exists": {"signup_url": "account_signup",
                                             "password_reset_url": "account_reset_password"},
    "account/email/unknown_account": {"signup_url": "account_signup"},
}


def site_link(path: str) -> str:
    """An absolute link to ``path`` on the registry's public address (SITE_URL)."""
    return settings.SITE_URL.rstrip("/") + "/" + path.lstrip("/")


def _login(credentials: dict[str, Any]) -> str:
    return str(credentials.get("email", credentials.get("username", ""))).lower()


class RegistryAccountAdapter(DefaultAccountAdapter):
    error_messages = {
        **DefaultAccountAdapter.error_messages,
        "too_many_login_attempts": "Too many failed log-ins from this address. Wait a few "
                                   "minutes and try again, or reset your password.",
        "too_many_login_attempts_account": (
            "Too many failed log-ins for this account from elsewhere in the last hour. Log "
            "in from a device you have used before, or reset your password."),
    }

    def get_client_ip(self, request: HttpRequest) -> str:
        """What allauth's rate limits count per: the client's address, an IPv6 one as
        its /64 (registry/proxies.py)."""
        key = client_key(request)
        if not key:
            raise PermissionDenied("Unable to determine client IP address")
        return key

    def _get_login_attempts_cache_key(self, request: HttpRequest, **credentials: Any) -> str:
        """allauth's per-"key" count of failed log-ins (``5/5m/key``): per account AND
        address, so failures from elsewhere never block the owner's address. (Also the
        count a password reset clears: the resetter's own.)"""
        return f"{_login(credentials)}|{client_key(request)}"

    def pre_authenticate(self, request: HttpRequest, **credentials: Any) -> None:
        super().pre_authenticate(request, **credentials)
        self._ceiling_usage = None
        login = _login(credentials)
        if throttle.is_known_address(login, client_key(request)):
            return
        self._ceiling_usage = ratelimit.consume(request, app="allauth.account",
                                                action=throttle.CEILING_ACTION, key=login)
        if not self._ceiling_usage:
            self._rollback_login_failed_rl_usage()
            raise self.validation_error("too_many_login_attempts_account")

    def authenticate(self, request: HttpRequest, **credentials: Any) -> Any:
        user = super().authenticate(request, **credentials)
        if user is not None:
            ceiling = getattr(self, "_ceiling_usage", None)
            if ceiling:
                ceiling.rollback()
            throttle.remember_address(_login(credentials), client_key(request))
        return user

    def _delete_login_attempts_cached_email(self, request: HttpRequest,
                                            **credentials: Any) -> None:
        """After a password reset (the mailbox proven): the resetter's count is cleared
        and their address is one the account knows, past the per-account ceiling."""
        super()._delete_login_attempts_cached_email(request, **credentials)
        throttle.remember_address(_login(credentials), client_key(request))

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        return resolve_url(home_url_name(request.user))

    def get_email_confirmation_url(self, request: HttpRequest | None,
                                   emailconfirmation: Any) -> str:
        return site_link(reverse("account_confirm_email", args=[emailconfirmation.key]))

    def get_reset_password_from_key_url(self, key: str) -> str:
        path = reverse("account_reset_password_from_key", kwargs={"uidb36": "UID", "key": "KEY"})
        return site_link(path.replace("UID-KEY", quote(key)))

    def send_mail(self, template_prefix: str, email: str, ctx: dict[str, Any]) -> None:
        site = RegistrySite(name=settings.SITE_NAME,
                            domain=urlsplit(settings.SITE_URL).netloc)
        message = self.render_mail(template_prefix, email, {
            "request": context.request, "email": email, "current_site": site,
            "site_url": site_link("/"), **ctx,
            # allauth builds these from the request; the registry's address replaces them.
            **{name: site_link(reverse(url_name))
               for name, url_name in REQUEST_BUILT_LINKS.get(template_prefix, {}).items()},
        })
        # Written to the outbox and sent by the worker after commit: a slow or stalled
        # SMTP relay never holds this request (registry/accounts/mail.py).
        account_mail_queue(message, template=template_prefix)


def user_display(user: Any) -> str:
    """How allauth's pages and mail name a person (ACCOUNT_USER_DISPLAY)."""
    return str(user.display_name)
