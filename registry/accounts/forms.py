"""allauth's account forms with the registry's text policy on every text field, and
the IANA staff forms of a person's page (each with the reason the account's history
keeps).

Passwords are left alone: they are never shown or published, and refusing a
character there would only lock people out of an account they already have."""

from __future__ import annotations

from typing import Any

from allauth.account import forms as allauth_forms
from django import forms
from django.contrib.auth.hashers import make_password
from django.http import HttpRequest

from registry.accounts import actions
from registry.accounts.actions import PROFILE_FIELDS
from registry.accounts.models import User
from registry.text_policy import TextPolicyForm


class LoginForm(TextPolicyForm, allauth_forms.LoginForm):
    pass


class SignupForm(TextPolicyForm, allauth_forms.SignupForm):
    def try_save(self, request: HttpRequest) -> tuple[Any, Any]:
        """An address that has an account gets the same answer as a new one (allauth
        mails its owner instead); it takes the same time too, so the answer's delay
        does not tell whether the address is registered: a new account's cost is
        hashing its password, so the password is hashed here as well (and dropped)."""
        if self.account_already_exists:
            make_password(self.cleaned_data.get("password1") or "")
        return super().try_save(request)


class AddEmailForm(TextPolicyForm, allauth_forms.AddEmailForm):
    pass


class ResetPasswordForm(TextPolicyForm, allauth_forms.ResetPasswordForm):
    pass


REASON_HELP = "Kept in the account's history with your name."


class ReasonForm(TextPolicyForm, forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text=REASON_HELP)


class ProfileForm(TextPolicyForm, forms.ModelForm):
    reason = forms.CharField(max_length=2000, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}), help_text=REASON_HELP)

    class Meta:
        model = User
        fields = PROFILE_FIELDS  # what user_update_profile corrects
        labels = {"is_active": "Account active (can log in)"}

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        if self.changed_data and (problem := actions.reason_refusal(data.get("reason", ""))):
            self.add_error("reason", str(problem))
        return data


class HolderForm(TextPolicyForm, forms.Form):
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


MAX_OPEN_ASSIGNMENTS = 99


class AvailabilityForm(forms.Form):
    """A designated expert's own availability (registry.accounts.actions
    .expert_set_availability): away until a day, and the most open requests at a time."""

    unavailable_until = forms.DateField(
        label=User._meta.get_field("unavailable_until").verbose_name.capitalize(),
        required=False, widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        help_text=User._meta.get_field("unavailable_until").help_text)
    max_open_assignments = forms.IntegerField(
        label=User._meta.get_field("max_open_assignments").verbose_name.capitalize(),
        required=False, min_value=1, max_value=MAX_OPEN_ASSIGNMENTS,
        help_text=User._meta.get_field("max_open_assignments").help_text)

    def __init__(self, *args: Any, today: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.today = today

    def clean_unavailable_until(self) -> Any:
        day = self.cleaned_data["unavailable_until"]
        if day is not None and day < self.today:
            raise forms.ValidationError(
                f"That day has passed; choose {self.today:%Y-%m-%d} or later, or leave it empty "
                "when you are available.")
        return day
