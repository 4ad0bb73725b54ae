"""The review's mail: one function builds each message; tasks send them."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.template.loader import render_to_string

from registry.accounts.roles import EXPERT, STAFF
from registry.namespaces.template import render_text
from registry.review.models import Comment, RegistrationRequest, RequestEvent


def _emails_in(group: str) -> list[str]:
    users = get_user_model().objects.filter(groups__name=group, is_active=True)
    return sorted(set(users.values_list("email", flat=True)))


def _url(request: RegistrationRequest) -> str:
    return settings.SITE_URL.rstrip("/") + request.get_absolute_url()


def _message(subject: str, template: str, context: dict, to: list[str], cc=(),
             reply_to=()) -> EmailMessage | None:
    if not to:
        return None
    body = render_to_string(f"review/mail/{template}", context)
    return EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL,
                        to=to, cc=list(cc), reply_to=list(reply_to))


def event_message(event: RequestEvent, audience: str) -> EmailMessage | None:
    """The message telling ``audience`` about ``event`` (None: nobody to tell)."""
    request = event.request
    round_ = event.round or request.latest_round()
    context = {
        "event": event,
        "request": request,
        "url": _url(request),
        "namespace_url": (settings.SITE_URL.rstrip("/")
                          + request.published_version.namespace.get_absolute_url()
                          if request.published_version_id else ""),
        "template_text": render_text(
            nid=round_.nid or "(assigned by IANA at registration)", version=round_.version,
            date=round_.date, values=round_.values(), fast_track=round_.fast_track,
        ) if round_ else "",
    }
    nid = request.display_nid
    if audience == "review_list":
        kind = "Fast-track " if request.fast_track else ""
        what = {
            "submit": f"{kind}Registration request for URN NID {nid}",
            "resubmit": f"{kind}Registration request for URN NID {nid} (round {round_.number})",
            "request_registration": f"Standards body asks IANA to register URN NID {nid}",
            "register": f"Registered: URN NID {nid}",
        }[event.transition]
        if request.is_revision and event.transition in ("submit", "resubmit"):
            what = f"Revision (version {round_.version}) of URN NID {nid}"
        return _message(f"[urn] {what}", "to_list.txt", context,
                        to=[settings.REVIEW_LIST_ADDRESS], cc=_emails_in(EXPERT),
                        reply_to=[settings.REVIEW_LIST_ADDRESS])
    if audience == "registrant":
        return _message(f"Your URN namespace request #{request.pk}: "
                        f"{event.get_to_state_display()}",
                        "to_registrant.txt", context, to=[request.registrant.email])
    if audience == "staff":
        return _message(f"[IANA] {nid}: {event.get_to_state_display()}",
                        "to_staff.txt", context, to=_emails_in(STAFF))
    if audience == "experts":
        return _message(f"[urn experts] Request #{request.pk} for {nid} withdrawn",
                        "to_experts.txt", context, to=_emails_in(EXPERT))
    raise ValueError(f"unknown audience {audience!r}")


def comment_message(comment: Comment) -> EmailMessage | None:
    """Tell the other side about a comment: the registrant hears what experts and
    the list say to them; the assigned expert hears what the registrant says."""
    request = comment.request
    context = {"comment": comment, "request": request, "url": _url(request)}
    if comment.audience == Comment.Audience.EXPERTS:
        return None
    if comment.author_id == request.registrant_id:
        recipient = request.assigned_expert
        to = [recipient.email] if recipient else _emails_in(EXPERT)
    else:
        recipient = request.registrant
        to = [recipient.email]
    context["recipient"] = recipient
    return _message(f"Comment on URN namespace request #{request.pk} ({request.display_nid})",
                    "comment.txt", context, to=to)


def reminder_message(request: RegistrationRequest) -> EmailMessage | None:
    recipient = request.assigned_expert
    to = [recipient.email] if recipient else _emails_in(EXPERT)
    return _message(
        f"[urn experts] Request #{request.pk} ({request.display_nid}) is waiting",
        "reminder.txt", {"request": request, "url": _url(request), "recipient": recipient},
        to=to,
    )
