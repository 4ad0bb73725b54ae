"""The text rules of mail, table-driven: wrapping for the list, format=flowed,
HTML-only mail, and where quotes and signatures start."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.review.inbound import parse
from registry.review.mailtext import html_to_text, split_quoted, unflow, wrap_except, wrap_lines

LONG = ("Please review the template below and comment on the list or on the request's page, "
        "where the whole discussion is kept.")


@pytest.mark.parametrize(("text", "expected"), [
    ("short line", "short line"),
    (LONG, "Please review the template below and comment on the list or on the\n"
           "request's page, where the whole discussion is kept."),
    ("   " + LONG, "   " + LONG),  # indented: preformatted, kept
    ("> " + LONG, "> " + LONG),  # quoted: kept
    ("https://example.org/" + "x" * 90, "https://example.org/" + "x" * 90),  # nowhere to break
    ("a\n\nb", "a\n\nb"),  # the writer's line breaks are kept
])
def test_wrap_lines(text, expected):
    assert wrap_lines(text) == expected
    assert all(len(line) <= 72 for line in wrap_lines(text).split("\n")
               if " " in line.strip() and not line.startswith((" ", ">")))


def test_wrap_except_puts_verbatim_text_back_unwrapped():
    template = "Purpose:\n   " + "word " * 40 + "\n"
    body = wrap_except(f"{LONG}\n\nTOKEN\n-- \nhttps://example.org/", {"TOKEN": template})
    assert template.rstrip("\n") in body
    assert body.startswith("Please review the template below and comment on the list or on the\n")


@pytest.mark.parametrize(("flowed", "delsp", "expected"), [
    ("one \ntwo\n", False, "one two\n"),
    ("one\ntwo", False, "one\ntwo"),
    ("> quoted \n> more\nnew", False, "> quoted more\nnew"),
    ("-- \nsig", False, "-- \nsig"),  # the signature separator is not a soft break
    (" >not a quote", False, ">not a quote"),  # space-stuffed
    ("wo \nrd", True, "word"),  # delsp=yes: the space belongs to the break
])
def test_unflow(flowed, delsp, expected):
    assert unflow(flowed, delsp=delsp) == expected


@pytest.mark.parametrize(("html", "expected"), [
    ("<p>One</p><p>Two</p>", "One\n\nTwo"),
    ("Line<br>break", "Line\nbreak"),
    ("<p>Hi</p><blockquote><p>quoted</p><p>twice</p></blockquote>",
     "Hi\n\n> quoted\n>\n> twice"),
    ("<a href='https://a.example/x'>the spec</a>", "the spec <https://a.example/x>"),
    ("<a href='https://a.example/'>https://a.example/</a>", "https://a.example/"),
    ("<style>p{}</style><script>alert(1)</script><p>only this</p>", "only this"),
    ("<ul><li>a</li><li>b</li></ul>", "- a\n- b"),
    ("caf&eacute; &amp; tea", "café & tea"),
    ("", ""),
])
def test_html_to_text(html, expected):
    assert html_to_text(html) == expected


def kinds(text):
    return [(s.kind, s.text) for s in split_quoted(text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Just text.", [("text", "Just text.")]),
    ("Yes.\n\nOn Mon, 23 Nov 2026, Ann wrote:\n> Is it?\n> Sure?",
     [("text", "Yes."), ("quote", "On Mon, 23 Nov 2026, Ann wrote:\n> Is it?\n> Sure?")]),
    # Gmail wraps a long attribution over two lines.
    ("Fine.\n\nOn Mon, Nov 23, 2026 at 7:00 PM Registry <\nreg@iana.example> wrote:\n\n> x",
     [("text", "Fine."),
      ("quote", "On Mon, Nov 23, 2026 at 7:00 PM Registry <\nreg@iana.example> wrote:\n\n> x")]),
    # Inline answers: each quote folds on its own.
    ("> a\nanswer a\n\n> b\n\nanswer b",
     [("quote", "> a"), ("text", "answer a"), ("quote", "> b"), ("text", "answer b")]),
    ("Le lundi, Anne a écrit :\n> oui\nMerci", [("quote", "Le lundi, Anne a écrit :\n> oui"),
                                                  ("text", "Merci")]),
    ("Top post.\n\n-----Original Message-----\nFrom: A\nSent: today\n\nold text",
     [("text", "Top post."),
      ("quote", "-----Original Message-----\nFrom: A\nSent: today\n\nold text")]),
    ("Top post.\n\n________________________________\nFrom: A <a@x>\nSent: Monday\nold",
     [("text", "Top post."),
      ("quote", "________________________________\nFrom: A <a@x>\nSent: Monday\nold")]),
    ("Body.\n-- \nAnn\nExample Org", [("text", "Body."), ("signature", "-- \nAnn\nExample Org")]),
    ("Body.\n_______________________________________________\nurn mailing list\nurn@ietf.org",
     [("text", "Body."),
      ("signature", "_______________________________________________\nurn mailing list\n"
                    "urn@ietf.org")]),
    # "From:" inside a sentence or without a Sent: line is the writer's own text.
    ("From: my side, all good.\nThanks", [("text", "From: my side, all good.\nThanks")]),
])
def test_split_quoted(text, expected):
    assert kinds(text) == expected


@given(st.binary(max_size=2000))
@settings(max_examples=200, deadline=None)
def test_any_bytes_parse_without_raising(raw):
    parsed = parse(raw)
    assert parsed.message_id and "\x00" not in parsed.text + parsed.subject + parsed.from_name


MIME_BITS = st.sampled_from([
    b"Content-Type: text/plain; charset=x-unknown\r\n", b"Content-Type: text/html\r\n",
    b"Content-Transfer-Encoding: base64\r\n", b"Content-Transfer-Encoding: quoted-printable\r\n",
    b"Content-Type: multipart/mixed; boundary=b\r\n", b"--b\r\n", b"--b--\r\n",
    b"Subject: =?utf-8?B?w6k=?= [URN #9]\r\n", b"From: =?bogus?Q?x?= <a@b>\r\n",
    b"Date: not a date\r\n", b"References: <a@b> <c@d>\r\n", b"\r\n", b"=E9=\r\n", b"<p>x</p>",
    b"\xff\xfe\x00", b"> quoted\r\n", b"-- \r\n",
])


@given(st.lists(MIME_BITS, max_size=25))
@settings(max_examples=300, deadline=None)
def test_broken_mime_parses_without_raising(parts):
    parsed = parse(b"".join(parts))
    split_quoted(parsed.text)
    assert isinstance(parsed.text, str)


@given(st.text(max_size=500))
@settings(max_examples=200, deadline=None)
def test_text_rules_never_raise_and_split_loses_nothing(text):
    kept = "".join(s.text for s in split_quoted(text))
    assert "".join(kept.split()) == "".join(text.split())
    html_to_text(text)
    unflow(text)
    wrap_lines(text)


@pytest.mark.parametrize(("label", "in_a_sentence"), [
    ("Ready for IANA to register", "ready for IANA to register"),
    ("Awaiting IESG direction", "awaiting IESG direction"),
    ("In public review", "in public review"),
    ("IANA staff", "IANA staff"),  # a name in capitals stays as it is written
    ("Ask IANA to register", "ask IANA to register"),
    ("A", "a"),
    ("", ""),
])
def test_a_label_inside_a_sentence_keeps_its_names_in_capitals(label, in_a_sentence):
    from registry.review.mailtext import in_sentence

    assert in_sentence(label) == in_a_sentence


def test_every_state_reads_well_inside_a_sentence():
    from registry.review.mailtext import in_sentence
    from registry.review.models import State

    for state in State:
        words = in_sentence(state.label).split()
        assert words[0] == words[0].lower() or words[0].isupper(), state
        assert words[1:] == state.label.split()[1:], state
