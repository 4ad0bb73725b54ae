"""The checkout's paths and what every command of dev.py uses: printing a step, running
a program, asking whether a port answers, running manage.py, and setting a database's
registry up (migrate, IANA's registry, the real templates, the demo). Standard library
only: dev.py runs it before any venv exists."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
# The checkout's own SECRET_KEY in development (registry.env reads it by the same name).
DEV_SECRET_KEY_FILE = ".dev-secret-key"  # noqa: S105 - a file name, not a secret


def ensure_secret_key() -> None:
    """Give the checkout its secret key once, before anything of it runs: the server,
    the worker and commands beside them then sign alike across restarts."""
    path = ROOT / DEV_SECRET_KEY_FILE
    if not path.is_file():
        path.write_text(secrets.token_urlsafe(50) + "\n", encoding="utf-8")


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


def run(*args, **kwargs) -> None:
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, **kwargs)


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.5):
            return True
    except OSError:
        return False


def manage(*args: str, env=None) -> None:
    run(PYTHON, "manage.py", *args, env=env)


def seeding_env(env: dict[str, str]) -> dict[str, str]:
    """The demo's seeding keeps its mail local whatever the broker: its tasks run in
    this process (nothing is queued for a worker) and its mail goes nowhere."""
    return {**env, "LOG_LEVEL": env.get("LOG_LEVEL", "ERROR"),
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend"}


def set_up(env: dict[str, str]) -> None:
    """Migrate, import IANA's registry and the real templates, seed the demo."""
    ensure_secret_key()
    # Setting up prints what matters, not every task the demo's actions ran.
    quiet = {**env, "LOG_LEVEL": env.get("LOG_LEVEL", "ERROR")}
    manage("migrate", "--noinput", "-v", "0", env=quiet)
    manage("import_registry", env=quiet)
    templates = ROOT.parent / "shared" / "data" / "templates"
    if templates.is_dir():  # the real templates of isbn, xmpp, 3gpp... as their versions
        manage("import_templates", str(templates), env=quiet)
    manage("seed_demo", env=seeding_env(env))
