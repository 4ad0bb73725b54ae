"""The whole registry and its history in one file, and back into an empty database.

``write_backup`` serialises, in one consistent snapshot (a repeatable-read transaction
on PostgreSQL), every row that makes the registry: the namespaces, their versions and
events, the informal-number counter, the requests with their rounds, events and
comments, the mail sent and received about them (the quarantined messages staff placed
by hand too), the accounts (roles, verified addresses, their history, the version of
their reply addresses, so a revoked reply address stays revoked) and the registry's
last change made here (the ``<updated>`` of registry.xml). Every model of every app is
either in ``MODELS`` or in ``DERIVED`` with the reason it need not be kept
(tests/test_backup.py fails on one in neither). Password hashes are left out unless
asked for; an account restored without one cannot log in until its owner resets the
password.

``restore_backup`` loads such a file into an empty, migrated database. It inserts
every row with its original primary key and never updates or deletes one, so the
append-only triggers of the history tables (registry/history.py)
stay in place and are never tripped. The rows that migrations create (the role
groups, the counter) are matched, not duplicated. Sequences are moved past the
restored keys, so the next row gets a fresh id.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from django.apps import apps
from django.contrib.auth.hashers import make_password
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Max, Model

from registry.namespaces.actions import registry_changed
from registry.namespaces.models import NamespaceEvent, RegistryGeneration

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

FORMAT = "urn-registry-backup"
VERSION = 3  # 2: account history, reply keys, placements, the registry's change date;
# 3: each submitted request's last round (earlier backups: found from their rounds)
READABLE_VERSIONS = (1, 2, 3)
# Order matters only for natural keys (users by address, groups by name): the
# registry's own foreign keys are ids, checked at commit.
MODELS = (
    "auth.group",
    "accounts.user",
    "accounts.user_groups",  # roles: the link rows themselves, ids and all
    "accounts.user_user_permissions",
    "accounts.accountevent",
    "account.emailaddress",
    "account.emailconfirmation",
    "admin.logentry",
    "namespaces.namespace",
    "namespaces.informalnumbercounter",
    "namespaces.templateversion",
    "namespaces.namespaceevent",
    "namespaces.person",
    "namespaces.registrymetadata",
    "namespaces.registryevent",
    "review.registrationrequest",
    "review.round",
    "review.requestevent",
    "review.comment",
    "review.outboundmessage",
    "review.inboundmessage",
    "review.inboundplacement",
    "review.replykey",
)
# The models a backup leaves out, each with why: what makes them again after a restore.
DERIVED: dict[str, str] = {
    "contenttypes.contenttype": "written by migrate",
    "auth.permission": "written by migrate",
    "auth.group_permissions": "the roles' permissions, written by migrate "
                              "(registry.accounts.roles.GROUP_PERMISSIONS)",
    "sessions.session": "Django's own sessions table, no longer written (accounts.accountsession)",
    "accounts.accountsession": "sign-ins: people sign in again (and a session is a secret)",
    "namespaces.registrygeneration": "the public cache's generation, new per database; "
                                     "the registry's change date it carries is kept in "
                                     "the backup's registry_changed_at",
    "namespaces.exportgeneration": "built again from the rows (manage.py build_exports)",
    "namespaces.exportchunk": "built again from the rows (manage.py build_exports)",
    "accounts.accountmail": "sign-up and password mail waiting to be sent: each carries a "
                            "one-time link (a secret), and the person asks again",
}
# Rows that a migration creates in every new database: matched on restore.
SEEDED = {"auth.group", "namespaces.informalnumbercounter"}


class _ExactEncoder(DjangoJSONEncoder):
    """DjangoJSONEncoder keeps milliseconds only (ECMA-262); a backup keeps every digit."""

    def default(self, o: Any) -> Any:
        if isinstance(o, dt.datetime | dt.time):
            return o.isoformat()
        return super().default(o)


class BackupError(Exception):
    """A backup file that cannot be restored here, said in words."""


def _models() -> list[type[Model]]:
    return [apps.get_model(label) for label in MODELS]


def _label(model: type[Model]) -> str:
    return model._meta.label_lower


def write_backup(path: Path, *, with_passwords: bool = False) -> dict[str, int]:
    """Write the backup to ``path``; returns the number of rows per model."""
    counts: dict[str, int] = {}
    objects: list[dict[str, Any]] = []
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            connection.cursor().execute(
                "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for model in _models():
            rows = serializers.serialize(
                "python", model._default_manager.order_by("pk"),
                use_natural_foreign_keys=True,
                use_natural_primary_keys=_label(model) == "auth.group",
            )
            if _label(model) == "accounts.user":
                for row in rows:
                    # The link tables are written as rows of their own (below), so that
                    # their ids come back too.
                    row["fields"].pop("groups", None)
                    row["fields"].pop("user_permissions", None)
                    if not with_passwords:
                        row["fields"].pop("password", None)
            counts[_label(model)] = len(rows)
            objects.extend(rows)
        changed_at = (RegistryGeneration.objects.filter(pk=1)
                      .values_list("real_change_at", flat=True).first())
    document = {
        "format": FORMAT, "version": VERSION,
        "created_at": dt.datetime.now(dt.UTC).isoformat(),
        "with_passwords": with_passwords, "counts": counts,
        "registry_changed_at": changed_at.isoformat() if changed_at else None,
        "objects": objects,
    }
    path.write_text(json.dumps(document, cls=_ExactEncoder, ensure_ascii=False, indent=0),
                    encoding="utf-8")
    return counts


def _read(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BackupError(f"{path} is not a registry backup: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BackupError(f"{path} is not a registry backup (no {FORMAT!r} header).")
    if document.get("version") not in READABLE_VERSIONS:
        raise BackupError(f"{path} is backup format version {document.get('version')!r}; "
                          f"this registry reads versions {READABLE_VERSIONS}.")
    changed_at = document.get("registry_changed_at")
    try:
        document["registry_changed_at"] = (dt.datetime.fromisoformat(changed_at)
                                           if changed_at else None)
    except (TypeError, ValueError):
        raise BackupError(f"{path}: registry_changed_at {changed_at!r} is no time.") from None
    unknown = {o.get("model") for o in document.get("objects", [])} - set(MODELS)
    if unknown:
        raise BackupError(f"{path} holds rows of unknown models: {sorted(unknown)}.")
    return document


def occupied_models() -> list[str]:
    """The models that already have rows a restore would collide with."""
    found = []
    for model in _models():
        label = _label(model)
        if label == "namespaces.informalnumbercounter":
            if model._default_manager.filter(last_assigned__gt=0).exists():
                found.append(label)
        elif label not in SEEDED and model._default_manager.exists():
            found.append(label)
    return found


def _last_rounds(objects: list[dict[str, Any]]) -> dict[Any, Any]:
    """Each request's last round in a backup's rows: request id -> round id."""
    newest: dict[Any, tuple[int, Any]] = {}
    for row in objects:
        fields = row.get("fields") if isinstance(row, dict) else None
        if not isinstance(fields, dict) or row.get("model") != "review.round":
            continue  # anything malformed is the deserializer's to refuse
        request_id, number = fields.get("registration"), fields.get("number")
        if not (isinstance(request_id, int) and isinstance(number, int)):
            continue
        if request_id not in newest or number > newest[request_id][0]:
            newest[request_id] = (number, row.get("pk"))
    return {request_id: pk for request_id, (_, pk) in newest.items()}


def restore_backup(path: Path) -> dict[str, int]:
    """Load ``path`` into this (empty) database; returns the rows restored per model."""
    document = _read(path)
    occupied = occupied_models()
    if occupied:
        raise BackupError("The database is not empty (rows in " + ", ".join(occupied) +
                          "); restore only into a freshly migrated database.")
    counts: dict[str, int] = {}
    last_rounds = _last_rounds(document["objects"])
    with transaction.atomic():
        for item in serializers.deserialize("python", document["objects"]):
            obj = item.object
            label = _label(type(obj))
            if label == "review.registrationrequest" and getattr(obj, "submitted_round_id",
                                                                  None) is None:
                # a backup before version 3: the request's last round in the file
                obj.submitted_round_id = last_rounds.get(obj.pk)  # type: ignore[attr-defined]
            if label == "accounts.user" and not document.get("with_passwords"):
                user = cast("AbstractBaseUser", obj)
                user.password = make_password(None)  # unusable until a password reset
            if label == "namespaces.informalnumbercounter":
                type(obj)._default_manager.all().delete()  # the migration's empty row
                item.save(force_insert=True)
            elif label in SEEDED:
                item.save()  # matched by natural key: updates the migration's row
            else:
                item.save(force_insert=True)  # INSERT only: append-only history holds
            counts[label] = counts.get(label, 0) + 1
        with connection.cursor() as cursor:
            for sql in connection.ops.sequence_reset_sql(no_style(), _models()):
                cursor.execute(sql)
        # A new generation for the restored rows, dated by the registry's own last change
        # (a version 1 backup did not keep it: its newest event made here says it).
        changed_at = document["registry_changed_at"]
        if changed_at is None and document["version"] == 1:
            changed_at = (NamespaceEvent.objects.real_changes()
                          .aggregate(newest=Max("created_at"))["newest"])
        registry_changed(real_change_at=changed_at)
    return counts
