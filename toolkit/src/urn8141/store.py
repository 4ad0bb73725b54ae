"""The namespace profiles a program checks URNs with, offline.

The registry's published profiles ship inside the package (``data/profiles.json``,
in the layout of a registry's ``/profiles.json``). ``refresh(url)`` fetches a newer
``/profiles.json`` from a registry into the user's data directory, and from then on
``load_profiles()`` reads that copy; nothing is fetched unless asked. A document is
read within bounds (size, nesting) and each profile in it is checked as the registry
checks a proposed one: one that does not compile is left out, with the reason.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any
from urllib.parse import SplitResult, urlsplit

from urn8141.check import Checked, check
from urn8141.nid import nid_key
from urn8141.profiles import NSSError, Profile, ProfileError, compile_profile, read_json
from urn8141.syntax import URN, parse

SHIPPED_PROFILES = Path(__file__).resolve().parent / "data" / "profiles.json"
FILE_NAME = "profiles.json"
MAX_DOCUMENT_BYTES = 2_000_000  # a registry's /profiles.json (65 profiles: about 90 KB)
MAX_DOCUMENT_DEPTH = 8  # the document, a profile, a list, an entry: 4
MAX_PROFILES = 10_000
FETCH_TIMEOUT = 30.0  # seconds, for the connection and for each read
NID_SYNTAX = "2 to 32 letters, digits and hyphens, a letter or digit at each end"


def _package_version() -> str:
    try:
        return version("urn8141")
    except PackageNotFoundError:  # run from a source tree that was not installed
        return "source"


def data_dir() -> Path:
    """Where ``refresh`` keeps what it fetched: ``$URN8141_DATA_DIR``, else the user's
    data directory (``$XDG_DATA_HOME/urn8141``, ``~/.local/share/urn8141``; on Windows
    ``%LOCALAPPDATA%\\urn8141``)."""
    if chosen := os.environ.get("URN8141_DATA_DIR"):
        return Path(chosen)
    if sys.platform == "win32" and (local := os.environ.get("LOCALAPPDATA")):
        return Path(local) / "urn8141"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "urn8141"


def read_document(text: str, *, what: str = "The profiles document") -> dict[str, Any]:
    """A document in the layout of ``/profiles.json`` (``{"profiles": {NID: profile}}``,
    other keys kept) read within bounds; :class:`ProfileError` says why not."""
    data = read_json(text, what=what, max_chars=MAX_DOCUMENT_BYTES, max_depth=MAX_DOCUMENT_DEPTH)
    profiles = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(profiles, dict):
        raise ProfileError([("profiles", f'{what} has no "profiles" object.')])
    if len(profiles) > MAX_PROFILES:
        raise ProfileError([("profiles", f"{what} has more than {MAX_PROFILES:,} profiles.")])
    return data


def profiles_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """NID (lower case) -> profile data, from a document ``read_document`` accepted."""
    return {str(nid).lower(): profile for nid, profile in document["profiles"].items()}


def read_file(path: Path) -> dict[str, Any]:
    """``read_document`` of a file, refused unread when it is too large."""
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise ProfileError([("profiles", f"{path} is larger than {MAX_DOCUMENT_BYTES:,} "
                                             "bytes.")])
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError([("profiles", f"{path} cannot be read: {exc}")]) from None
    return read_document(text, what=str(path))


@dataclass
class Profiles:
    """The profiles in use, by NID (lower case), each compiled when first needed, and
    where they came from. ``check``, ``equivalent``, ``normal_form`` and ``resolve``
    take URNs as text (``URNSyntaxError`` when one is not a URN)."""

    data: dict[str, Any]
    path: Path | None = None
    source: str = ""
    fetched_at: str = ""
    problems: dict[str, str] = field(default_factory=dict)  # NID -> why it is left out
    _compiled: dict[str, Profile] = field(default_factory=dict, repr=False)

    def __contains__(self, nid: str) -> bool:
        return self.get(nid) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self.data) - set(self.problems)))

    def __len__(self) -> int:
        return len(set(self.data) - set(self.problems))

    def get(self, nid: str) -> Profile | None:
        """The compiled profile of ``nid``; None when it has none or its profile does
        not compile (``problems`` then says why)."""
        key = nid_key(nid)
        found = self._compiled.get(key)
        if found is not None:
            return found
        if key not in self.data or key in self.problems:
            return None
        try:
            found = self._compiled[key] = compile_profile(self.data[key], key)
        except ProfileError as exc:
            self.problems[key] = str(exc)
            return None
        return found

    def _for(self, text: str) -> dict[str, Profile]:
        """The compiled profiles, with the one of ``text``'s NID among them if it has one."""
        head, colon, rest = text.partition(":") if isinstance(text, str) else ("", "", "")
        if colon and head.lower() == "urn":
            self.get(rest.partition(":")[0])
        return self._compiled

    def check(self, text: str) -> Checked:
        """The URN's parts, its profile's verdict on the NSS (None without one) and its
        namespace normal form."""
        return check(text, self._for(text))

    def normal_form(self, text: str) -> str:
        """RFC 8141's normal form (section 3.1), then the namespace's own steps (3.2)."""
        return self.check(text).normal_form

    def equivalent(self, a: str, b: str) -> bool:
        """Whether two URNs are equivalent by RFC 8141 and by their namespace's rules."""
        ua, ub = parse(a), parse(b)
        if nid_key(ua.nid) != nid_key(ub.nid):
            return False
        profile = self.get(ua.nid)
        return profile.equivalent(ua, ub) if profile else ua.normal_form() == ub.normal_form()

    def resolve(self, text: str) -> list[tuple[str, str]]:
        """(name, URL) of each resolver the namespace declares for this URN; none for a
        URN its profile refuses."""
        checked = self.check(text)
        profile = self.get(checked.nid)
        if profile is None or checked.nss_valid is False:
            return []
        return profile.resolve(checked.urn)

    def nss_errors(self, urn: URN) -> list[NSSError]:
        """Why the profile refuses this URN's NSS (its rule, offset and message)."""
        profile = self.get(urn.nid)
        return profile.check_nss(urn.nss) if profile is not None else []


def profiles_file(directory: Path | None = None) -> Path:
    """The file ``load_profiles`` reads: the copy ``refresh`` fetched, else the shipped one."""
    fetched = (directory or data_dir()) / FILE_NAME
    return fetched if fetched.is_file() else SHIPPED_PROFILES


def load_profiles(path: Path | None = None, *, directory: Path | None = None) -> Profiles:
    """The profiles of ``path`` (a file in the layout of ``/profiles.json``), by default
    the copy ``refresh`` fetched or else the ones shipped with the package. Offline:
    this never fetches anything. Raises :class:`ProfileError` for a file that cannot be
    read as such a document."""
    chosen = path or profiles_file(directory)
    document = read_file(chosen)
    shipped = chosen == SHIPPED_PROFILES
    source = f"shipped with urn8141 {_package_version()}" if shipped else \
        str(document.get("source") or chosen)
    return Profiles(profiles_of(document), path=chosen, source=source,
                    fetched_at=str(document.get("fetched_at") or ""))


# --- refresh ----------------------------------------------------------------------


class RefreshError(Exception):
    """The registry's profiles could not be fetched or read; nothing was changed."""


def _checked_url(url: str) -> SplitResult:
    """``url``, refused unless it is https (or http to this machine: a registry run
    locally)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise RefreshError(f"{url!r} is not an https:// URL of a registry.")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise RefreshError(f"{url!r} is plain http: profiles are fetched over https (plain "
                           "http only from this machine).")
    return parts


def profiles_url(url: str) -> str:
    """The ``/profiles.json`` of a registry given by its address (or that URL itself)."""
    parts = _checked_url(url)
    if parts.path.endswith(".json"):
        return parts.geturl()
    return parts._replace(path=parts.path.rstrip("/") + "/" + FILE_NAME, query="",
                          fragment="").geturl()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _SameRules(urllib.request.HTTPRedirectHandler):
    """A redirect is followed only to a URL that could have been given (https, no
    downgrade to plain http)."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: Any, newurl: str) -> urllib.request.Request | None:
        _checked_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch(url: str, *, timeout: float = FETCH_TIMEOUT) -> bytes:
    """The body at ``url`` (https, or http to this machine), at most MAX_DOCUMENT_BYTES
    of it (stdlib only)."""
    _checked_url(url)
    request = urllib.request.Request(url, headers={  # noqa: S310 - the scheme is checked
        "Accept": "application/json", "Accept-Encoding": "identity",
        "User-Agent": f"urn8141/{_package_version()} (profiles refresh)"})
    opener = urllib.request.build_opener(_SameRules())
    try:
        with opener.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > MAX_DOCUMENT_BYTES:
                raise RefreshError(f"{url} is {int(length):,} bytes; at most "
                                   f"{MAX_DOCUMENT_BYTES:,} are read.")
            body: bytes = response.read(MAX_DOCUMENT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise RefreshError(f"{url} answered {exc.code} {exc.reason}.") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RefreshError(f"{url} could not be fetched: {reason}") from None
    if len(body) > MAX_DOCUMENT_BYTES:
        raise RefreshError(f"{url} is larger than {MAX_DOCUMENT_BYTES:,} bytes.")
    return body


@dataclass(frozen=True)
class Refreshed:
    path: Path
    source: str
    kept: tuple[str, ...]  # the NIDs whose profiles were saved
    left_out: dict[str, str]  # NID -> why its profile was not


def _nid_ok(nid: str) -> bool:
    return 2 <= len(nid) <= 32 and nid[0].isalnum() and nid[-1].isalnum() and \
        all(c.isascii() and (c.isalnum() or c == "-") for c in nid)


def vet(profiles: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the profiles that compile, NID -> why each other one does not)."""
    kept: dict[str, Any] = {}
    left_out: dict[str, str] = {}
    for nid, profile in profiles.items():
        if not _nid_ok(nid):
            left_out[nid[:40]] = f"not a NID ({NID_SYNTAX})"
            continue
        try:
            compile_profile(profile, nid)
        except ProfileError as exc:
            left_out[nid] = str(exc)
            continue
        kept[nid] = profile
    return kept, left_out


def refresh(url: str | None = None, *, directory: Path | None = None,
            timeout: float = FETCH_TIMEOUT) -> Refreshed:
    """Fetch a registry's ``/profiles.json`` (``url``: the registry's address or that
    file's; by default where the last refresh fetched from) into ``directory`` (the
    user's data directory). Profiles that do not compile are left out and named; a
    document that cannot be read, or has no usable profile, changes nothing."""
    target = (directory or data_dir()) / FILE_NAME
    if url is None:
        previous = read_file(target) if target.is_file() else {}
        url = str(previous.get("source") or "")
        if not url:
            raise RefreshError("no registry to fetch from: give its address (--from URL); "
                               "later refreshes remember it.")
    source = profiles_url(url)
    body = fetch(source, timeout=timeout)
    try:
        document = read_document(body.decode("utf-8"), what=source)
    except UnicodeDecodeError:
        raise RefreshError(f"{source} is not UTF-8 text.") from None
    except ProfileError as exc:
        raise RefreshError(str(exc).partition(": ")[2] or str(exc)) from None
    kept, left_out = vet(profiles_of(document))
    if not kept:
        raise RefreshError(f"{source} has no profile this version of urn8141 can use"
                           + (f" ({len(left_out)} left out)" if left_out else "") + ".")
    saved = {
        "about": "Machine-readable profiles of URN namespaces, fetched by `urn8141 refresh` "
                 f"from {source}; each rule cites the registration that states it.",
        "source": source,
        "fetched_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "profiles": dict(sorted(kept.items())),
    }
    _write_atomically(target, json.dumps(saved, indent=1, ensure_ascii=False) + "\n")
    return Refreshed(target, source, tuple(sorted(kept)), left_out)


def _write_atomically(path: Path, text: str) -> None:
    """Write beside ``path`` and rename over it: a reader sees the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

