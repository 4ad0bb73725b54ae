"""allauth, the registry's way: mail names the registry and links to SITE_URL (never
to the Host a request named: a forged Host must not put an attacker's address in a
password-reset or verification link), and people land on their own queue after
logging in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context
from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import resolve_url
from django.urls import reverse

from registry.accounts.roles import home_url_name


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


class RegistryAccountAdapter(DefaultAccountAdapter):
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
        message.send()


def user_display(user: Any) -> str:
    """How allauth's pages and mail name a person (ACCOUNT_USER_DISPLAY)."""
    return str(user.display_name)
