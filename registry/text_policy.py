"""One policy for every piece of text a person or an import gives the registry.

Text that reaches the registry is shown on pages, posted to the review list, and
published as XML, CSV, JSON and Atom. Two kinds of character break that:

- control characters (C0 and C1, including NUL) other than TAB and LF: XML 1.0
  cannot carry them, so one in a template makes ``/registry.xml`` unparseable and
  ``/feed.atom`` fail; CR is not refused but normalised (CRLF and CR become LF);
- bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069),
  invisible characters that reorder what is displayed around them, so that
  "gro.live" can display as "evil.org" (CVE-2021-42574, "Trojan Source");
- and the noncharacters U+FFFE, U+FFFF (not XML characters either).

``text_problem`` is the rule (no Django in it); ``TextPolicyForm`` applies it to
every text field of a form, so the person sees the problem at the field with
what they typed still there; ``import`` and the search box call the same rule.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

ALLOWED_CONTROLS = frozenset("\t\n\r")  # CR is normalised to LF, never stored
BIDI_CONTROLS = frozenset(
    chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)
NONCHARACTERS = frozenset(chr(c) for c in (*range(0xFDD0, 0xFDF0), 0xFFFE, 0xFFFF))


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF: one newline convention, so diffs compare text."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}{' ' + name if name else ''}"


def text_problem(text: str, *, single_line: bool = False) -> str | None:
    """Why ``text`` may not be stored, in words for the person who typed it, or None.

    ``single_line`` also refuses line breaks (a name, an organisation, a search)."""
    for position, ch in enumerate(text, start=1):
        if ch in BIDI_CONTROLS:
            return (f"Character {position} is an invisible bidirectional control "
                    f"({_describe(ch)}), which can make text display in a misleading "
                    "order. Remove it.")
        if single_line and ch in "\r\n":
            return f"Character {position} is a line break; this field takes one line."
        if ch in ALLOWED_CONTROLS:
            continue
        if unicodedata.category(ch) == "Cc":
            return (f"Character {position} is a control character ({_describe(ch)}), "
                    "which cannot be published. Remove it.")
        if ch in NONCHARACTERS or unicodedata.category(ch) == "Cs":
            return (f"Character {position} ({_describe(ch)}) is not a character that can be "
                    "published. Remove it.")
    return None


class PlainTextValidator:
    """The policy as a Django validator, for form fields and model fields alike."""

    code = "text_policy"

    def __init__(self, *, single_line: bool = False):
        self.single_line = single_line

    def __call__(self, value: Any) -> None:
        if not isinstance(value, str):
            return
        problem = text_problem(value, single_line=self.single_line)
        if problem:
            raise ValidationError(problem, code=self.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlainTextValidator) and other.single_line == self.single_line

    def __hash__(self) -> int:
        return hash((self.code, self.single_line))


def apply_text_policy(form: forms.BaseForm) -> None:
    """Attach the policy to every text field of ``form`` (once). A field whose widget
    is not a textarea is one line. Django's own NUL validator stays in place too;
    passwords are never shown or published, so they are left alone."""
    for field in form.fields.values():
        if not isinstance(field, forms.CharField) or isinstance(field.widget,
                                                                 forms.PasswordInput):
            continue
        if any(isinstance(v, PlainTextValidator) for v in field.validators):
            continue
        single_line = not isinstance(field.widget, forms.Textarea)
        field.validators.append(PlainTextValidator(single_line=single_line))


class TextPolicyForm:
    """Mix into any Form or ModelForm (first in the bases): every text field follows
    the policy, and the cleaned text has one newline convention."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        apply_text_policy(self)  # type: ignore[arg-type]

    def clean(self) -> dict[str, Any]:
        data = super().clean()  # type: ignore[misc]
        for name, value in list(data.items()):
            if isinstance(value, str):
                data[name] = normalise_newlines(value)
        return data
