"""Forms of the registry: the public search box, and IANA staff's forms for the
registry row and a namespace's status, shared by the staff pages and the admin. The
staff forms check values through the actions' own rules (``validate_record``,
``replacement_namespace``), so an error shows at its field; every form follows the
text policy."""


from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth import get_user_model

from registry.namespaces import xrefs
from registry.namespaces.actions import (
    STAFF_FIELDS,
    RecordInvalid,
    RegistryError,
    reason_refusal,
    replacement_namespace,
    validate_record,
)
from registry.namespaces.models import Namespace
from registry.text_policy import TextPolicyForm

SEARCH_MAX_CHARS = 200

REASON_HELP = "Kept in the namespace's public history with your name."


class AccountField(forms.CharField):
    """An account, typed as its email address ("" for none)."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, int):
            user = get_user_model().objects.filter(pk=value).first()
            return user.email if user else ""
        return getattr(value, "email", value)

    def clean(self, value: Any) -> Any:
        text = super().clean(value).strip()
        if not text:
            return None
        user = get_user_model().objects.filter(email__iexact=text).first()
        if user is None:
            raise forms.ValidationError(f"No account has the address {text}; the holder "
                                        "signs up first.")
        return user

    def has_changed(self, initial: Any, data: Any) -> bool:
        before = self.prepare_value(initial) or ""
        return before.lower() != (data or "").strip().lower()


class ReferencesField(forms.CharField):
    """The registry's references, typed as IANA types them, edited as labels one per line."""

    widget = forms.Textarea(attrs={"rows": 3})

    @staticmethod
    def lines(text: str) -> list[str]:
        return [line.strip() for line in text.splitlines() if line.strip()]

    @staticmethod
    def labels(value: Any) -> list[str]:
        return [xrefs.label(cast(xrefs.Xref, v)) if isinstance(v, dict) else str(v)
                for v in (value or [])]

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(self.labels(value)) if isinstance(value, list) else value

    def clean(self, value: Any) -> list[Any]:
        return [xrefs.from_label(line) for line in self.lines(super().clean(value))]

    def has_changed(self, initial: Any, data: Any) -> bool:
        return self.labels(initial) != self.lines(data or "")


class SearchForm(TextPolicyForm, forms.Form):
    q = forms.CharField(label="Search", required=False, max_length=SEARCH_MAX_CHARS)


class RecordForm(TextPolicyForm, forms.ModelForm):
    """The registry row IANA staff keep, with the reason for a change."""

    holder = AccountField(required=False, label="Holder (account email)", max_length=254,
                          help_text="The account that may request new versions; empty for "
                                    "none.")
    references = ReferencesField(required=False, max_length=5000,
                                 help_text="One per line: RFC5279, RFC Errata 3188, or "
                                           "Name &lt;https://…&gt;.")
    template_url = forms.URLField(required=False, max_length=200, assume_scheme="https",
                                  label="Template URL",
                                  help_text="Where IANA publishes the template, when its "
                                            "text is not held here.")
    reason = forms.CharField(max_length=2000, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text=REASON_HELP)

    class Meta:
        model = Namespace
        fields = list(STAFF_FIELDS)
        widgets = {
            "registered_on": forms.DateInput(attrs={"type": "date"}),
            "template_date": forms.DateInput(attrs={"type": "date"}),
            "registry_note": forms.Textarea(attrs={"rows": 2}),
        }

    def changes(self) -> dict[str, object]:
        return {name: self.cleaned_data[name] for name in self.changed_data
                if name in STAFF_FIELDS and name in self.cleaned_data}

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        changes = self.changes()
        try:
            validate_record(changes)
        except RecordInvalid as exc:
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
        except RegistryError as exc:
            self.add_error(None, str(exc))
        if changes and (problem := reason_refusal(data.get("reason", ""))) is not None:
            self.add_error("reason", str(problem))
        return data


class DeprecateForm(TextPolicyForm, forms.Form):
    replaced_by = forms.CharField(
        required=False, max_length=64, label="Replaced by (NID)",
        help_text="A registered NID to use instead, if there is one.",
    )
    comment = forms.CharField(label="Why, and what to use instead", max_length=5000,
                              widget=forms.Textarea(attrs={"rows": 3}), help_text=REASON_HELP)

    def __init__(self, *args: Any, namespace: Namespace | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.namespace = namespace

    def clean_replaced_by(self) -> str:
        nid = self.cleaned_data["replaced_by"].strip()
        if nid and self.namespace is not None:
            try:
                replacement_namespace(self.namespace, nid)
            except RecordInvalid as exc:
                raise forms.ValidationError(str(exc)) from None
        elif nid and not Namespace.objects.by_nid(nid).exists():
            raise forms.ValidationError(f'"{nid}" is not a registered NID.')
        return nid


class ReinstateForm(TextPolicyForm, forms.Form):
    comment = forms.CharField(label="Why it is reinstated", max_length=5000,
                              widget=forms.Textarea(attrs={"rows": 3}), help_text=REASON_HELP)
