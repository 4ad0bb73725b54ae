"""Building the exports: one builder in the whole cluster, the result stored in the
database (``ExportGeneration``, ``ExportChunk``), which every machine reads.

- **One builder per cluster.** A build runs under a PostgreSQL advisory lock
  (``pg_try_advisory_lock``, held by the builder's session: released at its end, or
  when its connection dies). ``build_exports_task`` runs after each commit that moved
  the exports' generation; a task that finds the lock taken returns at once, and the
  holder, once it has released the lock, looks at the generation again and builds on
  while it has moved: no publish is left unbuilt, and no worker slot waits on the lock.
- **One consistent snapshot.** The documents are written from one REPEATABLE READ,
  READ ONLY transaction (PostgreSQL): exactly the registry of its generation.
- **Spliced from the previous generation** (export_splice.py): the previous stored
  generation's files, on this machine's disk (filled from the database if they are
  not), give every unchanged record's bytes and gzip blocks; only what changed is
  serialised and compressed again.
- **Stored, then kept to KEEP_GENERATIONS.** The gzip form of each export and the splice
  index go into the database in pieces of CHUNK_BYTES, in one transaction that also
  removes every generation but the newest KEEP_GENERATIONS; the plain forms are the gzip
  forms inflated. The builder's own disk then holds the new generation like any
  machine's.
- **Retried.** A serialization failure or a deadlock (SQLSTATE 40001, 40P01: an operator's
  ``default_transaction_isolation = serializable``, a concurrent prune) makes the
  build start again, at most BUILD_ATTEMPTS times with a doubling pause; a bad disk is
  the task's to retry later.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction
from django.db.models import BigIntegerField, Func

from registry.namespaces import exports
from registry.namespaces.export_cache import (
    EXPORTS,
    KEEP_GENERATIONS,
    PARTIAL,
    Built,
    as_built,
    date_file,
    export_root,
    fill,
    prune,
    write_meta,
)
from registry.namespaces.export_splice import (
    INDEX,
    DocumentWriter,
    PreviousGeneration,
    stamp_of,
    write_index,
)
from registry.namespaces.models import ExportChunk, ExportGeneration, Namespace
from registry.namespaces.public_cache import Generation, current_generation

logger = logging.getLogger("registry.exports")

IANA_CSV = {"formal": "urn-namespaces-1.csv", "informal": "urn-namespaces-2.csv"}
# Bump when a record's serialisation changes: the next build then splices nothing.
FRAGMENT_FORMAT = "3"
CHUNK = 2000  # records read per query
CHUNK_BYTES = 1 << 20  # a stored piece of a file
# The advisory lock's key: any constant, the same in every process of the cluster.
LOCK_KEY = int.from_bytes(hashlib.sha256(b"urn-registry exports build").digest()[:8],
                          "big", signed=True)
BUILD_ATTEMPTS = 5
RETRY_PAUSE_SECONDS = 0.2  # then doubled each time
_RETRIED_SQLSTATES = {"40001": "a serialization failure", "40P01": "a deadlock"}
_local_lock = threading.Lock()  # SQLite (development, one process): no advisory locks

T = TypeVar("T")


@contextmanager
def build_lock() -> Iterator[bool]:
    """The cluster's one builder's lock; yields whether this process holds it (never
    waits)."""
    if connection.vendor != "postgresql":
        held = _local_lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                _local_lock.release()
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
            except DatabaseError:  # the session is gone, and its lock with it
                connection.close()


def build_current_exports() -> Built | None:
    """Make sure the current generation is built and stored: the task's and the
    command's body. Returns the newest generation this call stored or found, or None
    when another builder holds the lock (it builds whatever moved after it started)."""
    done: Built | None = None
    while True:
        with build_lock() as held:
            if not held:
                return done
            done = with_retries(build_exports)
        # Released: a publish whose task found the lock taken is seen here.
        if done.number >= _current_number():
            return done


def _current_number() -> int:
    return int(current_generation().exports_key.rsplit("-", 1)[1])


def with_retries(build: Callable[[], T]) -> T:
    """``build()``, started again after a serialization failure or a deadlock."""
    for attempt in range(1, BUILD_ATTEMPTS + 1):
        try:
            return build()
        except OperationalError as exc:
            what = _RETRIED_SQLSTATES.get(getattr(exc.__cause__, "sqlstate", None) or "")
            if what is None or attempt == BUILD_ATTEMPTS:
                raise
            pause = RETRY_PAUSE_SECONDS * 2 ** (attempt - 1) * random.uniform(1, 1.5)  # noqa: S311
            logger.warning("exports: the build met %s (attempt %d of %d); trying again in "
                           "%.1f s", what, attempt, BUILD_ATTEMPTS, pause)
            time.sleep(pause)
    raise AssertionError("unreachable")


def build_exports() -> Built:
    """Build the current generation and store it, unless it is stored already. The
    caller holds ``build_lock``."""
    started = time.monotonic()
    root = export_root()
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                if outermost:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                # The rows query is costed high enough to be JIT-compiled, which took
                # longer than the query itself (2.1 s instead of 4.4 s at 10,000).
                cursor.execute("SET LOCAL jit = off")
        generation = current_generation()
        stored = ExportGeneration.objects.filter(key=generation.exports_key).first()
        if stored is not None:
            return as_built(stored)
        salt = _salt()
        token = generation.exports_key.rsplit("-", 1)[0]
        previous = (ExportGeneration.objects.filter(token=token, salt=salt)
                    .order_by("-number").first())
        for leftover in root.glob(PARTIAL + "*"):  # a builder that died: no one else builds
            shutil.rmtree(leftover, ignore_errors=True)
        partial = root / f"{PARTIAL}{generation.exports_key}-{uuid.uuid4().hex}"
        try:
            old = fill(as_built(previous), list(EXPORTS), index=True) if previous else None
            partial.mkdir(parents=True)
            counts = _write_documents(partial, old, salt)
        except OSError as exc:
            shutil.rmtree(partial, ignore_errors=True)
            logger.error("exports: cannot build %s in EXPORT_ROOT %s (%s); the generation "
                         "stored before it is still served", generation.exports_key, root,
                         exc.strerror or exc)
            raise
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    try:
        built, kept = _store(partial, generation, salt, started)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    _move_into_place(partial, built, kept)
    logger.info("exports: built %s in %.2f s (%d records copied, %d serialised)", built.key,
                time.monotonic() - started, counts["copied"], counts["serialised"])
    return built


def _salt() -> str:
    """What every record's bytes also depend on: the format and SITE_URL."""
    return hashlib.sha256(f"{FRAGMENT_FORMAT}|{settings.SITE_URL}".encode()).hexdigest()[:12]


def _write_documents(directory: Path, previous: Path | None, salt: str) -> dict[str, int]:
    """Every export of the current snapshot into ``directory``, with its gzip form and
    the index the next build splices from (export_splice.py)."""
    old = PreviousGeneration(previous, salt, EXPORTS)
    writers = {name: DocumentWriter(directory, name, old.documents.get(name))
               for name in EXPORTS}
    serialised: set[int] = set()
    records = 0
    try:
        xml, combined = writers["registry.xml"], writers["registry.csv"]
        frame = exports.xml_frame()
        xml.frame(frame[0])
        combined.frame(exports.csv_line(exports.CSV_COLUMNS))
        for index, kind in enumerate(exports.SUB_REGISTRIES):
            iana = writers[IANA_CSV[kind]]
            iana.frame(exports.csv_line(exports.SUB_REGISTRY_CSV_COLUMNS))
            for pairs in _ordered_chunks(kind):
                records += len(pairs)
                fragments = _Fragments(serialised)
                xml.records(pairs, fragments.texts(lambda f: exports.RECORD_INDENT + f[0]))
                iana.records(pairs, fragments.texts(lambda f: f[1]))
                combined.records(pairs, fragments.texts(lambda f: f[2]))
            xml.frame(frame[index + 1])
        shapes = {name: writer.finish() for name, writer in writers.items()}
    finally:
        old.close()
    write_index(directory, salt, list(writers.values()), shapes)
    return {"copied": records - len(serialised), "serialised": len(serialised)}


def _ordered_chunks(kind: str) -> Iterator[list[tuple[int, int]]]:
    """The sub-registry's ``(pk, stamp)`` pairs in IANA's order, CHUNK at a time."""
    pairs = _ordered_stamps(kind)
    for start in range(0, len(pairs), CHUNK):
        yield pairs[start:start + CHUNK]


Fragment = tuple[str, str, str]  # a record's XML, IANA CSV line and combined CSV line


class _Fragments:
    """The serialised records of one chunk, made only for the records a document could
    not copy, once for all the documents."""

    def __init__(self, serialised: set[int]):
        self.known: dict[int, Fragment] = {}
        self.serialised = serialised

    def texts(self, part: Callable[[Fragment], str]) -> Callable[[list[int]], dict[int, str]]:
        def texts(pks: list[int]) -> dict[int, str]:
            missing = [pk for pk in pks if pk not in self.known]
            if missing:
                self.known.update(_serialise(missing))
                self.serialised.update(missing)
            return {pk: part(self.known[pk]) for pk in pks}
        return texts


def _serialise(pks: list[int]) -> dict[int, Fragment]:
    return {ns.pk: (exports.xml_fragment(ns), exports.iana_csv_fragment(ns),
                    exports.csv_fragment(ns))
            for ns in Namespace.objects.with_version_facts().filter(pk__in=pks)}


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


def _stored_files() -> list[str]:
    return [*(f"{name}.gz" for name in EXPORTS), INDEX]


def _store(directory: Path, generation: Generation, salt: str,
           started: float) -> tuple[Built, set[str]]:
    """The built files into the database, and every generation but the newest
    KEEP_GENERATIONS out of it, in one transaction after the snapshot's (which is read
    only)."""
    token, number = generation.exports_key.rsplit("-", 1)
    sizes = {path.name: path.stat().st_size for path in directory.iterdir()
             if path.name in EXPORTS or path.name in _stored_files()}
    with transaction.atomic():
        stored = ExportGeneration.objects.create(
            key=generation.exports_key, token=token, number=int(number),
            changed_at=generation.changed_at, salt=salt, sizes=sizes,
            build_seconds=round(time.monotonic() - started, 3),
            built_by=f"{socket.gethostname()}:{os.getpid()}")
        batch: list[ExportChunk] = []
        for name in _stored_files():
            with open(directory / name, "rb") as source:
                seq = 0
                while data := source.read(CHUNK_BYTES):
                    batch.append(ExportChunk(generation=stored, name=name, seq=seq, data=data))
                    seq += 1
                    if len(batch) == 8:  # at most 8 MiB in one statement
                        ExportChunk.objects.bulk_create(batch)
                        batch = []
        ExportChunk.objects.bulk_create(batch)
        # Every generation but the newest KEEP_GENERATIONS of this registry: a constant
        # three statements, however many there are.
        kept = list(ExportGeneration.objects.filter(token=token).order_by("-number")
                    .values_list("pk", "key")[:KEEP_GENERATIONS])
        ids = [pk for pk, _ in kept]
        ExportChunk.objects.exclude(generation_id__in=ids).delete()
        with connection.cursor() as cursor:  # the ORM's delete would first select them
            placeholders = ", ".join("%s" for _ in ids)
            cursor.execute("DELETE FROM namespaces_exportgeneration "  # noqa: S608 - only %s
                           f"WHERE id NOT IN ({placeholders})", ids)
    return as_built(stored), {key for _, key in kept}


def _move_into_place(partial: Path, built: Built, kept: set[str]) -> None:
    """The builder's disk holds the new generation like any machine's: its files moved
    into the generation's directory (which a request may have begun to fill), then
    every generation the database no longer keeps removed."""
    target = export_root() / built.key
    try:
        target.mkdir(exist_ok=True)
        for path in partial.iterdir():
            date_file(path, built)
            os.replace(path, target / path.name)
        write_meta(target, built)
    except OSError as exc:  # the database has it: every machine can serve it
        logger.error("exports: %s is stored but could not be kept on this disk (%s)",
                     built.key, exc.strerror or exc)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    prune(keep=kept)

