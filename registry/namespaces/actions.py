"""Every write to the published registry goes through one function here.

Each takes its rows with ``select_for_update()``, checks the move against an
explicit table, and writes the event row in the same transaction. Views, the
admin, the review workflow and management commands call these; none copies them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from registry.namespaces.models import (
    InformalNumberCounter,
    Namespace,
    NamespaceEvent,
    TemplateVersion,
)
from registry.namespaces.template import TEXT_FIELDS
from registry.urns import check_formal_nid, informal_nid

if TYPE_CHECKING:
    from registry.accounts.models import User

ACTIVE = Namespace.Status.ACTIVE
DEPRECATED = Namespace.Status.DEPRECATED

# The only status changes a namespace can make. A NID is never deleted or
# reassigned (section 5): deprecation keeps the row and points elsewhere.
STATUS_TRANSITIONS: dict[tuple[str, str], str] = {
    (ACTIVE, DEPRECATED): "deprecate",
    (DEPRECATED, ACTIVE): "reinstate",
}


class RegistryError(Exception):
    """A write the registry refuses; the message is for the person who tried."""


class NIDConflict(RegistryError):
    pass


def _locked_counter() -> InformalNumberCounter:
    """The informal-number counter row, locked until the transaction ends."""
    InformalNumberCounter.objects.get_or_create(pk=1)
    return InformalNumberCounter.objects.select_for_update().get(pk=1)


def _search_document(values: dict[str, str]) -> tuple[str, str]:
    return (
        values.get("registrant_organisation", "")[:300],
        "\n".join(values.get(name, "") for name in ("purpose", "syntax")),
    )


@transaction.atomic
def namespace_register(
    *,
    kind: str,
    nid: str | None,
    values: dict[str, str],
    date: dt.date,
    actor,
    requested_on: dt.date | None = None,
    fast_track: bool = False,
    holder=None,
    source_request=None,
) -> Namespace:
    """Register a new namespace with version 1 of its template.

    A formal NID is checked against sections 2.1 and 5.1 and, as the last line
    of defence under concurrency, by the case-insensitive unique index. An
    informal NID is the next number after the highest ever assigned, taken under
    a row lock, so concurrent registrations get consecutive numbers. ``date`` is
    the registration date; ``requested_on`` the template's Date (Appendix A: when
    the registration was requested of IANA), by default the same."""
    if kind == Namespace.Kind.INFORMAL:
        counter = _locked_counter()
        counter.last_assigned += 1
        counter.save(update_fields=["last_assigned"])
        number: int | None = counter.last_assigned
        nid = informal_nid(counter.last_assigned)
    else:
        number = None
        if not nid:
            raise RegistryError("A formal registration needs a NID.")
        problems = [p for p in check_formal_nid(nid) if p.code != "already_registered"]
        if problems:
            raise RegistryError(str(problems[0]))
        if Namespace.objects.by_nid(nid).exists():
            raise NIDConflict(_taken_message(nid))
    organisation, search_text = _search_document(values)
    try:
        with transaction.atomic():
            namespace = Namespace.objects.create(
                nid=nid, kind=kind, informal_number=number, registered_on=date,
                holder=holder, organisation=organisation, search_text=search_text,
                references=registry_references(values),
            )
    except IntegrityError:
        raise NIDConflict(_taken_message(nid)) from None
    version = TemplateVersion.objects.create(
        namespace=namespace, number=1, date=requested_on or date, nid=nid, fast_track=fast_track,
        published_by=actor, source_request=source_request,
        **{name: values.get(name, "") for name in TEXT_FIELDS},
    )
    NamespaceEvent.objects.create(
        namespace=namespace, kind=NamespaceEvent.Kind.REGISTERED, version=version, actor=actor,
        to_status=namespace.status,
    )
    return namespace


_RFC_POINTER = re.compile(r"\s*RFC\s?(\d+)\s*", re.IGNORECASE)
_URL = re.compile(r"https?://\S+")


def registry_references(values: dict[str, str]) -> list[str]:
    """The registry's "Reference" column for a registration made here, in IANA's
    style: "RFC8458" for an RFC, else "Organisation <documentation URL>"."""
    documentation = (values.get("documentation") or "").strip()
    organisation = (values.get("registrant_organisation") or "").strip()
    if m := _RFC_POINTER.fullmatch(documentation):
        return [f"RFC{m.group(1)}"]
    if m := _URL.search(documentation):
        return [f"{organisation} <{m.group(0).rstrip('.,;)')}>" if organisation
                else m.group(0)]
    return [organisation] if organisation else []


def _taken_message(nid: str) -> str:
    return (
        f'The NID "{nid}" is already registered (NIDs compare case-insensitively, '
        "RFC 8141 section 5.1); this request cannot be registered under it."
    )


@transaction.atomic
def version_publish(
    *, namespace: Namespace, values: dict[str, str], date: dt.date, actor,
    fast_track: bool = False, source_request=None,
) -> TemplateVersion:
    """Publish the next version of a namespace's template (section 6.2 revisions)."""
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    if not (values.get("revision_information") or "").strip() and namespace.versions.exists():
        raise RegistryError("A revision must describe its differences from the prior version.")
    last = namespace.versions.order_by("-number").values_list("number", flat=True).first() or 0
    version = TemplateVersion.objects.create(
        namespace=namespace, number=last + 1, date=date, nid=namespace.nid,
        fast_track=fast_track, published_by=actor, source_request=source_request,
        **{name: values.get(name, "") for name in TEXT_FIELDS},
    )
    namespace.organisation, namespace.search_text = _search_document(values)
    namespace.save(update_fields=["organisation", "search_text", "updated_at"])
    NamespaceEvent.objects.create(
        namespace=namespace, kind=NamespaceEvent.Kind.VERSION_PUBLISHED, version=version,
        actor=actor, from_status=namespace.status, to_status=namespace.status,
    )
    return version


@transaction.atomic
def namespace_set_status(*, namespace: Namespace, status: str, comment: str,
                         actor: User | None, replaced_by: str = "") -> Namespace:
    """Deprecate (with why, and optionally the registered NID that replaces it) or
    reinstate a namespace."""
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    move = (namespace.status, status)
    if move not in STATUS_TRANSITIONS:
        raise RegistryError(f"A namespace that is {namespace.status} cannot become {status}.")
    if not comment.strip():
        raise RecordInvalid("comment", "Say why, and what to use instead.")
    replacement = None
    if status == DEPRECATED and replaced_by.strip():
        replacement = replacement_namespace(namespace, replaced_by)
    changes = {}
    if namespace.replaced_by_id != (replacement.pk if replacement else None):
        changes["replaced_by"] = [_show(namespace.replaced_by), _show(replacement)]
    NamespaceEvent.objects.create(
        namespace=namespace, kind=NamespaceEvent.Kind.STATUS_CHANGED, actor=actor,
        from_status=namespace.status, to_status=status, comment=comment.strip(),
        changes=changes,
    )
    namespace.status = status
    namespace.status_note = comment.strip() if status == DEPRECATED else ""
    namespace.replaced_by = replacement
    namespace.save_with_event(update_fields=["status", "status_note", "replaced_by",
                                             "updated_at"])
    return namespace


class RecordInvalid(RegistryError):
    """A value of the registry record that cannot be stored; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def replacement_namespace(namespace: Namespace, nid: str) -> Namespace:
    """The registered namespace ``nid`` names, fit to replace ``namespace``."""
    replacement: Namespace | None = Namespace.objects.by_nid(nid.strip()).first()
    if replacement is None:
        raise RecordInvalid("replaced_by", f'"{nid.strip()}" is not a registered NID.')
    if replacement.pk == namespace.pk:
        raise RecordInvalid("replaced_by", "A namespace cannot replace itself.")
    if replacement.is_deprecated:
        raise RecordInvalid("replaced_by", f"{replacement.nid} is deprecated itself; point "
                                           "to the namespace that is in use.")
    return replacement


# The registry row's own fields, which IANA staff keep (everything else of a
# namespace comes from its registration template or its status).
RECORD_FIELDS = ("holder", "references", "registry_note", "registered_on", "template_url",
                 "template_date")


def _show(value: object) -> object:
    """A value as the event's ``changes`` keeps it (JSON; accounts and namespaces by name)."""
    if value is None or isinstance(value, str | int | bool | list):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Namespace):
        return value.nid
    return getattr(value, "email", str(value))


def check_record(changes: dict[str, object]) -> None:
    """Refuse values the registry row cannot hold, naming the field (forms call this
    before saving, so the error shows at the field)."""
    unknown = set(changes) - set(RECORD_FIELDS)
    if unknown:
        raise RegistryError(f"Not a field of the registry record: {', '.join(sorted(unknown))}.")
    references = changes.get("references", [])
    if not isinstance(references, list) or not all(
            isinstance(r, str) and r.strip() and "\n" not in r for r in references):
        raise RecordInvalid("references", "References are a list of labels, one per line "
                                          "(e.g. RFC5279, or Name <https://…>).")
    url = changes.get("template_url") or ""
    if url and not re.fullmatch(r"https?://\S+", str(url)):
        raise RecordInvalid("template_url", "The template URL must start with http:// or "
                                            "https://.")


@transaction.atomic
def namespace_update_record(*, namespace: Namespace, changes: dict[str, object], reason: str,
                            actor: User | None) -> Namespace:
    """Change the registry row that IANA staff keep: holder, references, registry
    note, registration date, template URL and date. Writes one NamespaceEvent with
    each field's before and after, and the reason. Unchanged values are ignored; if
    nothing changes, nothing is written."""
    check_record(changes)
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    diff = {name: value for name, value in changes.items()
            if getattr(namespace, name) != value}
    if not diff:
        return namespace
    if not reason.strip():
        raise RecordInvalid("reason", "Give a reason; it is kept in the namespace's history.")
    NamespaceEvent.objects.create(
        namespace=namespace, kind=NamespaceEvent.Kind.RECORD_CHANGED, actor=actor,
        from_status=namespace.status, to_status=namespace.status, comment=reason.strip(),
        changes={name: [_show(getattr(namespace, name)), _show(value)]
                 for name, value in diff.items()},
    )
    for name, value in diff.items():
        setattr(namespace, name, value)
    namespace.save(update_fields=[*diff, "updated_at"])
    return namespace


@transaction.atomic
def namespace_import(*, row: dict, kind: str, actor=None) -> tuple[Namespace, bool]:
    """Insert or refresh one row of IANA's registry (idempotent). Returns (namespace, created).

    Only the registry row is imported; template text that is not known stays empty."""
    nid = row["name"]
    fields = {
        "registered_on": _date(row.get("date")),
        "references": list(row.get("refs") or []),
        "template_url": row.get("template_url") or "",
        "template_date": _date(row.get("template_date")),
        "registry_note": "; ".join(row.get("notes") or []),
        "organisation": row.get("registrant") or "",
    }
    existing = Namespace.objects.select_for_update().by_nid(nid).first()
    if existing is not None:
        changed = [k for k, v in fields.items() if getattr(existing, k) != v]
        if changed:
            # A refresh from IANA's registry is a change of the record like any other.
            NamespaceEvent.objects.create(
                namespace=existing, kind=NamespaceEvent.Kind.RECORD_CHANGED, actor=actor,
                from_status=existing.status, to_status=existing.status,
                comment="Refreshed from IANA's registry.",
                changes={k: [_show(getattr(existing, k)), _show(fields[k])] for k in changed},
            )
        for key in changed:
            setattr(existing, key, fields[key])
        if changed:
            existing.save(update_fields=[*changed, "updated_at"])
        return existing, False
    number = int(row["value"]) if kind == Namespace.Kind.INFORMAL else None
    namespace = Namespace.objects.create(nid=nid, kind=kind, informal_number=number, **fields)
    if number is not None:
        counter = _locked_counter()
        if number > counter.last_assigned:
            counter.last_assigned = number
            counter.save(update_fields=["last_assigned"])
    NamespaceEvent.objects.create(
        namespace=namespace, kind=NamespaceEvent.Kind.IMPORTED, actor=actor,
        to_status=namespace.status,
    )
    return namespace, True


def _date(text: str | None) -> dt.date | None:
    return dt.date.fromisoformat(text) if text else None
