"""The release identifier: which code, templates and static files this process serves.

The public cache's keys carry it (public_cache.cache_key) beside the registry
generation, so a deploy that changes a template, a view or the API serves new
pages and JSON with its first request instead of the previous release's entries
until the next registry write. It is a hash of every file of the ``registry``
package (its ``.py`` files, not their bytecode), every file under the template
folders and the static files' manifest (``staticfiles.json`` that
``collectstatic`` writes; in development, the static source folders themselves),
computed once per process at start-up
(registry/wsgi.py; ``gunicorn --preload`` computes it in the master).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from django.conf import settings

RELEASE_ID_CHARS = 16
MANIFEST_NAME = "staticfiles.json"


def _files(folder: Path, pattern: str) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.rglob(pattern)
                  if path.is_file() and "__pycache__" not in path.parts)


def release_id(package: Path, template_dirs: Iterable[Path], static_root: Path,
               static_dirs: Iterable[Path]) -> str:
    """The hash of the release's files, by path relative to their folder and content."""
    digest = hashlib.sha256()

    def add(root: Path, files: list[Path]) -> None:
        for path in files:
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())

    add(package, _files(package, "*"))  # its .py files and any app templates
    for folder in template_dirs:
        add(folder, _files(folder, "*"))
    manifest = static_root / MANIFEST_NAME
    if manifest.is_file():  # collectstatic's: every static file's name with its hash
        add(static_root, [manifest])
    else:
        for folder in static_dirs:
            add(folder, _files(folder, "*"))
    return digest.hexdigest()[:RELEASE_ID_CHARS]


@functools.cache
def current_release() -> str:
    """This process's release (computed once; ``current_release.cache_clear()`` is a
    restart)."""
    return release_id(
        Path(__file__).resolve().parent,
        [Path(folder) for engine in settings.TEMPLATES
         for folder in cast("list[str]", engine.get("DIRS", []))],
        Path(settings.STATIC_ROOT),
        [Path(folder) for folder in settings.STATICFILES_DIRS],
    )
