"""Races for a NID (RFC 8141 section 6.2 asks the experts to avoid them): a request
whose NID another open request also proposes (compared case-insensitively), or whose
NID was registered meanwhile, may be closed by an expert or IANA staff with a reason;
one whose NID is taken can no longer be approved or registered."""

from __future__ import annotations

from dataclasses import dataclass

from registry.namespaces.models import Namespace
from registry.review.models import RegistrationRequest
from registry.review.workflow.tables import FINAL_STATES, meaning_of


@dataclass(frozen=True)
class Race:
    """A request's race for its NID. ``twins`` says whether other open requests propose
    the same NID (case-insensitively): read only its truth. It is no count: from the
    ``with_race()`` annotation (an ``Exists``) it is 0 or 1, and only a caller that
    counted them (the request page's conflict list) gives how many."""

    twins: int
    taken: bool  # the NID was registered meanwhile

    def __bool__(self) -> bool:
        return bool(self.twins or self.taken)


def _nid_in_play(registration: RegistrationRequest) -> bool:
    """Whether the request's proposed NID can still be lost to a race: a new NID, proposed
    by a request not yet over."""
    return not (registration.is_revision or not registration.shown_nid
                or meaning_of(registration.state).final)


def race_of(registration: RegistrationRequest) -> Race:
    """Read from the ``with_race()`` annotations when the queryset made them (one
    query for a whole list), else from two queries."""
    if not _nid_in_play(registration):
        return Race(0, False)
    if hasattr(registration, "race_twins"):
        return Race(int(registration.race_twins or 0),
                    bool(registration.race_taken))  # type: ignore[attr-defined]
    key = (registration.state, registration.shown_nid)
    cached = registration.__dict__.get("_race")  # asked once per transition of a page
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    race = Race(RegistrationRequest.objects.conflicting_with(registration).count(),
                registered_meanwhile(registration) is not None)
    remember_race(registration, race)
    return race


def remember_race(registration: RegistrationRequest, race: Race) -> None:
    """Keep a race a page has already read, for the questions that follow."""
    registration.__dict__["_race"] = ((registration.state, registration.shown_nid), race)


def registered_meanwhile(registration: RegistrationRequest) -> Namespace | None:
    """The namespace that took this request's proposed NID while it was open."""
    if not _nid_in_play(registration):
        return None
    namespace: Namespace | None = Namespace.objects.by_nid(registration.shown_nid).first()
    return namespace


def shows_nid_warnings(registration: RegistrationRequest) -> bool:
    """Whether the section 5.1/6.2 warnings for the proposed NID still matter: not once
    the request is registered or closed (its own registration would be the 'conflict')."""
    return registration.state not in FINAL_STATES
