"""Only canonical values reach the public cache: junk query values are refused (400)
and make no entry, unknown parameters share the entry, the API's links carry only the
canonical filters, the key carries the release (a restart with changed templates serves
new pages at once), and a superseded generation's entries are dropped."""

import datetime as dt
import os
import shutil
import uuid

import pytest
from django.core.cache import caches
from django.template import engines

from registry.cache import RegistryRedisCache
from registry.namespaces import api, views
from registry.namespaces.actions import namespace_register, version_publish
from registry.namespaces.public_cache import local_store
from registry.release import current_release, release_id
from tests.factories import complete_values
from tests.html import page, text

JUNK = 150


def entries() -> int:
    """Entries in the shared public cache (LocMem in the tests) and this process's store."""
    return len(caches["public"]._cache) + len(local_store.entries)  # type: ignore[attr-defined]


@pytest.fixture
def archive(db, staff, registrant):
    ns = namespace_register(kind="formal", nid="exarchive", values=complete_values(registrant),
                            date=dt.date(2026, 1, 5), actor=staff)
    version_publish(namespace=ns, date=dt.date(2026, 2, 1), actor=staff,
                    values=complete_values(registrant, revision_information="Second."))
    return ns


# Each cached parameter of each page, read from the views' own declarations.
CACHED = [("/", param.name) for param in views.REGISTRY_PARAMS] + [
    ("/search/", "page"), ("/namespaces/exarchive/history/", "page"),
    ("/namespaces/exarchive/diff/", "a"), ("/namespaces/exarchive/diff/", "b"),
] + [("/api/namespaces/", param.name) for param in api.LIST_PARAMS]


@pytest.mark.parametrize(("path", "name"), CACHED)
def test_junk_values_are_refused_and_make_no_cache_entry(client, archive, path, name):
    assert client.get(path).status_code == 200
    before = entries()
    for n in range(JUNK):
        response = client.get(path, {name: f"junk{n}"})
        assert response.status_code == 400
        if path.startswith("/api/"):
            assert response.json()["parameter"] == name
        else:
            assert name in text(page(response).xpath("//main")[0])
    assert entries() == before


@pytest.mark.parametrize("path", ["/", "/api/namespaces/", "/namespaces/exarchive/history/"])
def test_pages_past_the_last_are_refused_uncached(client, archive, path):
    name = "fpage" if path == "/" else "page"
    client.get(path)
    before = entries()
    # A page past the last is the API's 404 (its schema's), the site's 400.
    refused = 404 if path.startswith("/api/") else 400
    for number in range(2, 2 + JUNK // 10):
        assert client.get(path, {name: number}).status_code == refused
    assert entries() == before


def test_unknown_parameters_and_spellings_of_a_value_share_one_entry(client, archive):
    client.get("/")
    before = entries()
    for n in range(JUNK // 3):
        assert client.get("/", {f"x{n}": "junk", "sort": "nid", "fpage": "0001"}).status_code == 200
        assert client.get("/namespaces/EXARCHIVE/", {f"utm{n}": "x"}).status_code == 200
        assert client.get("/namespaces/exarchive/v/0002/").status_code == 200
    # The registry page's variants were its default entry; the namespace page and its
    # version each one entry (every spelling of the NID and number alike), kept as the
    # registry page's was (shared entry, local copy, its whole bytes).
    assert entries() - before == 2 * before


def test_an_upper_case_host_is_answered_uncached(client, archive):
    client.get("/")
    before = entries()
    for n in range(1, 11):
        host = "".join(c.upper() if (n >> i) & 1 else c for i, c in enumerate("localhost"))
        assert client.get("/", HTTP_HOST=host).status_code == 200
    assert entries() == before


def test_bad_filters_name_themselves_and_empty_ones_are_refused(client, archive):
    for name in ("kind", "status"):
        for value in ("bogus", ""):
            response = client.get("/api/namespaces/", {name: value})
            assert response.status_code == 400 and response.json()["parameter"] == name


def test_the_api_links_carry_only_the_canonical_filters(client, db, staff, registrant,
                                                        settings):
    for n in range(api.API_PAGE_SIZE + 1):
        namespace_register(kind="formal", nid=f"bulk{n:03}", values=complete_values(registrant),
                           date=dt.date(2026, 1, 5), actor=staff)
    # An unknown parameter is refused, naming it; a page written otherwise is canonical.
    refused = client.get("/api/namespaces/", {"status": "active", "evil": "https://x.test/"})
    assert refused.status_code == 400 and refused.json()["parameter"] == "evil"
    poisoned = client.get("/api/namespaces/", {"status": "active", "page": "01"}).json()
    assert poisoned["next"].endswith("/api/namespaces/?status=active&page=2")
    later = client.get("/api/namespaces/", {"status": "active"}).json()
    assert later["next"] == poisoned["next"]
    back = client.get("/api/namespaces/", {"status": "active", "page": "2"}).json()
    assert back["previous"].endswith("/api/namespaces/?status=active&page=1")


def test_a_restart_with_changed_templates_serves_new_pages_at_once(client, archive, settings,
                                                                   tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(settings.BASE_DIR / "templates", templates)
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [templates]}]
    current_release.cache_clear()
    assert "Uniform Resource Names" in text(page(client.get("/")).xpath("//h1")[0])

    registry = templates / "namespaces" / "registry.html"
    registry.write_text(registry.read_text().replace("Uniform Resource Names (URN) Namespaces",
                                                     "URN Namespaces, redesigned"))
    # A restart: a new process (new release id, empty local store, fresh template
    # loaders); the shared cache and the registry generation stay as they were.
    current_release.cache_clear()
    local_store.clear()
    for engine in engines.all():
        for loader in engine.engine.template_loaders:
            loader.reset()
    try:
        assert text(page(client.get("/")).xpath("//h1")[0]) == "URN Namespaces, redesigned"
    finally:
        current_release.cache_clear()


def test_the_release_id_follows_code_templates_and_static_manifest(tmp_path):
    package, templates, static_root, static = (tmp_path / name for name in
                                               ("registry", "templates", "root", "static"))
    for folder in (package, templates, static_root, static):
        folder.mkdir()
    (package / "views.py").write_text("A = 1\n")
    (templates / "base.html").write_text("<p>one</p>")
    (static / "site.css").write_text("p {}")

    def release() -> str:
        return release_id(package, [templates], static_root, [static])

    first = release()
    assert release() == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "views.cpython-311.pyc").write_bytes(b"\0")
    assert release() == first  # bytecode is not the release
    seen = {first}
    for path, content in ((templates / "base.html", "<p>two</p>"),
                          (package / "views.py", "A = 2\n"), (static / "site.css", "a {}")):
        path.write_text(content)
        seen.add(release())
    (static_root / "staticfiles.json").write_text('{"paths": {}}')
    seen.add(release())  # collectstatic's manifest, once there, stands for the static files
    assert len(seen) == 5


REDIS = os.environ.get("TEST_REDIS_URL", "")


def _drop_prefixed(cache) -> None:
    """Delete this test's keys only (clear() would flush the whole shared database)."""
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=cache.make_key("*")))
    if keys:
        client.delete(*keys)


@pytest.mark.skipif(not REDIS, reason="needs Redis: set TEST_REDIS_URL")
def test_a_superseded_generation_is_dropped_from_redis():
    cache = RegistryRedisCache(REDIS, {"KEY_PREFIX": f"test-groups-{uuid.uuid4().hex}"})
    try:
        for group in ("r1.g-1", "r1.g-2"):
            for n in range(3):
                cache.set(f"public:page:{group}:{n}", {"n": n}, 60)
                cache.remember(group, f"public:page:{group}:{n}", 60)
        assert cache.forget_groups_except("r1.g-2") == 1
        assert [cache.get(f"public:page:r1.g-1:{n}") for n in range(3)] == [None] * 3
        assert [cache.get(f"public:page:r1.g-2:{n}") for n in range(3)] == [
            {"n": n} for n in range(3)]
        assert cache.forget_groups_except("r1.g-2") == 0
    finally:
        _drop_prefixed(cache)


@pytest.mark.skipif(not REDIS, reason="needs Redis: set TEST_REDIS_URL")
def test_the_next_generation_drops_the_entries_of_the_last(client, archive, staff, settings):
    settings.CACHES = {**settings.CACHES, "public": {
        "BACKEND": "registry.cache.RegistryRedisCache", "LOCATION": REDIS,
        "KEY_PREFIX": f"test-public-{uuid.uuid4().hex}"}}
    public = caches["public"]
    try:
        client.get("/")
        client.get("/api/namespaces/")
        client_keys = public._cache.get_client().keys(public.make_key("public:*"))
        assert len(client_keys) == 2
        from registry.namespaces.actions import namespace_set_status

        namespace_set_status(namespace=archive, status="deprecated", comment="Superseded.",
                             actor=staff)
        client.get("/namespaces/exarchive/")  # any request of the next generation
        remaining = public._cache.get_client().keys(public.make_key("public:*"))
        assert not set(client_keys) & set(remaining)
    finally:
        _drop_prefixed(public)


def _declared_params():
    """Every query parameter the views of the URL conf declare (module-level tuples of
    Param in the modules of the views), with the module it is in."""
    from django.urls import get_resolver

    from registry.namespaces.query_params import Param

    def callbacks(patterns):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from callbacks(pattern.url_patterns)
            else:
                yield pattern.callback

    modules = {callback.__module__ for callback in callbacks(get_resolver().url_patterns)}
    found = set()
    for name in sorted(modules):
        module = __import__(name, fromlist=["_"])
        for value in vars(module).values():
            if isinstance(value, tuple) and value and all(isinstance(p, Param) for p in value):
                found.update((name, param.name, param.free_text) for param in value)
    return found


# Each free-text parameter with the URL that reads it and how a value is sent there.
FREE_TEXT = {
    ("registry.namespaces.api", "urn"): lambda n: ("/api/check", {"urn": f"urn:example:{n}"}),
    ("registry.namespaces.api", "a"): lambda n: (
        "/api/equivalent", {"a": f"urn:example:{n}", "b": "urn:example:a"}),
    ("registry.namespaces.api", "b"): lambda n: (
        "/api/equivalent", {"a": "urn:example:a", "b": f"urn:example:{n}"}),
    ("registry.namespaces.views", "q"): lambda n: ("/search/", {"q": f"archive {n}"}),
}


def test_every_free_text_parameter_is_declared_so_and_exercised_here():
    declared = {(module, name) for module, name, free in _declared_params() if free}
    assert declared == set(FREE_TEXT)


@pytest.mark.parametrize("parameter", sorted(FREE_TEXT))
def test_free_text_values_leave_no_lasting_entry_in_the_shared_cache(client, archive,
                                                                     parameter):
    """The issue's finding: each new search or URN was a 24-hour entry in the shared
    Redis. 150 of them now leave nothing there; this process keeps its own, bounded."""
    from registry.namespaces.public_cache import FREE_TEXT_MAX_BYTES, free_text_store

    client.get("/")  # the registry page's entries, which must stay
    shared = dict(caches["public"]._cache)  # type: ignore[attr-defined]
    for n in range(JUNK):
        path, params = FREE_TEXT[parameter](n)
        assert client.get(path, params).status_code == 200
    assert dict(caches["public"]._cache) == shared  # type: ignore[attr-defined]
    assert free_text_store.entries and free_text_store.used <= FREE_TEXT_MAX_BYTES


def test_a_repeated_free_text_answer_comes_from_the_process(client, archive,
                                                            django_assert_num_queries):
    client.get("/search/", {"q": "archive"})
    with django_assert_num_queries(1):  # the registry generation, nothing else
        assert client.get("/search/", {"q": "archive"}).status_code == 200


def test_free_text_cannot_be_declared_by_accident():
    from registry.namespaces.query_params import (
        Param,
        Query,
        choice,
        finite,
        positive_integer,
    )

    with pytest.raises(TypeError, match="declare it free_text=True"):
        Param("q", str)
    with pytest.raises(TypeError, match="declare it free_text=True"):
        Param("q", lambda value: value.strip().lower())
    Param("q", str, free_text=True)
    Param("sort", choice(["a", "b"]))
    Param("page", positive_integer)
    Param("flag", finite(lambda value: "on" if value else ""))
    assert Query({"q": "x"}, (("q", "x"),)).shared is False  # made by hand: not shared
