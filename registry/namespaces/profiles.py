"""Namespace profiles in the registry: the ones shipped for the registered
namespaces (with the URN toolkit, urn8141/data/profiles.json), and the compiled
profile of a namespace.

The rules themselves are in urn8141.profiles (no Django there); a profile
is published by ``namespace_set_profile`` or with a template version
(registry.namespaces.actions), so its history is the namespace's history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from registry.namespaces.actions import RegistryError, namespace_set_profile
from registry.namespaces.models import Namespace, NamespaceEvent
from urn8141 import URNSyntaxError, parse
from urn8141.profiles import (
    STEPS,
    VALIDATORS,
    Profile,
    ProfileError,
    compile_profile,
    profile_problems,
)
from urn8141.store import SHIPPED_PROFILES, profiles_of, read_file


def shipped_profiles(path: Path = SHIPPED_PROFILES) -> dict[str, dict[str, Any]]:
    """NID (lower case) -> profile, from a file in the layout of /profiles.json (the
    toolkit's reader: bounded in size and nesting)."""
    try:
        return profiles_of(read_file(path))
    except ProfileError as exc:
        raise RegistryError("; ".join(message for _, message in exc.problems)) from None


def import_shipped_profiles(path: Path = SHIPPED_PROFILES, *, actor: Any = None) -> list[str]:
    """Publish each shipped profile on its namespace, through ``namespace_set_profile``
    (one history event each): on a namespace without one, and in place of an earlier
    shipped profile when the shipped file now says something else (a corrected rule
    reaches every install). A profile that came any other way (with a registration or a
    revision, through review, or set or withdrawn by IANA staff) is the namespace's own
    from then on and is never overwritten. Returns the NIDs given a profile."""
    published = []
    profiles = shipped_profiles(path)
    for namespace in Namespace.objects.filter(nid__lower__in=list(profiles)).order_by("nid"):
        shipped = profiles[namespace.nid.lower()]
        if namespace.profile == shipped or not _profile_is_shipped(namespace):
            continue
        namespace_set_profile(
            namespace=namespace, profile=shipped, actor=actor, shipped=True,
            reason=(f"Machine-readable profile shipped with the registry ({path.name}); each "
                    "rule cites the registration that states it."
                    + (" It replaces the one shipped before, which this release corrects."
                       if namespace.profile else "")),
        )
        published.append(namespace.nid)
    return published


def _profile_is_shipped(namespace: Namespace) -> bool:
    """Whether the namespace's profile is none at all, or the one the shipped file last
    installed: the latest event that changed its profile installed it, nothing since."""
    latest = namespace.events.profile_changes().values_list("kind", "changes").first()
    if latest is None:
        # Never changed by an event: none yet, or one that came with the registration.
        return not namespace.profile
    kind, changes = latest
    return (kind == NamespaceEvent.Kind.PROFILE_SHIPPED
            and changes["profile"][1] == namespace.profile)


def compiled(namespace_profile: dict[str, Any], nid: str) -> Profile | None:
    """The compiled form of a published profile; None when there is none (or, which
    the actions never let happen, when it does not compile)."""
    if not namespace_profile:
        return None
    try:
        return compile_profile(namespace_profile, nid)
    except ProfileError:
        return None


def profile_presentation(data: object, nid: str | None) -> dict[str, Any] | None:
    """What a page shows of a profile: its rules with what each means and where the
    registration says so, and each example checked against the profile itself. For a
    proposed profile that is not sound, ``problems`` says why (experts see the same
    check the form made)."""
    if not data:
        return None
    problems = profile_problems(data, nid)
    if not isinstance(data, dict):
        return {"problems": problems}
    profile = None if problems else compile_profile(data, nid)
    syntax = data.get("syntax") if isinstance(data.get("syntax"), dict) else None
    kind = next((k for k in ("abnf", "regex") if syntax and k in syntax), "")

    def examples(key: str) -> list[dict[str, Any]]:
        shown = []
        for text in data.get(key, []) if isinstance(data.get(key), list) else []:
            if not isinstance(text, str):
                continue
            entry: dict[str, Any] = {"urn": text, "errors": [], "normal_form": ""}
            if profile is not None:
                try:
                    urn = parse(text)
                except URNSyntaxError:
                    continue
                entry["errors"] = profile.check_nss(urn.nss)
                entry["normal_form"] = profile.normal_form(urn)
                entry["resolves_to"] = profile.resolve(urn)
            shown.append(entry)
        return shown

    def entries(key: str) -> list[dict[str, Any]]:
        value = data.get(key)
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    return {
        "problems": problems,
        "syntax": {"kind": kind.upper(), "text": syntax[kind], "cite": syntax.get("cite", "")}
        if kind and syntax else None,
        "validators": [{"name": v.get("name"), "cite": v.get("cite", ""),
                        "description": VALIDATORS.get(str(v.get("name")), ("",))[0]}
                       for v in entries("validators")],
        "steps": [{"name": s.get("step"), "cite": s.get("cite", ""),
                   "description": STEPS.get(str(s.get("step")), ("",))[0]}
                  for s in entries("equivalence")],
        "examples": examples("examples"),
        "counter_examples": examples("counter_examples"),
        "resolvers": entries("resolvers"),
    }
