"""The request page, one panel at a time: each presenter reads what its panel shows
(asking registry.review.workflow what the person may see and do) and returns that
panel's part of the template context. ``registration_page_context`` puts them together.

The panels, top to bottom: the header (state, review period), the race for the NID,
the NID warnings, what the person can do (transitions, assignment, the standardisation
flag, comments), the template as submitted with its rounds, the timeline and comments,
and the mail log (experts and staff only)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone

from registry.accounts.roles import load_roles
from registry.namespaces.advice import nid_warnings
from registry.namespaces.models import Namespace
from registry.namespaces.presentation import field_diffs, pick_pair
from registry.namespaces.profiles import profile_presentation
from registry.namespaces.template import SECTIONS, private_contact, template_values
from registry.review import workflow
from registry.review.forms import CommentForm, StandardisationForm, TransitionForm
from registry.review.models import (
    Comment,
    InboundMessage,
    OutboundMessage,
    RegistrationRequest,
    RequestEvent,
    Round,
)

if TYPE_CHECKING:
    from django import forms

Context = dict[str, Any]


def header_panel(registration: RegistrationRequest, *,
                 now: dt.datetime) -> Context:
    """The state badge and, while in public review, when the review period ends; while
    its clock is stopped (changes requested), how much of the period the request will
    have once it runs again: a whole new one where going on makes a new round."""
    period_ends = registration.review_period_ends(now)
    paused = (registration.review_paused_at is not None and period_ends is not None
              and registration.state_meaning.open)
    restarts = paused and workflow.review_restarts_from(registration.state)
    left = None
    if restarts:
        left = settings.REVIEW_MIN_DAYS
    elif paused and period_ends is not None:
        left = max(0, -((now - period_ends) // dt.timedelta(days=1)))
    return {"registration": registration,
            "registrant_label": workflow.registrant_label(registration),
            "period_ends": period_ends, "now": now,
            "period_left": left, "period_restarts": restarts,
            "holder_changed": (not registration.state_meaning.final
                               and workflow.holder_changed(registration))}


def race_panel(registration: RegistrationRequest) -> Context:
    """The other open requests for the same NID, and the namespace that took it
    meanwhile. The race is remembered on the request, for the questions that follow."""
    conflicts = list(RegistrationRequest.objects.conflicting_with(registration))
    taken_by = workflow.registered_meanwhile(registration)
    workflow.remember_race(registration,
                           workflow.Race(len(conflicts), taken_by is not None))
    return {"conflicts": conflicts, "taken_by": taken_by,
            "race": workflow.race_of(registration)}


def registration_warnings(registration: RegistrationRequest, index: Any = None) -> list:
    """The section 5.1 / 6.2 warnings for the NID a request proposes."""
    if not workflow.shows_nid_warnings(registration) or \
            registration.is_revision or \
            registration.shown_kind != Namespace.Kind.FORMAL or \
            not registration.shown_nid:
        return []
    return nid_warnings(registration.shown_nid,
                        organisation=registration.shown_organisation,
                        registration_id=registration.pk, index=index)


def warnings_panel(registration: RegistrationRequest) -> Context:
    return {"nid_warnings": registration_warnings(registration)}


def _bound(bound: Context, target: str) -> forms.Form | None:
    """The refused form for ``target``, as it was sent, if that is what came back."""
    form: forms.Form | None = bound.get("form") if bound.get("target") == target else None
    return form


def experts_with_load() -> list[Any]:
    """The designated experts as the assign choices ask about them (their open
    assignments, their availability, their roles), read once for the whole list: the
    choices then ask nothing more per expert."""
    experts = list(get_user_model().objects.designated_experts().with_load())
    load_roles(experts)
    return experts


def actions_panel(registration: RegistrationRequest, user: Any, *,
                  bound: Context, now: dt.datetime) -> Context:
    """What ``user`` can do here now: the transitions on offer (each with its form),
    editing, assignment (to whom), the standardisation flag and the comment form. A
    refused form (``bound``) comes back at its place; its errors go above the page
    when its place is no longer offered."""
    period_ends = registration.review_period_ends()
    early_until = period_ends if period_ends and period_ends > now else None
    offered = [(move, _bound(bound, move.name)
                or TransitionForm(transition=move, period_ends=early_until))
               for move in workflow.page_transitions(registration, user)]
    audiences = workflow.comment_audiences(registration, user)
    can_assign = workflow.can_assign(registration, user)
    can_flag = workflow.can_set_standardisation(registration, user)
    placed = ({move.name for move, _ in offered} | ({"comment"} if audiences else set())
              | ({"standardisation"} if can_flag else set()))
    refused = bound.get("form")
    unplaced = ([e for errors in refused.errors.values() for e in errors]
                if refused is not None and bound.get("target") not in placed else [])
    experts = ([e for e in experts_with_load()
                if workflow.may_be_assigned(registration, e, user)] if can_assign else [])
    return {
        "offered": offered,
        "offered_close": any(move.overtaken_only for move, _ in offered),
        "can_edit": workflow.can_edit(registration, user),
        "can_assign": can_assign,
        "experts": experts,
        "can_set_standardisation": can_flag,
        "standardisation_form": _bound(bound, "standardisation") or StandardisationForm(),
        "audiences": [(a, Comment.Audience(a).label) for a in audiences],
        "comment_form": _bound(bound, "comment")
        or CommentForm(initial={"audience": audiences[0] if audiences else ""}),
        "unplaced_errors": unplaced,
    }


def round_diffs(query: QueryDict, rounds: list[Round]) -> Context:
    """Two rounds side by side (the pair chosen in the address, else the last two)."""
    a, b = pick_pair(query, rounds)
    return {"a": a, "b": b, "diffs": field_diffs(a.values(), b.values()),
            "left_label": f"Round {a.number}", "right_label": f"Round {b.number}",
            "downloads": [(f"round {r.number}",
                           reverse("review:round-txt", args=[r.registration_id, r.number]))
                          for r in (a, b)]}


def proposed_profile(text: str, registration: RegistrationRequest) -> dict | None:
    """The profile a request proposes, checked as the form checked it (experts see
    its examples pass or fail)."""
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {"problems": [("profile", f"not JSON: {exc}")]}
    nid = (registration.revises.nid if registration.revises_id
           and registration.revises else registration.shown_nid or None)
    return profile_presentation(data, nid)


def template_panel(registration: RegistrationRequest, user: Any,
                   query: QueryDict) -> Context:
    """The template as last submitted (the working copy before submission), its
    rounds, and what changed between two of them; IANA's private contact for those
    who may see it."""
    rounds = list(registration.rounds.order_by("-number"))
    shown = rounds[0] if rounds else registration
    values = template_values(shown)
    context: Context = {"shown": shown, "shown_values": values,
                        "private_contact": (
                            private_contact(values)
                            if workflow.can_see_private_contact(registration, user)
                            else []),
                        "sections": SECTIONS, "rounds": rounds,
                        "profile": proposed_profile(shown.profile, registration)}
    if len(rounds) >= 2:
        context["round_diffs"] = round_diffs(query, rounds)
    if rounds and workflow.can_read_working_copy(registration, user):
        # Edits saved after the last round, which nobody else reads until resubmitted.
        context["unsubmitted"] = [*_unsubmitted_choices(registration),
                                  *(d.label for d in field_diffs(values,
                                                                 template_values(registration))
                                    if d.changed)]
    context.update(published_diffs(registration, values,
                                   label=f"Round {rounds[0].number}" if rounds else "This draft"))
    return context


def _unsubmitted_choices(registration: RegistrationRequest) -> list[str]:
    """The kind, NID and procedure of a working copy where they differ from the last round."""
    submitted = registration.submitted_round
    if submitted is None:
        return []
    changed = [("Procedure (fast track)", submitted.fast_track != registration.fast_track)]
    if not registration.is_revision:  # a revision's kind and NID are its namespace's
        changed = [("Kind", submitted.kind != registration.kind),
                   ("Namespace ID", submitted.nid != registration.proposed_nid), *changed]
    return [label for label, differs in changed if differs]


def published_diffs(registration: RegistrationRequest, values: dict[str, str], *,
                    label: str) -> Context:
    """For a revision not yet registered: the fields its text changes against the version
    it revises, as its reviewers need them (RFC 8141 section 6.2)."""
    if not registration.is_revision or registration.published_version_id:
        return {}
    assert registration.revises is not None  # a revision revises one
    current = registration.revises.current_version()
    if current is None:
        return {}
    return {"published": current, "shown_label": label,
            "published_diffs": [d for d in field_diffs(template_values(current), values)
                                if d.changed]}


def timeline_panel(registration: RegistrationRequest, user: Any) -> Context:
    """The events ``user`` may read, each saying who acted, and the comments."""
    events = list(registration.events.select_related("actor", "round")
                  .exclude(kind__in=workflow.hidden_events(registration, user)))
    for event in events:
        event.who = (workflow.public_name(event.actor, registration) if event.actor else
                     "the review list" if event.kind == RequestEvent.Kind.LIST_COMMENT
                     else "system")
    return {"events": events,
            "closing": workflow.closing_event(registration, events),
            "comments": registration.comments.visible_to(user).select_related("author")}


def mail_panel(registration: RegistrationRequest, user: Any) -> Context:
    """What was sent about a request and what arrived that is not on the timeline:
    for those who may see the mail, nothing for anyone else."""
    if not workflow.can_see_mail(registration, user):
        return {}
    # each message gains resendable and readable, for the template
    sent: list[Any] = list(OutboundMessage.objects.about(registration).select_related("comment"))
    for message in sent:  # the request is this one: no query per row
        message.registration = registration
        if message.comment is not None:
            message.comment.registration = registration
        message.resendable = workflow.can_resend(message, user)
        message.readable = workflow.can_read_message(message, user)
    held = (InboundMessage.objects.filter(registration=registration)
            .annotate(readable=workflow.inbound_readable_by(user))
            .exclude(outcome=InboundMessage.Outcome.PLACED).defer("raw"))
    return {"mail_log": sent, "mail_held": list(held), "show_mail": True,
            "can_handle_quarantine": workflow.can_handle_quarantine(user)}


def registration_page_context(registration: RegistrationRequest, user: Any, *,
                              query: QueryDict, bound: Context | None = None,
                              now: dt.datetime | None = None) -> Context:
    """The whole request page: every panel's part. The race panel comes before the
    actions, which ask about the race it remembers."""
    now = now or timezone.now()
    return {
        **header_panel(registration, now=now),
        **race_panel(registration),
        **warnings_panel(registration),
        **actions_panel(registration, user, bound=bound or {}, now=now),
        **template_panel(registration, user, query),
        **timeline_panel(registration, user),
        **mail_panel(registration, user),
    }
