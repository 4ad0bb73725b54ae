"""Checking a URN with its namespace's profile, in one call: RFC 8141 syntax
(section 2), the profile's verdict on the NSS (its syntax and check digits), and
the namespace normal form (section 3.1, then the profile's steps, 3.2).

``check(text, profiles)`` is what the registry's /api/check, the command line and
``bench/urns.py`` call. It runs in C (``urn8141/_speedups.c``) where that extension
was built (installing the package builds it when a C compiler is there; it is
optional) and takes the Python path, ``check_python``, for whatever the C declines:
text that is not ASCII or not a URN (the Python path says where and why), a profile
with a step the C does not have. ``check_python`` is the reference: the tests hold
the two equal on the corpus, on every shipped profile and on random text, and the
whole suite runs on either (``URN_SPEEDUPS=0`` turns the C off).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import NamedTuple

from urn8141.profiles import Profile
from urn8141.syntax import URN, parse

_new = tuple.__new__


class Checked(NamedTuple):
    """A URN (its components, as ``URN``), its profile's verdict on the NSS (None
    when there is no profile or it judges nothing) and its namespace normal form."""

    nid: str
    nss: str
    r_component: str | None
    q_component: str | None
    f_component: str | None
    nss_valid: bool | None
    normal_form: str

    @property
    def urn(self) -> URN:
        return _new(URN, self[:5])


def check_python(text: str, profiles: Mapping[str, Profile]) -> Checked:
    """``check`` in Python: the reference. ``profiles`` maps a NID in lower case to
    its profile. Raises ``URNSyntaxError`` when ``text`` is not a URN."""
    urn = parse(text)
    profile = profiles.get(urn.nid.lower())
    if profile is None:
        return _new(Checked, (*urn, None, urn.normal_form()))
    valid = profile.nss_ok(urn.nss) if profile.judges_validity else None
    return _new(Checked, (*urn, valid, profile.normal_form(urn)))


def _load_speedups() -> ModuleType | None:
    wanted = os.environ.get("URN_SPEEDUPS", "1")
    if wanted not in ("0", "1"):  # a typo must not quietly pick a path
        raise ValueError(f"URN_SPEEDUPS is 0 (the Python path only) or 1, not {wanted!r}")
    if wanted == "0":
        return None
    try:
        from urn8141 import _speedups
    except ImportError:  # not built here: the Python path does everything
        return None
    _speedups.configure(Checked)
    return _speedups


_speedups = _load_speedups()
ACCELERATED = _speedups is not None

check: Callable[[str, dict[str, Profile]], Checked] = check_python
if _speedups is not None:
    _fast = _speedups.check

    def check(text: str, profiles: dict[str, Profile]) -> Checked:
        """The URN checked with its profile (``profiles``: a dict from a NID in lower
        case to its profile), in C where the C takes it, else as ``check_python``.
        Raises ``URNSyntaxError`` when ``text`` is not a URN."""
        found = _fast(text, profiles)
        return found if found is not None else check_python(text, profiles)
