"""What a request needs before it can be submitted: the template's required fields,
the NID of sections 2.1 and 5.1 (urn8141, against the live registry), the fast track's
recognised body (section 6.3) and, for a revision, its namespace's holder. One set of
rules, asked by the request form (each problem at its field, before anything is saved)
and by every transition that needs a complete template (``refusals.refusal``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from registry.namespaces.models import Namespace
from registry.namespaces.template import TEMPLATE_FIELDS, field_label, missing_fields
from registry.review.models import RegistrationRequest
from urn8141 import check_formal_nid

REQUIRED = "Required before you submit."
NID_NEEDED = "A formal namespace needs a proposed NID."
FAST_TRACK_REFUSAL = (
    "The fast track is for standards bodies that IANA has recorded as recognized (RFC 8141 "
    "section 6.3, recognition is the IESG's decision). Untick it to use the community path, "
    "or ask IANA staff to record your organisation's recognition."
)
NOT_HOLDER = "Only the holder of a namespace can revise it."


@dataclass(frozen=True)
class Problem:
    """One thing that stands against submission: ``message`` as the form shows it at
    ``field`` (None: the request as a whole)."""

    field: str | None
    message: str

    def __str__(self) -> str:
        """As a sentence of its own: a template field's problem names the field."""
        if self.field not in TEMPLATE_FIELDS:  # the NID's and the procedure's say what
            return self.message
        return f"{field_label(self.field)}: {self.message[0].lower()}{self.message[1:]}"


def nid_problems(nid: str) -> list[str]:
    """Sections 2.1 and 5.1 for a proposed formal NID, against the live registry."""
    registered = Namespace.objects.by_nid(nid).values_list("nid", flat=True) if nid else []
    return [str(p) for p in check_formal_nid(nid, registered)]


def template_problems(values: Mapping[str, Any], *, kind: str, proposed_nid: str,
                      fast_track: bool, revision: bool, registrant: Any) -> list[Problem]:
    """The problems of a template about to be submitted by ``registrant``, from its
    values as the form holds them or as a request stores them."""
    problems = [Problem(name, REQUIRED)
                for name in missing_fields(values, fast_track=fast_track, revision=revision)]
    if kind == Namespace.Kind.FORMAL and not revision:
        nid = proposed_nid.strip()
        problems += ([Problem("proposed_nid", message) for message in nid_problems(nid)]
                     if nid else [Problem("proposed_nid", NID_NEEDED)])
    if fast_track and not getattr(registrant, "recognized_standards_body", False):
        problems.append(Problem("fast_track", FAST_TRACK_REFUSAL))
    return problems


def holder_changed(registration: RegistrationRequest) -> bool:
    """A revision whose registrant no longer holds the namespace it revises (staff
    changed the holder after it was started)."""
    if not registration.is_revision:
        return False
    assert registration.revises is not None  # a revision revises one
    return registration.revises.holder_id != registration.registrant_id


def submission_problems(registration: RegistrationRequest) -> list[Problem]:
    """What stands against submitting ``registration`` as its registrant wrote it."""
    problems = template_problems(
        registration.values(), kind=registration.kind, proposed_nid=registration.proposed_nid,
        fast_track=registration.fast_track, revision=registration.is_revision,
        registrant=registration.registrant)
    if holder_changed(registration):
        problems.append(Problem(None, NOT_HOLDER))
    return problems
