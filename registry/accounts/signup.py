"""What sign-up asks besides the address and password: the person's name and
organisation (ACCOUNT_SIGNUP_FORM_CLASS, the base of allauth's sign-up form). This
module must not import allauth's forms, which import it."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest

from registry.accounts.models import User


class SignupDetailsForm(forms.Form):
    """allauth's sign-up form asks this too (ACCOUNT_SIGNUP_FORM_CLASS): people have names.
    The text policy comes with registry.accounts.forms.SignupForm, which builds on this."""

    first_name = forms.CharField(max_length=150, label="Given name",
                                 widget=forms.TextInput(attrs={"autocomplete": "given-name"}))
    last_name = forms.CharField(max_length=150, label="Family name", required=False,
                                widget=forms.TextInput(attrs={"autocomplete": "family-name"}))
    organisation = forms.CharField(
        max_length=200, required=False,
        widget=forms.TextInput(attrs={"autocomplete": "organization"}),
        help_text="The organisation you register namespaces for; empty if you register as "
                  "an individual. It fills in the registration template for you.",
    )

    field_order = ["first_name", "last_name", "organisation"]

    def signup(self, request: HttpRequest, user: User) -> None:
        from registry.accounts.actions import user_signed_up

        user.first_name = self.cleaned_data["first_name"].strip()
        user.last_name = self.cleaned_data["last_name"].strip()
        user.organisation = self.cleaned_data["organisation"].strip()
        user.save(update_fields=["first_name", "last_name", "organisation"])
        user_signed_up(user=user)
