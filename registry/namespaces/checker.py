"""The URN checker behind /check/ and /api/check: RFC 8141 rules plus what this
registry knows (is the NID registered here?)."""

from __future__ import annotations

from django.urls import reverse

from registry.namespaces.models import Namespace
from registry.urns import URN, URNSyntaxError, is_informal, nid_key, parse

MAX_URNS = 100  # per call: the API and the checker page (each is rate-limited too)
MAX_URN_LENGTH = 8192


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
        nid_key(nid): (nid, status)
        for nid, status in Namespace.objects.filter(nid__lower__in=keys).values_list("nid",
                                                                                      "status")
    }
    results = []
    for text, urn in parsed:
        if isinstance(urn, URNSyntaxError):
            results.append({
                "urn": text[:MAX_URN_LENGTH], "valid": False,
                "error": {"message": urn.reason, "offset": urn.offset},
            })
            continue
        registered = known.get(nid_key(urn.nid))
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
        })
    return results


def split_lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]
