"""Schemathesis against /api/schema, from outside, as a tool author runs it: its command
line against a live HTTP server, every check (status codes, content types, headers,
response schemas, negative data rejected, positive data accepted, unsupported methods
answered 405, ...), positive and negative data, its examples, coverage (each bound
and its neighbour) and fuzzing phases; once with the production rate limits (so the
429s are met and must be declared) and once with them lifted (so every operation's
real answers are). It reads the schema the server serves, so an endpoint added to
openapi.py is covered too. Bounded: a few examples per operation, a fixed seed."""

import datetime as dt
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import schemathesis
from django.core.cache import caches

from registry.namespaces.actions import namespace_register
from tests.factories import complete_values

MAX_EXAMPLES = 8  # per operation and phase: bounded (the coverage phase adds its own)
SEED = 8141
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def production_rate_limits() -> dict[str, str]:
    """The rates registry/settings.py gives when no environment variable changes them."""
    import registry.settings

    names = [name for name in os.environ if name.startswith("RATE_LIMIT_")]
    saved = {name: os.environ.pop(name) for name in names}
    try:
        return dict(importlib.reload(registry.settings).RATE_LIMITS)
    finally:
        os.environ.update(saved)
        importlib.reload(registry.settings)


@pytest.mark.schemathesis
@pytest.mark.parametrize("limits", ["production", "lifted"])
def test_schemathesis_finds_no_failure(live_server, transactional_db, staff, registrant,
                                       settings, tmp_path, limits):
    settings.RATELIMIT_ENABLE = limits == "production"
    settings.RATE_LIMITS = production_rate_limits()
    for alias in settings.CACHES:  # every count starts at zero
        caches[alias].clear()
    namespace_register(kind="formal", nid="conform", values=complete_values(registrant),
                       date=dt.date(2026, 11, 1), actor=staff)
    report = tmp_path / "junit.xml"
    result = subprocess.run(
        [str(SCHEMATHESIS), "run", f"{live_server.url}/api/schema", "--url", live_server.url,
         "--checks", "all", "--mode", "all", "--phases", "examples,coverage,fuzzing",
         "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED),
         "--generation-deterministic", "--max-redirects", "0", "--request-timeout", "20",
         "--continue-on-failure", "--no-color", "--report", "junit",
         "--report-junit-path", str(report)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""})
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"Schemathesis {schemathesis.__version__}:\n{output[-12000:]}"
    assert "No issues found" in output or " 0 failures" in output or "passed" in output, (
        output[-4000:])
