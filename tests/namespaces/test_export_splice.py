"""Export files spliced from the previous generation's (export_splice.py): the bytes
are exactly those of a build from scratch, only what changed is serialised or
compressed again, and an index that cannot be trusted is not used."""

import gzip
import random
import zlib

import pytest

from registry.namespaces import export_splice
from registry.namespaces.export_splice import (
    INDEX,
    DocumentWriter,
    PreviousGeneration,
    write_index,
)

NAME = "doc.txt"
SALT = "salt-1"


def build(directory, records, *, previous=None, salt=SALT, serialised=None):
    """One document: a header, the records ``[(pk, stamp, text)]``, a footer."""
    directory.mkdir()
    old = PreviousGeneration(previous, salt, [NAME])
    writer = DocumentWriter(directory, NAME, old.documents.get(NAME))
    writer.frame("header\n")
    texts = {pk: text for pk, _, text in records}

    def make(pks):
        if serialised is not None:
            serialised.extend(pks)
        return {pk: texts[pk] for pk in pks}

    pairs = [(pk, stamp) for pk, stamp, _ in records]
    for start in range(0, len(pairs), 97):  # in chunks, as the builder calls it
        writer.records(pairs[start:start + 97], make)
    writer.frame("footer\n")
    shape = writer.finish()
    old.close()
    write_index(directory, salt, [writer], {NAME: shape})
    return (directory / NAME).read_bytes(), (directory / f"{NAME}.gz").read_bytes()


def registry(n, seed=8141):
    rng = random.Random(seed)
    pks = rng.sample(range(1, 10 * n), n)
    return [(pk, 1000 + pk, f"record {pk}: " + "x" * rng.randint(0, 300) + "\n")
            for pk in sorted(pks, key=str)]


def expected(records):
    return ("header\n" + "".join(text for _, _, text in records) + "footer\n").encode()


@pytest.fixture
def compressions(monkeypatch):
    """How many blocks were compressed (not copied)."""
    made = []
    original = zlib.compressobj

    def counting(*args, **kwargs):
        made.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(export_splice.zlib, "compressobj", counting)
    return made


@pytest.mark.parametrize("change", ["edit", "insert", "delete", "move", "none", "all"])
def test_a_spliced_document_is_the_document_built_from_scratch(tmp_path, change):
    before = registry(2000)
    build(tmp_path / "g1", before)
    after = list(before)
    if change == "edit":
        pk, stamp, _ = after[700]
        after[700] = (pk, stamp + 1, "an edited record\n")
    elif change == "insert":
        after.insert(1234, (999_999_999, 5, "a new record\n"))
    elif change == "delete":
        del after[0], after[-1]
    elif change == "move":  # a NID renamed: the same pk elsewhere in the order
        after.insert(10, after.pop(1500))
    elif change == "all":
        after = [(pk, stamp + 1, text.upper()) for pk, stamp, text in after]
    serialised: list[int] = []
    plain, zipped = build(tmp_path / "g2", after, previous=tmp_path / "g1",
                          serialised=serialised)
    assert plain == expected(after)
    assert gzip.decompress(zipped) == plain
    scratch_plain, scratch_zipped = build(tmp_path / "scratch", after)
    assert plain == scratch_plain and gzip.decompress(scratch_zipped) == plain
    unchanged = {(pk, stamp) for pk, stamp, _ in before}
    assert sorted(serialised) == sorted(pk for pk, stamp, _ in after
                                        if (pk, stamp) not in unchanged)


def test_one_changed_record_compresses_one_block_and_the_frames(tmp_path, compressions):
    before = registry(5000)
    build(tmp_path / "g1", before)
    blocks = len(compressions)
    assert blocks > 40  # content-defined blocks of about BLOCK_MOD records
    compressions.clear()
    after = list(before)
    pk, stamp, _ = after[2500]
    after[2500] = (pk, stamp + 1, "an edited record\n")
    plain, zipped = build(tmp_path / "g2", after, previous=tmp_path / "g1")
    assert gzip.decompress(zipped) == plain == expected(after)
    assert len(compressions) == 3  # the header, the changed record's block, the footer


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage", "other salt",
                                    "file gone"])
def test_an_index_that_cannot_be_trusted_is_not_used(tmp_path, damage):
    records = registry(300)
    build(tmp_path / "g1", records)
    index = tmp_path / "g1" / INDEX
    salt = SALT
    if damage == "missing":
        index.unlink()
    elif damage == "truncated":
        index.write_bytes(index.read_bytes()[:-100])
    elif damage == "garbage":
        index.write_bytes(b"\xff" * 64)
    elif damage == "other salt":
        salt = "salt-2"
    elif damage == "file gone":
        (tmp_path / "g1" / NAME).unlink()
    serialised: list[int] = []
    plain, zipped = build(tmp_path / "g2", records, previous=tmp_path / "g1",
                          serialised=serialised, salt=salt)
    assert plain == expected(records) and gzip.decompress(zipped) == plain
    assert len(serialised) == len(records)  # everything serialised again


def test_the_gzip_form_is_one_stream_that_any_client_reads(tmp_path):
    plain, zipped = build(tmp_path / "g1", registry(1000))
    assert zipped[:3] == b"\x1f\x8b\x08"
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert decompressor.decompress(zipped) == plain
    assert decompressor.eof and not decompressor.unused_data  # one member, not several
