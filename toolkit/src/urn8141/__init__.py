"""The rules of RFC 8141 that a machine can check, and the namespace profiles of the
URN registry, offline.

Public API::

    parse(text) -> URN                       # section 2 ABNF + prose of 2.3.1-2.3.3
    normalize(text) -> str                   # section 3.1 URN-equivalence key
    equivalent(a, b) -> bool                 # section 3.1
    check_formal_nid(nid, registered=())     # sections 2.1 and 5.1 -> list[Problem]
    check_informal_nid(nid, registered=())   # sections 2.1 and 5.2 -> list[Problem]
    advise_formal_nid(nid, index=...)        # sections 5.1 and 6.2 warnings (confusion.py)
    ConfusionIndex(registered=..., ...)      # the indexes those warnings look things up in

    profiles = load_profiles()               # the registry's profiles (shipped or refreshed)
    profiles.check(text) -> Checked          # RFC 8141, the NSS by its profile, normal form
    profiles.equivalent(a, b) -> bool        # sections 3.1 and 3.2 (the namespace's steps)
    profiles.normal_form(text) -> str
    profiles.resolve(text) -> [(name, url)]
    refresh(url)                             # fetch a registry's /profiles.json (store.py)

    compile_profile(data, nid) -> Profile    # one profile (profiles.py); profile_problems()

    urn8141.check.check(text, {nid: Profile}) -> Checked  # the one-call check, in C where
                                                          # built (profiles.check calls it)

A profile's ABNF / regular-expression matcher is ``urn8141.grammar``, its DFAs
``urn8141.dfa``.
"""

from urn8141.check import ACCELERATED, Checked
from urn8141.confusion import ConfusionIndex, Holder, advise_formal_nid
from urn8141.nid import (
    NID_MAX_LENGTH,
    Problem,
    check_formal_nid,
    check_informal_nid,
    informal_nid,
    informal_number,
    is_informal,
    nid_key,
)
from urn8141.profiles import NSSError, Profile, ProfileError, compile_profile, profile_problems
from urn8141.store import Profiles, RefreshError, load_profiles, refresh
from urn8141.syntax import URN, URNSyntaxError, equivalent, normalize, parse

__all__ = [
    "ACCELERATED",
    "NID_MAX_LENGTH",
    "NSSError",
    "Checked",
    "ConfusionIndex",
    "Holder",
    "URN",
    "Problem",
    "Profile",
    "ProfileError",
    "Profiles",
    "RefreshError",
    "URNSyntaxError",
    "advise_formal_nid",
    "check_formal_nid",
    "check_informal_nid",
    "compile_profile",
    "equivalent",
    "informal_nid",
    "informal_number",
    "is_informal",
    "load_profiles",
    "nid_key",
    "normalize",
    "parse",
    "profile_problems",
    "refresh",
]
