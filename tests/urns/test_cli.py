"""python -m registry.urns: the command line prints parts, normal form and problems."""

import io
import subprocess
import sys

from registry.urns.__main__ import main


def run(*argv):
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_check_prints_parts_and_normal_form():
    status, text = run("check", "URN:EXAMPLE:a123%2cz456?+r?=q#f")
    assert status == 0
    assert "NID:          EXAMPLE" in text
    assert "r-component:  r" in text
    assert "normal form:  urn:example:a123%2Cz456" in text


def test_check_points_at_the_bad_character_and_exits_1():
    status, text = run("check", "urn:example:ok", "urn:example:a b")
    assert status == 1
    assert "space" in text
    assert "\n               ^" in text


def test_nid_lists_every_problem():
    status, text = run("nid", "xn--foo", "isbn")
    assert status == 1
    assert "reserved_country_code_prefix" in text
    assert "isbn\n  kind: formal\n  acceptable" in text


def test_module_runs_without_django_settings():
    result = subprocess.run(
        [sys.executable, "-c", "import sys, registry.urns; print('django' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
