"""What every process fills on its first requests, filled once in gunicorn's master
before it forks its workers (gunicorn.conf.py's ``when_ready``): the URL patterns and
every compiled template. A new or recycled worker then serves its first request as
fast as its thousandth (measured: a freshly forked worker's first page took 437 ms,
most of it here). Nothing here opens a database or Redis connection: a connection
made before the fork would be shared by every worker."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from django.conf import settings
from django.template import engines
from django.urls import get_resolver


def warm() -> list[str]:
    """Fill the process's caches; returns the templates compiled."""
    get_resolver().reverse_dict  # noqa: B018 - reading it populates the URL patterns
    compiled = []
    directories = cast("list[Path]", settings.TEMPLATES[0]["DIRS"])
    for directory in directories:
        for path in sorted(Path(directory).rglob("*.html")):
            name = path.relative_to(directory).as_posix()
            engines["django"].get_template(name)
            compiled.append(name)
    return compiled
