"""The exports as files per registry generation: built from per-record fragments
(only a changed record is serialised again), by one builder at a time, right after
the commit, streamed from disk with their generation's validators, two generations
kept."""

import datetime as dt
import gzip
import io
import re
import threading
import xml.etree.ElementTree as ET  # noqa: S405 - parses our own output
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.utils.http import http_date
from lxml import etree

from registry.namespaces import export_files, exports
from registry.namespaces.actions import namespace_register, namespace_set_status
from registry.namespaces.iana import XML_NS
from registry.namespaces.models import ExportFragment, Namespace
from registry.namespaces.public_cache import current_generation
from tests.factories import complete_values
from tests.namespaces.test_public_cache import nids_on


def register(nid, actor):
    return namespace_register(kind="formal", nid=nid, values=complete_values(),
                              date=dt.date(2026, 1, 5), actor=actor)


def built_generations():
    root = export_files.export_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture
def serialised(monkeypatch):
    """The NIDs whose XML record was serialised, in order."""
    made: list[str] = []
    original = exports.xml_fragment

    def spy(ns):
        made.append(ns.nid)
        return original(ns)

    monkeypatch.setattr(exports, "xml_fragment", spy)
    return made


def test_every_export_is_streamed_from_its_file(client, registry):
    for name, export in export_files.EXPORTS.items():
        response = client.get(f"/{name}")
        assert response.status_code == 200 and response.streaming, name
        assert response["Content-Type"] == export.content_type
        directory = export_files.export_root() / current_generation().exports_key
        assert response.getvalue() == (directory / name).read_bytes()
        assert gzip.decompress((directory / f"{name}.gz").read_bytes()) == (
            directory / name).read_bytes()


@pytest.mark.parametrize("gzip_asked", [False, True])
def test_behind_nginx_an_export_names_its_file_for_x_accel_redirect(client, registry, settings,
                                                                      gzip_asked):
    """EXPORT_ACCEL_REDIRECT: no body, the file of this generation named for nginx's
    internal location, with the headers nginx carries over (deploy/nginx-registry.conf);
    the files dated by the generation's change, as nginx's Last-Modified will be."""
    settings.EXPORT_ACCEL_REDIRECT = "/_exports/"
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip_asked else {}
    for name, export in export_files.EXPORTS.items():
        response = client.get(f"/{name}", **headers)
        assert response.status_code == 200 and not response.streaming, name
        assert response.content == b""
        generation = current_generation()
        sent = f"{name}.gz" if gzip_asked else name
        assert response["X-Accel-Redirect"] == f"/_exports/{generation.exports_key}/{sent}"
        assert response["Content-Type"] == export.content_type
        assert response.get("Content-Encoding") == ("gzip" if gzip_asked else None)
        assert "Accept-Encoding" in response["Vary"] and response["ETag"]
        file = export_files.export_root() / generation.exports_key / sent
        assert response["Last-Modified"] == http_date(file.stat().st_mtime)
        assert file.stat().st_mtime == generation.changed_at.timestamp()
        again = client.get(f"/{name}", HTTP_IF_NONE_MATCH=response["ETag"], **headers)
        assert again.status_code == 304 and "X-Accel-Redirect" not in again


def test_the_nginx_snippet_sends_what_the_app_names(client, registry, settings):
    """deploy/nginx-registry.conf: its internal location is the setting's example, and it
    carries over every header the app sets on an export that nginx would drop."""
    text = (Path(__file__).resolve().parents[2] / "deploy" / "nginx-registry.conf").read_text()
    assert "location /_exports/ {\n    internal;" in text
    internal = text[text.index("location /_exports/ {"):]
    assert "gzip off;" in internal  # the .gz files are not compressed twice
    carried = set(re.findall(r"add_header ([A-Za-z-]+) \$upstream_http_", text))
    kept_by_nginx = {"Content-Type", "Content-Disposition", "Cache-Control"}
    settings.EXPORT_ACCEL_REDIRECT = "/_exports/"
    response = client.get("/registry.xml", HTTP_ACCEPT_ENCODING="gzip")
    sent = {name for name in response.headers if name not in ("Content-Length",
                                                              "X-Accel-Redirect")}
    assert sent - kept_by_nginx - {"Last-Modified"} <= carried


def test_a_change_serialises_only_the_changed_record(client, registry, staff, serialised):
    client.get("/registry.xml")
    assert len(serialised) == Namespace.objects.count()  # the first build makes them all
    serialised.clear()
    isbn = Namespace.objects.by_nid("isbn").get()
    namespace_set_status(namespace=isbn, status="deprecated", comment="Superseded.",
                         actor=staff)
    register("newrow", staff)
    response = client.get("/registry.csv")
    assert sorted(serialised) == ["isbn", "newrow"]
    rows = response.getvalue().decode().splitlines()
    assert any(row.startswith("formal,isbn,") and "deprecated" in row for row in rows)
    assert ExportFragment.objects.count() == Namespace.objects.count()


def test_a_fragment_is_remade_when_site_url_changes(client, registry, staff, serialised,
                                                    settings):
    client.get("/registry.xml")
    serialised.clear()
    settings.SITE_URL = "https://urn.example.net"
    register("moved", staff)  # a new generation, built with the new SITE_URL
    client.get("/registry.xml")
    assert len(serialised) == Namespace.objects.count()


def test_the_assembled_xml_is_the_whole_tree_indented(client, registry, staff):
    """Fragments joined into the frame give exactly what serialising the document as
    one indented tree gives."""
    register("zzlast", staff)
    ours = client.get("/registry.xml").getvalue()
    ET.register_namespace("", XML_NS)
    tree = ET.fromstring(ours)  # noqa: S314 - our own document
    ET.indent(tree)
    assert ours == ET.tostring(tree, encoding="utf-8", xml_declaration=True)
    formal = etree.fromstring(ours).xpath("i:registry[@id='urn-namespaces-1']/i:record/i:name",
                                          namespaces={"i": XML_NS})
    assert [name.text for name in formal][-1] == "zzlast"  # IANA's order: by NID


def test_only_the_newest_two_generations_are_kept(client, registry, staff, monkeypatch):
    monkeypatch.setattr(export_files, "KEEP_SECONDS", -1)
    keys = []
    for nid in ("one", "two", "three"):
        register(nid, staff)
        keys.append(current_generation().exports_key)
        assert client.get("/registry.xml").status_code == 200
    assert built_generations() == sorted(keys[-2:])


def test_a_generation_built_a_moment_ago_is_kept_for_whoever_chose_it(client, registry, staff):
    """Behind nginx the app names a directory and nginx opens the file afterwards: a
    directory built within KEEP_SECONDS stays, even past the newest two."""
    keys = []
    for nid in ("one", "two", "three"):
        register(nid, staff)
        keys.append(current_generation().exports_key)
        assert client.get("/registry.xml").status_code == 200
    assert set(keys) <= set(built_generations())


def test_a_request_waits_for_the_builder_with_a_bound(client, registry, settings):
    settings.EXPORT_WAIT_SECONDS = 0
    with export_files.build_lock(wait=False) as held:
        assert held
        response = client.get("/registry.csv")
    assert response.status_code == 503 and response["Retry-After"]
    assert client.get("/registry.csv").status_code == 200  # the lock is free: built


def test_a_request_is_served_a_newer_generation_never_an_older_one(registry, staff, rf):
    older = current_generation()
    register("newer", staff)
    with export_files.build_lock(wait=True):
        newer = export_files.build_exports()
    assert export_files.ready_directory(older) == newer  # its own is gone: the newer one
    request = rf.get("/registry.csv")
    request._registry_generation = older
    response = export_files.export_response(request, "registry.csv")
    assert b"newer" in response.getvalue()
    assert response["ETag"] == export_files.export_response(
        rf.get("/registry.csv"), "registry.csv")["ETag"]


def test_the_commit_builds_the_exports_before_anyone_asks(transactional_db, staff):
    register("first", staff)
    key = current_generation().exports_key
    assert built_generations()[-1] == key
    text = (export_files.export_root() / key / "registry.csv").read_text()
    assert ",first," in text


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the bump at commit is PostgreSQL's")
def test_two_concurrent_publishes_never_leave_the_cache_on_the_older_one(transactional_db,
                                                                         staff, client):
    """Both writers hold their transaction open at once (neither queues on the
    generation row), commit one after the other with a reader between them: the page
    and the export show both changes after the second commit."""
    both_open = threading.Barrier(3, timeout=20)
    commit = {nid: threading.Event() for nid in ("alpha", "beta")}
    done = {nid: threading.Event() for nid in commit}
    errors: list[BaseException] = []

    def publish(nid):
        try:
            with transaction.atomic():
                register(nid, staff)
                both_open.wait()
                commit[nid].wait(20)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            done[nid].set()
            connection.close()

    threads = [threading.Thread(target=publish, args=(nid,)) for nid in commit]
    for thread in threads:
        thread.start()
    both_open.wait()  # a writer queued on the generation row would never get here
    commit["alpha"].set()
    done["alpha"].wait(20)
    assert "alpha" in nids_on(client) and "beta" not in nids_on(client)
    assert b",alpha," in client.get("/registry.csv").getvalue()
    commit["beta"].set()
    for thread in threads:
        thread.join(20)
    assert not errors
    assert {"alpha", "beta"} <= set(nids_on(client))
    csv_text = client.get("/registry.csv").getvalue()
    assert b",alpha," in csv_text and b",beta," in csv_text


def test_the_command_builds_the_current_generation(registry):
    from django.core.management import call_command

    call_command("build_exports", stdout=io.StringIO())
    assert built_generations() == [current_generation().exports_key]
    assert ExportFragment.objects.count() == Namespace.objects.count()


def test_one_build_is_queued_per_transaction(db, staff):
    from registry.namespaces.actions import _queue_export_build

    with transaction.atomic():
        register("first", staff)
        register("second", staff)
    # The test's own transaction is still open: the callbacks waiting for its commit.
    assert [entry[1] for entry in connection.run_on_commit].count(_queue_export_build) == 1


def test_a_submission_leaves_the_exports_as_they_are(transactional_db, client, registrant,
                                                     staff, expert, monkeypatch):
    """The review's own changes move the pages' generation, not the exports': no build is
    queued, the same files are served with the same validators; a registration moves
    both, with one build queued at its commit."""
    from registry.namespaces import actions as namespace_actions
    from tests.factories import approve, make_registration

    register("first", staff)
    first = client.get("/registry.csv")
    pages, exports_key = current_generation().key, current_generation().exports_key
    built = built_generations()
    queued: list[bool] = []
    monkeypatch.setattr(namespace_actions, "_queue_export_build", lambda: queued.append(True))
    registration = make_registration(registrant, nid="quietnid")
    assert queued == []
    assert current_generation().key != pages and current_generation().exports_key == exports_key
    assert client.get("/registry.csv", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert built_generations() == built and built[-1] == exports_key
    approve(registration, expert, staff, register=True)
    assert queued == [True]
    assert current_generation().exports_key != exports_key
    assert b",quietnid," in client.get("/registry.csv").getvalue()
