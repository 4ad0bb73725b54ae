"""allauth, the registry's way: mail names the registry (not the host it runs on),
and people land on their own queue after logging in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context
from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import resolve_url

from registry.accounts.roles import home_url_name


@dataclass(frozen=True)
class RegistrySite:
    """What allauth's mail calls ``current_site``: the registry's name and address."""

    name: str
    domain: str


class RegistryAccountAdapter(DefaultAccountAdapter):
    def get_login_redirect_url(self, request: HttpRequest) -> str:
        return resolve_url(home_url_name(request.user))

    def send_mail(self, template_prefix: str, email: str, ctx: dict[str, Any]) -> None:
        request = context.request
        site = RegistrySite(name=settings.SITE_NAME,
                            domain=request.get_host() if request is not None else "")
        message = self.render_mail(template_prefix, email, {
            "request": request, "email": email, "current_site": site,
            "site_url": request.build_absolute_uri("/") if request is not None else "",
            **ctx,
        })
        message.send()


def user_display(user: Any) -> str:
    """How allauth's pages and mail name a person (ACCOUNT_USER_DISPLAY)."""
    return str(user.display_name)
