"""The exports as files: one directory per registry generation under
``EXPORT_ROOT``, built once, ahead of the requests, and streamed from disk. The
generation here is the exports' own (``Generation.exports_key``): it moves with every
change but those only the review's pages show, so a submission or a comment does not
rebuild documents that did not change, and their validators stay the same.

- **Spliced from the previous generation.** A build reads the ordered ``(pk,
  updated_at)`` of every namespace and copies each unchanged record's bytes (and each
  unchanged gzip block) from the previous generation's files in the kernel
  (export_splice.py); only a changed record's fragment is read from
  ``ExportFragment`` (kept with a stamp of what it was made from) or serialised
  again. Memory does not grow with the registry; time grows with what changed, plus
  one narrow query and the copies.
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
  WSGI server's ``wsgi.file_wrapper`` (gunicorn: ``sendfile``). Each file and its
  gzip form are in place together.
- **Bounded disk.** Only the newest ``KEEP_GENERATIONS`` directories are kept; a
  file being sent when its directory is removed stays readable until it is closed.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BigIntegerField, Func
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseNotModified
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date

from registry.http_semantics import (
    GZIP,
    negotiate_encoding,
    not_acceptable,
    representation_etag,
)
from registry.namespaces import exports
from registry.namespaces.export_splice import (
    DocumentWriter,
    PreviousGeneration,
    stamp_of,
    write_index,
)
from registry.namespaces.models import ExportFragment, Namespace
from registry.namespaces.public_cache import Generation, current_generation, not_modified


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
KEEP_SECONDS = 5  # and every generation built more recently than this
# Bump when a fragment's serialisation changes: every stored fragment is then remade.
FRAGMENT_FORMAT = "2"
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
        built = _built(generation)
        _write_documents(partial, built[-1][1] if built else None)
        changed_at = generation.changed_at.isoformat() if generation.changed_at else None
        (partial / _META).write_text(json.dumps({"changed_at": changed_at}))
        if generation.changed_at is not None:
            # A file server sending them (X-Accel-Redirect behind nginx) dates them by
            # their modification time: the generation's change, as the app does.
            stamp = generation.changed_at.timestamp()
            for built_file in partial.iterdir():
                os.utime(built_file, (stamp, stamp))
    partial.rename(target)
    _prune(root, generation)
    return target


def _salt() -> str:
    """What every fragment also depends on: its format and SITE_URL."""
    return hashlib.sha256(f"{FRAGMENT_FORMAT}|{settings.SITE_URL}".encode()).hexdigest()[:12]


def _write_documents(directory: Path, previous: Path | None) -> None:
    """Every export of the current snapshot into ``directory``, with its gzip form and
    the index the next build splices from (export_splice.py)."""
    salt = _salt()
    old = PreviousGeneration(previous, salt, EXPORTS)
    writers = {name: DocumentWriter(directory, name, old.documents.get(name))
               for name in EXPORTS}
    try:
        xml, combined = writers["registry.xml"], writers["registry.csv"]
        frame = exports.xml_frame()
        xml.frame(frame[0])
        combined.frame(exports.csv_line(exports.CSV_COLUMNS))
        for index, kind in enumerate(exports.SUB_REGISTRIES):
            iana = writers[IANA_CSV[kind]]
            iana.frame(exports.csv_line(exports.SUB_REGISTRY_CSV_COLUMNS))
            for pairs in _ordered_chunks(kind):
                fragments = _Fragments(dict(pairs))
                xml.records(pairs, fragments.texts(lambda f: exports.RECORD_INDENT + f.xml))
                iana.records(pairs, fragments.texts(lambda f: f.iana_csv))
                combined.records(pairs, fragments.texts(lambda f: f.csv))
            xml.frame(frame[index + 1])
        shapes = {name: writer.finish() for name, writer in writers.items()}
    finally:
        old.close()
    write_index(directory, salt, list(writers.values()), shapes)


def _ordered_chunks(kind: str) -> Iterator[list[tuple[int, int]]]:
    """The sub-registry's ``(pk, stamp)`` pairs in IANA's order, CHUNK at a time."""
    pairs = _ordered_stamps(kind)
    for start in range(0, len(pairs), CHUNK):
        yield pairs[start:start + CHUNK]


class _Fragments:
    """The fragments of one chunk's records, read (or made) only for the records a
    document could not copy, once for all the documents."""

    def __init__(self, stamps: dict[int, int]):
        self.stamps = stamps
        self.known: dict[int, ExportFragment] = {}

    def texts(self, part: Callable[[ExportFragment], str]
              ) -> Callable[[list[int]], dict[int, str]]:
        def texts(pks: list[int]) -> dict[int, str]:
            missing = {pk: self.stamps[pk] for pk in pks if pk not in self.known}
            if missing:
                self.known.update(_fragments_for(missing))
            return {pk: part(self.known[pk]) for pk in pks}
        return texts


def _ordered_stamps(kind: str) -> list[tuple[int, int]]:
    """``(pk, updated_at in microseconds)`` of the sub-registry, in IANA's order: one
    narrow query (the stamp computed by PostgreSQL, exactly, as a bigint)."""
    rows = exports.exported_order(kind)
    if connection.vendor == "postgresql":
        return list(rows.annotate(stamp=EpochMicroseconds("updated_at"))
                    .values_list("pk", "stamp"))
    return [(pk, stamp_of(updated_at)) for pk, updated_at in
            rows.values_list("pk", "updated_at")]


class EpochMicroseconds(Func):
    """A timestamp as integer microseconds since 1970 (PostgreSQL; exact: EXTRACT
    gives a numeric)."""

    template = "(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint"
    output_field = BigIntegerField()


def _fragments_for(needed: dict[int, int]) -> dict[int, ExportFragment]:
    """The stored fragments of these namespaces, those that are stale made again."""
    stored = ExportFragment.objects.filter(namespace_id__in=list(needed)).in_bulk()
    kept: dict[int, ExportFragment] = {}
    stale: dict[int, str] = {}
    for pk, stamp in needed.items():
        wanted = fragment_stamp(stamp)
        fragment = stored.get(pk)
        if fragment is not None and fragment.stamp == wanted:
            kept[pk] = fragment
        else:
            stale[pk] = wanted
    if stale:
        kept.update(_remake(stale))
    return kept


def fragment_stamp(stamp: int) -> str:
    """What a namespace's fragments were made from: its row's last change (``stamp``,
    its ``updated_at`` in microseconds; every change to what they say moves it: a new
    version saves the row), the fragment format and SITE_URL (template URLs carry it)."""
    return f"{stamp}|{_salt()}"


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
    """Remove all but the newest KEEP_GENERATIONS directories, and none built in the
    last KEEP_SECONDS: a request may have chosen one of those a moment ago and still be
    sending it (behind nginx, which opens the file after the app has answered)."""
    recent = time.time() - KEEP_SECONDS
    for _, old in _built(generation)[:-KEEP_GENERATIONS]:
        try:
            if old.stat().st_mtime < recent:
                shutil.rmtree(old, ignore_errors=True)
        except FileNotFoundError:  # another builder pruned it
            pass


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
    changed_at, last_modified, tag, has_gzip = _served_facts(str(directory), name)
    path = directory / name
    zipped = path.with_name(name + ".gz")
    coding = negotiate_encoding(request, (GZIP,) if has_gzip else ())
    if coding is None:
        return not_acceptable((GZIP,) if has_gzip else ())
    gzipped = coding == GZIP
    etag = representation_etag(tag, coding)
    response: HttpResponseBase
    if not_modified(request, etag, changed_at):
        response = HttpResponseNotModified()
    else:
        sent = zipped if gzipped else path
        if settings.EXPORT_ACCEL_REDIRECT:
            # Behind nginx (deploy/nginx-registry.conf): nginx sends the file and this
            # worker is free at once. _prune keeps the directory while nginx may still
            # open it (the newest two, and any built within KEEP_SECONDS).
            response = HttpResponse(content_type=export.content_type)
            response["X-Accel-Redirect"] = (
                f"{settings.EXPORT_ACCEL_REDIRECT}{directory.name}/{sent.name}")
        else:
            # Opened before any prune can remove it: an open file stays readable.
            response = FileResponse(open(sent, "rb"),  # noqa: SIM115
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
    if last_modified is not None:
        response["Last-Modified"] = last_modified
    return response


@functools.lru_cache(maxsize=64)
def _served_facts(directory: str, name: str) -> tuple[datetime | None, str | None, str, bool]:
    """(changed_at, Last-Modified, ETag base, has a .gz) of one export of one built
    generation, read once per process: a generation's directory never changes once it is
    renamed into place, and its name (the generation key) is never reused."""
    meta = json.loads((Path(directory) / _META).read_text())
    changed_at = datetime.fromisoformat(meta["changed_at"]) if meta["changed_at"] else None
    tag = hashlib.sha256(f"{Path(directory).name}/{name}".encode()).hexdigest()[:24]
    return (changed_at, http_date(changed_at.timestamp()) if changed_at else None, tag,
            (Path(directory) / f"{name}.gz").is_file())


def export_bytes(name: str) -> bytes:
    """An export of the current generation as bytes (commands and tests)."""
    with build_lock(wait=True):
        return (build_exports() / name).read_bytes()
