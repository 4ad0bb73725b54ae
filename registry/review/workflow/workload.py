"""The experts' workload: conflicts of interest, availability, who is suggested for a
request, and who is reminded of an idle one."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from registry.review.models import RegistrationRequest, RequestEvent
from registry.review.workflow.tables import EXPERTS, OPEN_STATES, STAFF, meaning_of

if TYPE_CHECKING:
    from registry.accounts.models import User

def _organisation_key(name: str) -> str:
    return " ".join(name.casefold().split())


def conflict_of_interest(registration: RegistrationRequest, expert: User) -> str:
    """Why ``expert`` should not review ``registration`` ("" when nothing stands against
    it): they are its registrant, or of the registrant's organisation (the one in the
    template or on the registrant's account)."""
    if expert.pk == registration.registrant_id:
        return "is the registrant of this request"
    own = _organisation_key(expert.organisation)
    if own and own in {_organisation_key(registration.shown_organisation),
                       _organisation_key(registration.registrant.organisation)}:
        return f"is of the registrant's organisation ({expert.organisation})"
    return ""


def is_away(expert: User, *, today: dt.date) -> bool:
    return expert.unavailable_until is not None and expert.unavailable_until >= today


def open_assignments(expert: User) -> int:
    """The open requests assigned to ``expert``: the ``with_load()`` annotation when the
    list made it (one query for all), else one query."""
    if hasattr(expert, "open_assignments"):
        return int(expert.open_assignments)
    count: int = RegistrationRequest.objects.filter(state__in=OPEN_STATES,
                                                    assigned_expert=expert).count()
    return count


def unavailability(expert: User, *, today: dt.date) -> str:
    """Why ``expert`` takes no more requests now ("" when they do): away, or at their
    maximum of open assignments."""
    if is_away(expert, today=today):
        return f"is away until {expert.unavailable_until:%Y-%m-%d}"
    limit = expert.max_open_assignments
    if limit is not None and open_assignments(expert) >= limit:
        return f"has {limit} open request{'s' if limit != 1 else ''} already, their maximum"
    return ""


def suggestion_refusal(registration: RegistrationRequest, expert: User, *,
                       today: dt.date) -> str:
    """Why ``expert`` is not suggested for ``registration`` ("" when they may be)."""
    return conflict_of_interest(registration, expert) or unavailability(expert, today=today)


def suggested_assignee(registration: RegistrationRequest, experts: Iterable[User], *,
                       today: dt.date) -> User | None:
    """Who should take an open, unassigned ``registration``: of ``experts`` (read
    ``with_load()``), the least loaded one who is available, below their maximum and
    without a conflict of interest; None when nobody is."""
    if registration.state not in OPEN_STATES or registration.assigned_expert_id is not None:
        return None
    fit = [e for e in experts if not suggestion_refusal(registration, e, today=today)]
    return min(fit, key=lambda e: (open_assignments(e), e.display_name.casefold(), e.pk),
               default=None)


# A request idle past the reminder period is brought up once per idle period, first to
# whoever can act in its state (the ``reminds`` column of STATES). Where the experts
# act, each time to more people: its assigned expert (or, unassigned, every available
# expert), then the other experts, then IANA staff. Where only IANA staff act (ready
# to register, awaiting the IESG), to IANA staff, once. After that nothing more until
# someone acts.
# Each step is a RequestEvent of its kind (counted since the request's last activity).
REMINDED = RequestEvent.Kind.REMIND
ESCALATED_TO_EXPERTS = RequestEvent.Kind.ESCALATE
ESCALATED_TO_STAFF = RequestEvent.Kind.ESCALATE_STAFF
REMINDER_KINDS = (REMINDED, ESCALATED_TO_EXPERTS, ESCALATED_TO_STAFF)


@dataclass(frozen=True)
class Reminder:
    kind: str  # one of REMINDER_KINDS: the event written
    audience: str  # EXPERTS or STAFF
    recipients: tuple[User, ...]
    summary: str  # the event's comment


def next_reminder(registration: RegistrationRequest, *, done: Iterable[str],
                  experts: Iterable[User], staff: Iterable[User],
                  today: dt.date) -> Reminder | None:
    """The next step for an idle ``registration``, given the reminder kinds ``done`` since
    its last activity; None once staff were told, or when nobody is reminded in its
    state. An expert away, or with a conflict of interest, is never reminded."""
    done = set(done)
    reminds = meaning_of(registration.state).reminds
    if ESCALATED_TO_STAFF in done or not reminds:
        return None
    if reminds == STAFF:
        # The experts cannot act here: nobody but staff is reminded, and once.
        return None if done else Reminder(REMINDED, STAFF, tuple(staff),
                                          "No activity; IANA staff were reminded.")
    pool = tuple(e for e in experts if not is_away(e, today=today)
                 and not conflict_of_interest(registration, e))
    assigned = next((e for e in pool if e.pk == registration.assigned_expert_id), None)
    to_staff = Reminder(ESCALATED_TO_STAFF, STAFF, tuple(staff),
                        "Still no activity; escalated to IANA staff.")
    if not done:
        if assigned is not None:
            return Reminder(REMINDED, EXPERTS, (assigned,),
                            f"No activity; {assigned.display_name} was reminded.")
        if pool:
            return Reminder(REMINDED, EXPERTS, pool,
                            "No activity; the available experts were reminded.")
        return to_staff
    # The first step went to the assigned expert alone only when they were available;
    # otherwise every available expert has heard already.
    others = tuple(e for e in pool if e.pk != registration.assigned_expert_id)
    if ESCALATED_TO_EXPERTS not in done and assigned is not None and others:
        return Reminder(ESCALATED_TO_EXPERTS, EXPERTS, others,
                        "Still no activity; escalated to the other available experts.")
    return to_staff
