"""The exports (registry.xml, the CSVs) as HTTP answers, from the generations built
ahead of the requests and stored in the database (export_build.py), sent from this
machine's copy of them (export_cache.py).

- **Never built in a request.** A request is answered with the newest built generation
  and that generation's own ETag and Last-Modified (one query reads it with the
  registry's generation). When the registry has moved past it, the answer is still
  that generation, and a build is queued unless one was queued in the last
  QUEUE_SECONDS (anywhere: the mark is in the shared cache). With no generation built
  at all: 503 with ``Retry-After``.
- **Content negotiation** (RFC 9110, registry/http_semantics.py): the coding from
  ``negotiate_encoding`` (406 when every form is refused), an ETag per representation
  (``representation_etag``), If-None-Match compared with the selected representation's
  (``none_match``), ``Vary: Accept-Encoding``.
- **Sent by the kernel or by nginx.** ``FileResponse`` hands this machine's copy to the
  WSGI server's ``wsgi.file_wrapper`` (gunicorn: ``sendfile``); behind nginx
  (EXPORT_ACCEL_REDIRECT) nginx sends it. A disk that cannot take the copy (full,
  read-only) does not stop the answer: it is streamed from the database.
- **Without the database**, the newest generation on this machine's disk is served. That
  is safe: a generation is an immutable, complete snapshot of the public registry that
  this machine was serving (or about to serve) a moment ago, carrying its own
  validators; what is newer than it was never acknowledged to a reader here, and it
  is what any client could have downloaded then. Nothing on disk at all: 503.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import Error as DatabaseError
from django.http import (
    FileResponse,
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date

from registry.http_semantics import (
    GZIP,
    IDENTITY,
    negotiate_encoding,
    not_acceptable,
    representation_etag,
)
from registry.namespaces.export_cache import (
    EXPORTS,
    Built,
    Export,
    GenerationGone,
    ServedState,
    disk_problem,
    local_path,
    newest_on_disk,
    served_state,
    stream,
)
from registry.namespaces.public_cache import not_modified

__all__ = ["EXPORTS", "Export", "export_bytes", "export_response", "exports_ready",
           "exports_readiness"]

logger = logging.getLogger("registry.exports")

RETRY_AFTER_SECONDS = 5
QUEUE_SECONDS = 30  # a build queued for a generation is not queued again sooner


def etag(key: str, name: str, gzipped: bool) -> str:
    """The ETag of one representation of one export of one generation."""
    tag = hashlib.sha256(f"{key}/{name}".encode()).hexdigest()[:24]
    return representation_etag(tag, GZIP if gzipped else IDENTITY)


def export_response(request: HttpRequest, name: str) -> HttpResponseBase:
    """One export of the newest built generation, with that generation's validators;
    304 to a client that has the representation it would get."""
    coding = negotiate_encoding(request)
    if coding is None:
        return not_acceptable()
    gzipped = coding == GZIP
    try:
        state = served_state()
        if _offline["logged"]:
            _offline["logged"] = False
            logger.warning("exports: the database is reachable again")
        if state.behind and queue_export_build(state):
            state = served_state()  # a worker in this process (development) built it now
        if state.newest is None:
            return _unavailable("The registry's exports are being built; try again shortly.")
        return _answer(request, name, state.newest, gzipped)
    except GenerationGone:  # pruned while it was read: two builds finished meanwhile
        return _unavailable("The registry's exports were just rebuilt; try again.")
    except DatabaseError as exc:
        return _from_this_disk(request, name, gzipped, exc)


def queue_export_build(state: ServedState) -> bool:
    """Queue a build of the registry's current generation unless one was queued for it
    lately; whether this call queued one."""
    from registry.namespaces.tasks import build_exports_task

    try:
        fresh = cache.add(f"exports-build-queued:{state.current_key}", 1, QUEUE_SECONDS)
    except Exception:  # noqa: BLE001 - the cache down: queue (the task is idempotent)
        fresh = True
    if not fresh:
        return False
    try:
        build_exports_task.delay()
    except Exception as exc:  # noqa: BLE001 - the broker down: the next request tries
        logger.warning("exports: could not queue a build of %s (%s)", state.current_key, exc)
        return False
    return True


def _answer(request: HttpRequest, name: str, built: Built, gzipped: bool) -> HttpResponseBase:
    export = EXPORTS[name]
    tag = etag(built.key, name, gzipped)
    if not_modified(request, tag, built.changed_at):
        return _headers(HttpResponseNotModified(), None, tag, built.changed_at, gzipped)
    path = local_path(built, name, gzipped)
    response: HttpResponseBase
    if path is not None and settings.EXPORT_ACCEL_REDIRECT:
        # Behind nginx (deploy/nginx-registry.conf): nginx sends the file and this worker
        # is free at once. The directory is one of the two the database keeps: it stays
        # until two newer generations are built and filled here.
        response = HttpResponse(content_type=export.content_type)
        response["X-Accel-Redirect"] = (
            f"{settings.EXPORT_ACCEL_REDIRECT}{built.key}/{path.name}")
    else:
        opened = _open(path)
        if opened is not None:  # an open file stays readable if its directory is pruned
            response = FileResponse(opened, content_type=export.content_type)
        else:
            response = StreamingHttpResponse(stream(built, name, gzipped),
                                             content_type=export.content_type)
            response["Content-Length"] = str(built.sizes[f"{name}.gz" if gzipped else name])
    return _headers(response, export, tag, built.changed_at, gzipped)


def _open(path: Path | None):
    if path is None:
        return None
    try:
        return open(path, "rb")  # noqa: SIM115 - FileResponse closes it
    except OSError:
        return None


def _headers(response: HttpResponseBase, export: Export | None, tag: str,
             changed_at: datetime | None, gzipped: bool) -> HttpResponseBase:
    if export is not None:
        if export.download_name:
            response["Content-Disposition"] = f'inline; filename="{export.download_name}"'
        else:
            response.headers.pop("Content-Disposition", None)
        if gzipped:
            response["Content-Encoding"] = "gzip"
        response["Cache-Control"] = "public, no-cache"
    patch_vary_headers(response, ["Accept-Encoding"])
    response["ETag"] = tag
    if changed_at is not None:
        response["Last-Modified"] = http_date(changed_at.timestamp())
    return response


def _unavailable(message: str) -> HttpResponse:
    busy = HttpResponse(message + "\n", status=503, content_type="text/plain; charset=utf-8")
    busy["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return busy


_offline = {"logged": False}


def _from_this_disk(request: HttpRequest, name: str, gzipped: bool,
                    exc: Exception) -> HttpResponseBase:
    """The database unreachable: the newest generation this machine has a copy of."""
    copy = newest_on_disk(name)
    if not _offline["logged"]:
        _offline["logged"] = True
        logger.error("exports: the database is unreachable (%s); serving %s from this "
                     "machine's disk", exc, copy.key if copy else "nothing")
    if copy is None:
        return _unavailable("The registry's exports are unavailable for a moment; "
                            "try again shortly.")
    export = EXPORTS[name]
    zipped, plain = copy.directory / f"{name}.gz", copy.directory / name
    if gzipped and not zipped.is_file():
        gzipped = False  # identity is acceptable too, unless refused, and all there is
    tag = etag(copy.key, name, gzipped)
    if not_modified(request, tag, copy.changed_at):
        return _headers(HttpResponseNotModified(), None, tag, copy.changed_at, gzipped)
    opened = _open(zipped if gzipped else plain)
    response: HttpResponseBase
    if opened is not None:
        response = FileResponse(opened, content_type=export.content_type)
    else:
        response = StreamingHttpResponse(_inflated(zipped), content_type=export.content_type)
    return _headers(response, export, tag, copy.changed_at, gzipped)


def _inflated(path: Path) -> Iterator[bytes]:
    with gzip.open(path, "rb") as source:
        while piece := source.read(1 << 20):
            yield piece


# --- readiness and commands -------------------------------------------------------------


def exports_readiness() -> str:
    """Why this machine cannot serve the exports ("" when it can): no generation built,
    the database unreachable, or an EXPORT_ROOT that cannot take the next generation
    (read-only, too full). For the readiness probe (registry/health.py)."""
    try:
        state = served_state()
    except DatabaseError as exc:
        return f"the database is unreachable ({exc})"
    if state.newest is None:
        return "no generation of the exports is built yet"
    return disk_problem(sum(state.newest.sizes.values()))


def exports_ready() -> bool:
    """Whether this machine can serve the exports now (``exports_readiness`` says why not)."""
    return not exports_readiness()


def export_bytes(name: str) -> bytes:
    """An export of the current generation as bytes, built first if it is not
    (commands and tests)."""
    from registry.namespaces.export_build import build_current_exports

    build_current_exports()
    newest = served_state().newest
    assert newest is not None
    return b"".join(stream(newest, name, gzipped=False))
