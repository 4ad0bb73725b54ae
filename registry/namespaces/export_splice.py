"""A generation's export files spliced from the previous generation's: what a publish
changed is serialised again, everything else is copied by the kernel.

Each document is a sequence of *pieces*: the frame's parts and one fragment per
record. Beside the files, a build writes an index (``index.bin``): for every record
piece its namespace, the namespace's ``updated_at`` (to the microsecond) and where
its bytes are; and for the gzip form, where each *block* of pieces is. The next
build reads the ordered ``(pk, updated_at)`` of every namespace (one query, no
fragment text), and for a record whose pair is in the index copies its bytes from
the previous file (``os.copy_file_range``, runs coalesced); only the others are
serialised again.

The gzip form is one deflate stream made of independently compressed blocks, each
ending on a byte boundary (a full flush, no final bit), followed by an empty final
block and the gzip trailer. A block ends after a record whose pk is a multiple of
``BLOCK_MOD`` (content-defined, so an insertion changes one block, not the blocks
after it) and around each frame piece. A block whose pieces are all unchanged is
copied compressed; the CRC-32 is computed over the new plain file, in C.

Correctness rests on one invariant, kept by the actions: every change to what a
namespace's export fragments say moves its row's ``updated_at`` (a new version
saves the row). A different fragment format or SITE_URL (the salt) makes the
previous index unusable, and everything is serialised again.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from itertools import accumulate, chain
from pathlib import Path

INDEX = "index.bin"
INDEX_FORMAT = 1
BLOCK_MOD = 64
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # no name, mtime 0
DEFLATE_END = b"\x03\x00"  # an empty final block
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_COPY_CHUNK = 1 << 30


def stamp_of(updated_at: datetime | None) -> int:
    """A namespace row's ``updated_at`` as integer microseconds (0 when unset)."""
    if updated_at is None:
        return 0
    delta = updated_at - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


class OldDocument:
    """One document of the previous generation: its files, its records' ``(pk,
    stamp)`` pairs (flat) with where their bytes are, and its gzip blocks."""

    def __init__(self, plain: int, gz: int, pairs: array, starts: array, sizes: array,
                 blocks: dict[bytes, tuple[int, int]]):
        self.plain, self.gz, self.pairs = plain, gz, pairs
        self.starts, self.sizes, self.blocks = starts, sizes, blocks
        self._positions: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self.pairs) // 2

    def position(self, pk: int) -> int | None:
        """Where ``pk``'s record is (built on first use: an edit in place never needs it)."""
        if self._positions is None:
            self._positions = dict(zip(self.pairs[0::2], range(len(self)), strict=True))
        return self._positions.get(pk)


class PreviousGeneration:
    """The newest built generation's files and index, if they can be reused."""

    def __init__(self, directory: Path | None, salt: str, names: Iterable[str]):
        self.documents: dict[str, OldDocument] = {}
        self._fds: list[int] = []
        if directory is None or not (directory / INDEX).is_file():
            return
        try:
            raw = (directory / INDEX).read_bytes()
            header_length = struct.unpack_from("<I", raw)[0]
            header = json.loads(raw[4:4 + header_length])
            if header.get("format") != INDEX_FORMAT or header.get("salt") != salt:
                return
            at = 4 + header_length
            wanted = set(names)
            for name, shape in header["documents"].items():
                n, m = shape["records"], shape["blocks"]
                pairs, starts, sizes = array("q"), array("q"), array("q")
                offsets, lengths = array("q"), array("q")
                pairs.frombytes(raw[at:at + 16 * n])
                starts.frombytes(raw[at + 16 * n:at + 24 * n])
                sizes.frombytes(raw[at + 24 * n:at + 32 * n])
                at += 32 * n
                ids = [raw[at + 16 * i:at + 16 * (i + 1)] for i in range(m)]
                at += 16 * m
                offsets.frombytes(raw[at:at + 8 * m])
                lengths.frombytes(raw[at + 8 * m:at + 16 * m])
                at += 16 * m
                if len(pairs) != 2 * n or len(sizes) != n or len(lengths) != m:
                    raise ValueError("the index is shorter than its header says")
                if name not in wanted:
                    continue
                plain = os.open(directory / name, os.O_RDONLY)
                self._fds.append(plain)
                gz = os.open(directory / f"{name}.gz", os.O_RDONLY)
                self._fds.append(gz)
                self.documents[name] = OldDocument(
                    plain, gz, pairs, starts, sizes,
                    dict(zip(ids, zip(offsets, lengths, strict=True), strict=True)))
        except (OSError, ValueError, KeyError, struct.error):
            self.close()
            self.documents = {}

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _copy(source: int, target: int, offset: int, length: int) -> None:
    """Append ``length`` bytes of ``source`` from ``offset`` to ``target``, in the
    kernel where it can."""
    while length > 0:
        try:
            done = os.copy_file_range(source, target, min(length, _COPY_CHUNK), offset)
        except OSError:
            done = 0
        if done <= 0:  # not supported here (or a short file): through user space
            chunk = os.pread(source, min(length, 1 << 20), offset)
            if not chunk:
                raise OSError(f"the previous export file ended early at {offset}")
            _write_all(target, chunk)
            done = len(chunk)
        offset += done
        length -= done


_COPY, _WRITE = 0, 1


def _common_run(new: array, i: int, old: array, at: int, most: int) -> int:
    """How many (pk, stamp) pairs from ``new``'s i-th on equal ``old``'s from ``at`` on
    (at most ``most``): slices compared in C, the first difference found by halving."""
    most = min(most, len(old) // 2 - at)
    if most <= 0 or new[2 * i:2 * i + 2] != old[2 * at:2 * at + 2]:
        return 0
    if new[2 * i:2 * (i + most)] == old[2 * at:2 * (at + most)]:
        return most
    low, high = 1, most  # new[i:i+low] == old[at:at+low]; high is a known mismatch
    while high - low > 1:
        middle = (low + high) // 2
        if new[2 * i:2 * (i + middle)] == old[2 * at:2 * (at + middle)]:
            low = middle
        else:
            high = middle
    return low


class DocumentWriter:
    """Writes one document and its gzip form, piece by piece, reusing the previous
    generation's bytes where a run of records (or a whole block) is unchanged."""

    def __init__(self, directory: Path, name: str, old: OldDocument | None, level: int = 6):
        self.name = name
        self.old = old
        self.level = level
        self.plain = os.open(directory / name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.gz = os.open(directory / f"{name}.gz", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        _write_all(self.gz, GZIP_HEADER)
        self.size = 0  # plain bytes written
        self.gz_size = len(GZIP_HEADER)
        self._pending: tuple[int, int] | None = None  # a run to copy: (old offset, length)
        self._text: list[bytes] = []  # bytes waiting to be written
        self._text_size = 0
        # The block being filled: its first plain offset, its first record, and whether
        # it can be reused at all (frames are always compressed anew).
        self._block_start = 0
        self._block_first = 0
        self._block_reusable = True
        self.pairs = array("q")  # the records' (pk, stamp), flat
        self.starts = array("q")  # where each record's bytes are in the plain file
        self.sizes = array("q")  # and how many
        self.blocks: list[tuple[bytes, int, int]] = []  # id, gz offset, gz length
        self._cursor = 0  # the previous generation's record expected next
        self._gz_pending: tuple[int, int] | None = None  # compressed blocks to copy
        self._ends: list[int] = []  # the records of this call that end a block

    # -- plain file --
    def _flush_plain(self) -> None:
        if self._pending is not None:
            assert self.old is not None
            _copy(self.old.plain, self.plain, *self._pending)
            self._pending = None
        if self._text:
            _write_all(self.plain, b"".join(self._text))
            self._text = []
            self._text_size = 0

    def _write(self, data: bytes) -> None:
        if self._pending is not None:
            self._flush_plain()
        self._text.append(data)
        self.size += len(data)
        self._text_size += len(data)
        if self._text_size > 1 << 20:
            self._flush_plain()

    def _copy_from_old(self, offset: int, length: int) -> None:
        pending = self._pending
        if pending is not None and not self._text and pending[0] + pending[1] == offset:
            self._pending = (pending[0], pending[1] + length)
        else:
            self._flush_plain()
            self._pending = (offset, length)
        self.size += length

    # -- pieces --
    def frame(self, text: str) -> None:
        """A part of the frame: never reused, a block of its own."""
        self._end_block()
        self._write(text.encode())
        self._block_reusable = False
        self._end_block()

    def records(self, pairs: list[tuple[int, int]],
                texts: Callable[[list[int]], Mapping[int, str]]) -> None:
        """Records' pieces, in order (``(pk, stamp)`` pairs). Runs that the previous
        generation has, in the same order and unchanged, are copied whole (found by
        comparing slices, in C); ``texts(pks)`` is asked once for the rest."""
        flat = array("q", chain.from_iterable(pairs))
        self._ends = [i for i, pk in enumerate(flat[0::2]) if pk % BLOCK_MOD == 0]
        plan = self._plan(flat)
        wanted = [flat[2 * i] for step, i, _, _ in plan if step == _WRITE]
        text = texts(wanted) if wanted else {}
        for step, i, end, source in plan:
            if step == _COPY:
                self._copy_run(flat, i, end, source)
            else:
                self._write_record(flat, i, text[flat[2 * i]].encode())

    def _plan(self, flat: array) -> list[tuple[int, int, int, int]]:
        """(_COPY, first, end, its first record in the previous generation) for each
        run found there unchanged; (_WRITE, i, i + 1, -1) for each other record."""
        plan: list[tuple[int, int, int, int]] = []
        old, n, i, cursor = self.old, len(flat) // 2, 0, self._cursor
        while i < n:
            if old is not None:
                run = _common_run(flat, i, old.pairs, cursor, n - i)
                if run:
                    plan.append((_COPY, i, i + run, cursor))
                    i, cursor = i + run, cursor + run
                    continue
                where = old.position(flat[2 * i])
                if where is not None and where != cursor:
                    cursor = where  # moved, or records before it went: look there
                    continue
                if where is not None:
                    cursor = where + 1  # edited in place: written, the run goes on after
            plan.append((_WRITE, i, i + 1, -1))
            i += 1
        self._cursor = cursor
        return plan

    def _copy_run(self, flat: array, first: int, end: int, source: int) -> None:
        old = self.old
        assert old is not None
        self.pairs.extend(flat[2 * first:2 * end])
        at = first
        ends = self._ends
        for i in ends[bisect_left(ends, first):bisect_left(ends, end)]:
            # a block ends after record i
            self._copy_records(source + at - first, source + i + 1 - first)
            self._end_block()
            at = i + 1
        if at < end:
            self._copy_records(source + at - first, source + end - first)

    def _copy_records(self, first: int, end: int) -> None:
        """The previous generation's records [first, end): one range when they are
        contiguous there (as within a sub-registry), else one each."""
        old = self.old
        assert old is not None
        starts, sizes = old.starts[first:end], old.sizes[first:end]
        total = sum(sizes)
        self.starts.extend(accumulate(sizes, initial=self.size))
        self.starts.pop()
        self.sizes.extend(sizes)
        if starts[-1] + sizes[-1] - starts[0] == total:
            self._copy_from_old(starts[0], total)
        else:
            for start, size in zip(starts, sizes, strict=True):
                self._copy_from_old(start, size)

    def _write_record(self, flat: array, i: int, data: bytes) -> None:
        self.starts.append(self.size)
        self._write(data)
        self.pairs.extend(flat[2 * i:2 * i + 2])
        self.sizes.append(len(data))
        if flat[2 * i] % BLOCK_MOD == 0:
            self._end_block()

    # -- gzip --
    def _end_block(self) -> None:
        """Close the block: the pieces since the last one ended."""
        end = self.size
        last = len(self.sizes)
        if end > self._block_start:
            keys = self.pairs[2 * self._block_first:2 * last].tobytes()
            ident = hashlib.blake2b(keys, digest_size=16).digest()
            reused = (self.old.blocks.get(ident) if self.old and self._block_reusable
                      else None)
            offset = self.gz_size
            if reused is not None:  # copied with its neighbours in one call, later
                length = reused[1]
                waiting = self._gz_pending
                if waiting is not None and waiting[0] + waiting[1] == reused[0]:
                    self._gz_pending = (waiting[0], waiting[1] + length)
                else:
                    self._flush_gz()
                    self._gz_pending = reused
            else:
                self._flush_gz()
                self._flush_plain()
                data = os.pread(self.plain, end - self._block_start, self._block_start)
                compressor = zlib.compressobj(self.level, zlib.DEFLATED, -zlib.MAX_WBITS)
                packed = compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)
                _write_all(self.gz, packed)
                length = len(packed)
            self.gz_size += length
            if self._block_reusable:
                self.blocks.append((ident, offset, length))
        self._block_start = end
        self._block_first = last
        self._block_reusable = True

    def _flush_gz(self) -> None:
        if self._gz_pending is not None:
            assert self.old is not None
            _copy(self.old.gz, self.gz, *self._gz_pending)
            self._gz_pending = None

    def finish(self) -> dict[str, int]:
        """Close the document: the gzip trailer (CRC-32 of the plain file) and the
        shape of its index."""
        self._end_block()
        self._flush_gz()
        self._flush_plain()
        crc, at = 0, 0
        while chunk := os.pread(self.plain, 1 << 22, at):
            crc = zlib.crc32(chunk, crc)
            at += len(chunk)
        _write_all(self.gz, DEFLATE_END + struct.pack("<II", crc, self.size & 0xFFFFFFFF))
        os.close(self.plain)
        os.close(self.gz)
        return {"records": len(self.sizes), "blocks": len(self.blocks)}

    def index_bytes(self) -> bytes:
        return b"".join([
            self.pairs.tobytes(), self.starts.tobytes(), self.sizes.tobytes(),
            b"".join(ident for ident, _, _ in self.blocks),
            array("q", (offset for _, offset, _ in self.blocks)).tobytes(),
            array("q", (length for _, _, length in self.blocks)).tobytes(),
        ])


def write_index(directory: Path, salt: str, writers: list[DocumentWriter],
                shapes: dict[str, dict[str, int]]) -> None:
    header = json.dumps({"format": INDEX_FORMAT, "salt": salt,
                         "documents": shapes}).encode()
    with open(directory / INDEX, "wb") as out:
        out.write(struct.pack("<I", len(header)) + header)
        for writer in writers:
            out.write(writer.index_bytes())
