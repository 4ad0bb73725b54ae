"""Comparing IANA's registry with this one, and bringing this one in line.

``compare`` only reads; ``apply`` writes through the actions (one event per
change) in one transaction, so a file is imported whole or not at all.
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.db import transaction

from registry.namespaces.actions import (
    RegistryError,
    namespace_import,
    namespace_note_dropped,
    person_sync,
    record_changes,
    registry_metadata_set,
)
from registry.namespaces.iana import Snapshot, SourceError, read_registry
from registry.namespaces.models import Namespace, NamespaceEvent, Person, RegistryMetadata

MAX_BYTES = 20 * 1024 * 1024
FETCH_TIMEOUT = 60


@dataclass
class Change:
    what: str  # "new", "changed", "experts", "person", "updated", "here", "dropped"
    subject: str
    detail: str
    # Named in a report, nothing to record: a NID registered here that IANA has yet
    # to add, or one dropped from IANA's registry whose drop its history notes already.
    reported_only: bool = False

    def __str__(self) -> str:
        return f"{self.what:8} {self.subject}: {self.detail}"


def recorded_source(source: str) -> str:
    """How a source is named in the public history and the feed: an URL without any
    user name or password in it, or a file's base name (never a path of the server)."""
    if source.startswith(("http://", "https://")):
        parts = urlsplit(source)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    return Path(source).name


def load(source: str) -> Snapshot:
    """Read a registry from a file path or an http(s) URL. The snapshot (and so the
    history it is recorded in) names its source as ``recorded_source`` says."""
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked just above
            source, headers={"User-Agent": "urn-registry-sync"})
        try:
            with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:  # noqa: S310
                data = response.read(MAX_BYTES + 1)
        except OSError as exc:
            raise SourceError(f"{source}: cannot be fetched ({exc}).") from None
    elif source.startswith(("file:", "ftp:", "data:")) or "://" in source:
        raise SourceError(f"{source}: give a file path or an http(s) URL.")
    else:
        path = Path(source)
        if not path.is_file():
            raise SourceError(f"{source}: no such file.")
        data = path.read_bytes()[: MAX_BYTES + 1]
    if len(data) > MAX_BYTES:
        raise SourceError(f"{source}: larger than {MAX_BYTES // 1024 // 1024} MB.")
    return read_registry(data, recorded_source(source))


def compare(snapshot: Snapshot) -> list[Change]:
    """What would change here to match ``snapshot`` (nothing is written)."""
    changes = _namespace_changes(snapshot)
    meta = {m.key: m for m in RegistryMetadata.objects.all()}
    for key, experts in snapshot.experts.items():
        current = meta[key].experts if key in meta else ""
        if experts != current:
            changes.append(Change("experts", key, f"{current or '(none)'} -> {experts}"))
    changes.extend(_people_changes(snapshot))
    current_updated = meta["registry"].updated if "registry" in meta else None
    if snapshot.updated and snapshot.updated != current_updated:
        changes.append(Change("updated", "registry", snapshot.updated.isoformat()))
    return changes


def _namespace_changes(snapshot: Snapshot) -> list[Change]:
    """The namespaces new, changed or of another kind in ``snapshot``, then those only
    here: registered here since, or dropped from IANA's registry (kept here, a NID is
    never removed; the drop is noted in the namespace's history once)."""
    changes: list[Change] = []
    existing = {ns.nid.lower(): ns for ns in Namespace.objects.all()}
    for record in snapshot.records:
        ns = existing.pop(record.name.lower(), None)
        if ns is None:
            changes.append(Change("new", record.name, f"new {record.kind} namespace"))
        elif ns.kind != record.kind:
            changes.append(Change("conflict", record.name,
                                  f"{ns.kind} here, {record.kind} in {snapshot.source}"))
        else:
            changes.extend(Change("changed", record.name, c) for c in record_changes(ns, record))
    if snapshot.records:
        registered_here = set(NamespaceEvent.objects.filter(
            kind=NamespaceEvent.Kind.REGISTERED).values_list("namespace_id", flat=True))
        gone = [ns.pk for ns in existing.values() if ns.pk not in registered_here]
        noted = set(Namespace.objects.filter(pk__in=gone).noted_dropped_at_iana()
                    .values_list("pk", flat=True))
        for ns in sorted(existing.values(), key=lambda ns: ns.nid.lower()):
            if ns.pk in registered_here:
                changes.append(Change("here", ns.nid,
                                      f"registered here, not yet in {snapshot.source}",
                                      reported_only=True))
            elif ns.pk in noted:
                changes.append(Change("dropped", ns.nid, f"not in {snapshot.source}; "
                                      "its history notes the drop, kept here",
                                      reported_only=True))
            else:
                changes.append(Change("dropped", ns.nid,
                                      f"dropped from {snapshot.source}; kept here"))
    return changes


def _people_changes(snapshot: Snapshot) -> list[Change]:
    """IANA's people new or changed in ``snapshot``."""
    people = {p.person_id: p for p in Person.objects.all()}
    changes: list[Change] = []
    for person in snapshot.people:
        known = people.get(person.person_id)
        if known is None:
            changes.append(Change("person", person.person_id, f"new: {person.name}"))
        elif (known.name, known.org, known.uris, known.updated) != (
                person.name, person.org, person.uris, person.updated):
            changes.append(Change("person", person.person_id, "changed"))
    return changes


@transaction.atomic
def apply(snapshot: Snapshot, *, actor=None, first_import: bool = False) -> list[Change]:
    """Bring this registry in line with ``snapshot``, all or nothing. Rows only here
    are kept (a NID is never removed, section 5); they are reported, not deleted."""
    new_kind = (NamespaceEvent.Kind.IMPORTED if first_import
                else NamespaceEvent.Kind.ADDED_FROM_IANA)
    compared = compare(snapshot)
    changes = [c for c in compared if c.reported_only]
    for dropped in (c for c in compared if c.what == "dropped" and not c.reported_only):
        namespace = Namespace.objects.by_nid(dropped.subject).get()
        if namespace_note_dropped(namespace=namespace, source=snapshot.source, actor=actor):
            changes.append(Change("dropped", dropped.subject,
                                  f"dropped from {snapshot.source}; noted in its history, "
                                  "kept here"))
    for person in snapshot.people:
        if done := person_sync(person=person, actor=actor):
            changes.append(Change("person", person.person_id, done))
    for record in snapshot.records:
        try:
            _, made = namespace_import(record=record, actor=actor, source=snapshot.source,
                                       new_kind=new_kind)
        except RegistryError as exc:
            raise SourceError(f"{snapshot.source}: {record.kind} record {record.name}: "
                              f"{exc}") from None
        if made == ["new"]:
            changes.append(Change("new", record.name, f"new {record.kind} namespace"))
        else:
            changes.extend(Change("changed", record.name, c) for c in made)
    for key, experts in snapshot.experts.items():
        changes.extend(Change("experts", key, c) for c in
                       registry_metadata_set(key=key, experts=experts, actor=actor))
    if snapshot.updated:
        changes.extend(Change("updated", "registry", c) for c in
                       registry_metadata_set(key="registry", updated=snapshot.updated,
                                             actor=actor))
    return changes
