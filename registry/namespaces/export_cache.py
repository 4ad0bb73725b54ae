"""A machine's disk as a cache of the exports stored in the database.

A built generation is rows (``ExportGeneration``, ``ExportChunk``: each export's gzip
form and the index the next build splices from; export_build.py writes them). Every
machine keeps copies under ``EXPORT_ROOT``, one directory per generation (``<key>/``:
each export, its ``.gz`` and ``generation.json``), filled on first need and sent from
there by the kernel (``FileResponse``) or by nginx (``X-Accel-Redirect``). Nothing there
is needed by another machine; losing it costs a fill.

- **Filled export by export.** The first request for an export copies its gzip form from
  the database and inflates its plain form, each written under a temporary name and
  renamed into place: the processes of a machine never see half a file, and two that
  fill at once write the same bytes.
- **A bad disk** (full, read-only): a fill that fails leaves no temporary file, logs one
  line (once, until the disk takes a fill again), and the export is streamed from the
  database instead. ``disk_problem()`` says why for readiness.
- **Bounded.** A fill removes the directories of generations the database no longer
  keeps: a machine holds at most the ``KEEP_GENERATIONS`` the database holds.
- **Without the database** the newest generation on this disk (``generation.json``
  names it) is what the machine can still serve (``newest_on_disk``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from django.conf import settings
from django.db import connection

from registry.namespaces.export_splice import INDEX
from registry.namespaces.models import ExportChunk, ExportGeneration
from registry.namespaces.public_cache import _aware

logger = logging.getLogger("registry.exports")


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
# The newest this many generations are kept, in the database and on each machine's disk.
KEEP_GENERATIONS = 2
META = "generation.json"
PARTIAL = ".partial-"  # a builder's directory being written (export_build.py)
_TEMPORARY = ".tmp"  # a file being filled (its name also starts with a dot)
_STALE_SECONDS = 600  # a temporary file older than this was left by a process that died


def export_root() -> Path:
    return Path(settings.EXPORT_ROOT)


@dataclass(frozen=True)
class Built:
    """A stored generation, as a request reads it."""

    pk: int
    key: str
    number: int
    changed_at: datetime | None
    sizes: dict[str, int]  # each stored or derived file's size in bytes


@dataclass(frozen=True)
class ServedState:
    current_key: str  # the exports' generation of the registry now
    current_number: int
    newest: Built | None  # the newest built one (the current one, or older while building)

    @property
    def behind(self) -> bool:
        return self.newest is None or self.newest.number < self.current_number


# The registry's exports generation and its newest built generation, in one query.
_STATE_SQL = (
    "SELECT g.token, g.exports_number, e.id, e.key, e.number, e.changed_at, e.sizes "
    "FROM namespaces_registrygeneration g "
    "LEFT JOIN namespaces_exportgeneration e ON e.id = ("
    " SELECT id FROM namespaces_exportgeneration WHERE token = g.token"
    " ORDER BY number DESC LIMIT 1) "
    "WHERE g.id = 1"
)


def served_state() -> ServedState:
    with connection.cursor() as cursor:
        cursor.execute(_STATE_SQL)
        row = cursor.fetchone()
    if row is None:
        return ServedState("none-0", 0, None)
    token, number, pk, key, built_number, changed_at, sizes = row
    newest = None
    if pk is not None:
        newest = Built(pk, key, built_number, _aware(changed_at),
                       sizes if isinstance(sizes, dict) else json.loads(sizes))
    return ServedState(f"{token}-{number}", number, newest)


def as_built(generation: ExportGeneration) -> Built:
    return Built(generation.pk, generation.key, generation.number, generation.changed_at,
                 generation.sizes)


# --- reading from the database -----------------------------------------------------------


class GenerationGone(Exception):
    """The generation was pruned while it was being read (a newer one is built)."""


def stored_chunks(built: Built, file_name: str) -> Iterator[bytes]:
    """A stored file's bytes, piece by piece, from one query (one snapshot)."""
    rows = (ExportChunk.objects.filter(generation_id=built.pk, name=file_name)
            .order_by("seq").values_list("data", flat=True))
    size = 0
    for data in rows.iterator(chunk_size=4):
        piece = bytes(data)
        size += len(piece)
        yield piece
    if size != built.sizes[file_name]:
        raise GenerationGone(built.key)


def stream(built: Built, name: str, gzipped: bool) -> Iterator[bytes]:
    """An export sent straight from the database (a disk that cannot take it)."""
    if gzipped:
        yield from stored_chunks(built, name + ".gz")
        return
    inflater = zlib.decompressobj(wbits=31)
    for piece in stored_chunks(built, name + ".gz"):
        yield inflater.decompress(piece)
    yield inflater.flush()


# --- this machine's copies -----------------------------------------------------------------


def file_name(name: str, gzipped: bool) -> str:
    return name + ".gz" if gzipped else name


def local_path(built: Built, name: str, gzipped: bool) -> Path | None:
    """This machine's copy of one representation of an export, filled from the database
    on first need; None when the disk cannot take it (send it from the database)."""
    path = export_root() / built.key / file_name(name, gzipped)
    try:
        if path.stat().st_size == built.sizes[path.name]:
            return path
    except FileNotFoundError:
        pass
    try:
        fill(built, [name])
    except OSError as exc:
        report_disk(exc)
        return None
    disk_recovered()
    return path


def fill(built: Built, names: list[str], *, index: bool = False) -> Path:
    """Copy these exports (both forms) of a stored generation to this machine, and its
    splice index with ``index``; the generation's directory."""
    root = export_root()
    directory = root / built.key
    made = not directory.is_dir()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        for name in names:
            _fill_export(built, directory, name)
        if index and not _complete(directory / INDEX, built):
            _fill_file(built, directory, INDEX)
        if not (directory / META).is_file():
            write_meta(directory, built)
    except BaseException:
        if made:  # nothing of it can be served: leave no empty directory
            _remove_if_unusable(directory)
        raise
    prune(keep=kept_keys(built))
    return directory


def _complete(path: Path, built: Built) -> bool:
    try:
        return path.stat().st_size == built.sizes[path.name]
    except FileNotFoundError:
        return False


def _temporary(directory: Path, name: str) -> Path:
    return directory / f".{name}.{uuid.uuid4().hex}{_TEMPORARY}"


def _fill_export(built: Built, directory: Path, name: str) -> None:
    plain, zipped = directory / name, directory / f"{name}.gz"
    if _complete(plain, built) and _complete(zipped, built):
        return
    plain_tmp, zipped_tmp = _temporary(directory, name), _temporary(directory, f"{name}.gz")
    try:
        with open(zipped_tmp, "wb") as zipped_out, open(plain_tmp, "wb") as plain_out:
            inflater = zlib.decompressobj(wbits=31)
            for piece in stored_chunks(built, zipped.name):
                zipped_out.write(piece)
                plain_out.write(inflater.decompress(piece))
            plain_out.write(inflater.flush())
        if plain_tmp.stat().st_size != built.sizes[name]:
            raise GenerationGone(built.key)
        for path in (zipped_tmp, plain_tmp):
            date_file(path, built)
        os.replace(zipped_tmp, zipped)
        os.replace(plain_tmp, plain)
    finally:
        zipped_tmp.unlink(missing_ok=True)
        plain_tmp.unlink(missing_ok=True)


def _fill_file(built: Built, directory: Path, name: str) -> None:
    temporary = _temporary(directory, name)
    try:
        with open(temporary, "wb") as out:
            for piece in stored_chunks(built, name):
                out.write(piece)
        os.replace(temporary, directory / name)
    finally:
        temporary.unlink(missing_ok=True)


def date_file(path: Path, built: Built) -> None:
    """A file server sending it (X-Accel-Redirect behind nginx) dates it by its
    modification time: the generation's change, as the app does."""
    if built.changed_at is not None:
        stamp = built.changed_at.timestamp()
        os.utime(path, (stamp, stamp))


def write_meta(directory: Path, built: Built) -> None:
    temporary = _temporary(directory, META)
    try:
        temporary.write_text(json.dumps({
            "key": built.key, "number": built.number,
            "changed_at": built.changed_at.isoformat() if built.changed_at else None}))
        os.replace(temporary, directory / META)
    finally:
        temporary.unlink(missing_ok=True)


def _remove_if_unusable(directory: Path) -> None:
    try:
        if not any(entry.name in EXPORTS or entry.name.endswith(".gz")
                   for entry in os.scandir(directory)):
            shutil.rmtree(directory, ignore_errors=True)
    except OSError:
        pass


def kept_keys(built: Built) -> set[str]:
    """The generations the database keeps (the newest KEEP_GENERATIONS of this one's
    registry): what a machine may keep on its disk."""
    token = built.key.rsplit("-", 1)[0]
    return set(ExportGeneration.objects.filter(token=token).order_by("-number")
               .values_list("key", flat=True)[:KEEP_GENERATIONS]) | {built.key}


def prune(*, keep: set[str]) -> None:
    """Remove every generation's directory but ``keep``'s, and what a process that died
    left behind (a temporary file, a builder's directory) long enough ago."""
    root = export_root()
    stale = time.time() - _STALE_SECONDS
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith(PARTIAL):
                if entry.stat().st_mtime < stale:
                    shutil.rmtree(entry.path, ignore_errors=True)
            elif entry.is_dir() and not entry.name.startswith(".") and entry.name not in keep:
                shutil.rmtree(entry.path, ignore_errors=True)
            elif entry.is_dir() and entry.name in keep:
                for inner in os.scandir(entry.path):
                    if inner.name.endswith(_TEMPORARY) and inner.stat().st_mtime < stale:
                        os.unlink(inner.path)
        except OSError:  # another process removed it first
            continue


# --- a bad disk ----------------------------------------------------------------------------

_disk = {"problem": ""}


def report_disk(exc: OSError) -> None:
    """One line when the disk stops taking fills (not one per request)."""
    problem = f"{exc.strerror or exc}"
    if _disk["problem"] != problem:
        _disk["problem"] = problem
        logger.error("exports: EXPORT_ROOT %s cannot take a generation (%s); sending the "
                     "exports from the database until it can", export_root(), problem)


def disk_recovered() -> None:
    if _disk["problem"]:
        logger.warning("exports: EXPORT_ROOT %s takes generations again", export_root())
        _disk["problem"] = ""


def disk_problem(needed: int) -> str:
    """Why this machine's EXPORT_ROOT cannot take a generation of ``needed`` bytes ("" if
    it can): it cannot be written (read-only, missing permission) or is too full."""
    root = export_root()
    probe = root / f".probe-{os.getpid()}-{uuid.uuid4().hex}{_TEMPORARY}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        try:
            with open(probe, "wb") as out:
                out.write(b"\0" * 4096)
        finally:
            probe.unlink(missing_ok=True)
        stats = os.statvfs(root)
    except OSError as exc:
        return f"EXPORT_ROOT {root} cannot be written: {exc.strerror or exc}"
    free = stats.f_bavail * stats.f_frsize
    if free < needed:
        return (f"EXPORT_ROOT {root} has {free} bytes free; a generation of the exports "
                f"needs {needed}")
    return ""


# --- without the database --------------------------------------------------------------------


class OnDisk(NamedTuple):
    directory: Path
    key: str
    changed_at: datetime | None


def newest_on_disk(name: str) -> OnDisk | None:
    """The newest generation this machine has a copy of ``name`` of (either form)."""
    found: list[tuple[int, OnDisk]] = []
    try:
        entries = list(os.scandir(export_root()))
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith("."):
            continue
        directory = Path(entry.path)
        try:
            meta = json.loads((directory / META).read_text())
        except (OSError, ValueError):
            continue
        if not ((directory / name).is_file() or (directory / f"{name}.gz").is_file()):
            continue
        changed_at = datetime.fromisoformat(meta["changed_at"]) if meta["changed_at"] else None
        found.append((meta["number"], OnDisk(directory, meta["key"], changed_at)))
    return max(found, key=lambda pair: pair[0])[1] if found else None
