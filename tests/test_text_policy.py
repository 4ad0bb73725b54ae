"""The one text policy (registry/text_policy.py): what it refuses, what it lets through."""

import pytest
from django import forms

from registry.text_policy import TextPolicyForm, normalise_newlines, text_problem

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"


@pytest.mark.parametrize("text, single_line, refused_at", [
    ("Example Archive Foundation", True, None),
    ("Ünïcødé, 日本語, العربية, עברית", True, None),
    ("tab\tis fine", True, None),
    ("two\nlines", False, None),
    ("two\r\nlines", False, None),
    ("two\nlines", True, 4),
    ("nul\x00", False, 4),
    ("bell\x07", False, 5),
    ("escape\x1b[31m", False, 7),
    ("delete\x7f", False, 7),
    ("c1\x85control", False, 3),
    (f"gro.live{RLO}", True, 9),
    (f"{RLO}gro.live", False, 1),
    (f"a{LRI}b{PDI}", False, 2),
    ("\u202a embedding", False, 1),
    ("non\ufffe", False, 4),
    ("non\uffff", False, 4),
    ("zero\u200bwidth space and \u200d joiner are text", True, None),
])
def test_the_rule(text, single_line, refused_at):
    problem = text_problem(text, single_line=single_line)
    if refused_at is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(f"Character {refused_at} ")


def test_the_message_names_the_character():
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in text_problem(f"x{RLO}")
    assert "U+0007" in text_problem("\x07")


@pytest.mark.parametrize("raw, expected", [("a\r\nb", "a\nb"), ("a\rb", "a\nb"), ("a\nb", "a\nb")])
def test_newlines_are_normalised(raw, expected):
    assert normalise_newlines(raw) == expected


class Sample(TextPolicyForm, forms.Form):
    name = forms.CharField()
    body = forms.CharField(widget=forms.Textarea)
    secret = forms.CharField(widget=forms.PasswordInput)


def test_a_form_refuses_at_the_field_and_keeps_the_text():
    form = Sample({"name": f"evil{RLO}gro", "body": "ok\r\nfine", "secret": f"pw{RLO}"})
    assert not form.is_valid()
    assert list(form.errors) == ["name"]  # a password is never shown: left alone
    assert "bidirectional" in form.errors["name"][0]
    assert form["name"].value() == f"evil{RLO}gro"


def test_a_valid_form_has_one_newline_convention():
    form = Sample({"name": "Pat", "body": "a\r\nb\rc", "secret": "x"})
    assert form.is_valid()
    assert form.cleaned_data["body"] == "a\nb\nc"


def test_a_text_area_takes_lines_a_text_input_does_not():
    form = Sample({"name": "one\ntwo", "body": "one\ntwo", "secret": "x"})
    assert not form.is_valid() and list(form.errors) == ["name"]
