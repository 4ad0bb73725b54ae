"""docs/operations.md's settings tables name exactly the environment variables the code
reads: a variable added to registry/settings.py (or anywhere in registry/) fails here until
it has a row, and a row whose variable is no longer read fails too.

The variables are read from the code's syntax (the registry/env.py helpers and
``os.environ``), not listed here; the rows are those of every table of the document whose
first heading is "variable"."""

import ast
import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
DOCUMENT = ROOT / "docs" / "operations.md"
# Read by the app's code: each must be a row of a settings table.
APP = ("registry/**/*.py",)
# Read by the processes around it (gunicorn's configuration, the URN toolkit): each must
# be named in the document; a row may name them.
AROUND = ("gunicorn.conf.py", "toolkit/src/urn8141/**/*.py")
# Set by something else for the process, never by the operator.
NOT_SETTINGS = {
    "DJANGO_SETTINGS_MODULE": "set by wsgi.py, celery.py and manage.py themselves",
    "RUNTIME_DIRECTORY": "set by systemd from the unit's RuntimeDirectory",
    "XDG_DATA_HOME": "the desktop's own (the toolkit's data directory, its README)",
    "LOCALAPPDATA": "Windows' own (the toolkit's data directory, its README)",
    "URN8141_DATA_DIR": "the toolkit's own, for its command-line users (its README)",
    "PYTEST_VERSION": "set by pytest in the process it runs (env.development_site_url)",
}
_ENVIRON = {"os.environ", "environ"}


def _read_in(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            if (isinstance(fn, ast.Name) and fn.id.startswith("env_")) or (
                    isinstance(fn, ast.Attribute) and (
                        (fn.attr in ("get", "setdefault", "pop")
                         and ast.unparse(fn.value) in _ENVIRON)
                        or (fn.attr == "getenv" and ast.unparse(fn.value) == "os"))):
                name = node.args[0].value
        elif (isinstance(node, ast.Subscript) and ast.unparse(node.value) in _ENVIRON
              and isinstance(node.slice, ast.Constant)):
            name = node.slice.value
        if isinstance(name, str):
            names.add(name)
    return names


def _variables(patterns: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for pattern in patterns:
        for path in ROOT.glob(pattern):
            if "migrations" not in path.parts:
                names |= _read_in(ast.parse(path.read_text(encoding="utf-8")))
    return names - set(NOT_SETTINGS)


def _rows() -> set[str]:
    names, in_table = set(), False
    for line in DOCUMENT.read_text(encoding="utf-8").splitlines():
        if re.match(r"\|\s*variable\s*\|", line):
            in_table = True
        elif in_table and line.startswith("|"):
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1]))
        else:
            in_table = False
    return names


def test_the_scan_finds_the_settings():
    assert {"SECRET_KEY", "DATABASE_URL", "REVIEW_MIN_DAYS", "REGISTRY_ENV"} <= _variables(APP)
    assert {"WEB_CONCURRENCY", "URN_SPEEDUPS"} <= _variables(AROUND)
    assert len(_rows()) > 30


def test_every_variable_the_app_reads_has_a_row():
    assert _variables(APP) - _rows() == set()


def test_every_row_is_a_variable_something_reads():
    assert _rows() - _variables(APP) - _variables(AROUND) == set()


def test_every_variable_of_the_processes_around_is_named():
    text = DOCUMENT.read_text(encoding="utf-8")
    assert {name for name in _variables(AROUND) if f"`{name}`" not in text} == set()
