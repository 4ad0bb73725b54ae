"""Forms of the public pages: the search box."""

from __future__ import annotations

from django import forms

from registry.text_policy import TextPolicyForm

SEARCH_MAX_CHARS = 200


class SearchForm(TextPolicyForm, forms.Form):
    q = forms.CharField(label="Search", required=False, max_length=SEARCH_MAX_CHARS)
