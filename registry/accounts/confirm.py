"""The address confirmation link, opened again: allauth answers a link whose address
is confirmed already as "expired or invalid", which alarms the person who just
confirmed it. The link's key says which address it was for (signed: only the one who
holds the link has it), so the page can say it is confirmed already and offer to sign
in. Nothing else of allauth's view changes."""

from __future__ import annotations

from typing import Any

from allauth.account import app_settings as allauth_settings
from allauth.account.models import EmailAddress
from allauth.account.views import ConfirmEmailView
from django.core import signing
from django.http import Http404, HttpResponse


def already_confirmed(key: str) -> bool:
    """Whether ``key`` (a confirmation link's) is for an address confirmed already."""
    try:
        pk = signing.loads(key, salt=allauth_settings.SALT)
    except signing.BadSignature:
        return False
    return isinstance(pk, int) and EmailAddress.objects.filter(pk=pk, verified=True).exists()


class RegistryConfirmEmailView(ConfirmEmailView):
    def post(self, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().post(*args, **kwargs)
        except Http404:
            if not already_confirmed(self.kwargs["key"]):
                raise
            # The button pressed a second time (or on a page left open): no error.
            self.object = None
            return self.render_to_response(self.get_context_data())

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["already_confirmed"] = (not self.object
                                        and already_confirmed(self.kwargs["key"]))
        return context


confirm_email = RegistryConfirmEmailView.as_view()
