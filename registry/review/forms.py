"""The Appendix A request form, and the small forms of the review pages."""

from __future__ import annotations

from typing import Any, cast

from crispy_forms.helper import FormHelper
from crispy_forms.layout import HTML, Div, Field, Fieldset, Layout
from django import forms
from django.core.validators import MaxLengthValidator
from django.http import QueryDict

from registry.namespaces.models import Namespace
from registry.namespaces.template import (
    CONTACT_FIELDS,
    FIELD_MAX_CHARS,
    PRIVATE_SECTION,
    PROFILE_FIELD,
    SECTIONS,
    SINGLE_LINE_FIELDS,
    STORED_FIELDS,
    TEXT_FIELDS,
    field_label,
)
from registry.review.models import Comment, RegistrationRequest
from registry.review.workflow.submission import nid_problems, template_problems
from registry.templates_text import (
    MAX_BYTES,
    MAX_TEMPLATES,
    ParsedTemplate,
    TemplateTextError,
    parse_templates,
    several_templates,
)
from registry.templates_text.formats import decode
from registry.text_policy import TextPolicyForm
from urn8141.profiles import ProfileError, profile_problems, read_json

NID_INPUT_MAX = 64  # accept a little more than 32 so the length rule can be explained


class RequestForm(TextPolicyForm, forms.ModelForm):
    """Every Appendix A field, grouped like the template. ``submitting`` makes the
    fields that submission needs required; a draft saves with anything filled."""

    edit_version = forms.IntegerField(widget=forms.HiddenInput)
    # A new request's form: a token new at each render (views.new_registration), so the
    # same form posted twice makes one request (actions.registration_create).
    form_token = forms.UUIDField(required=False, widget=forms.HiddenInput)
    proposed_nid = forms.CharField(
        label="Proposed NID", required=False, max_length=NID_INPUT_MAX,
        help_text=(
            "Formal NIDs: more than two characters, letters, digits and hyphens; not starting "
            'with "urn-", "X-" or two letters and a hyphen (RFC 8141 sections 2.1 and 5.1).'
        ),
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false",
                                      "data-nid-check": "1"}),
    )

    class Meta:
        model = RegistrationRequest
        fields = ["kind", "proposed_nid", "fast_track", *STORED_FIELDS, PROFILE_FIELD]
        widgets = {
            "kind": forms.RadioSelect,
            PROFILE_FIELD: forms.Textarea(attrs={"rows": 12, "class": "font-monospace",
                                                 "spellcheck": "false"}),
            **{name: forms.Textarea(attrs={"rows": 4}) for name in STORED_FIELDS
               if name not in SINGLE_LINE_FIELDS},
        }
        labels = {"kind": "Kind of namespace", "fast_track": "Ask for the fast track",
                  **{c.published: f"Published {field_label(c.published).lower()}"
                     for c in CONTACT_FIELDS}}
        help_texts = {
            "contact_name": "Published in the registry. A role (\u201cURN registrar\u201d) "
                            "outlives staff changes; give the person below, for IANA only.",
            "contact_email": "Published in the registry, where address harvesters read it: a "
                             "role address (such as urn@your-organisation.example) is the "
                             "suggested choice; give a personal one below, for IANA only.",
            "kind": "Formal: you propose the NID. Informal: IANA assigns urn-N at registration "
                    "(RFC 8141 section 5.2).",
            "fast_track": "Only for recognized standards bodies, scientific societies and "
                          "similar bodies (section 6.3); needs a Documentation pointer.",
        }

    def __init__(self, *args, submitting: bool = False, revision: bool = False,
                 registrant=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.submitting = submitting
        self.registrant = registrant
        self.revision = revision
        for name in (*STORED_FIELDS, PROFILE_FIELD):
            field = cast(forms.CharField, self.fields[name])  # the template's text fields
            if not getattr(field, "max_length", None):
                field.max_length = FIELD_MAX_CHARS
                field.validators.append(MaxLengthValidator(FIELD_MAX_CHARS))
        if revision:
            del self.fields["kind"]
            del self.fields["proposed_nid"]
            self.fields["revision_information"].help_text = (
                "Required: describe the differences from the published version (RFC 8141 "
                "section 6.2 says a revision MUST describe them)."
            )
        else:
            del self.fields["revision_information"]  # a first version revises nothing
        self.helper = FormHelper()
        self.helper.form_tag = False
        if self.instance.pk:
            del self.fields["form_token"]  # an existing request is guarded by edit_version
        self.helper.layout = self._layout(revision)

    def _layout(self, revision: bool) -> Layout:
        head = [] if revision else [
            Fieldset("Namespace", "kind",
                     Div(Field("proposed_nid"), HTML(
                         '<div id="nid-status" class="field-status" aria-live="polite" '
                         'aria-atomic="true">'
                         '{% if nid_warnings %}{% include "review/_nid_warnings.html" with '
                         'warnings=nid_warnings %}{% endif %}</div>'), css_id="nid-group"),
                     "fast_track"),
        ]
        if revision:
            head = [Fieldset("Procedure", "fast_track")]
        body = []
        for section in SECTIONS:
            fields = [f for f in section.fields if f in self.fields]
            if not fields:
                continue
            body.append(Fieldset(section.title, *fields))
            if section is SECTIONS[0]:
                body.append(Fieldset(PRIVATE_SECTION.title, *PRIVATE_SECTION.fields))
        body.append(Fieldset("Machine-readable profile (optional)", PROFILE_FIELD))
        tail = ["form_token"] if "form_token" in self.fields else []
        return Layout(*head, *body, "edit_version", *tail)

    def _profile_nid(self) -> str | None:
        """The NID the profile's examples must use (None while it is not known)."""
        if self.revision and self.instance.revises_id:
            return self.instance.revises.nid
        kind = self.data.get(self.add_prefix("kind"), self.initial.get("kind"))
        nid = (self.data.get(self.add_prefix("proposed_nid")) or "").strip()
        return nid if kind == Namespace.Kind.FORMAL and nid else None

    def clean_profile(self):
        """Refuse a profile that is not sound, at the field: an example that fails
        its own syntax, a step or validator outside the closed sets, a resolver that
        is not https. What was typed stays in the field."""
        text = (self.cleaned_data.get(PROFILE_FIELD) or "").strip()
        if not text:
            return ""
        try:
            data = read_json(text)  # bounded: a form's text is hostile until read
        except ProfileError as exc:
            raise forms.ValidationError([message for _, message in exc.problems]) from None
        problems = profile_problems(data, self._profile_nid())
        if problems:
            raise forms.ValidationError([f"{field}: {message}" for field, message in problems])
        return text

    def clean_proposed_nid(self):
        nid = self.cleaned_data.get("proposed_nid", "").strip()
        kind = self.data.get(self.add_prefix("kind"), self.initial.get("kind"))
        if kind != Namespace.Kind.FORMAL or not nid:
            return nid
        problems = nid_problems(nid)
        if problems:
            raise forms.ValidationError(problems)
        return nid

    def clean(self):
        data = super().clean()  # the text policy has normalised newlines already
        if not self.submitting:  # a draft saves whatever is ticked; submission decides
            return data
        # The rules every submission is held to (workflow.submission), each at its field;
        # a field whose own check already refused it keeps that one message.
        problems = template_problems(
            data, kind=data.get("kind", Namespace.Kind.FORMAL),
            proposed_nid=data.get("proposed_nid") or "",
            fast_track=bool(data.get("fast_track")), revision=self.revision,
            registrant=self.registrant)
        for problem in problems:
            field = problem.field if problem.field in self.fields else None
            if field is None or field not in self.errors:
                self.add_error(field, problem.message if field else str(problem))
        return data


class TransitionForm(TextPolicyForm, forms.Form):
    """One transition's form on the request page: the comment it needs (labelled by
    the table) and, for a decision before the review period ends, the reason."""

    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                              max_length=FIELD_MAX_CHARS)
    early_reason = forms.CharField(
        required=False, max_length=2000, label="Reason for deciding before the review period ends",
        widget=forms.TextInput,
    )

    def __init__(self, *args, transition=None, period_ends=None, **kwargs):
        if transition is not None:  # several on one page: ids of their own
            kwargs.setdefault("auto_id", f"id_{transition.name}_%s")
        super().__init__(*args, **kwargs)
        self.transition = transition
        if transition is None:
            return
        if transition.needs_comment:
            self.fields["comment"].label = transition.needs_comment
            self.fields["comment"].widget.attrs["required"] = "required"
        else:
            self.fields["comment"].widget = forms.HiddenInput()
        if transition.decision and period_ends is not None:
            self.fields["early_reason"].label = (
                f"The public review period runs until {period_ends:%Y-%m-%d}: reason for "
                "deciding earlier")
        else:
            self.fields["early_reason"].widget = forms.HiddenInput()


class CommentForm(TextPolicyForm, forms.Form):
    body = forms.CharField(label="Add a comment", widget=forms.Textarea(attrs={"rows": 3}),
                           max_length=FIELD_MAX_CHARS)
    audience = forms.ChoiceField(label="Who sees it", choices=Comment.Audience.choices,
                                 initial=Comment.Audience.PUBLIC)


class StandardisationForm(TextPolicyForm, forms.Form):
    """Whether the request involves a standardisation organisation (section 6.2's IESG step)."""

    involved = forms.TypedChoiceField(choices=[("1", "involved"), ("0", "not involved")],
                                      coerce=lambda value: value == "1",
                                      # django-stubs allow only str | None; Django takes any value
                                      empty_value=False,  # type: ignore[arg-type]
                                      required=False)
    comment = forms.CharField(
        required=False, max_length=2000, widget=forms.TextInput,
        label="Why standardisation is (or is not) involved (optional)")


class AssignForm(forms.Form):
    expert = forms.IntegerField(required=False)


class TemplateImportForm(forms.Form):
    """A template the registrant already wrote, pasted or uploaded, to prefill the
    request form (registry.templates_text reads it). Nothing is saved by this."""

    template_text = forms.CharField(
        label="Paste a template", required=False, max_length=MAX_BYTES, strip=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="RFC 8141 Appendix A, RFC 3406 or RFC 2611 layout; plain RFC or "
                  "Internet-Draft text, markdown, kramdown or xml2rfc XML.",
    )
    template_file = forms.FileField(label="or upload it", required=False)
    # Which template fills the form when the text holds several (1 = the first).
    template_number = forms.IntegerField(required=False, min_value=1, max_value=MAX_TEMPLATES)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("template_file")
        text = data.get("template_text") or ""
        if upload is None and not text.strip():
            raise forms.ValidationError("Paste a template or choose a file to read.")
        try:
            if upload is not None:
                if upload.size > MAX_BYTES:
                    raise TemplateTextError(f"The file is larger than {MAX_BYTES // 1000} kB; "
                                            "upload only the registration template.")
                text = decode(upload.read())
            self.templates: list[ParsedTemplate] = parse_templates(text)
            # The text read (an upload's too): a request for another of its templates
            # starts from it without a second upload.
            self.text = text
        except TemplateTextError as exc:
            field = "template_file" if upload is not None else "template_text"
            self.add_error(field, str(exc))
            return data
        number = data.get("template_number") or 1
        if number > len(self.templates):
            self.add_error("template_number", f"This text holds only {len(self.templates)} "
                                              "template(s).")
            return data
        self.chosen = number - 1
        self.parsed: ParsedTemplate = self.templates[self.chosen]
        if len(self.templates) > 1:
            self.parsed.problems.insert(0, several_templates(self.templates, self.chosen))
        return data

    @property
    def others(self) -> list[tuple[int, ParsedTemplate]]:
        """The templates of the text other than the one that filled the form: each may
        be a request of its own."""
        return [(n, t) for n, t in self.choices if n - 1 != getattr(self, "chosen", 0)]

    @property
    def choices(self) -> list[tuple[int, ParsedTemplate]]:
        """The templates of a text that holds several, numbered from 1, for the
        registrant to pick the one that fills the form; empty for one template."""
        templates = getattr(self, "templates", [])
        return list(enumerate(templates, start=1)) if len(templates) > 1 else []

    def prefill(self, data: QueryDict, *, revision: bool) -> tuple[QueryDict, list[str]]:
        """``data`` (what the request form holds now) with every field the
        template gives replaced; and the labels of the fields it filled."""
        merged = data.copy()
        filled = []
        # A field another template of the same text fills but the chosen one does not
        # is emptied: a value left from filling in the other template would merge them.
        others = {name for n, t in enumerate(self.templates) if n != self.chosen
                  for name in t.fields} - set(self.parsed.fields)
        for name in TEXT_FIELDS:
            if name in others:
                merged[name] = ""
        given = {name for name, value in self.parsed.fields.items() if value.strip()}
        if given & {c.published for c in CONTACT_FIELDS}:
            # The template's contact replaces the form's as a whole: a name typed for
            # someone else must not stay beside the template's address.
            for contact in CONTACT_FIELDS:
                merged[contact.published] = ""
        for name, value in self.parsed.fields.items():
            if value.strip() and (name != "revision_information" or revision):
                merged[name] = value
                filled.append(name)
        if self.parsed.nid and not revision:
            merged["proposed_nid"] = self.parsed.nid
            merged["kind"] = Namespace.Kind.FORMAL
            filled.insert(0, "proposed_nid")
        return merged, filled


class AttachMailForm(forms.Form):
    """IANA staff attach a quarantined message to a request (the quarantine page)."""

    registration = forms.IntegerField(label="Request number", min_value=1, max_value=2**31 - 1,
                                      error_messages={"invalid": "Give a request number, e.g. 42."})
    audience = forms.ChoiceField(label="Who may read it", choices=Comment.Audience.choices,
                                 initial=Comment.Audience.EXPERTS)
