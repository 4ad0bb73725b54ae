"""The exports as files: one directory per registry generation under
``EXPORT_ROOT``, built once, ahead of the requests, and streamed from disk. The
generation here is the exports' own (``Generation.exports_key``): it moves with every
change but those only the review's pages show, so a submission or a comment does not
rebuild documents that did not change, and their validators stay the same.

- **Built from fragments.** Each namespace's ``<record>`` and CSV lines are kept in
  ``ExportFragment`` with a stamp of what they were made from; a build rewrites only
  the fragments whose namespace changed, and writes each document as its frame plus
  the fragments, streamed row by row from a server-side cursor into the files (memory
  does not grow with the registry).
- **One consistent snapshot.** A build reads the generation and every row in one
  REPEATABLE READ transaction (PostgreSQL), so a directory holds exactly the registry
  of its generation, and its files are moved into place together (one rename).
- **Single flight.** A build runs under an exclusive ``flock`` on
  ``EXPORT_ROOT/.build.lock``: one builder for every process sharing the directory.
  ``build_exports_task`` runs right after each commit that moved the generation; a
  request that finds its generation's files missing builds them itself if no one
  else is, else waits (at most ``EXPORT_WAIT_SECONDS``) for them or for a newer
  generation's, and is answered with the validators of the directory it is served.
- **Served without Python copying.** ``FileResponse`` hands the open file to the
  WSGI server's ``wsgi.file_wrapper`` (gunicorn: ``sendfile``). The gzip form of
  each file is written after the plain one is in place; until then a client that
  accepts gzip gets the plain file.
- **Bounded disk.** Only the newest ``KEEP_GENERATIONS`` directories are kept; a
  file being sent when its directory is removed stays readable until it is closed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import IO, NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseNotModified
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date

from registry.namespaces import exports
from registry.namespaces.models import ExportFragment, Namespace
from registry.namespaces.public_cache import (
    _ACCEPTS_GZIP,
    Generation,
    _not_modified,
    current_generation,
)


class Export(NamedTuple):
    content_type: str
    download_name: str  # Content-Disposition's filename; "" for none


CSV = "text/csv; charset=utf-8"
EXPORTS: dict[str, Export] = {
    "registry.xml": Export("application/xml; charset=utf-8", ""),
    "registry.csv": Export(CSV, "urn-namespaces.csv"),
    "urn-namespaces-1.csv": Export(CSV, "urn-namespaces-1.csv"),
    "urn-namespaces-2.csv": Export(CSV, "urn-namespaces-2.csv"),
}
IANA_CSV = {"formal": "urn-namespaces-1.csv", "informal": "urn-namespaces-2.csv"}
KEEP_GENERATIONS = 2
# Bump when a fragment's serialisation changes: every stored fragment is then remade.
FRAGMENT_FORMAT = "1"
CHUNK = 2000
_META = "generation.json"
_LOCK = ".build.lock"
_PARTIAL = ".partial-"


def export_root() -> Path:
    return Path(settings.EXPORT_ROOT)


# --- building ---------------------------------------------------------------------------


@contextmanager
def build_lock(*, wait: bool) -> Iterator[bool]:
    """The one builder's lock, shared by every process using ``EXPORT_ROOT``;
    yields whether it is held (``wait=False`` never blocks)."""
    root = export_root()
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)  # releases the lock


def build_exports() -> Path:
    """The current generation's directory, built if it is missing. The caller holds
    ``build_lock``."""
    root = export_root()
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                if outermost:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                # The rows query is costed high enough to be JIT-compiled, which took
                # longer than the query itself (2.1 s instead of 4.4 s at 10,000).
                cursor.execute("SET LOCAL jit = off")
        generation = current_generation()
        target = root / generation.exports_key
        if target.is_dir():
            return target
        for leftover in root.glob(_PARTIAL + "*"):  # a builder that died: nobody else builds
            shutil.rmtree(leftover, ignore_errors=True)
        partial = root / f"{_PARTIAL}{generation.exports_key}-{uuid.uuid4().hex}"
        partial.mkdir()
        _write_documents(partial)
        changed_at = generation.changed_at.isoformat() if generation.changed_at else None
        (partial / _META).write_text(json.dumps({"changed_at": changed_at}))
    partial.rename(target)
    for name in EXPORTS:
        _write_gzip(target / name)
    _prune(root, generation)
    return target


def _write_documents(directory: Path) -> None:
    files = {name: _open(directory / name) for name in EXPORTS}
    try:
        xml, combined = files["registry.xml"], files["registry.csv"]
        frame = exports.xml_frame()
        xml.write(frame[0])
        combined.write(exports.csv_line(exports.CSV_COLUMNS))
        for index, kind in enumerate(exports.SUB_REGISTRIES):
            iana = files[IANA_CSV[kind]]
            iana.write(exports.csv_line(exports.SUB_REGISTRY_CSV_COLUMNS))
            for fragment in fragments(kind):
                xml.write(exports.RECORD_INDENT + fragment.xml)
                iana.write(fragment.iana_csv)
                combined.write(fragment.csv)
            xml.write(frame[index + 1])
    finally:
        for file in files.values():
            file.close()


def _open(path: Path) -> IO[str]:
    return open(path, "w", encoding="utf-8", newline="", buffering=1 << 20)  # noqa: SIM115


def _write_gzip(path: Path) -> None:
    import gzip

    partial = path.with_name(path.name + ".gz" + _PARTIAL.rstrip("-"))
    with open(path, "rb") as source, open(partial, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6,
                          mtime=0) as zipped:
        shutil.copyfileobj(source, zipped, 1 << 20)
    partial.rename(path.with_name(path.name + ".gz"))


def fragment_stamp(ns_updated: datetime | None, version_count: int | None,
                   last_version_date: object) -> str:
    """What a namespace's fragments were made from: its row's last change, its version
    facts, the fragment format and SITE_URL (template URLs carry it)."""
    salt = hashlib.sha256(f"{FRAGMENT_FORMAT}|{settings.SITE_URL}".encode()).hexdigest()[:12]
    updated = ns_updated.isoformat() if ns_updated else ""
    return f"{updated}|{version_count or 0}|{last_version_date or ''}|{salt}"


_FRAGMENT_COLUMNS = ("pk", "updated_at", "version_count", "last_version_date",
                     "export_fragment__stamp", "export_fragment__xml",
                     "export_fragment__iana_csv", "export_fragment__csv")


def fragments(kind: str) -> Iterator[ExportFragment]:
    """The sub-registry's fragments in IANA's order, stale ones remade and stored,
    read CHUNK rows at a time."""
    rows = (exports.exported_namespaces(kind).values_list(*_FRAGMENT_COLUMNS)
            .iterator(chunk_size=CHUNK))
    while chunk := list(islice(rows, CHUNK)):
        kept: dict[int, ExportFragment] = {}
        stale: dict[int, str] = {}
        for pk, updated_at, count, last, stamp, xml, iana_csv, csv_line in chunk:
            wanted = fragment_stamp(updated_at, count, last)
            if stamp == wanted:
                kept[pk] = ExportFragment(namespace_id=pk, stamp=stamp, xml=xml,
                                          iana_csv=iana_csv, csv=csv_line)
            else:
                stale[pk] = wanted
        if stale:
            kept.update(_remake(stale))
        for pk, *_ in chunk:
            yield kept[pk]


def _remake(stale: dict[int, str]) -> dict[int, ExportFragment]:
    made = {
        ns.pk: ExportFragment(namespace_id=ns.pk, stamp=stale[ns.pk],
                              xml=exports.xml_fragment(ns),
                              iana_csv=exports.iana_csv_fragment(ns),
                              csv=exports.csv_fragment(ns))
        for ns in Namespace.objects.with_version_facts().filter(pk__in=list(stale))
    }
    ExportFragment.objects.bulk_create(
        made.values(), update_conflicts=True, unique_fields=["namespace"],
        update_fields=["stamp", "xml", "iana_csv", "csv"])
    return made


def _generation_number(name: str, token: str) -> int | None:
    prefix = token + "-"
    if name.startswith(prefix) and name[len(prefix):].isdigit():
        return int(name[len(prefix):])
    return None


def _built(generation: Generation) -> list[tuple[int, Path]]:
    """This database's built generations, oldest first."""
    token = generation.exports_key.rsplit("-", 1)[0]
    found = []
    with os.scandir(export_root()) as entries:
        for entry in entries:
            number = _generation_number(entry.name, token)
            if number is not None and entry.is_dir():
                found.append((number, Path(entry.path)))
    return sorted(found)


def _prune(root: Path, generation: Generation) -> None:
    for _, old in _built(generation)[:-KEEP_GENERATIONS]:
        shutil.rmtree(old, ignore_errors=True)


def build_current_exports() -> Path:
    """Wait for the lock, then make sure the current generation is built (the task's
    body)."""
    with build_lock(wait=True):
        return build_exports()


# --- serving ----------------------------------------------------------------------------


class NotReady(Exception):
    """The generation's files were not built within EXPORT_WAIT_SECONDS."""


def ready_directory(generation: Generation) -> Path:
    """The directory to serve a request that read ``generation``: its own, or a newer
    one (never an older one); built here if no one else is building."""
    target = export_root() / generation.exports_key
    deadline = time.monotonic() + settings.EXPORT_WAIT_SECONDS
    number = int(generation.exports_key.rsplit("-", 1)[1])
    while True:
        if target.is_dir():
            return target
        if export_root().is_dir():
            newer = [path for n, path in _built(generation) if n >= number]
            if newer:
                return newer[-1]
        with build_lock(wait=False) as held:
            if held:
                return build_exports()
        if time.monotonic() > deadline:
            raise NotReady(generation.exports_key)
        time.sleep(0.02)


def export_response(request: HttpRequest, name: str) -> HttpResponseBase:
    """One export of the generation the request read, streamed from its file, with
    that generation's ETag / Last-Modified; 304 to a client that has it."""
    export = EXPORTS[name]
    try:
        directory = ready_directory(current_generation(request))
    except NotReady:
        busy = HttpResponse("The registry's exports are being rebuilt; try again shortly.\n",
                            status=503, content_type="text/plain; charset=utf-8")
        busy["Retry-After"] = "2"
        return busy
    meta = json.loads((directory / _META).read_text())
    changed_at = datetime.fromisoformat(meta["changed_at"]) if meta["changed_at"] else None
    tag = hashlib.sha256(f"{directory.name}/{name}".encode()).hexdigest()[:24]
    path = directory / name
    zipped = path.with_name(name + ".gz")
    gzipped = bool(_ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")))
    gzipped = gzipped and zipped.is_file()
    etag = f'"{tag}-gz"' if gzipped else f'"{tag}"'
    response: HttpResponseBase
    if _not_modified(request, tag, changed_at):
        response = HttpResponseNotModified()
    else:
        # Opened before any prune can remove it: an open file stays readable.
        response = FileResponse(open(zipped if gzipped else path, "rb"),  # noqa: SIM115
                                content_type=export.content_type)
        if export.download_name:
            response["Content-Disposition"] = f'inline; filename="{export.download_name}"'
        else:
            response.headers.pop("Content-Disposition", None)
        if gzipped:
            response["Content-Encoding"] = "gzip"
        response["Cache-Control"] = "public, no-cache"
    patch_vary_headers(response, ["Accept-Encoding"])
    response["ETag"] = etag
    if changed_at is not None:
        response["Last-Modified"] = http_date(changed_at.timestamp())
    return response


def export_bytes(name: str) -> bytes:
    """An export of the current generation as bytes (commands and tests)."""
    with build_lock(wait=True):
        return (build_exports() / name).read_bytes()
