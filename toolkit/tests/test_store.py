"""The profiles in use: the shipped ones, offline, until ``refresh`` fetches a registry's
/profiles.json (a server on this machine here), bounded, validated, and written whole
or not at all."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from urn8141.cli import main
from urn8141.store import (
    FILE_NAME,
    MAX_DOCUMENT_BYTES,
    SHIPPED_PROFILES,
    RefreshError,
    load_profiles,
    profiles_url,
    refresh,
)

SHIPPED = json.loads(SHIPPED_PROFILES.read_text())["profiles"]


class Registry(ThreadingHTTPServer):
    """path -> (status, headers, body), answered as given."""

    answers: dict[str, tuple[int, dict[str, str], bytes]]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Registry

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        status, headers, body = self.server.answers.get(self.path, (404, {}, b"not found"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers and "Transfer-Encoding" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[Registry]:
    server = Registry(("127.0.0.1", 0), Handler)  # a free port, never a fixed one
    server.answers = {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def document(profiles: dict) -> bytes:
    return json.dumps({"about": "test", "profiles": profiles}).encode()


def publish(registry: Registry, profiles: dict, path: str = "/profiles.json") -> None:
    registry.answers[path] = (200, {"Content-Type": "application/json"}, document(profiles))


def test_offline_the_shipped_profiles_are_used(tmp_path):
    profiles = load_profiles(directory=tmp_path)
    assert profiles.path == SHIPPED_PROFILES and profiles.source.startswith("shipped")
    assert sorted(profiles) == sorted(SHIPPED)
    assert profiles.equivalent("URN:ISBN:0-395-36341-1", "urn:isbn:0395363411")


def test_a_refresh_saves_what_compiles_and_names_what_does_not(registry, tmp_path):
    changed = {**SHIPPED["isbn"], "equivalence": []}  # the registry corrected a rule
    publish(registry, {"isbn": changed, "example": {"equivalence": [{"step": "nosuch"}]},
                       "-bad-": {}})
    done = refresh(registry.url + "/", directory=tmp_path)
    assert done.kept == ("isbn",) and done.source == registry.url + "/profiles.json"
    assert set(done.left_out) == {"example", "-bad-"}
    assert "unknown step 'nosuch'" in done.left_out["example"]
    profiles = load_profiles(directory=tmp_path)
    assert profiles.path == tmp_path / FILE_NAME and profiles.source == done.source
    assert sorted(profiles) == ["isbn"] and profiles.fetched_at
    assert not profiles.equivalent("URN:ISBN:0-395-36341-1", "urn:isbn:0395363411")


def test_a_later_refresh_fetches_from_where_the_last_one_did(registry, tmp_path):
    publish(registry, {"isbn": SHIPPED["isbn"]})
    refresh(registry.url, directory=tmp_path)
    publish(registry, {"isbn": SHIPPED["isbn"], "issn": SHIPPED["issn"]})
    assert refresh(directory=tmp_path).kept == ("isbn", "issn")


def test_without_an_address_and_no_earlier_refresh_it_says_so(tmp_path):
    with pytest.raises(RefreshError, match="--from URL"):
        refresh(directory=tmp_path)


@pytest.mark.parametrize("answer, message", [
    ((404, {}, b"gone"), "answered 404"),
    ((200, {}, b"<html>"), "is not JSON"),
    ((200, {}, b"[" * 5000 + b"]" * 5000), "nests arrays and objects more than"),
    ((200, {}, b'{"about": "no profiles"}'), 'has no "profiles" object'),
    ((200, {}, b'{"profiles": {"isbn": "x"}}'), "has no profile this version"),
    ((200, {}, b"\xff\xfe"), "not UTF-8"),
    ((200, {"Content-Length": str(MAX_DOCUMENT_BYTES + 1)}, b"{}"), "at most"),
    ((200, {"Transfer-Encoding": "identity", "Connection": "close"},
      b" " * (MAX_DOCUMENT_BYTES + 10)), "larger than"),
])
def test_a_document_that_cannot_be_used_changes_nothing(registry, tmp_path, answer, message):
    publish(registry, {"isbn": SHIPPED["isbn"]})
    refresh(registry.url, directory=tmp_path)
    before = (tmp_path / FILE_NAME).read_bytes()
    registry.answers["/profiles.json"] = answer
    with pytest.raises(RefreshError, match=message):
        refresh(registry.url, directory=tmp_path)
    assert (tmp_path / FILE_NAME).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [FILE_NAME]  # no half-written file


@pytest.mark.parametrize("url", ["http://registry.example/", "ftp://registry.example/",
                                 "file:///etc/passwd", "registry.example", "https://"])
def test_only_https_or_this_machine_is_fetched_from(url):
    with pytest.raises(RefreshError):
        profiles_url(url)


def test_an_address_or_the_files_url_both_name_profiles_json():
    assert profiles_url("https://r.example") == "https://r.example/profiles.json"
    assert profiles_url("https://r.example/urn/?x=1") == "https://r.example/urn/profiles.json"
    assert profiles_url("https://r.example/p.json") == "https://r.example/p.json"


def test_a_redirect_to_plain_http_elsewhere_is_not_followed(registry, tmp_path):
    registry.answers["/profiles.json"] = (302, {"Location": "http://registry.example/p.json"},
                                          b"")
    with pytest.raises(RefreshError, match="plain http"):
        refresh(registry.url, directory=tmp_path)
    assert not (tmp_path / FILE_NAME).exists()


def test_the_command_line_refreshes_and_exits_1_when_it_cannot(registry, tmp_path):
    publish(registry, {"isbn": SHIPPED["isbn"]})
    out = io.StringIO()
    assert main(["refresh", "--from", registry.url, "--data-dir", str(tmp_path)], out=out) == 0
    assert "1 profiles from" in out.getvalue()
    registry.answers.clear()
    assert main(["refresh", "--data-dir", str(tmp_path), "--json"], out=io.StringIO()) == 1
    assert main(["refresh", "--from", "http://registry.example", "--data-dir",
                 str(tmp_path)], out=io.StringIO()) == 1
