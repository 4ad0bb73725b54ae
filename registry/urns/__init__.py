"""The rules of RFC 8141 that a machine can check, as one pure-Python package.

No Django import anywhere below this package: forms, models, the API, the
command line and the tests all call these functions, so there is one source of
truth for what a URN and a NID are.

Public API::

    parse(text) -> URN                       # section 2 ABNF + prose of 2.3.1-2.3.3
    normalize(text) -> str                   # section 3.1 URN-equivalence key
    equivalent(a, b) -> bool                 # section 3.1
    check_formal_nid(nid, registered=())     # sections 2.1 and 5.1 -> list[Problem]
    check_informal_nid(nid, registered=())   # sections 2.1 and 5.2 -> list[Problem]
    advise_formal_nid(nid, index=...)        # sections 5.1 and 6.2 warnings (confusion.py)
    ConfusionIndex(registered=..., ...)      # the indexes those warnings look things up in

Namespace profiles (section 3.2 equivalence, a namespace's own NSS syntax, check
digits, resolvers) are in ``registry.urns.profiles``, their ABNF / regular-expression
matcher in ``registry.urns.grammar``.
"""

from registry.urns.confusion import ConfusionIndex, Holder, advise_formal_nid
from registry.urns.nid import (
    NID_MAX_LENGTH,
    Problem,
    check_formal_nid,
    check_informal_nid,
    informal_nid,
    informal_number,
    is_informal,
    nid_key,
)
from registry.urns.syntax import URN, URNSyntaxError, equivalent, normalize, parse

__all__ = [
    "NID_MAX_LENGTH",
    "ConfusionIndex",
    "Holder",
    "URN",
    "Problem",
    "URNSyntaxError",
    "advise_formal_nid",
    "check_formal_nid",
    "check_informal_nid",
    "equivalent",
    "informal_nid",
    "informal_number",
    "is_informal",
    "nid_key",
    "normalize",
    "parse",
]
