"""Build registry/urns/_speedups.c, the C path of ``registry.urns.check``:

    python -m registry.urns.build [--force] [--quiet]

Optional: without a C compiler (or if the build fails) nothing changes but speed,
as ``check`` then takes its Python path, which gives the same answers. It compiles
with the compiler and flags this Python was built with (``sysconfig``), into the
file name this Python imports (``EXT_SUFFIX``), and only when the C source is newer
than what was built. ``dev.py`` runs it before the tests and the server; a
production install runs it once after installing the requirements (docs/operations.md).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_speedups.c"


def target() -> Path:
    return HERE / f"_speedups{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"


def command(output: Path) -> list[str] | None:
    """The compiler command, or None when there is no compiler."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        return None
    include = sysconfig.get_paths()["include"]
    return [*cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
            "-fno-strict-overflow", f"-I{include}", str(SOURCE), "-o", str(output)]


def build(*, force: bool = False) -> tuple[bool, str]:
    """(built or up to date, what happened)."""
    output = target()
    if not force and output.exists() and output.stat().st_mtime >= SOURCE.stat().st_mtime:
        return True, f"{output.name} is up to date"
    # Built beside it, then renamed over it: a running server that has the old one
    # loaded keeps its copy (writing into a loaded library would crash it).
    fresh = output.with_name(f".{output.name}.{os.getpid()}")
    cmd = command(fresh)
    if cmd is None:
        return False, "no C compiler: URNs are checked on the Python path (same answers)"
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603 - our own command
    if done.returncode != 0:
        fresh.unlink(missing_ok=True)
        return False, f"the C path did not build, the Python path is used:\n{done.stderr}"
    os.replace(fresh, output)
    # A warning does not stop it (another compiler may warn of what this one does not),
    # but it is said, and tests/urns/test_speedups.py fails on one.
    return True, f"built {output.name}" + (f"; the compiler warned:\n{done.stderr}"
                                            if done.stderr.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="build even if up to date")
    parser.add_argument("--quiet", action="store_true", help="say nothing when it built")
    args = parser.parse_args(argv)
    ok, message = build(force=args.force)
    if not ok or not args.quiet:
        print(message, file=sys.stderr if not ok else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
