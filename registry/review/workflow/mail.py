"""Mail and the workflow: who is told of a move or a comment, and where a message that
arrived goes. Mail never changes a state; it only adds to the timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from registry.accounts.roles import EXPERT_ROLE, REGISTRANT_ROLE, STAFF_ROLE
from registry.review.models import Comment, RegistrationRequest
from registry.review.workflow.refusals import comment_refusal
from registry.review.workflow.tables import (
    EXPERTS,
    REGISTRANT,
    REVIEW_LIST,
    STAFF,
    STATES,
    TRANSITIONS,
    Transition,
    meaning_of,
    registers_from,
)
from registry.review.workflow.visibility import comment_audiences, was_submitted
from registry.review.workflow.visitors import is_registrant, roles_on

if TYPE_CHECKING:
    from registry.accounts.models import User

# Who is told about a comment, by its audience.
COMMENT_MAIL: dict[str, tuple[str, ...]] = {
    Comment.Audience.PUBLIC: (REVIEW_LIST,),
    Comment.Audience.REGISTRANT: (REGISTRANT,),
    Comment.Audience.EXPERTS: (EXPERTS,),
}


def told_about(registration: RegistrationRequest, transition: Transition) -> tuple[str, ...]:
    """Who is told that ``transition`` was taken: nobody hears of a request that was
    never submitted (it was private all along)."""
    return transition.mail if was_submitted(registration) else ()


def answered_by_mail(registration: RegistrationRequest) -> bool:
    """Whether a mail from the registrant now answers the experts: the request waits in
    a state the registrant answers by mail."""
    return meaning_of(registration.state).answered_by_mail


def moves_answered_by_mail() -> tuple[str, ...]:
    """The transitions whose mail the registrant may answer by replying: those that put
    a request in a state answered by mail and tell the registrant."""
    return tuple(t.name for t in TRANSITIONS.values()
                 if STATES[t.target].answered_by_mail and REGISTRANT in t.mail)


def asks_to_revise(transition: Transition) -> bool:
    """Whether ``transition`` hands the template back to its registrant, whose mail then
    asks them to revise and resubmit it: it reaches a state the registrant edits in."""
    return meaning_of(transition.target).editable


def asks_to_register(transition: Transition) -> bool:
    """Whether taking ``transition`` is the registrant asking IANA to register (the
    standards body's decision on the fast track, RFC 8141 section 6.3), as the list is
    told: the registrant's move into a state IANA staff register from."""
    return REGISTRANT_ROLE in transition.roles and registers_from(transition.target)


def mail_placement(registration: RegistrationRequest, *, via_list: bool, sender: User | None,
                   answered_audience: str = "") -> tuple[str | None, str]:
    """Where a message that arrived about ``registration`` goes: the audience of the
    comment it becomes, or None and the reason it is held for staff. Mail never
    changes a state; it only adds to the timeline.

    ``sender`` is the person whose reply address the message was sent to (the only
    proof of who wrote it): the registrant's reply is their answer to the experts;
    an expert's or staff member's is what they may write on the page, internal when
    it answers an internal message. List mail (``via_list``, from anyone: its headers
    prove nothing) is public and credited to nobody, and only while the request is in
    public review. The rest is held for staff. (The rate of comments applies to mail
    too: ``mail_limits``.)"""
    meaning = meaning_of(registration.state)
    if meaning.initial:
        return None, "The request is a draft, private to its registrant."
    if sender is not None:
        if is_registrant(sender, registration):
            # The registrant writes by mail when they may write on the page now.
            if not comment_audiences(registration, sender):
                return None, ("Sent by the registrant from their reply address, but they may "
                              "not comment on this request now "
                              f"({registration.get_state_display()}).")
            return Comment.Audience.REGISTRANT, ""
        # An answer to a message written to the registrant's conversation goes back to
        # it; any other answer (an internal or staff message, or none named) stays
        # among the experts, never reaching the registrant by a guess.
        audience = (Comment.Audience.REGISTRANT if answered_audience == REGISTRANT
                    else Comment.Audience.EXPERTS)
        if comment_refusal(registration, sender, audience) is None:
            return audience, ""
        where = ("to the registrant" if audience == Comment.Audience.REGISTRANT
                 else "internally to the experts")
        return None, (f"Sent by {sender.display_name} from their reply address, but they may "
                      f"not write {where} on this request now.")
    if via_list:
        if not meaning.public_review:
            return None, ("List mail about a request not in public review now "
                          f"({registration.get_state_display()}): held for staff, not added "
                          "to the public discussion.")
        return Comment.Audience.PUBLIC, ""
    return None, ("Not sent to a reply address the registry gave (the only proof of who "
                  "wrote it), nor through the review list: the From line proves nothing.")


# The roles a person must still hold to be sent a message written to each audience.
# Audiences not named (the list's posting, the IESG) need only an active account.
_STILL_ADDRESSED: dict[str, set[str]] = {
    EXPERTS: {EXPERT_ROLE, STAFF_ROLE},
    STAFF: {STAFF_ROLE},
    REGISTRANT: {REGISTRANT_ROLE, EXPERT_ROLE, STAFF_ROLE},
}


def still_addressed(audience: str, user: User, registration: RegistrationRequest) -> bool:
    """Whether a message written to ``audience`` and not yet sent still goes to
    ``user``: not once their account is deactivated, nor once the role that made
    them one of its audience has ended (the message was written before)."""
    if not user.is_active:
        return False
    needed = _STILL_ADDRESSED.get(audience)
    return needed is None or bool(roles_on(user, registration) & needed)
