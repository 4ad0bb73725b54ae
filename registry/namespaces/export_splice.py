"""A generation's export files spliced from the previous generation's: what a publish
changed is serialised again, everything else is copied by the kernel.

Each document is a sequence of *pieces*: the frame's parts and one fragment per
record. Beside the files, a build writes an index (``index.bin``): for every record
piece its namespace, the namespace's ``updated_at`` (to the microsecond) and where
its bytes are; and for the gzip form, where each *block* of pieces is. The next
build reads the ordered ``(pk, updated_at)`` of every namespace (one query, no
fragment text), and for a record whose pair is in the index copies its bytes from
the previous file (``os.copy_file_range``, runs coalesced); only the others are
read from ``ExportFragment`` (or serialised again).

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
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

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


class OldDocument(NamedTuple):
    """One document of the previous generation: its files and where its pieces are."""

    plain: int  # fd
    gz: int  # fd
    records: dict[int, tuple[int, int, int]]  # pk -> (stamp, offset, length)
    blocks: dict[bytes, tuple[int, int]]  # block id -> (gz offset, gz length)


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
                columns = []
                for _ in range(4):
                    column = array("q")
                    column.frombytes(raw[at:at + 8 * n])
                    columns.append(column)
                    at += 8 * n
                ids = [raw[at + 16 * i:at + 16 * (i + 1)] for i in range(m)]
                at += 16 * m
                offsets, lengths = array("q"), array("q")
                offsets.frombytes(raw[at:at + 8 * m])
                lengths.frombytes(raw[at + 8 * m:at + 16 * m])
                at += 16 * m
                pks, stamps, starts, sizes = columns
                if name not in wanted:
                    continue
                plain = os.open(directory / name, os.O_RDONLY)
                self._fds.append(plain)
                gz = os.open(directory / f"{name}.gz", os.O_RDONLY)
                self._fds.append(gz)
                self.documents[name] = OldDocument(
                    plain, gz, dict(zip(pks, zip(stamps, starts, sizes, strict=True),
                                        strict=True)),
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


class DocumentWriter:
    """Writes one document and its gzip form, piece by piece, reusing the previous
    generation's bytes where a piece (or a whole block) is unchanged."""

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
        # The block being filled: its first plain offset, its piece keys, and whether
        # it can be reused at all (frames are always compressed anew).
        self._block_start = 0
        self._block_keys = array("q")
        self._block_reusable = True
        self.records = [array("q") for _ in range(4)]  # pk, stamp, offset, length
        self.blocks: list[tuple[bytes, int, int]] = []  # id, gz offset, gz length

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

    def _reuse(self, offset: int, length: int) -> None:
        if self._text:
            self._flush_plain()
        if self._pending is not None and self._pending[0] + self._pending[1] == offset:
            self._pending = (self._pending[0], self._pending[1] + length)
        else:
            self._flush_plain()
            self._pending = (offset, length)
        self.size += length

    def _write(self, data: bytes) -> None:
        if self._pending is not None:
            self._flush_plain()
        self._text.append(data)
        self.size += len(data)
        self._text_size += len(data)
        if self._text_size > 1 << 20:
            self._flush_plain()

    # -- pieces --
    def frame(self, text: str) -> None:
        """A part of the frame: never reused, a block of its own."""
        self._end_block()
        self._write(text.encode())
        self._block_reusable = False
        self._end_block()

    def record(self, pk: int, stamp: int, text: Callable[[], str]) -> None:
        """One record's piece; ``text`` is called only when the bytes cannot be copied."""
        start = self.size
        previous = self.old.records.get(pk) if self.old else None
        if previous is not None and previous[0] == stamp:
            self._reuse(previous[1], previous[2])
        else:
            self._write(text().encode())
        for column, value in zip(self.records, (pk, stamp, start, self.size - start),
                                 strict=True):
            column.append(value)
        self._block_keys.extend((pk, stamp))
        if pk % BLOCK_MOD == 0:
            self._end_block()

    # -- gzip --
    def _end_block(self) -> None:
        end = self.size
        if end > self._block_start or self._block_keys:
            ident = hashlib.blake2b(self._block_keys.tobytes(), digest_size=16).digest()
            reused = (self.old.blocks.get(ident) if self.old and self._block_reusable
                      else None)
            offset = self.gz_size
            if reused is not None:
                _copy(self.old.gz, self.gz, *reused)  # type: ignore[union-attr]
                length = reused[1]
            else:
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
        self._block_keys = array("q")
        self._block_reusable = True

    def finish(self) -> dict[str, int]:
        """Close the document: the gzip trailer (CRC-32 of the plain file) and the
        shape of its index."""
        self._end_block()
        self._flush_plain()
        crc, at = 0, 0
        while chunk := os.pread(self.plain, 1 << 22, at):
            crc = zlib.crc32(chunk, crc)
            at += len(chunk)
        _write_all(self.gz, DEFLATE_END + struct.pack("<II", crc, self.size & 0xFFFFFFFF))
        os.close(self.plain)
        os.close(self.gz)
        return {"records": len(self.records[0]), "blocks": len(self.blocks)}

    def index_bytes(self) -> bytes:
        parts = [column.tobytes() for column in self.records]
        parts.append(b"".join(ident for ident, _, _ in self.blocks))
        parts.append(array("q", (offset for _, offset, _ in self.blocks)).tobytes())
        parts.append(array("q", (length for _, _, length in self.blocks)).tobytes())
        return b"".join(parts)


def write_index(directory: Path, salt: str, writers: list[DocumentWriter],
                shapes: dict[str, dict[str, int]]) -> None:
    header = json.dumps({"format": INDEX_FORMAT, "salt": salt,
                         "documents": shapes}).encode()
    with open(directory / INDEX, "wb") as out:
        out.write(struct.pack("<I", len(header)) + header)
        for writer in writers:
            out.write(writer.index_bytes())
