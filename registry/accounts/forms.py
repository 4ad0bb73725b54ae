"""allauth's account forms with the registry's text policy on every text field.

Passwords are left alone: they are never shown or published, and refusing a
character there would only lock people out of an account they already have."""

from __future__ import annotations

from allauth.account import forms as allauth_forms

from registry.text_policy import TextPolicyForm


class LoginForm(TextPolicyForm, allauth_forms.LoginForm):
    pass


class SignupForm(TextPolicyForm, allauth_forms.SignupForm):
    pass


class AddEmailForm(TextPolicyForm, allauth_forms.AddEmailForm):
    pass


class ResetPasswordForm(TextPolicyForm, allauth_forms.ResetPasswordForm):
    pass

