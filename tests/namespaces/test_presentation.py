"""The side-by-side diff: correct on ordinary edits, bounded in cost on any input."""

import datetime
import random
import time

import lxml.html
import pytest

from registry.namespaces.presentation import CALL_BUDGET, field_diffs
from registry.namespaces.template import FIELD_MAX_CHARS, TEXT_FIELDS


def sides(diff):
    left, right = (lxml.html.fragment_fromstring(str(h), create_parent="div")
                   for h in (diff.old, diff.new))
    return left, right


def test_a_small_edit_is_marked_word_by_word():
    [diff] = field_diffs({"purpose": "Names archive records persistently."},
                         {"purpose": "Names museum records persistently."}, ("purpose",))
    left, right = sides(diff)
    assert [d.text for d in left.iter("del")] == ["archive"]
    assert [i.text for i in right.iter("ins")] == ["museum"]
    assert left.text_content() == "Names archive records persistently."
    assert diff.changed and not diff.coarse


def test_a_line_edit_in_a_long_text_is_still_precise():
    lines = [f"Line {n}: the syntax allows {n} digits." for n in range(800)]
    new = list(lines)
    new[400] = "Line 400: the syntax allows letters."
    new[10] = "Line 10: changed too."
    [diff] = field_diffs({"syntax": "\n".join(lines)}, {"syntax": "\n".join(new)}, ("syntax",))
    left, right = sides(diff)
    assert left.text_content() == "\n".join(lines)
    assert right.text_content() == "\n".join(new)
    assert "letters" in " ".join(i.text_content() for i in right.iter("ins"))
    assert sum(len(d.text_content()) for d in left.iter("del")) < 100


def _adversarial(seed: int, size: int) -> tuple[str, str]:
    rnd = random.Random(seed)
    shapes = [
        lambda: ("".join(rnd.choice("ab ") for _ in range(size)),
                 "".join(rnd.choice("ab ") for _ in range(size))),
        lambda: ("a b " * (size // 4), "b a " * (size // 4)),
        lambda: ("\n".join(rnd.choice("xy") for _ in range(size // 2)),
                 "\n".join(rnd.choice("xy") for _ in range(size // 2))),
        lambda: ("x" * size, "y" * size),
        lambda: (" ".join(str(n) for n in range(size // 6)),
                 " ".join(str(n) for n in reversed(range(size // 6)))),
    ]
    return shapes[seed % len(shapes)]()


@pytest.mark.parametrize("seed", range(5))
def test_the_cost_is_bounded_whatever_the_input(seed):
    # Every field of a page at the form's maximum size, each in a worst shape for difflib:
    # before the bound, one 8,000-character field took 11 s.
    old, new = {}, {}
    for n, name in enumerate(TEXT_FIELDS):
        old[name], new[name] = _adversarial(seed + n, FIELD_MAX_CHARS)
    start = time.process_time()
    diffs = field_diffs(old, new)
    elapsed = time.process_time() - start
    assert elapsed < 3, f"{elapsed:.1f}s of CPU"
    for diff in diffs:  # nothing is lost: each side still reads as its whole text
        left, right = sides(diff)
        assert left.text_content() == old[diff.name]
        assert right.text_content() == new[diff.name]


def test_what_is_too_large_is_shown_whole_and_said_so():
    old, new = _adversarial(0, FIELD_MAX_CHARS)
    [diff] = field_diffs({"purpose": old}, {"purpose": new}, ("purpose",))
    assert diff.coarse
    assert CALL_BUDGET < FIELD_MAX_CHARS ** 2  # the bound is what makes this coarse


def test_the_diff_page_offers_both_texts_when_too_large(client, staff):
    from registry.namespaces.actions import namespace_register, version_publish
    from tests.factories import complete_values, make_user

    user = make_user("holder@example.org")
    old, new = _adversarial(0, FIELD_MAX_CHARS)
    today = datetime.date(2026, 1, 1)
    namespace = namespace_register(nid="bigdiff", kind="formal", actor=staff, date=today,
                                   values=complete_values(user, purpose=old))
    version_publish(namespace=namespace, actor=staff, date=today,
                    values=complete_values(user, purpose=new, revision_information="All new."))
    start = time.process_time()
    response = client.get("/namespaces/bigdiff/diff/")
    assert time.process_time() - start < 3
    doc = lxml.html.fromstring(response.content)
    [note] = doc.find_class("diff-coarse")
    assert "Too large to compare word by word" in note.text_content()
    links = [a.get("href") for a in note.iter("a")]
    assert links == ["/namespaces/bigdiff/v/1/template.txt", "/namespaces/bigdiff/v/2/template.txt"]
    assert old.strip() in client.get(links[0]).content.decode()
