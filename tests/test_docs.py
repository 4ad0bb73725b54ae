"""The manual (README.md and docs/*.md) holds together: every relative link and image
reaches a file, and an anchor a heading of it; each section title is used once across
the manual, so a reader who finds a topic has found the one place it is written. The
code's own prose (comments and docstrings) names only files that exist."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANUAL = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
FENCE = re.compile(r"^(```|~~~)")

# The code whose comments and docstrings are read for the repository paths they name.
CODE = [*(path for folder in ("registry", "bench", "devtools", "toolkit/src")
          for path in sorted((ROOT / folder).rglob("*.py"))),
        ROOT / "gunicorn.conf.py", ROOT / "dev.py"]
# A path from the repository's root: a top-level folder, then a run of name characters
# and separators (one character class, so linear); not the tail of a URL or longer path.
TOP_LEVEL = sorted(path.name for path in ROOT.iterdir()
                   if path.is_dir() and not path.name.startswith((".", "_")))
REPO_PATH = re.compile(rf"(?<![\w./-])(?:{'|'.join(map(re.escape, TOP_LEVEL))})/[\w./-]+")
# Folders the tools make as they run (var/services/ ...): .gitignore's root folders.
MADE_AT_RUN_TIME = tuple(line.strip().lstrip("/") for line in
                         (ROOT / ".gitignore").read_text().splitlines()
                         if line.startswith("/") and line.strip().endswith("/"))


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


def prose(path: Path) -> list[str]:
    """The comments and docstrings of a Python file."""
    text = path.read_text()
    found = [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
             if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(ast.get_docstring(node, clean=False) or "")
    return found


def named_paths(text: str) -> list[str]:
    """The repository paths ``text`` names, without the sentence's punctuation after them."""
    return [match.rstrip(".-") for match in REPO_PATH.findall(text)]


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


def test_the_codes_comments_and_docstrings_name_files_that_exist():
    named = {(path, name) for path in CODE for text in prose(path) for name in named_paths(text)}
    assert len({name for _, name in named}) > 30  # the scan finds what it is for
    missing = sorted(f"{path.relative_to(ROOT)}: {name}" for path, name in named
                     if not (ROOT / name).exists() and not name.startswith(MADE_AT_RUN_TIME))
    assert missing == []


def test_named_paths_reads_paths_not_urls():
    assert named_paths("(registry/history.py), and docs/operations.md.") == [
        "registry/history.py", "docs/operations.md"]
    assert named_paths("see https://example.org/docs/x.md or /registry/a.py") == []
    assert named_paths("registry.proxies.client_key, in fixtures/iana/.") == ["fixtures/iana/"]


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
