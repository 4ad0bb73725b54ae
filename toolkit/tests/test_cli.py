"""The command line (``urn8141``, ``python -m urn8141``): its answers, in text and JSON,
from the shipped profiles and offline, and exit codes a shell can use (0 yes, 1 no,
2 usage)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from urn8141.cli import main
from urn8141.store import SHIPPED_PROFILES


def run(*argv: str, stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out, stdin=io.StringIO(stdin)), out.getvalue()


def run_json(*argv: str, stdin: str = "") -> tuple[int, object]:
    status, text = run(*argv, "--json", stdin=stdin)
    return status, json.loads(text)


def test_check_prints_parts_and_normal_forms():
    status, text = run("check", "URN:EXAMPLE:a123%2cz456?+r?=q#f")
    assert status == 0
    assert "NID:          EXAMPLE" in text
    assert "r-component:  r" in text
    assert "normal form:  urn:example:a123%2Cz456" in text


def test_check_applies_the_namespaces_profile():
    status, text = run("check", "URN:ISBN:0-395-36341-1")
    assert status == 0
    assert "valid by its namespace's profile" in text
    assert "namespace normal form: urn:isbn:0395363411" in text


def test_a_urn_its_profile_refuses_exits_1_and_says_why_and_where():
    status, text = run("check", "urn:isbn:0-395-36341-1", "urn:isbn:0-395-36341-2")
    assert status == 1
    assert "refused by its namespace's profile" in text
    assert "isbn: the ISBN-10 check digit is 2" in text
    lines = text.splitlines()
    caret = lines.index("  urn:isbn:0-395-36341-2") + 1
    assert lines[caret].index("^") == 2 + len("urn:isbn:0-395-36341-2") - 1


def test_check_points_at_the_bad_character_and_exits_1():
    status, text = run("check", "urn:example:ok", "urn:example:a b")
    assert status == 1
    assert "space" in text
    assert "\n               ^" in text


def test_check_in_json_is_the_shape_of_the_registrys_check_api():
    status, results = run_json("check", "urn:isbn:0-395-36341-2", "urn:ietf:rfc:2648", "nope")
    assert status == 1
    bad, good, not_urn = results
    assert bad["nss_valid"] is False and bad["valid"] is False
    assert bad["nss_errors"][0]["rule"] == "isbn"
    assert good["valid"] is True and good["namespace_normal_form"] == "urn:ietf:rfc:2648"
    assert good["resolves_to"] == [{"name": "RFC Editor",
                                    "url": "https://www.rfc-editor.org/rfc/rfc2648"}]
    assert not_urn == {"urn": "nope", "valid": False,
                       "error": {"message": 'a URN starts with "urn:"', "offset": 0}}


def test_urns_are_read_from_standard_input_with_a_dash():
    status, results = run_json("normalize", "-",
                               stdin="URN:ISBN:0-395-36341-1\n\nurn:uuid:F81D4FAE-7DEC-11D0-"
                                     "A765-00A0C91E6BF6\n")
    assert status == 0
    assert [r["normal_form"] for r in results] == [
        "urn:isbn:0395363411", "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"]


def test_normalize_prints_one_normal_form_a_line():
    assert run("normalize", "URN:ISBN:0-395-36341-1", "urn:x-y:A%2c") == (
        0, "urn:isbn:0395363411\nurn:x-y:A%2C\n")
    assert run("normalize", "urn:isbn:1", "not a urn")[0] == 1


def test_no_profiles_is_rfc_8141_alone():
    assert run("normalize", "--no-profiles", "URN:ISBN:0-395-36341-1") == (
        0, "urn:isbn:0-395-36341-1\n")


@pytest.mark.parametrize("a, b, status", [
    ("URN:ISBN:0-395-36341-1", "urn:isbn:0395363411", 0),   # RFC 3187's hyphens
    ("urn:isbn:0-395-36341-1", "urn:isbn:0-395-36341-2", 1),
    ("urn:example:a%2c", "URN:EXAMPLE:a%2C", 0),             # RFC 8141 section 3.1
    ("urn:example:A", "urn:example:a", 1),                   # no profile: case matters
    ("urn:isbn:0395363411", "urn:issn:0395363411", 1),       # two namespaces
    ("urn:isbn:0395363411", "urn:isbn:", 1),                 # b is not a URN
])
def test_equivalent_answers_with_its_exit_code(a, b, status):
    assert run("equivalent", a, b)[0] == status
    code, answer = run_json("equivalent", a, b)
    assert code == status and answer["equivalent"] is (status == 0)


def test_equivalent_names_the_steps_and_their_citations():
    _, answer = run_json("equivalent", "URN:ISBN:0-395-36341-1", "urn:isbn:0395363411")
    assert answer["rfc8141_equivalent"] is False
    assert [s["step"] for s in answer["steps"]] == ["remove-hyphens", "uppercase-x"]
    assert all(s["cite"].startswith("RFC 3187") for s in answer["steps"])


def test_resolve_prints_the_urls_and_exits_1_without_one():
    assert run("resolve", "URN:NBN:fi-fe19981001") == (
        0, "https://urn.fi/urn:nbn:fi-fe19981001\n"
           "https://nbn-resolving.org/urn:nbn:fi-fe19981001\n")
    assert run("resolve", "urn:isbn:0395363411")[0] == 1  # its registration names none
    assert run("resolve", "urn:ietf:rfc:2648", "urn:nope")[0] == 1


def test_nid_lists_every_problem():
    status, text = run("nid", "xn--foo", "isbn")
    assert status == 1
    assert "reserved_country_code_prefix" in text
    assert "isbn\n  kind: formal\n  acceptable" in text


def test_profiles_says_which_are_in_use_and_prints_one():
    shipped = json.loads(SHIPPED_PROFILES.read_text())["profiles"]
    status, summary = run_json("profiles")
    assert status == 0 and summary["count"] == len(shipped)
    assert summary["nids"] == sorted(shipped) and summary["source"].startswith("shipped")
    status, text = run("profiles", "isbn")
    assert status == 0 and json.loads(text) == shipped["isbn"]
    assert run("profiles", "nosuch")[0] == 1


def test_a_profiles_file_that_cannot_be_read_is_a_usage_error(tmp_path):
    bad = tmp_path / "profiles.json"
    bad.write_text("[" * 10_000)
    assert run("check", "--profiles", str(bad), "urn:isbn:1")[0] == 2
    assert run("check", "--profiles", str(tmp_path / "missing.json"), "urn:isbn:1")[0] == 2


def test_another_profiles_file_is_used_as_given(tmp_path):
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps({"profiles": {"example": {
        "equivalence": [{"step": "case-insensitive-nss", "cite": "a test"}]}}}))
    assert run("equivalent", "--profiles", str(path), "urn:example:A", "urn:example:a")[0] == 0


@pytest.mark.parametrize("argv", [[], ["check"], ["bogus"], ["equivalent", "urn:a:b"],
                                  ["check", "--nosuch", "urn:a:b"]])
def test_a_usage_error_exits_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_the_installed_command_runs_without_django_or_the_network():
    env = {**os.environ, "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    code = ("import sys, urn8141.cli; status = urn8141.cli.main(['check', 'urn:isbn:0395363411'"
            "]); print('django' in sys.modules, status)")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True)
    assert result.stdout.splitlines()[-1] == "False 0"
    module = subprocess.run([sys.executable, "-m", "urn8141", "check", "urn:isbn:0395363412"],
                            env=env, capture_output=True, text=True, check=False)
    assert module.returncode == 1 and "refused by its namespace's profile" in module.stdout
