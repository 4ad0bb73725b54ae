"""export_cache.py and the answers around it: a disk that cannot take a generation
(full, read-only) never stops the exports (streamed from the database, no temporary
file left, one log line, readiness false); without the database, the newest
generation on this machine's disk is served; readiness says why not."""

import builtins
import errno
import logging
import os
import shutil
import socket
from pathlib import Path

import pytest
from django.db import connection
from django.http import FileResponse

from registry.namespaces import export_build, export_cache, export_files
from registry.namespaces.models import ExportGeneration
from tests.namespaces.test_export_files import register, stored_generations


def leftovers(root: Path) -> list[Path]:
    """Temporary files or directories of a fill or a build."""
    return [p for p in root.rglob(".*")] if root.is_dir() else []


@pytest.fixture
def bad_disk(monkeypatch):
    """EXPORT_ROOT stops taking writes: ``bad_disk(errno.ENOSPC)`` creates the file then
    fails the write (a full disk), ``bad_disk(errno.EROFS)`` fails the open."""
    real_open = builtins.open

    def failing(code):
        def opener(file, mode="r", *args, **kwargs):
            inside = str(file).startswith(str(export_cache.export_root()))
            if not inside or not any(flag in mode for flag in "wax+"):
                return real_open(file, mode, *args, **kwargs)
            if code == errno.ENOSPC:
                handle = real_open(file, mode, *args, **kwargs)

                def write(_data):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

                handle.write = write
                return handle
            raise OSError(code, os.strerror(code), str(file))
        monkeypatch.setattr(export_cache, "open", opener, raising=False)
    return failing


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_bad_disk_never_stops_the_exports(client, registry, staff, settings, tmp_path,
                                            bad_disk, caplog, monkeypatch, code):
    client.get("/registry.csv")
    register("afterwards", staff)  # a newer generation, built and stored by the worker
    export_build.build_current_exports()
    expected = {name: export_files.export_bytes(name) for name in export_files.EXPORTS}
    settings.EXPORT_ROOT = tmp_path / "this-machine"  # whose disk has none of it yet
    bad_disk(code)
    export_cache.disk_recovered()
    with caplog.at_level(logging.WARNING, logger="registry.exports"):
        for _ in range(2):
            for name, content in expected.items():
                response = client.get(f"/{name}")
                assert response.status_code == 200 and response.getvalue() == content
                zipped = client.get(f"/{name}", HTTP_ACCEPT_ENCODING="gzip")
                assert zipped.status_code == 200 and zipped["Content-Encoding"] == "gzip"
                assert int(zipped["Content-Length"]) == len(zipped.getvalue())
    assert leftovers(tmp_path / "this-machine") == []
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 1 and os.strerror(code) in lines[0]
    assert "EXPORT_ROOT" in lines[0] and "from the database" in lines[0]
    assert not export_files.exports_ready()
    assert os.strerror(code) in export_files.exports_readiness()
    monkeypatch.setattr(export_cache, "open", builtins.open)  # the disk mended
    assert export_files.exports_ready()
    assert isinstance(client.get("/registry.csv"), FileResponse)


def test_a_too_full_disk_is_not_ready(registry, client, monkeypatch):
    client.get("/registry.csv")
    real = os.statvfs

    def almost_full(path):
        stats = real(path)
        return os.statvfs_result((*stats[:4], 1, *stats[5:]))  # one free block

    monkeypatch.setattr(export_cache.os, "statvfs", almost_full)
    assert "bytes free" in export_files.exports_readiness()


def test_a_builder_on_a_bad_disk_leaves_nothing_and_the_previous_generation_is_served(
        client, registry, staff, settings, tmp_path, caplog, monkeypatch):
    from registry.namespaces import tasks

    before = client.get("/registry.csv").getvalue()
    register("unbuilt", staff)
    blocked = tmp_path / "a-file"
    blocked.write_text("EXPORT_ROOT cannot be made under a file")
    web_root, settings.EXPORT_ROOT = settings.EXPORT_ROOT, blocked / "exports"
    with caplog.at_level(logging.ERROR, logger="registry.exports"), pytest.raises(OSError):
        export_build.build_current_exports()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith("exports: cannot build")
    settings.EXPORT_ROOT = web_root
    assert leftovers(web_root) == []
    assert len(stored_generations()) == 1
    monkeypatch.setattr(tasks.build_exports_task, "delay", lambda: None)  # still failing
    assert client.get("/registry.csv").getvalue() == before


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.postgres
def test_without_the_database_this_machines_newest_generation_is_served(
        transactional_db, client, staff, monkeypatch, caplog):
    register("first", staff)  # committed: built and stored by the commit's build
    plain = client.get("/registry.csv")
    plain_bytes = plain.getvalue()
    zipped = client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip").getvalue()
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "PORT", unused_port())
    with caplog.at_level(logging.ERROR, logger="registry.exports"):
        for _ in range(3):
            offline = client.get("/registry.csv")
            assert offline.status_code == 200
            assert offline.getvalue() == plain_bytes and offline["ETag"] == plain["ETag"]
    assert len([r for r in caplog.records if "unreachable" in r.getMessage()]) == 1
    assert client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip").getvalue() == zipped
    assert client.get("/registry.csv",
                      HTTP_IF_NONE_MATCH=plain["ETag"]).status_code == 304
    assert "unreachable" in export_files.exports_readiness()
    shutil.rmtree(export_cache.export_root())
    nothing = client.get("/registry.csv")
    assert nothing.status_code == 503 and nothing["Retry-After"]
    monkeypatch.undo()
    connection.close()
    assert client.get("/registry.csv").status_code == 200


def test_ready_once_a_generation_is_built(registry, client, monkeypatch):
    from registry.namespaces import tasks

    monkeypatch.setattr(tasks.build_exports_task, "delay", lambda: None)
    assert export_files.exports_readiness() == "no generation of the exports is built yet"
    monkeypatch.undo()
    export_build.build_current_exports()
    assert export_files.exports_ready()
    assert ExportGeneration.objects.count() == 1
