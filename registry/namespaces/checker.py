"""The URN checker behind /check/ and /api/check: RFC 8141 rules plus what this
registry knows (is the NID registered here? what does its profile say of the NSS,
its namespace-specific normal form and its resolvers?), and the equivalence
check behind /api/equivalent."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from registry.namespaces.models import Namespace
from registry.namespaces.profiles import compiled
from urn8141 import URN, URNSyntaxError, is_informal, nid_key, parse
from urn8141.check import Checked, check
from urn8141.profiles import STEPS, Profile

MAX_URNS = 100  # per call: the API and the checker page (each is rate-limited too)
MAX_URN_LENGTH = 8192
# In a query string (GET /api/check, /api/equivalent), where every URN and all of them
# must fit in one request line (http_semantics.MAX_QUERY_BYTES, each character
# percent-encoded at worst): longer URNs and longer lists go in a POST body.
MAX_QUERY_URNS = 10
MAX_QUERY_URN_LENGTH = 256


def check_urns(texts: list[str]) -> list[dict]:
    """One result per input URN (at most MAX_URNS), each a JSON-ready dict."""
    texts = texts[:MAX_URNS]
    parsed: list[tuple[str, URN | URNSyntaxError]] = []
    for text in texts:
        if len(text) > MAX_URN_LENGTH:
            parsed.append((text, URNSyntaxError(
                f"longer than {MAX_URN_LENGTH} characters; no real URN is", MAX_URN_LENGTH)))
            continue
        try:
            parsed.append((text, parse(text)))
        except URNSyntaxError as exc:
            parsed.append((text, exc))
    keys = {nid_key(u.nid) for _, u in parsed if not isinstance(u, Exception)}
    known = {
        nid_key(nid): (nid, status, compiled(profile, nid))
        for nid, status, profile in Namespace.objects.filter(nid__lower__in=keys).values_list(
            "nid", "status", "profile")
    }
    profiles = {key: found[2] for key, found in known.items() if found[2] is not None}
    results = []
    for text, urn in parsed:
        if isinstance(urn, URNSyntaxError):
            results.append({
                "urn": text[:MAX_URN_LENGTH], "valid": False,
                "error": {"message": urn.reason, "offset": urn.offset},
            })
            continue
        registered = known.get(nid_key(urn.nid))
        profile = registered[2] if registered else None
        results.append({
            "urn": text,
            "valid": True,
            "nid": urn.nid,
            "nss": urn.nss,
            "r_component": urn.r_component,
            "q_component": urn.q_component,
            "f_component": urn.f_component,
            "normalized": urn.normal_form(),
            "informal": is_informal(urn.nid),
            "registered": registered is not None,
            "registered_nid": registered[0] if registered else None,
            "status": registered[1] if registered else None,
            "namespace_url": reverse("namespaces:detail", args=[registered[0]])
            if registered else None,
            **profile_facts(check(text, profiles), profile),
        })
    return results


def profile_facts(checked: Checked, profile: Profile | None) -> dict[str, Any]:
    """What the namespace's profile says of a URN checked with it (``check``):
    ``nss_valid`` (None when the namespace has no profile that judges validity),
    ``nss_errors`` (why not, offsets into the URN as given), ``namespace_normal_form``
    and ``resolves_to``."""
    urn = checked.urn
    errors = profile.check_nss(urn.nss) if profile and checked.nss_valid is False else []
    base = len("urn:") + len(urn.nid) + 1
    return {
        "nss_valid": checked.nss_valid,
        "nss_errors": [e.as_dict(base=base) for e in errors],
        "namespace_normal_form": checked.normal_form,
        # A resolver is for the namespace's URNs: none for one its profile rejects.
        "resolves_to": [] if profile is None or checked.nss_valid is False else [
            {"name": name, "url": url} for name, url in profile.resolve(urn)],
    }


class EquivalenceError(ValueError):
    """One of the two is not a URN; ``which`` is "a" or "b"."""

    def __init__(self, which: str, error: URNSyntaxError) -> None:
        super().__init__(f"{which} is not a URN: {error.reason} (at character "
                         f"{error.offset + 1})")
        self.which = which


def equivalence(a: str, b: str) -> dict[str, Any]:
    """Whether two URNs are URN-equivalent (RFC 8141 section 3.1) and whether they
    are equivalent by their namespace's own rules too (section 3.2): the steps of
    its published profile, each with the citation that states it."""
    parsed = []
    for which, text in (("a", a), ("b", b)):
        if len(text) > MAX_URN_LENGTH:
            raise EquivalenceError(which, URNSyntaxError("too long", MAX_URN_LENGTH))
        try:
            parsed.append(parse(text))
        except URNSyntaxError as exc:
            raise EquivalenceError(which, exc) from None
    ua, ub = parsed
    rfc8141 = ua.normal_form() == ub.normal_form()
    profile = None
    if nid_key(ua.nid) == nid_key(ub.nid):
        row = Namespace.objects.by_nid(ua.nid).values_list("nid", "profile").first()
        profile = compiled(row[1], row[0]) if row else None
    form_a = profile.normal_form(ua) if profile else ua.normal_form()
    form_b = profile.normal_form(ub) if profile else ub.normal_form()
    return {
        "a": a, "b": b,
        "equivalent": profile.equivalent(ua, ub) if profile else rfc8141,
        "rfc8141_equivalent": rfc8141,
        "namespace_normal_forms": [form_a, form_b],
        "rfc8141_normal_forms": [ua.normal_form(), ub.normal_form()],
        "has_profile": profile is not None,
        "steps": [{"step": name, "description": STEPS[name][0], "cite": cite}
                  for name, cite in (profile.steps if profile else ())],
    }


def split_lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]
