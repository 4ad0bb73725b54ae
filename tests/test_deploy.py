"""deploy/: the systemd units run the Procfile's processes as an operator needs them
(the whole unit killed together, restarted on failure, settings from one environment
file), and the example environment file names every setting production requires."""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.test_settings import environment_variables_read

DEPLOY = settings.BASE_DIR / "deploy"
VENV_BIN = "/srv/urn-registry/.venv/bin/"


def procfile() -> dict[str, str]:
    lines = (settings.BASE_DIR / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys as written
    parser.read_string((DEPLOY / name).read_text())
    return parser


@pytest.mark.parametrize("process", sorted(procfile()))
def test_each_process_of_the_procfile_has_a_unit(process):
    service = unit(f"urn-registry-{process}.service")["Service"]
    command = service["ExecStart"]
    assert command.startswith(VENV_BIN)
    assert command.removeprefix(VENV_BIN).startswith(procfile()[process])
    assert service["KillMode"] == "control-group"  # the master's workers die with it
    assert service["Restart"] == "on-failure"
    assert service["EnvironmentFile"] == "/etc/urn-registry/env"
    assert service["User"] == "urn-registry"
    for limit in ("LimitNOFILE", "TasksMax", "MemoryMax", "TimeoutStopSec"):
        assert service[limit], limit
    assert unit(f"urn-registry-{process}.service")["Install"]["WantedBy"] == (
        "urn-registry.target")


def gunicorn_setting(name: str) -> object:
    result = subprocess.run(
        [sys.executable, "-c", f"import json, runpy; c = runpy.run_path('gunicorn.conf.py');"
                               f"print(json.dumps(c.get({name!r})))"],
        cwd=settings.BASE_DIR, capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != "RUNTIME_DIRECTORY"})
    return json.loads(result.stdout)


def test_the_web_unit_waits_for_gunicorns_graceful_stop():
    service = unit("urn-registry-web.service")["Service"]
    assert int(service["TimeoutStopSec"]) > int(str(gunicorn_setting("graceful_timeout")))
    assert service["Type"] == "notify"  # gunicorn says when it listens


def test_each_gunicorn_has_a_control_socket_of_its_own(tmp_path):
    """gunicorn's default control socket is one path per user, shared by every gunicorn
    on the host: here it is under the unit's RuntimeDirectory, or there is none."""
    assert unit("urn-registry-web.service")["Service"]["RuntimeDirectory"]
    script = ("import json, runpy; c = runpy.run_path('gunicorn.conf.py');"
              "print(json.dumps([c.get('control_socket'), c.get('control_socket_disable')]))")

    def control(**env: str) -> list:
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("RUNTIME_DIRECTORY", "GUNICORN_CONTROL_SOCKET")}
        result = subprocess.run([sys.executable, "-c", script], cwd=settings.BASE_DIR,
                                capture_output=True, text=True, check=True,
                                env={**clean, **env})
        return json.loads(result.stdout)

    assert control() == [None, True]
    assert control(RUNTIME_DIRECTORY=str(tmp_path)) == [str(tmp_path / "gunicorn.ctl"), None]
    assert control(GUNICORN_CONTROL_SOCKET="/run/web-2.ctl") == ["/run/web-2.ctl", None]


def required_in_production() -> set[str]:
    """The variables read with required_in_production=True, found in the code."""
    names = set()
    for path in (settings.BASE_DIR / "registry").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id.startswith("env_") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and any(k.arg == "required_in_production" and getattr(k.value, "value", 0)
                            for k in node.keywords)):
                names.add(node.args[0].value)
    return names


def gunicorn_variables() -> set[str]:
    text = (settings.BASE_DIR / "gunicorn.conf.py").read_text()
    return set(re.findall(r"""os\.environ(?:\.get\(|\[)["']([A-Z_]+)["']""", text))


def test_the_example_environment_names_what_production_requires():
    example = (DEPLOY / "urn-registry.env.example").read_text().splitlines()
    named = {line.lstrip("#").split("=", 1)[0] for line in example
             if re.match(r"#?[A-Z_]+=", line)}
    required = {line.split("=", 1)[0] for line in example if re.match(r"[A-Z_]+=", line)}
    assert {"SECRET_KEY", "DATABASE_URL"} <= required_in_production()  # the finder finds
    assert required_in_production() | {"REGISTRY_ENV", "TRUSTED_PROXIES"} <= required
    assert named <= environment_variables_read() | gunicorn_variables() | {"REGISTRY_ENV"}


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_accepts_the_units(tmp_path):
    """systemd's own check, with the commands pointed at this checkout's."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "gunicorn").exists():
        pytest.skip("gunicorn and celery are not installed beside this Python")
    names = [path.name for path in DEPLOY.iterdir() if path.suffix in (".service", ".target")]
    for name in names:
        (tmp_path / name).write_text((DEPLOY / name).read_text().replace(
            VENV_BIN, f"{bin_dir}/"))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no",
                             *(str(tmp_path / name) for name in names)],
                            capture_output=True, text=True)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
