"""The exports: built by one builder at a time right after the commit (only a changed
record serialised again), stored in the database, copied to each machine's disk on
first need and streamed from there with their generation's validators; never built in
a request; exactly two generations kept."""

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

from registry.namespaces import export_build, export_cache, export_files, exports
from registry.namespaces.actions import namespace_register, namespace_set_status
from registry.namespaces.iana import XML_NS
from registry.namespaces.models import ExportChunk, ExportGeneration, Namespace
from registry.namespaces.public_cache import current_generation
from tests.factories import complete_values
from tests.namespaces.test_public_cache import nids_on


def register(nid, actor):
    return namespace_register(kind="formal", nid=nid, values=complete_values(),
                              date=dt.date(2026, 1, 5), actor=actor)


def built_generations():
    """The generations on this machine's disk."""
    root = export_cache.export_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def stored_generations():
    return sorted(ExportGeneration.objects.values_list("key", flat=True))


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
        directory = export_cache.export_root() / current_generation().exports_key
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
        file = export_cache.export_root() / generation.exports_key / sent
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


def test_exactly_the_newest_two_generations_are_kept(client, registry, staff):
    """In the database and on the disk, however fast the generations come."""
    keys = []
    for nid in ("one", "two", "three", "four"):
        register(nid, staff)
        keys.append(current_generation().exports_key)
        assert client.get("/registry.xml").status_code == 200
        assert stored_generations() == built_generations() == sorted(keys[-2:])
    assert not ExportChunk.objects.exclude(generation__key__in=keys[-2:]).exists()


def test_without_a_built_generation_a_request_is_a_503_and_queues_one_build(
        client, registry, monkeypatch):
    """A request never builds: it queues a build (once for every request that finds the
    generation unbuilt) and is told when to come back."""
    from registry.namespaces import tasks

    queued = []
    monkeypatch.setattr(tasks.build_exports_task, "delay", lambda: queued.append(1))
    for _ in range(3):
        response = client.get("/registry.csv")
        assert response.status_code == 503
        assert int(response["Retry-After"]) <= 30  # well within gunicorn's timeout
    assert queued == [1] and stored_generations() == []


def test_a_request_gets_the_newest_built_generation_with_its_own_validators(
        client, registry, staff, monkeypatch):
    """While the registry has moved past the newest built generation, that generation
    is served (with its own ETag and Last-Modified) and a build is queued."""
    from registry.namespaces import tasks

    first = client.get("/registry.csv")
    queued = []
    monkeypatch.setattr(tasks.build_exports_task, "delay", lambda: queued.append(1))
    register("newer", staff)
    stale = client.get("/registry.csv")
    assert stale.status_code == 200 and b",newer," not in stale.getvalue()
    assert (stale["ETag"], stale["Last-Modified"]) == (first["ETag"], first["Last-Modified"])
    assert client.get("/registry.csv", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert queued == [1]
    monkeypatch.undo()
    export_build.build_current_exports()
    fresh = client.get("/registry.csv")
    assert b",newer," in fresh.getvalue() and fresh["ETag"] != first["ETag"]


def test_this_machines_disk_is_only_a_cache_of_the_database(client, registry, settings,
                                                             tmp_path, monkeypatch):
    """A machine with an empty EXPORT_ROOT (another machine, or this one's disk lost)
    serves the very bytes, filled from the database, without building."""
    served = {name: client.get(f"/{name}").getvalue() for name in export_files.EXPORTS}
    zipped = client.get("/registry.xml", HTTP_ACCEPT_ENCODING="gzip").getvalue()
    monkeypatch.setattr(export_build, "build_exports", None)  # any build would fail
    for root in (tmp_path / "another-machine", settings.EXPORT_ROOT):
        settings.EXPORT_ROOT = root
        import shutil
        shutil.rmtree(root, ignore_errors=True)
        for name, content in served.items():
            assert client.get(f"/{name}").getvalue() == content, name
        assert client.get("/registry.xml", HTTP_ACCEPT_ENCODING="gzip").getvalue() == zipped
        assert not [p for p in Path(root).rglob("*") if p.name.startswith(".")]


def test_a_spliced_generation_is_byte_identical_to_one_built_from_scratch(
        client, registry, staff, serialised):
    client.get("/registry.xml")
    for nid in ("alpha", "omega"):
        register(nid, staff)
        client.get("/registry.xml")
    namespace_set_status(namespace=Namespace.objects.by_nid("isbn").get(),
                         status="deprecated", comment="Superseded.", actor=staff)
    serialised.clear()
    spliced = {name: export_files.export_bytes(name) for name in export_files.EXPORTS}
    assert serialised == ["isbn"]
    zipped = {name: b"".join(export_cache.stream(export_cache.served_state().newest, name, True))
              for name in export_files.EXPORTS}
    ExportGeneration.objects.all().delete()
    import shutil
    shutil.rmtree(export_cache.export_root())
    serialised.clear()
    for name, content in spliced.items():
        assert export_files.export_bytes(name) == content, name
        newest = export_cache.served_state().newest
        assert b"".join(export_cache.stream(newest, name, True)) == zipped[name], name
    assert len(serialised) == Namespace.objects.count()


def test_the_commit_builds_the_exports_before_anyone_asks(transactional_db, staff):
    register("first", staff)
    key = current_generation().exports_key
    assert stored_generations()[-1] == key and built_generations()[-1] == key
    text = (export_cache.export_root() / key / "registry.csv").read_text()
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

    out = io.StringIO()
    call_command("build_exports", stdout=out)
    key = current_generation().exports_key
    assert stored_generations() == built_generations() == [key]
    assert key in out.getvalue()
    stored = ExportGeneration.objects.get()
    assert set(stored.sizes) == {*export_files.EXPORTS, *(f"{n}.gz" for n in export_files.EXPORTS),
                                 "index.bin"}


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


def test_each_representation_has_its_own_etag_and_q_values_are_honoured(client, registry):
    """RFC 9110: gzip;q=0 gets identity, GZIP is gzip, and If-None-Match is compared with
    the selected representation's ETag (a gzip ETag earns no 304 for identity)."""
    plain = client.get("/registry.csv")
    content = plain.getvalue()  # streamed: read before the next request
    zipped = client.get("/registry.csv", HTTP_ACCEPT_ENCODING="GZIP")
    assert "Content-Encoding" not in plain and zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.getvalue()) == content
    refused = client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert "Content-Encoding" not in refused and refused["ETag"] == plain["ETag"]
    assert plain["ETag"] != zipped["ETag"]
    for response in (plain, zipped, refused):
        assert "Accept-Encoding" in response["Vary"]
    crossed = client.get("/registry.csv", HTTP_IF_NONE_MATCH=zipped["ETag"])
    assert crossed.status_code == 200 and crossed.getvalue() == content
    assert client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip",
                      HTTP_IF_NONE_MATCH=plain["ETag"]).status_code == 200
    again = client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip",
                       HTTP_IF_NONE_MATCH=f'"other", W/{zipped["ETag"]}')
    assert again.status_code == 304 and again["ETag"] == zipped["ETag"]
    assert "Accept-Encoding" in again["Vary"]
    assert client.get("/registry.csv", HTTP_IF_NONE_MATCH="*").status_code == 304
    refused = client.get("/registry.csv", HTTP_ACCEPT_ENCODING="gzip;q=0, identity;q=0")
    assert refused.status_code == 406 and "Accept-Encoding" in refused["Vary"]
    assert client.get("/registry.csv", HTTP_IF_NONE_MATCH='"other"',
                      HTTP_IF_MODIFIED_SINCE=plain["Last-Modified"]).status_code == 200
