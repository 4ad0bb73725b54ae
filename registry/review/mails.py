"""The review's mail: one function builds each message (who it goes to, what it
says); ``outbox.queue_message`` stores it with its ticket and threading headers,
and the worker sends it.

Who is told about what is the workflow's answer (the ``mail`` column of its
transition table, ``COMMENT_MAIL`` for comments); this module only turns an
audience into addresses and a message. Every link is built by ``site_url``."""

from __future__ import annotations

from typing import cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.template.loader import render_to_string

from registry.namespaces.models import TemplateVersion
from registry.namespaces.template import render_text
from registry.review import workflow
from registry.review.mailtext import in_sentence, wrap_except
from registry.review.models import Comment, RegistrationRequest, RequestEvent


def site_url(path: str) -> str:
    """An absolute link for mail: the site's address (SITE_URL) and ``path``."""
    return settings.SITE_URL.rstrip("/") + "/" + path.lstrip("/")


def _emails(users, *, exclude: tuple[int | None, ...] = ()) -> list[str]:
    return sorted({u.email for u in users if u.pk not in exclude and u.email})


def experts_emails(*, exclude: tuple[int | None, ...] = ()) -> list[str]:
    return _emails(get_user_model().objects.designated_experts(), exclude=exclude)


def staff_emails(*, exclude: tuple[int | None, ...] = ()) -> list[str]:
    return _emails(get_user_model().objects.iana_staff(), exclude=exclude)


_VERBATIM = "\x00registration-template\x00"


def _message(subject: str, template: str, context: dict, to: list[str], cc=(),
             reply_to=()) -> EmailMessage | None:
    """Render a plain-text message, lines wrapped at 72 for the list's readers and
    the registration template quoted verbatim. ``subject`` says what the message
    is about; the outbox puts the request's ticket and thread subject in front."""
    if not to:
        return None
    if context.get("recipient") and context.get("registration"):
        context = {**context, "salutation": workflow.salutation(context["recipient"],
                                                                context["registration"])}
    verbatim = {}
    if context.get("template_text"):
        verbatim[_VERBATIM] = context["template_text"]
        context = {**context, "template_text": _VERBATIM}
    body = wrap_except(render_to_string(f"review/mail/{template}", context), verbatim)
    return EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL,
                        to=to, cc=[a for a in cc if a not in to], reply_to=list(reply_to))


def _template_text(registration: RegistrationRequest, round_) -> str:
    if round_ is None:
        return ""
    return render_text(nid=round_.nid or "(assigned by IANA at registration)",
                       version=round_.version, date=round_.date, values=round_.values(),
                       fast_track=round_.fast_track)


def event_message(event: RequestEvent, audience: str) -> EmailMessage | None:
    """The message telling ``audience`` about ``event`` (None: nobody to tell)."""
    registration = event.registration
    round_ = event.round or registration.submitted_round
    move = workflow.TRANSITIONS[event.transition]
    context = {
        "event": event,
        "move": move,
        # What the move means for the text, as the workflow says (templates never decide).
        "asks_to_revise": workflow.asks_to_revise(move),
        "asks_to_register": workflow.asks_to_register(move),
        "registration": registration,
        "registrant_label": workflow.registrant_label(registration),
        "salutation": workflow.salutation(registration.registrant, registration),
        "actor_label": workflow.public_name(event.actor, registration) if event.actor else "",
        "url": site_url(registration.get_absolute_url()),
        "namespace_url": (site_url(cast(TemplateVersion, registration.published_version)
                                   .namespace.get_absolute_url())
                          if registration.published_version_id else ""),
        "template_text": _template_text(registration, round_),
        "iesg_address": settings.IESG_ADDRESS,
        "review_list_address": settings.REVIEW_LIST_ADDRESS,
    }
    nid = registration.display_nid
    actor_pk = event.actor_id
    if audience == workflow.REVIEW_LIST:
        kind = "Fast-track " if registration.shown_fast_track else ""
        if move.creates_round and registration.is_revision:
            assert round_ is not None  # the transition made one
            what = f"Revision (version {round_.version}) of URN NID {nid}"
        elif move.creates_round:
            assert round_ is not None  # the transition made one
            what = f"{kind}Registration request for URN NID {nid}"
            if round_.number > 1:
                what += f" (round {round_.number})"
        elif move.publishes:
            what = f"Registered: URN NID {nid}"
        elif workflow.asks_to_register(move):
            what = f"Standards body asks IANA to register URN NID {nid}"
        else:
            raise ValueError(f"the review list has no message for {move.name!r}")
        return _message(f"[urn] {what}", "to_list.txt", context,
                        to=[settings.REVIEW_LIST_ADDRESS], cc=experts_emails(),
                        reply_to=[settings.REVIEW_LIST_ADDRESS])
    if audience == workflow.REGISTRANT:
        if move.creates_round:
            subject = f"Received: your URN namespace request #{registration.pk} is in public review"
        else:
            subject = (f"Your URN namespace request #{registration.pk}: "
                       f"{event.get_to_state_display()}")
        return _message(subject, "to_registrant.txt", context, to=[registration.registrant.email])
    if audience == workflow.STAFF:
        context |= {"staff_next_step": workflow.meaning_of(event.to_state).staff_next_step,
                    "iesg_told": workflow.IESG in move.mail}
        return _message(f"[IANA] {nid}: {event.get_to_state_display()}",
                        "to_staff.txt", context, to=staff_emails(exclude=(actor_pk,)))
    if audience == workflow.EXPERTS:
        return _message(f"[urn experts] Request #{registration.pk} for {nid}: "
                        f"{in_sentence(event.get_to_state_display())}",
                        "to_experts.txt", context,
                        to=experts_emails(exclude=(actor_pk, registration.registrant_id)))
    if audience == workflow.IESG:
        # IANA staff are told by their own message (STAFF), not by a copy of this one.
        return _message(f"[urn] Expert review report: URN NID {nid} (request #{registration.pk})",
                        "to_iesg.txt", context, to=[settings.IESG_ADDRESS],
                        reply_to=staff_emails())
    raise ValueError(f"unknown audience {audience!r}")


def comment_message(comment: Comment, audience: str) -> EmailMessage | None:
    """Tell a comment's audience about it: a public comment goes to the review list
    (the registrant and the experts in copy), one to the registrant to them, an
    internal one to the other designated experts only."""
    registration = comment.registration
    context = {"comment": comment, "registration": registration,
               "url": site_url(registration.get_absolute_url())}
    subject = f"Comment on URN namespace request #{registration.pk} ({registration.display_nid})"
    author = comment.author_id
    if audience == workflow.REVIEW_LIST:
        cc = experts_emails(exclude=(author,))
        if registration.registrant_id != author:
            cc.append(registration.registrant.email)
        if comment.via != Comment.Via.WEB:
            # It came from the list: the list has it already. Its sender is whoever the
            # From line says (unverified), so the registry does not repeat the words in
            # its own name: the registrant (and the experts in copy) are told where to
            # read it.
            to = [registration.registrant.email] if registration.registrant_id != author else cc
            cc = [a for a in cc if a not in to]
            return _message(f"[urn] {subject}", "list_notice.txt", context, to=to, cc=cc)
        return _message(f"[urn] {subject}", "comment.txt", context,
                        to=[settings.REVIEW_LIST_ADDRESS], cc=cc,
                        reply_to=[settings.REVIEW_LIST_ADDRESS])
    if audience == workflow.REGISTRANT:
        if registration.registrant_id == author:
            # The registrant's own answer (a reply by mail): the experts hear it.
            expert = registration.assigned_expert
            return _message(subject, "comment.txt", {**context, "recipient": expert},
                            to=[expert.email] if expert
                            else experts_emails(exclude=(author,)))
        return _message(subject, "comment.txt", {**context, "recipient": registration.registrant},
                        to=[registration.registrant.email])
    if audience == workflow.EXPERTS:
        return _message(f"[urn experts] Internal: {subject}", "comment.txt", context,
                        to=experts_emails(exclude=(author, registration.registrant_id)))
    raise ValueError(f"unknown audience {audience!r}")


def assignment_message(registration: RegistrationRequest, *, expert, actor,
                       away_until=None) -> EmailMessage | None:
    """Tell ``expert`` that ``actor`` assigned them ``registration`` (and, when they are
    marked away, that they are)."""
    return _message(
        f"[urn experts] Request #{registration.pk} ({registration.display_nid}) "
        f"is assigned to you",
        "assigned.txt", {"registration": registration, "expert": expert, "actor": actor,
                         "away_until": away_until,
                         "url": site_url(registration.get_absolute_url())},
        to=[expert.email] if expert.email else [],
    )


def holder_change_messages(namespace, *, before, after, reason: str) -> list[EmailMessage]:
    """Tell both holders of ``namespace`` that it changed hands: the one who held it
    (they may no longer start a new version) and the one who holds it now (they may,
    from their own contact for IANA). Each gets their own message: neither address is
    shown to the other."""
    messages = []
    for person, now_holds in ((before, False), (after, True)):
        if person is None or not person.email:
            continue
        message = _message(
            f"[IANA] You {'now hold' if now_holds else 'no longer hold'} the URN namespace "
            f"{namespace.nid}", "holder_changed.txt",
            {"namespace": namespace, "salutation": person.salutation, "now_holds": now_holds,
             "reason": reason, "url": site_url(namespace.get_absolute_url())},
            to=[person.email])
        if message is not None:
            messages.append(message)
    return messages


def reminder_message(registration: RegistrationRequest,
                     reminder: workflow.Reminder) -> EmailMessage | None:
    """An idle request brought up to the people ``reminder`` names (the workflow
    chose them: nobody away, nobody with a conflict of interest)."""
    recipients = reminder.recipients
    prefix = "[IANA]" if reminder.audience == workflow.STAFF else "[urn experts]"
    what = ("is waiting" if reminder.kind == workflow.REMINDED
            else "is still waiting (escalated)")
    return _message(
        f"{prefix} Request #{registration.pk} ({registration.display_nid}) {what}",
        "reminder.txt", {"registration": registration,
                         "url": site_url(registration.get_absolute_url()),
                         "recipient": recipients[0] if len(recipients) == 1 else None,
                         "reminder": reminder,
                         "escalated": reminder.kind != workflow.REMINDED},
        to=_emails(recipients),
    )
