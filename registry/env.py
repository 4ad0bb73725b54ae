"""Strict readers for settings that come from the environment (12-factor).

In production (``REGISTRY_ENV=production``) a required variable that is
missing stops the process at start-up with a message naming it; in development
the documented default is used instead. Nothing here holds a usable secret.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

ENVIRONMENT = os.environ.get("REGISTRY_ENV", "development").strip().lower()
if ENVIRONMENT not in {"development", "production"}:
    raise ImproperlyConfigured(
        f"REGISTRY_ENV must be 'development' or 'production', not {ENVIRONMENT!r}"
    )
IS_PRODUCTION = ENVIRONMENT == "production"

_MISSING = object()

# Where ``dev.py start`` writes the address it serves (its SITE_URL), in the checkout.
DEV_SITE_URL_FILE = ".dev-site-url"
# Where ``dev.py`` keeps the checkout's own secret key (development only, out of git).
DEV_SECRET_KEY_FILE = ".dev-secret-key"  # noqa: S105 - a file name, not a secret


def development_secret_key(path: Path) -> str:
    """SECRET_KEY in development: the checkout's own, which ``dev.py`` writes before it
    starts or tests anything (so the web server, the worker and a command beside them
    sign alike, and a restart keeps the demo's sessions); without that file, a key of this
    process only. Importing the settings never writes into the checkout."""
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    return secrets.token_urlsafe(50)


def development_site_url(path: Path, default: str) -> str:
    """SITE_URL's default in development: the address ``dev.py start`` last served this
    checkout on (it writes ``path``), so that a command run beside the server (``manage.py
    remind_idle_requests``) links to where the server answers, not to port 8000. Never
    in production (SITE_URL is required there) nor in a test run (pytest sets
    PYTEST_VERSION), whose links are ``default`` whatever server runs beside it."""
    if IS_PRODUCTION or os.environ.get("PYTEST_VERSION"):
        return default
    try:
        recorded = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return default
    return recorded or default


def env_str(name: str, default: str | object = _MISSING, *, required_in_production=False) -> str:
    """A string variable. ``required_in_production`` ignores the default there."""
    value = os.environ.get(name)
    if value is not None and value != "":
        return value
    if default is _MISSING or (IS_PRODUCTION and required_in_production):
        raise ImproperlyConfigured(f"Set the environment variable {name}.")
    return str(default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {value!r}.")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}.") from None


def env_list(name: str, default: list[str], *, required_in_production=False) -> list[str]:
    raw = env_str(name, ",".join(default), required_in_production=required_in_production)
    return [item.strip() for item in raw.split(",") if item.strip()]
