"""The manual (README.md and docs/*.md) holds together: every relative link and image
reaches a file, and an anchor a heading of it; each section title is used once across
the manual, so a reader who finds a topic has found the one place it is written."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANUAL = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
FENCE = re.compile(r"^(```|~~~)")


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file, outside fenced code."""
    found, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append(match.group(2))
    return found


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as
    hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def links(path: Path) -> list[str]:
    text = re.sub(r"^(```|~~~).*?^\1", "", path.read_text(), flags=re.M | re.S)
    return [target for target in LINK.findall(text)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto:


def test_the_manual_is_found():
    assert {path.name for path in MANUAL} >= {"README.md", "operations.md", "workflow.md"}
    assert all(links(path) or path.name == "benchmarks.md" for path in MANUAL)


def test_every_relative_link_reaches_its_file_and_heading():
    broken = []
    for path in MANUAL:
        for target in links(path):
            name, _, anchor = target.partition("#")
            file = (path.parent / name).resolve() if name else path
            if not file.exists():
                broken.append(f"{path.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in map(slug, headings(file)):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert broken == []


def test_no_two_sections_share_a_title():
    titles = Counter(title.lower() for path in MANUAL for title in headings(path))
    assert sorted(title for title, count in titles.items() if count > 1) == []


def test_slug_is_githubs():
    assert slug("The method: `bench/load.py`") == "the-method-benchloadpy"
    assert slug("Libraries, and why") == "libraries-and-why"


def test_the_readme_names_the_demo_accounts_seed_demo_creates():
    """The README's demo table is a copy of seed_demo's people: held equal here."""
    from registry.review.management.commands.seed_demo import DEMO_PASSWORD, PEOPLE

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Demo accounts", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines()
            if line.startswith("| `")]
    listed = {account.strip().strip("`"): who for account, who in rows}
    assert sorted(listed) == sorted(email for email, *_ in PEOPLE)
    for email, first, last, organisation, _roles in PEOPLE:
        assert f"{first} {last}" in listed[email]
        assert organisation in listed[email]
    assert f"`{DEMO_PASSWORD}`" in section
