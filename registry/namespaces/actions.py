"""Every write to the published registry goes through one function here.

Each asks the workflow whether the person acting may change the registry
(``workflow.can_keep_registry``; ``actor`` None is a command run on the server: an
import, the sync with IANA, a seed), takes its rows with ``select_for_update()``,
checks the move against an explicit table, and writes the event row in the same
transaction. Views, the admin, the review workflow and management commands call
these; none copies them, and none relies on its caller having checked who acts.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
from typing import TYPE_CHECKING, Any, cast

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from registry.namespaces import xrefs
from registry.namespaces.iana import Person as IanaPerson
from registry.namespaces.iana import Record
from registry.namespaces.models import (
    InformalNumberCounter,
    Namespace,
    NamespaceEvent,
    Person,
    RegistryEvent,
    RegistryGeneration,
    RegistryMetadata,
    TemplateVersion,
)
from registry.namespaces.querysets import NamespaceEventQuerySet, normalize_rfc_numbers
from registry.namespaces.template import PROFILE_FIELD, STORED_FIELDS, TEXT_FIELDS
from urn8141 import check_formal_nid, informal_nid, nid_key
from urn8141.profiles import ProfileError, profile_problems, read_json

if TYPE_CHECKING:
    from registry.accounts.models import User
    from registry.review.models import RegistrationRequest

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


class RegistryRefused(RegistryError):
    """The person acting may not change the registry (the workflow says who may)."""


def _check_actor(actor: User | None) -> None:
    """Refuse a person the workflow does not let keep the registry; ``None`` is a
    command run on the server, which acts as nobody."""
    from registry.review import workflow

    if actor is not None and not workflow.can_keep_registry(actor):
        raise RegistryRefused("Only IANA staff change the registry.")


def registry_changed(*, real_change_at: dt.datetime | None = None, exports: bool = True) -> None:
    """Move the registry generation inside the caller's transaction: the cached
    public pages and exports of the old generation are never served again once
    the change commits, and stay current if it rolls back. Every writer of a
    row the public pages show calls this (the review's transitions too, for the
    public review list and a namespace's pending revision). ``real_change_at``:
    given only by ``record_namespace_events``, for a change made in this registry.
    ``exports=False``: a change only the review's pages show (a submission, a comment),
    which leaves the exports' generation, and so their files, as they are."""
    if not connection.in_atomic_block:
        raise RuntimeError("registry_changed() belongs inside the change's transaction.")
    if exports and not any(entry[1] is _queue_export_build
                           for entry in connection.run_on_commit):
        transaction.on_commit(_queue_export_build, robust=True)  # once per transaction
    if connection.vendor == "postgresql":
        # Moved at commit by a deferred trigger (migration 0011): the generation row is
        # locked for this transaction's commit only, so unrelated writers do not queue
        # on it for their whole transaction, and the move still commits with the change.
        with connection.cursor() as cursor:
            cursor.execute(_BUMP_SQL, [real_change_at, exports])
        return
    stamps = {"changed_at": timezone.now(),
              **({"real_change_at": real_change_at} if real_change_at else {})}
    moved = RegistryGeneration.objects.filter(pk=1).update(
        number=F("number") + 1, exports_number=F("exports_number") + int(exports), **stamps)
    if not moved:
        RegistryGeneration.objects.get_or_create(
            pk=1, defaults={"token": secrets.token_hex(8), "number": 1, "exports_number": 1,
                            **stamps})


_BUMP_SQL = "INSERT INTO namespaces_generationbump (real_change_at, exports) VALUES (%s, %s)"


def _queue_export_build() -> None:
    """The new generation's exports, built by a worker before most clients ask."""
    from registry.namespaces.tasks import build_exports_task

    build_exports_task.delay()


def record_namespace_events(*events: NamespaceEvent, batch_size: int | None = None) -> None:
    """Write namespaces' history rows and move the registry generation with them.

    The one writer of ``NamespaceEvent``: so the registry's "last change" (the
    registry page's date, the ``<updated>`` of IANA's XML) is by construction the
    newest event that is a change made here, not one mirrored from IANA's registry
    (``NamespaceEventQuerySet.MIRRORED``), and is read from the generation row every public
    request reads anyway."""
    written = NamespaceEvent.objects.bulk_create(events, batch_size=batch_size)
    mirrored = NamespaceEventQuerySet.MIRRORED
    real = [event.created_at for event in written if event.kind not in mirrored]
    registry_changed(real_change_at=max(real, default=None))


def _locked_counter() -> InformalNumberCounter:
    """The informal-number counter row, locked until the transaction ends."""
    InformalNumberCounter.objects.get_or_create(pk=1)
    return InformalNumberCounter.objects.select_for_update().get(pk=1)


def _search_document(values: dict[str, str]) -> tuple[str, str]:
    """The organisation and the searched text of a template: every field, with RFC
    numbers written one way (querysets.normalize_rfc_numbers)."""
    return (
        values.get("registrant_organisation", "")[:300],
        search_text_of(values),
    )


def search_text_of(values: dict[str, str]) -> str:
    return normalize_rfc_numbers(
        "\n".join(text for name in TEXT_FIELDS if (text := (values.get(name) or "").strip())))


@transaction.atomic
def namespace_register(
    *,
    kind: str,
    nid: str | None,
    values: dict[str, str],
    date: dt.date,
    actor: User | None,
    requested_on: dt.date | None = None,
    fast_track: bool = False,
    holder: User | None = None,
    source_registration: RegistrationRequest | None = None,
) -> Namespace:
    """Register a new namespace with version 1 of its template.

    A formal NID is checked against sections 2.1 and 5.1 and, as the last line
    of defence under concurrency, by the case-insensitive unique index. An
    informal NID is the next number after the highest ever assigned, taken under
    a row lock, so concurrent registrations get consecutive numbers. ``date`` is
    the registration date; ``requested_on`` the template's Date (Appendix A: when
    the registration was requested of IANA), by default the same."""
    _check_actor(actor)
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
                contact=_contact_person(values, date) if number is not None else [],
            )
    except IntegrityError:
        raise NIDConflict(_taken_message(nid)) from None
    profile = profile_from_text(values.get(PROFILE_FIELD) or "", nid=nid)
    version = TemplateVersion.objects.create(
        namespace=namespace, number=1, date=requested_on or date, nid=nid, fast_track=fast_track,
        published_by=actor, source_registration=source_registration,
        **{name: values.get(name, "") for name in STORED_FIELDS},
        profile=profile_text(profile),
    )
    if profile:
        namespace.profile = profile
        namespace.save(update_fields=["profile"])
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=NamespaceEvent.Kind.REGISTERED, version=version, actor=actor,
        to_status=namespace.status,
    ))
    return namespace


def profile_text(profile: dict[str, Any]) -> str:
    """A profile as a template keeps it: indented JSON, keys in a stable order ("" for none)."""
    return json.dumps(profile, indent=2, ensure_ascii=False) if profile else ""


def profile_from_text(text: str, *, nid: str | None) -> dict[str, Any]:
    """The profile a template's text holds ({} for none), or RecordInvalid("profile")
    naming the first problem (forms check the same with ``profile_problems``)."""
    if not text.strip():
        return {}
    try:
        data = read_json(text)
    except ProfileError as exc:
        raise RecordInvalid(PROFILE_FIELD, exc.problems[0][1]) from None
    problems = profile_problems(data, nid)
    if problems:
        field, message = problems[0]
        raise RecordInvalid(PROFILE_FIELD, f"{field}: {message}")
    return cast("dict[str, Any]", data)


@transaction.atomic
def namespace_set_profile(*, namespace: Namespace, profile: dict[str, Any], reason: str,
                          actor: User | None, shipped: bool = False) -> Namespace:
    """Publish (or, with {}, withdraw) a namespace's machine-readable profile outside
    a template revision: the profiles shipped for the registered namespaces, or a
    correction by IANA staff. Checked like a proposed one (its examples must pass);
    one event keeps the profile before and after, and the reason: PROFILE_SHIPPED for
    one installed from the shipped file (``shipped``: like an import, not a change of
    the registry, so not in the feed), RECORD_CHANGED otherwise."""
    _check_actor(actor)
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    if profile:
        problems = profile_problems(profile, namespace.nid)
        if problems:
            field, message = problems[0]
            raise RecordInvalid(PROFILE_FIELD, f"{namespace.nid}: {field}: {message}")
    if namespace.profile == profile:
        return namespace
    if (problem := reason_refusal(reason)) is not None:
        raise problem
    kind = NamespaceEvent.Kind.PROFILE_SHIPPED if shipped else NamespaceEvent.Kind.RECORD_CHANGED
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=kind, actor=actor,
        from_status=namespace.status, to_status=namespace.status, comment=reason.strip(),
        changes={PROFILE_FIELD: [namespace.profile, profile]},
    ))
    namespace.profile = profile
    namespace.save(update_fields=["profile", "updated_at"])
    return namespace


_RFC_POINTER = re.compile(r"\s*RFC\s?(\d+)\s*", re.IGNORECASE)
_URL = re.compile(r"https?://\S+")


def registry_references(values: dict[str, str]) -> list[xrefs.Xref]:
    """The registry's "Reference" column for a registration made here, typed as IANA
    types it: the RFC, else the organisation linked to its documentation URL."""
    documentation = (values.get("documentation") or "").strip()
    organisation = xrefs.xml_safe(values.get("registrant_organisation") or "").strip()
    if m := _RFC_POINTER.fullmatch(documentation):
        return [{"type": "rfc", "data": f"rfc{m.group(1)}"}]
    if (m := _URL.search(documentation)) and xrefs.is_web_url(url := m.group(0).rstrip(".,;)")):
        return [{"type": "uri", "data": url, "text": organisation or url}]
    return [{"type": "text", "text": organisation}] if organisation else []


def _contact_person(values: dict[str, str], date: dt.date) -> list[xrefs.Xref]:
    """An informal namespace's contact, as IANA records it: a person in its
    ``<people>`` (the address written as IANA writes it, with "&" for "@")."""
    name = xrefs.xml_safe(values.get("contact_name") or "").strip()
    email = (values.get("contact_email") or "").strip()
    if not name and not email:
        organisation = (values.get("registrant_organisation") or "").strip()
        return [{"type": "text", "text": organisation}] if organisation else []
    taken = set(Person.objects.values_list("person_id", flat=True))
    person = Person.objects.create(
        person_id=xrefs.person_id(name or email.split("@")[0], taken), name=name,
        uris=[f"mailto:{email.replace('@', '&')}"] if email else [], updated=date,
    )
    RegistryEvent.objects.create(kind=RegistryEvent.Kind.PERSON_ADDED,
                                 subject=person.person_id,
                                 after=_describe(_person_values(IanaPerson(
                                     person.person_id, person.name, "", person.uris, date))))
    return [{"type": "person", "data": person.person_id}]


def _taken_message(nid: str) -> str:
    return (
        f'The NID "{nid}" is already registered (NIDs compare case-insensitively, '
        "RFC 8141 section 5.1); this request cannot be registered under it."
    )


@transaction.atomic
def version_publish(
    *, namespace: Namespace, values: dict[str, str], date: dt.date, actor: User | None,
    fast_track: bool = False, source_registration: RegistrationRequest | None = None,
    number: int | None = None,
    nid: str | None = None,
) -> TemplateVersion:
    """Publish the next version of a namespace's template (section 6.2 revisions).

    ``number`` publishes a version under the number its template gives (an
    imported RFC's "Version: 3"); it must come after every published version,
    which is never overwritten. ``nid`` is the NID as the template writes it."""
    _check_actor(actor)
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    if not (values.get("revision_information") or "").strip() and namespace.versions.exists():
        raise RegistryError("A revision must describe its differences from the prior version.")
    last = namespace.versions.order_by("-number").values_list("number", flat=True).first() or 0
    if number is not None and number <= last:
        raise RegistryError(f"Version {number} of {namespace.nid} cannot be published: version "
                            f"{last} is already published, and published versions never change.")
    if nid is not None and nid.lower() != namespace.nid.lower():
        raise RegistryError(f'A template for "{nid}" cannot be a version of {namespace.nid}.')
    # A template read from text (import_templates) says nothing of a profile: the
    # published one is carried forward, as a revision request carries it forward.
    profile = (profile_from_text(values.get(PROFILE_FIELD) or "", nid=namespace.nid)
               if PROFILE_FIELD in values else namespace.profile)
    version = TemplateVersion.objects.create(
        namespace=namespace, number=number or last + 1, date=date, nid=nid or namespace.nid,
        fast_track=fast_track, published_by=actor, source_registration=source_registration,
        **{name: values.get(name, "") for name in STORED_FIELDS},
        profile=profile_text(profile),
    )
    changes = ({PROFILE_FIELD: [namespace.profile, profile]} if profile != namespace.profile
               else {})
    namespace.organisation, namespace.search_text = _search_document(values)
    namespace.profile = profile
    namespace.save(update_fields=["organisation", "search_text", "profile", "updated_at"])
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=NamespaceEvent.Kind.VERSION_PUBLISHED, version=version,
        actor=actor, from_status=namespace.status, to_status=namespace.status, changes=changes,
    ))
    return version


@transaction.atomic
def namespace_set_status(*, namespace: Namespace, status: str, comment: str,
                         actor: User | None, replaced_by: str = "") -> Namespace:
    """Deprecate (with why, and optionally the registered NID that replaces it) or
    reinstate a namespace."""
    _check_actor(actor)
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
        changes["replaced_by"] = [_as_json(namespace.replaced_by), _as_json(replacement)]
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=NamespaceEvent.Kind.STATUS_CHANGED, actor=actor,
        from_status=namespace.status, to_status=status, comment=comment.strip(),
        changes=changes,
    ))
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


def reason_refusal(reason: str) -> RecordInvalid | None:
    """A change of a namespace's record needs a reason, kept in its public history."""
    if (reason or "").strip():
        return None
    return RecordInvalid("reason", "Give a reason; it is kept in the namespace's history.")


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
STAFF_FIELDS = ("holder", "references", "registry_note", "registered_on", "template_url",
                "template_date")


def _as_json(value: object) -> object:
    """A value as the event's ``changes`` keeps it (JSON; accounts and namespaces by name)."""
    if value is None or isinstance(value, str | int | bool | list):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Namespace):
        return value.nid
    return getattr(value, "email", str(value))


def validate_record(changes: dict[str, object]) -> None:
    """Refuse values the registry row cannot hold, naming the field (forms call this
    before saving, so the error shows at the field)."""
    unknown = set(changes) - set(STAFF_FIELDS)
    if unknown:
        raise RegistryError(f"Not a field of the registry record: {', '.join(sorted(unknown))}.")
    references = changes.get("references", [])
    if not isinstance(references, list) or not all(
            isinstance(r, dict) or (isinstance(r, str) and r.strip() and "\n" not in r)
            for r in references):
        raise RecordInvalid("references", "References are a list of labels, one per line "
                                          "(e.g. RFC5279, or Name <https://…>).")
    for reference in references:
        if isinstance(reference, dict) and (problem := xrefs.problem(cast(xrefs.Xref, reference))):
            raise RecordInvalid("references", problem)
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
    _check_actor(actor)
    validate_record(changes)
    if "references" in changes:  # labels become references typed as IANA types them
        changes = {**changes, "references": [
            xrefs.from_label(r) if isinstance(r, str) else r
            for r in cast("list[object]", changes["references"])]}  # validate_record: a list
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    diff = {name: value for name, value in changes.items()
            if getattr(namespace, name) != value}
    if not diff:
        return namespace
    if (problem := reason_refusal(reason)) is not None:
        raise problem
    kind = NamespaceEvent.Kind.RECORD_CHANGED
    if "holder" in diff:
        kind = NamespaceEvent.Kind.HOLDER_CHANGED
        if "references" not in changes:  # staff who give references decide them
            references = _references_naming(namespace.references, namespace.organisation,
                                            cast("User | None", diff["holder"]))
            if references != namespace.references:
                diff["references"] = references
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=kind, actor=actor,
        from_status=namespace.status, to_status=namespace.status, comment=reason.strip(),
        changes={name: [_as_json(getattr(namespace, name)), _as_json(value)]
                 for name, value in diff.items()},
    ))
    before = namespace.holder
    for name, value in diff.items():
        setattr(namespace, name, value)
    namespace.save(update_fields=[*diff, "updated_at"])
    if kind == NamespaceEvent.Kind.HOLDER_CHANGED:
        _tell_holders(namespace, before=before, reason=reason.strip())
    return namespace


def _tell_holders(namespace: Namespace, *, before: User | None, reason: str) -> None:
    """Both holders are told, through the outbox (sent once the change commits)."""
    from registry.review.mails import holder_change_messages
    from registry.review.outbox import queue_notice

    for message in holder_change_messages(namespace, before=before, after=namespace.holder,
                                          reason=reason):
        queue_notice(message, audience="holder")


def _references_naming(references: list[Any], organisation: str,
                       holder: User | None) -> list[Any]:
    """The Reference column after a holder change: each reference that named the
    previous holder's organisation (the text of a registration made here) names the
    new holder's instead. An RFC, or a new holder who gave no organisation, is left as
    it is (an account's own name is not published for it)."""
    new = xrefs.xml_safe(holder.organisation).strip() if holder is not None else ""
    if not new or not organisation:
        return references
    return [{**ref, "text": new}
            if isinstance(ref, dict) and ref.get("type") in ("text", "uri")
            and (ref.get("text") or "").strip() == organisation.strip() else ref
            for ref in references]


def _record_fields(record: Record) -> dict[str, Any]:
    fields = {
        "registered_on": record.date,
        "record_updated": record.updated,
        "references": [dict(x) for x in record.references],
        "template_url": record.template_url,
        "contact": [dict(x) for x in record.contact] if record.kind == "informal" else [],
        "template_date": record.template_date,
        "registry_note": record.notes,
        "organisation": record.organisation or None,
    }
    # The JSON layout says these; IANA's XML does not, and then they stay as they are.
    # A row that names no registrant keeps the organisation a published template gave.
    return {k: v for k, v in fields.items() if v is not None or k in
            ("registered_on", "record_updated")}


def record_changes(namespace: Namespace, record: Record) -> list[str]:
    """What differs between a namespace and IANA's row for it, one line per field."""
    changes = []
    for key, value in _record_fields(record).items():
        if _comparable(getattr(namespace, key)) != _comparable(value):
            changes.append(f"{key}: {_show(getattr(namespace, key))} -> {_show(value)}")
    return changes


def _comparable(value: Any) -> Any:
    if isinstance(value, list):
        return [xrefs.from_label(v) if isinstance(v, str) else
                {k: v[k] for k in sorted(v) if v[k] not in ("", None)} for v in value]
    return value if value not in ("",) else None


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(
            xrefs.label(xrefs.from_label(v) if isinstance(v, str) else v) for v in value) + "]"
    return value.isoformat() if isinstance(value, dt.date) else repr(value or "")


@transaction.atomic
def namespace_import(*, record: Record, actor: Any = None, source: str = "",
                     new_kind: str = NamespaceEvent.Kind.IMPORTED) -> tuple[Namespace, list[str]]:
    """Insert or bring in line one row of IANA's registry. Returns the namespace and
    the changes made ([] for an unchanged row, ["new"] for a new one).

    A new row gets a ``new_kind`` event (IMPORTED on a first import, ADDED_FROM_IANA
    when IANA registered it later); every change to an existing row a SYNCED event naming
    each field. Template text that is not in the source stays empty, never invented."""
    _check_actor(actor)
    fields = _record_fields(record)
    existing = Namespace.objects.select_for_update().by_nid(record.name).first()
    if existing is not None:
        if existing.kind != record.kind:
            raise RegistryError(f"{record.name} is {existing.kind} here but {record.kind} in "
                                f"{source or 'the source'}; a NID never changes kind.")
        changes = record_changes(existing, record)
        if changes:
            for key in fields:
                setattr(existing, key, fields[key])
            existing.save(update_fields=[*fields, "updated_at"])
            record_namespace_events(NamespaceEvent(
                namespace=existing, kind=NamespaceEvent.Kind.SYNCED, actor=actor,
                from_status=existing.status, to_status=existing.status,
                comment=f"From {source or 'IANA'}: " + "; ".join(changes),
            ))
        return existing, changes
    number = record.number
    try:
        with transaction.atomic():
            namespace = Namespace.objects.create(nid=record.name, kind=record.kind,
                                                 informal_number=number, **fields)
    except IntegrityError:
        raise RegistryError(f"{record.name}: its number or NID is already taken here by "
                            "another namespace.") from None
    if number is not None:
        counter = _locked_counter()
        if number > counter.last_assigned:
            counter.last_assigned = number
            counter.save(update_fields=["last_assigned"])
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=new_kind, actor=actor, to_status=namespace.status,
        comment="" if new_kind == NamespaceEvent.Kind.IMPORTED
        else f"New in {source or 'IANA'}.",
    ))
    return namespace, ["new"]


@transaction.atomic
def namespace_note_dropped(*, namespace: Namespace, source: str = "",
                           actor: Any = None) -> bool:
    """Note in its history that IANA's registry (``source``) no longer lists
    ``namespace``; the namespace itself stays as it is (a NID is never removed, RFC 8141
    section 5). Once per drop: False when its history says so already, since IANA
    last listed it."""
    _check_actor(actor)
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    if already_noted_dropped(namespace):
        return False
    record_namespace_events(NamespaceEvent(
        namespace=namespace, kind=NamespaceEvent.Kind.DROPPED_AT_IANA, actor=actor,
        from_status=namespace.status, to_status=namespace.status,
        comment=f"No longer in {source or 'IANA'}; kept here, as every NID is.",
    ))
    return True


def already_noted_dropped(namespace: Namespace) -> bool:
    """Whether the newest of the namespace's events from IANA's registry notes a drop."""
    return Namespace.objects.filter(pk=namespace.pk).noted_dropped_at_iana().exists()


def _person_values(person: IanaPerson) -> dict[str, Any]:
    return {"name": person.name, "org": person.org, "uris": list(person.uris),
            "updated": person.updated}


@transaction.atomic
def person_sync(*, person: IanaPerson, actor: Any = None) -> str:
    """Add or bring in line one entry of IANA's ``<people>``; returns what changed
    ("" when nothing did), and records it as a RegistryEvent."""
    _check_actor(actor)
    values = _person_values(person)
    existing = Person.objects.select_for_update().filter(person_id=person.person_id).first()
    if existing is None:
        Person.objects.create(person_id=person.person_id, **values)
        registry_changed()
        RegistryEvent.objects.create(kind=RegistryEvent.Kind.PERSON_ADDED,
                                     subject=person.person_id, after=_describe(values),
                                     actor=actor)
        return "added"
    before = {k: getattr(existing, k) for k in values}
    if before == values:
        return ""
    for key, value in values.items():
        setattr(existing, key, value)
    existing.save()
    registry_changed()
    RegistryEvent.objects.create(kind=RegistryEvent.Kind.PERSON_CHANGED,
                                 subject=person.person_id, before=_describe(before),
                                 after=_describe(values), actor=actor)
    return "changed"


def _describe(values: dict[str, Any]) -> str:
    return json.dumps(values, default=str, sort_keys=True)


@transaction.atomic
def registry_metadata_set(*, key: str, actor: Any = None, experts: str | None = None,
                          updated: dt.date | None = None) -> list[str]:
    """Set the designated experts of a sub-registry as IANA lists them, or the date
    IANA gives as the registry's last update; each change an event."""
    _check_actor(actor)
    meta, _ = RegistryMetadata.objects.get_or_create(key=key)
    meta = RegistryMetadata.objects.select_for_update().get(pk=meta.pk)
    changes = []
    if experts is not None and experts != meta.experts:
        RegistryEvent.objects.create(kind=RegistryEvent.Kind.EXPERTS_CHANGED, subject=key,
                                     before=meta.experts, after=experts, actor=actor)
        meta.experts = experts
        changes.append(f"experts of {key}: {experts}")
    if updated is not None and updated != meta.updated:
        RegistryEvent.objects.create(kind=RegistryEvent.Kind.UPDATED_CHANGED, subject=key,
                                     before=meta.updated.isoformat() if meta.updated else "",
                                     after=updated.isoformat(), actor=actor)
        meta.updated = updated
        changes.append(f"updated: {updated.isoformat()}")
    if changes:
        meta.save()
        registry_changed()
    return changes


@transaction.atomic
def namespaces_bulk_register(*, registrations: list[dict[str, Any]], actor: User | None = None,
                             batch_size: int = 1000) -> int:
    """Register many formal namespaces at once, each with all of its versions: the
    bulk path of the load benchmark's seed (``seed_load``) and of large demos.

    Each entry is ``{"nid", "date", "versions": [(date, values), ...]}``, oldest
    version first. Writes what ``namespace_register`` and ``version_publish`` write,
    event rows included, with a few multi-row INSERTs instead of one transaction
    per version; the NIDs are checked the same way. Returns how many were made."""
    _check_actor(actor)
    if not registrations:
        return 0
    taken = {nid_key(nid) for nid in Namespace.objects.values_list("nid", flat=True)}
    for entry in registrations:
        nid = entry["nid"]
        problems = [p for p in check_formal_nid(nid) if p.code != "already_registered"]
        if problems:
            raise RegistryError(f"{nid}: {problems[0]}")
        if nid_key(nid) in taken:
            raise NIDConflict(_taken_message(nid))
        if not entry["versions"]:
            raise RegistryError(f"{nid}: a registration needs version 1 of its template.")
        taken.add(nid_key(nid))
    namespaces = Namespace.objects.bulk_create(
        [
            Namespace(
                nid=entry["nid"], kind=Namespace.Kind.FORMAL, registered_on=entry["date"],
                organisation=_search_document(entry["versions"][-1][1])[0],
                search_text=_search_document(entry["versions"][-1][1])[1],
                references=registry_references(entry["versions"][-1][1]),
            )
            for entry in registrations
        ],
        batch_size=batch_size,
    )
    versions = TemplateVersion.objects.bulk_create(
        [
            TemplateVersion(
                namespace=namespace, number=number, date=date, nid=namespace.nid,
                published_by=actor, **{name: values.get(name, "") for name in STORED_FIELDS},
            )
            for namespace, entry in zip(namespaces, registrations, strict=True)
            for number, (date, values) in enumerate(entry["versions"], start=1)
        ],
        batch_size=batch_size,
    )
    record_namespace_events(
        *[
            NamespaceEvent(
                namespace=version.namespace, version=version, actor=actor,
                kind=(NamespaceEvent.Kind.REGISTERED if version.number == 1
                      else NamespaceEvent.Kind.VERSION_PUBLISHED),
                from_status="" if version.number == 1 else ACTIVE, to_status=ACTIVE,
            )
            for version in versions
        ],
        batch_size=batch_size,
    )
    return len(namespaces)
