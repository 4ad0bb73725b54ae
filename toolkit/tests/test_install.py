"""Installing the package: the C path is built where a C compiler works, without a
warning; where none does, the install still succeeds, on the Python path, and the
command line answers from the shipped profiles."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not (PROJECT / "pyproject.toml").is_file(),
                                reason="needs the project's source tree")


def build_wheel(tmp_path: Path, **env: str) -> tuple[Path, str]:
    """A wheel built from a copy of the source tree (the build writes beside it)."""
    pytest.importorskip("setuptools", minversion="70.1")  # the test extra's
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, ignore=shutil.ignore_patterns(
        "*.so", "*.pyd", "__pycache__", "build", "*.egg-info", ".*"))
    out = tmp_path / "wheels"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--disable-pip-version-check", "-v", str(source), "-w", str(out)],
        env={**os.environ, **env}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("urn8141-*.whl")
    return wheel, done.stdout + done.stderr


def extension_in(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist() if "_speedups" in name and
                name.endswith((".so", ".pyd"))]


def test_an_install_builds_the_c_path_without_a_compiler_warning(tmp_path):
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip("no C compiler here")
    wheel, log = build_wheel(tmp_path)
    assert extension_in(wheel), log[-3000:]
    warnings = re.findall(r"_speedups\.c:\d+:\d+: warning: .*", log)
    assert not warnings


def test_a_failed_compile_installs_the_python_path_which_works(tmp_path):
    wheel, log = build_wheel(tmp_path, CC="false")  # a compiler that always fails
    assert not extension_in(wheel)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert {"urn8141/check.py", "urn8141/py.typed", "urn8141/data/profiles.json",
            "urn8141/_speedups.pyi"} <= set(names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--quiet", "--target", str(site),
                    str(wheel)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site), "URN8141_DATA_DIR": str(tmp_path / "data")}
    code = "import urn8141, urn8141.check as c; print(urn8141.__file__, c.ACCELERATED)"
    where, accelerated = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                        capture_output=True, text=True).stdout.split()
    assert where.startswith(str(site)) and accelerated == "False"
    done = subprocess.run([sys.executable, "-m", "urn8141", "equivalent",
                           "URN:ISBN:0-395-36341-1", "urn:isbn:0395363411"], env=env,
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "equivalent")
