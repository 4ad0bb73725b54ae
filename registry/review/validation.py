"""What a request needs before it can be submitted, from registry.urns and the template."""

from __future__ import annotations

from typing import cast

from registry.namespaces.models import Namespace
from registry.namespaces.template import field_label
from registry.review.models import RegistrationRequest
from registry.urns import check_formal_nid


def nid_problems(nid: str) -> list[str]:
    """Sections 2.1 and 5.1 for a proposed formal NID, against the live registry."""
    registered = Namespace.objects.by_nid(nid).values_list("nid", flat=True) if nid else []
    return [str(p) for p in check_formal_nid(nid, registered)]


def submission_problems(registration: RegistrationRequest) -> list[str]:
    problems = [f"{field_label(name)} is empty" for name in registration.missing_fields()]
    if registration.kind == Namespace.Kind.FORMAL and not registration.is_revision:
        problems += nid_problems(registration.proposed_nid)
    if registration.fast_track and not registration.registrant.recognized_standards_body:
        problems.append(
            "the fast track is only for recognized standards bodies (section 6.3); ask IANA "
            "staff to record your organisation's recognition, or use the community path"
        )
    # A revision always has the namespace it revises.
    if (registration.is_revision
            and cast(Namespace, registration.revises).holder_id != registration.registrant_id):
        problems.append("only the holder of a namespace can revise it")
    return problems
