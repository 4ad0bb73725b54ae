"""Who may see what: a request, its comments, its timeline's events, its mail, the
private contact, the dashboard, the workload and the staff queue. Every page, export,
feed and mail asks these functions (and the querysets use their filters)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from registry.accounts.models import User
from registry.accounts.roles import (
    EXPERT_ROLE,
    REGISTRANT_ROLE,
    STAFF_ROLE,
    is_expert,
    is_iana_staff,
)
from registry.namespaces.models import Namespace, TemplateVersion
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
)
from registry.review.workflow.tables import CLOSED_STATES, meaning_of
from registry.review.workflow.visitors import Visitor, is_registrant, is_signed_in, roles_on

# Timeline events not everyone reads: who may, by role (everything else is public).
EVENT_READERS: dict[str, frozenset[str]] = {
    "edit": frozenset({REGISTRANT_ROLE}),  # the working copy is its registrant's
    "mail_reply": frozenset({REGISTRANT_ROLE, EXPERT_ROLE, STAFF_ROLE}),
    "resend_mail": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_failed": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_bounced": frozenset({EXPERT_ROLE, STAFF_ROLE}),
    "mail_attached": frozenset({EXPERT_ROLE, STAFF_ROLE}),
}


def was_submitted(registration: RegistrationRequest) -> bool:
    return registration.review_started_at is not None


def can_view(registration: RegistrationRequest, user: Visitor) -> bool:
    """A request never submitted is private to its registrant, whatever its state
    (a withdrawn draft too); from submission on, review is public."""
    return was_submitted(registration) or is_registrant(user, registration)


def requests_visible_to(user: Visitor) -> Q:
    """``can_view`` as a filter (RegistrationRequest.objects.visible_to)."""
    if not is_signed_in(user):
        return Q(review_started_at__isnull=False)
    return Q(review_started_at__isnull=False) | Q(registrant=user)


def comments_visible_to(user: Visitor) -> Q:
    """Which comments ``user`` may read (Comment.objects.visible_to): public ones on
    requests they may see; those to the registrant by the registrant, the experts and
    staff; internal ones by the designated experts only, never on their own request."""
    on_visible = Q(registration__review_started_at__isnull=False)
    if is_signed_in(user):
        on_visible |= Q(registration__registrant=user)
    audiences = Q(audience=Comment.Audience.PUBLIC)
    if is_signed_in(user):
        audiences |= Q(audience=Comment.Audience.REGISTRANT, registration__registrant=user)
        if is_expert(user) or is_iana_staff(user):
            audiences |= Q(audience=Comment.Audience.REGISTRANT)
        if is_expert(user):
            audiences |= Q(audience=Comment.Audience.EXPERTS) & ~Q(registration__registrant=user)
    return on_visible & audiences


def can_read_comment(comment: Comment, user: Visitor) -> bool:
    registration = comment.registration
    if not can_view(registration, user):
        return False
    if comment.audience == Comment.Audience.PUBLIC:
        return True
    if comment.audience == Comment.Audience.REGISTRANT:
        return is_registrant(user, registration) or is_expert(user) or is_iana_staff(user)
    return is_expert(user) and not is_registrant(user, registration)


def comment_audiences(registration: RegistrationRequest, user: Visitor) -> list[str]:
    """Who ``user`` may address a comment to on ``registration``: the public review (anyone
    signed in, once submitted and while open; the participants afterwards), the
    registrant (experts and staff), the experts only (experts, not on their own)."""
    if not is_signed_in(user) or not can_view(registration, user):
        return []
    roles = roles_on(user, registration)
    audiences: list[str] = []
    meaning = meaning_of(registration.state)
    if not meaning.initial and (not meaning.final or roles):
        audiences.append(Comment.Audience.PUBLIC)
    if roles & {EXPERT_ROLE, STAFF_ROLE}:
        audiences.append(Comment.Audience.REGISTRANT)
    if EXPERT_ROLE in roles and REGISTRANT_ROLE not in roles:
        audiences.append(Comment.Audience.EXPERTS)
    return audiences


def hidden_events(registration: RegistrationRequest, user: Visitor) -> set[str]:
    """The kinds of timeline event ``user`` may not read on ``registration``."""
    roles = roles_on(user, registration)
    return {name for name, readers in EVENT_READERS.items() if not roles & readers}


def events_visible_to(user: Visitor) -> Q:
    """``hidden_events`` as a filter over the events of many requests (the admin's): the
    kinds ``user``'s roles read, and on their own requests those a registrant reads."""
    roles = {role for role, holds in ((EXPERT_ROLE, is_expert(user)),
                                      (STAFF_ROLE, is_iana_staff(user))) if holds}
    hidden = [kind for kind, readers in EVENT_READERS.items() if not roles & readers]
    readable = ~Q(kind__in=hidden)
    if is_signed_in(user):
        own = [kind for kind in hidden if REGISTRANT_ROLE in EVENT_READERS[kind]]
        readable |= Q(kind__in=own, registration__registrant=user)
    return readable


def closing_event(registration: RegistrationRequest,
                  events: list[RequestEvent]) -> RequestEvent | None:
    """The transition (among ``events``, oldest first) that closed ``registration`` without
    registering it, whose comment is the reason the page shows at its top."""
    if registration.state not in CLOSED_STATES:
        return None
    return next((e for e in reversed(events) if e.kind == RequestEvent.Kind.TRANSITION
                 and e.to_state == registration.state), None)


def can_see_mail(registration: RegistrationRequest, user: Visitor) -> bool:
    """The mail sent and received about a request (addresses, delivery errors, held
    messages) is for the designated experts and IANA staff."""
    return bool(roles_on(user, registration) & {EXPERT_ROLE, STAFF_ROLE})


def can_read_message(message: OutboundMessage | InboundMessage, user: Visitor) -> bool:
    """The words of a mail (its body, or the text that arrived): whoever may read the
    comment it carries, so the mail of an experts-only comment is the experts' alone,
    IANA staff's mail log and admin included; a mail that carries no comment, whoever
    sees the request's mail (a message about no request: whoever handles the
    quarantine)."""
    if message.comment_id is not None:
        assert message.comment is not None  # its id is set
        return can_read_comment(message.comment, user)
    if isinstance(message, InboundMessage) and not all(
            can_read_comment(comment, user) for comment in _repeated_comments(message)):
        return False  # the words of a comment it repeats (a duplicate, our own come back)
    if message.registration_id is None:
        return can_handle_quarantine(user)
    assert message.registration is not None  # its id is set
    return can_see_mail(message.registration, user)


def _repeated_comments(message: InboundMessage) -> list[Comment]:
    """The comments whose words a message that became none repeats: those carried by a
    message with its Message-ID (the same message placed before, or ours come back)."""
    carried = (Q(pk__in=InboundMessage.objects.filter(message_id=message.message_id)
                 .exclude(comment=None).values("comment_id"))
               | Q(pk__in=OutboundMessage.objects.filter(message_id=message.message_id)
                   .exclude(comment=None).values("comment_id")))
    return list(Comment.objects.filter(carried).select_related("registration"))


def inbound_readable_by(user: Visitor) -> ExpressionWrapper[Q]:
    """``can_read_message``'s comment rules for many received messages at once, as an
    annotation (the admin's list, the request page's held mail): the comment it became is
    one ``user`` may read, or it became none and repeats no comment they may not read.
    (Whether they see the request's mail at all the page asks first.)"""
    readable = Comment.objects.filter(comments_visible_to(user))
    hidden = Comment.objects.exclude(pk__in=readable.values("pk"))
    repeats_hidden = (
        Exists(InboundMessage.objects.filter(message_id=OuterRef("message_id"),
                                             comment__in=hidden))
        | Exists(OutboundMessage.objects.filter(message_id=OuterRef("message_id"),
                                                comment__in=hidden)))
    own = Exists(readable.filter(pk=OuterRef("comment_id")))
    return ExpressionWrapper(Q(Q(comment__isnull=True), ~Q(repeats_hidden)) | Q(own),
                             output_field=BooleanField())


def can_read_working_copy(registration: RegistrationRequest, user: Visitor) -> bool:
    """A request's working copy (a draft, or edits after a round was submitted) is its
    registrant's until they submit it; everyone else reads the rounds submitted."""
    return is_registrant(user, registration)


def registrant_label(registration: RegistrationRequest) -> str:
    """How every public channel names a request's registrant: the Registrant its
    submitted template publishes (the organisation, else the contact person), else
    "the registrant"; never the account's own name, which its owner gave for IANA."""
    round_ = registration.submitted_round  # lists select it with the request
    organisation, contact = ((round_.registrant_organisation, round_.contact_name) if round_
                             else ("", ""))
    return (organisation or "").strip() or (contact or "").strip() or "the registrant"


def public_name(person: User | None, registration: RegistrationRequest) -> str:
    """The name pages, feeds and mail give ``person`` acting on ``registration``. An
    account's name is public where its owner acts in public under it (a comment in the
    public review, a decision as expert or IANA staff); as the registrant they publish
    the template's Registrant, not their account (``registrant_label``)."""
    if person is None:
        return "the system"
    if person.pk == registration.registrant_id:
        return registrant_label(registration)
    return person.display_name


def salutation(person: User, registration: RegistrationRequest) -> str:
    """How a mail about ``registration`` greets ``person``. The mail is kept, and shown
    in the request's mail log to its experts and IANA staff: the registrant, whose
    account's name is for IANA, is greeted without it."""
    if person.pk == registration.registrant_id:
        return "Hello,"
    return person.salutation


def can_see_account_name(person: User, user: Visitor) -> bool:
    """Who may read an account's own name wherever it appears: its owner and IANA
    staff; everyone, once its owner acts under it in public (``public_name``).

    No page asks it: it is the policy's statement, the audience the canary crawl
    (tests/test_canary.py) holds every page and mail to. The pages answer the same
    question where they name someone: ``public_name`` and ``registrant_label`` (a
    registrant is named by the template's Registrant, anyone else acting on a request
    by the account's name), ``salutation`` (a mail greets a registrant without it),
    ``require_staff_pages`` (the accounts pages, for IANA staff) and the navigation,
    rendered for the signed-in person alone (registry/accounts/signed_in.py).
    tests/review/test_account_name.py holds them equal on the pages that could name a
    registrant."""
    return (is_signed_in(user) and user.pk == person.pk) or is_iana_staff(user)


def can_see_private_contact(registration: RegistrationRequest, user: Visitor) -> bool:
    """The contact the registrant gave for IANA only: IANA staff and the registrant."""
    return is_registrant(user, registration) or is_iana_staff(user)


def gave_private_contact(version: TemplateVersion | None, user: Visitor) -> bool:
    """Whether the private contact of a published ``version`` is ``user``'s own: they
    are the registrant of the request that published it. Only then may it start their
    next version; a new holder starts from their own account, never another person's
    (a holder change hands over the namespace, not its registrant's home address)."""
    if version is None or version.source_registration_id is None or not is_signed_in(user):
        return False
    return RegistrationRequest.objects.filter(pk=version.source_registration_id,
                                              registrant_id=user.pk).exists()


def own_private_contact(user: User) -> dict[str, str]:
    """The private contact a person's new draft starts from: their own account's name
    and address (IANA may write to the person who asks), nothing of anyone else."""
    return {"private_contact_name": user.get_full_name(), "private_contact_email": user.email}


def can_see_dashboard(user: Visitor) -> bool:
    """The dashboard: the open requests, each expert's load and the suggested assignees."""
    return is_expert(user) or is_iana_staff(user)


def can_see_workload(user: Visitor) -> bool:
    """Each expert's load and availability (the dashboard, the statistics) is for the
    designated experts and IANA staff."""
    return is_expert(user) or is_iana_staff(user)


def can_set_availability(user: Visitor) -> bool:
    """A designated expert says when they are away and how much they take."""
    return is_expert(user)


def can_use_staff_pages(user: Visitor) -> bool:
    """IANA staff pages (namespace records, accounts, recognition, roles): staff only."""
    return is_iana_staff(user)


def can_keep_registry(user: Visitor) -> bool:
    """Whether ``user`` may change the published registry: a namespace's record (holder,
    references, note, dates), its status and profile, a published version, and the copy
    of IANA's registry. IANA staff keep it; every write of registry.namespaces.actions
    asks this of the person acting (a command run on the server acts as nobody)."""
    return is_iana_staff(user)


def require_staff_pages(user: Visitor) -> None:
    """Refuse (403) anyone :func:`can_use_staff_pages` does not let in."""
    if not can_use_staff_pages(user):
        raise PermissionDenied("These pages are for IANA staff.")


def is_holder(namespace: Namespace, user: Visitor) -> bool:
    """Whether ``user`` holds ``namespace`` (may ask for its new versions)."""
    return is_signed_in(user) and namespace.holder_id == user.pk


def can_see_staff_queue(user: Visitor) -> bool:
    return is_iana_staff(user)


def can_handle_quarantine(user: Visitor) -> bool:
    """The quarantine of mail nobody could be credited with is for IANA staff."""
    return is_iana_staff(user)
