#!/usr/bin/env python3
"""The project's two commands, needing nothing but Python 3.11:

    python3 dev.py start [ADDRESS]  # venv + install + migrate + real registry + demo + serve
    python3 dev.py start --services [ADDRESS]  # the same on a production-like stack
    python3 dev.py test    # venv + install + the whole test suite
    python3 dev.py lock [--check]  # compile pyproject.toml into the hashed lock files

``start`` runs on the embedded default (SQLite, Celery eager, console mail)
unless DATABASE_URL etc. are set; ADDRESS is ``host:port`` or a port (default
127.0.0.1:8000), and links in mail use it unless SITE_URL is set, from the server
and from manage.py commands run in this checkout (it is recorded in .dev-site-url). ``test`` uses
PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 when they answer (and
insists on them when CI=true); elsewhere it runs on SQLite and the PostgreSQL-only
tests are skipped with a printed reason. Extra arguments after ``test`` go to pytest.

``start --services`` runs the stack production runs on this machine's Debian PostgreSQL,
Redis and nginx (devtools/services.py says how: its processes, ports and files).

Dependencies are declared once, in pyproject.toml; ``lock`` compiles them with pip-tools
into requirements.txt (what runs) and requirements-dev.txt (that and the dev extra), every
package pinned with its hashes. ``start`` and ``test`` install from those files only, and
``test`` removes whatever the lock does not name, so the tested environment is the lock's.
``lock --check`` fails when pyproject.toml changed after the lock was compiled.

The URN toolkit, urn8141, is this repository's toolkit/, a package of its own that the
project depends on by path: the locks pin and hash its dependencies but not itself (pip
cannot hash a directory), and ``start`` and ``test`` install it from the checkout after
the lock (editable, no dependencies), which builds its C path where a C compiler is.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

from devtools.base import (
    BIN,
    PYTHON,
    ROOT,
    VENV,
    ensure_secret_key,
    reachable,
    run,
    say,
    set_up,
)
from devtools.services import run_services

TOOLKIT = ROOT / "toolkit"
PG_URL = "postgres://postgres@127.0.0.1:5432/urn_registry"
REDIS_URL = "redis://127.0.0.1:6379/0"
# The address ``start`` serves, read by the settings (SITE_URL's default in development)
# so that commands run beside the server build the same links; registry.env names it too.
DEV_SITE_URL_FILE = ".dev-site-url"


# Each lock file and the pyproject.toml extras it is compiled with.
LOCKS = {"requirements.txt": (), "requirements-dev.txt": ("dev",)}
INPUTS_LINE = "# inputs sha256: "


def declared_inputs() -> str:
    """A digest of what pyproject.toml declares (dependencies, extras, Python): the lock
    files carry it, so a change that was not compiled into them is seen at once."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {key: project.get(key) for key in
                ("requires-python", "dependencies", "optional-dependencies")}
    return hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest()


def stale_locks() -> list[str]:
    digest = declared_inputs()
    stale = []
    for name in LOCKS:
        path = ROOT / name
        if not path.exists() or f"{INPUTS_LINE}{digest}\n" not in path.read_text():
            stale.append(name)
    return stale


def ensure_venv_exists() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}.")
    if not PYTHON.exists():
        say(f"creating a virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)


def ensure_venv(lock: str, *, exact: bool = False) -> None:
    """Install ``lock`` into .venv with its hashes checked (once per version of the file);
    ``exact`` also removes every package the lock does not name (pip-sync)."""
    ensure_venv_exists()
    digest = hashlib.sha256((ROOT / lock).read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{lock}-{digest}{'-exact' if exact else ''}"
    if stamp.exists():
        return
    say(f"installing {lock}")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--require-hashes", "--no-deps", "-r", lock)
    if exact:
        run(BIN / "pip-sync", "--quiet", "--pip-args", "--require-hashes --no-deps", lock)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def lock(argv: list[str]) -> int:
    """Compile pyproject.toml into the lock files, or with --check say which are stale."""
    if argv == ["--check"]:
        stale = stale_locks()
        for name in stale:
            print(f"{name} is stale: pyproject.toml changed since it was compiled; "
                  "run `python3 dev.py lock`.", flush=True)
        return 1 if stale else 0
    if (ROOT / "requirements-dev.txt").exists():
        ensure_venv("requirements-dev.txt")
    else:  # the very first lock: pip-tools from the registry, to compile the rest
        ensure_venv_exists()
        run(PYTHON, "-m", "pip", "install", "--quiet", "pip-tools")
    digest = declared_inputs()
    for name, extras in LOCKS.items():
        say(f"compiling {name}")
        run(BIN / "pip-compile", "--quiet", "--strip-extras", "--generate-hashes",
            "--allow-unsafe", "--no-emit-index-url", "--no-emit-find-links", "--no-header",
            *(f"--extra={extra}" for extra in extras), "--output-file", name, "pyproject.toml")
        path = ROOT / name
        body = without_local_paths(path.read_text())
        path.write_text(f"# Compiled from pyproject.toml by `python3 dev.py lock`: do not edit.\n"
                        f"{INPUTS_LINE}{digest}\n{TOOLKIT_LINE}{body}")
    runtime, development = (pins(ROOT / name) for name in LOCKS)
    differ = {name for name in runtime if development.get(name) != runtime[name]}
    if differ:
        print(f"the two locks pin {sorted(differ)} differently; run lock again", flush=True)
        return 1
    return 0


TOOLKIT_LINE = ("# urn8141 (toolkit/, this repository's URN toolkit) is installed after this "
                "file:\n#   pip install --no-deps --no-build-isolation ./toolkit\n")
_PIP_TOOLS_WARNING = ("# WARNING: pip install will require the following package to be hashed.",
                      "# Consider using a hashable URL like")


def without_local_paths(body: str) -> str:
    """The compiled lock without the requirements on this repository's own directories
    (``file:toolkit``) and pip-tools' warning about them: pip cannot hash a directory,
    and one unhashed line would make ``pip install -r`` refuse the whole file."""
    kept: list[str] = []
    skipping = False
    for line in body.splitlines(keepends=True):
        if line.startswith("file:"):
            skipping = True
            continue
        if skipping and line.startswith("    #"):
            continue
        skipping = False
        if not line.startswith(_PIP_TOOLS_WARNING):
            kept.append(line)
    return "".join(kept)


def pins(path: Path) -> dict[str, str]:
    pinned = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split(" ")[0].split("==")
            pinned[name.lower()] = version
    return pinned


def serving_address(argv: list[str]) -> str:
    """``host:port`` from the command line: "8160" means 127.0.0.1:8160."""
    address = argv[0] if argv else "127.0.0.1:8000"
    return f"127.0.0.1:{address}" if address.isdigit() else address


def ensure_toolkit() -> None:
    """The URN toolkit (toolkit/, urn8141) installed from the checkout, editable, after
    the lock (which holds its dependencies): again whenever what its build reads changes.
    setuptools builds its C path in place where a C compiler is (optional: without it the
    Python path gives the same answers); CI's tests insist on it."""
    inputs = hashlib.sha256()
    for name in ("pyproject.toml", "setup.py", "src/urn8141/_speedups.c"):
        inputs.update((TOOLKIT / name).read_bytes())
    stamp = VENV / f".installed-toolkit-{inputs.hexdigest()[:16]}"
    if stamp.exists():
        return
    say("installing the URN toolkit (toolkit/) and building its C path")
    for built in (TOOLKIT / "src" / "urn8141").glob("_speedups*.*"):
        if built.suffix in (".so", ".pyd"):  # a server running keeps the copy it loaded
            built.unlink()
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
        "--no-build-isolation", "--editable", TOOLKIT)
    for old in VENV.glob(".installed-toolkit-*"):
        old.unlink()
    stamp.touch()


def start(argv: list[str]) -> None:
    services = "--services" in argv
    rest = [arg for arg in argv if arg != "--services"]
    if len(rest) > 1 or any(arg.startswith("-") for arg in rest):
        sys.exit("usage: python3 dev.py start [--services] [ADDRESS]")
    ensure_venv("requirements.txt")
    ensure_toolkit()
    address = serving_address(rest)
    if services:
        sys.exit(run_services(address))
    env = dict(os.environ)
    # Links in mail point where this server answers, unless SITE_URL says otherwise; and
    # so do the links of a command run beside it (manage.py reads the address recorded).
    env.setdefault("SITE_URL", f"http://{address}")
    (ROOT / DEV_SITE_URL_FILE).write_text(env["SITE_URL"] + "\n", encoding="utf-8")
    set_up(env)
    say(f"links in mail use {env['SITE_URL']}, from manage.py commands run here too")
    say(f"serving on http://{address}/  (Ctrl-C stops it)")
    os.execve(str(PYTHON), [str(PYTHON), "manage.py", "runserver", address], env)


def test(argv: list[str]) -> int:
    ensure_venv("requirements-dev.txt", exact=True)
    ensure_toolkit()
    ensure_secret_key()
    env = dict(os.environ)
    in_ci = env.get("CI", "").lower() == "true"
    if not env.get("DATABASE_URL"):
        if reachable("127.0.0.1", 5432):
            env["DATABASE_URL"] = PG_URL
        elif in_ci:
            sys.exit("CI=true but PostgreSQL does not answer on 127.0.0.1:5432.")
    if not env.get("TEST_REDIS_URL"):
        if reachable("127.0.0.1", 6379):
            env["TEST_REDIS_URL"] = REDIS_URL
        elif in_ci:
            sys.exit("CI=true but Redis does not answer on 127.0.0.1:6379.")
    database = env.get("DATABASE_URL", "sqlite (embedded)").split("@")[-1]
    say(f"tests on database {database}; Redis {env.get('TEST_REDIS_URL', 'not available')}")
    # The suite sets its own mail and Celery settings; the embedded defaults stay eager.
    for name in ("CELERY_BROKER_URL", "REDIS_URL", "REGISTRY_ENV"):
        env.pop(name, None)
    result = subprocess.run([str(PYTHON), "-m", "pytest", *argv], cwd=ROOT, env=env)
    if result.returncode == 5:
        print("pytest collected no tests: that is a broken suite, not a pass.", flush=True)
        return 1
    return result.returncode


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("start", "test", "lock"):
        sys.exit(__doc__)
    command, rest = sys.argv[1], sys.argv[2:]
    try:
        if command == "start":
            start(rest)
        else:
            sys.exit(test(rest) if command == "test" else lock(rest))
    except subprocess.CalledProcessError as exc:  # the command said why; no traceback here
        sys.exit(f"`{' '.join(str(a) for a in exc.cmd)}` failed (exit {exc.returncode}).")


if __name__ == "__main__":
    main()
