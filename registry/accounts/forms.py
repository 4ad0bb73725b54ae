"""Forms for people: the sign-up form's name and organisation, and the IANA staff
forms on a person's page (each with the reason the account's history keeps)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest

from registry.accounts.models import User

REASON_HELP = "Kept in the account's history with your name."


class SignupForm(forms.Form):
    """allauth's sign-up form asks this too (ACCOUNT_SIGNUP_FORM_CLASS): people have names."""

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


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text=REASON_HELP)


class ProfileForm(forms.ModelForm):
    reason = forms.CharField(max_length=2000, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}), help_text=REASON_HELP)

    class Meta:
        model = User
        fields = ("first_name", "last_name", "organisation", "is_active")
        labels = {"is_active": "Account active (can log in)"}

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        if self.changed_data and not (data.get("reason") or "").strip():
            self.add_error("reason", "Say why; the reason is kept in the account's history.")
        return data


class HolderForm(forms.Form):
    nid = forms.CharField(max_length=64, label="Namespace (NID)",
                          help_text="A registered namespace this person will hold: they may "
                                    "then request its new versions.")
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Kept in the namespace's public history with your name.")

    def clean_nid(self) -> Any:
        from registry.namespaces.models import Namespace

        nid = self.cleaned_data["nid"].strip()
        namespace = Namespace.objects.by_nid(nid).first()
        if namespace is None:
            raise forms.ValidationError(f'"{nid}" is not a registered NID.')
        return namespace
