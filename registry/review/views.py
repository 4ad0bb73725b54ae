"""Pages of the review: registrants' requests and form, the public review,
the expert dashboard and the IANA staff queue. Every write calls actions.py."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from registry.accounts.roles import EXPERT, is_expert, is_iana_staff
from registry.namespaces.advice import confusion_index, nid_warnings, warning_json
from registry.namespaces.models import Namespace
from registry.namespaces.presentation import field_diffs, pick_pair
from registry.namespaces.querysets import plausible_text
from registry.namespaces.template import SECTIONS, TEXT_FIELDS, render_text, template_values
from registry.protection import limited
from registry.review import actions, workflow
from registry.review.forms import (
    AssignForm,
    CommentForm,
    RequestForm,
    StandardisationForm,
    TemplateImportForm,
    TransitionForm,
)
from registry.review.models import (
    OPEN_STATES,
    Comment,
    RegistrationRequest,
    State,
    visible_comments,
)
from registry.urns import check_formal_nid, check_informal_nid


def _get_registration_request(request, pk: int) -> RegistrationRequest:
    registration_request = get_object_or_404(
        RegistrationRequest.objects.select_related("registrant", "revises", "assigned_expert"),
        pk=pk)
    if not workflow.can_view(registration_request, request.user):
        # A draft is private: the same answer as for a request that does not exist.
        raise Http404("No such request.")
    return registration_request


@login_required
def my_requests(request):
    mine = (RegistrationRequest.objects.of(request.user).select_related("revises")
            .order_by("-updated_at"))
    held = Namespace.objects.filter(holder=request.user)
    return render(request, "review/my_requests.html", {"requests": mine, "held": held})


@login_required
def new_request(request):
    if request.GET.get("revises"):
        # Starting a revision writes a draft, so it is a POST (the namespace page's button).
        # The NID comes from the address bar: only a registered one is linked to.
        revises = Namespace.objects.by_nid(request.GET["revises"]).first()
        if revises is None:
            raise Http404("No such namespace.")
        messages.info(request, "Use “Start a new version” on the namespace page.")
        return redirect(revises)
    if request.method == "POST" and request.POST.get("revises"):
        return _start_revision(request, request.POST["revises"])
    if request.method == "POST" and "import_template" in request.POST:
        return _import_template(request, None)
    if request.method == "POST":
        return _save(request, None)
    initial = {"edit_version": 0, "kind": Namespace.Kind.FORMAL,
               "registrant_organisation": request.user.organisation,
               "contact_name": request.user.get_full_name(), "contact_email": request.user.email}
    form = RequestForm(initial=initial)
    return render(request, "review/request_form.html", _form_context(None, form))


def _start_revision(request, nid: str):
    revises = Namespace.objects.by_nid(nid).first()
    if revises is None:
        raise Http404("No such namespace.")
    if revises.holder_id != request.user.pk:
        raise PermissionDenied("Only the holder of a namespace can revise it.")
    try:
        draft = actions.request_create(actor=request.user, revises=revises)
    except actions.TransitionRefused as exc:
        messages.error(request, str(exc))
        return redirect(revises)
    messages.info(request, f"A draft of version {_next_version(revises)} of {revises.nid} "
                           "starts from the published text.")
    return redirect("review:edit", pk=draft.pk)


def _next_version(namespace: Namespace) -> int:
    current = namespace.current_version()
    return (current.number if current else 0) + 1


@login_required
def edit_request(request, pk):
    registration_request = get_object_or_404(
        RegistrationRequest.objects.select_related("revises"), pk=pk)
    if registration_request.registrant_id != request.user.pk:
        raise Http404("No such request.")
    if request.method == "POST" and "import_template" in request.POST and \
            registration_request.is_editable:
        return _import_template(request, registration_request)
    if request.method == "POST":
        return _save(request, registration_request)
    if not registration_request.is_editable:
        messages.info(request, "This request is not editable in its current state.")
        return redirect(registration_request)
    form = RequestForm(instance=registration_request,
                       initial={"edit_version": registration_request.edit_version},
                       revision=registration_request.is_revision)
    return render(request, "review/request_form.html", _form_context(registration_request, form))


def _import_template(request, registration_request: RegistrationRequest | None):
    """Prefill the form from a pasted or uploaded template. Nothing is saved: the
    form comes back with the template's values in place of what it held, and
    the parts that could not be mapped are listed for the registrant to place."""
    revision = bool(registration_request and registration_request.is_revision)
    importer = TemplateImportForm(request.POST, request.FILES)
    if not importer.is_valid():
        form = RequestForm(request.POST, instance=registration_request, revision=revision,
                           registrant=request.user)
        context = _form_context(registration_request, form, importer=importer)
        return render(request, "review/request_form.html", context, status=400)
    data, filled = importer.prefill(request.POST, revision=revision)
    form = RequestForm(data, instance=registration_request, revision=revision,
                       registrant=request.user)
    labels = [form.fields[name].label or name for name in filled if name in form.fields]
    messages.info(request, "The form is filled in from your template; nothing is saved until "
                           "you save the draft.")
    context = _form_context(registration_request, form, importer=importer)
    context["imported"] = {"parsed": importer.parsed, "filled": labels}
    return render(request, "review/request_form.html", context)


def _form_context(registration_request: RegistrationRequest | None, form: RequestForm,
                  importer: TemplateImportForm | None = None) -> dict:
    context: dict[str, Any] = {
        "form": form, "registration_request": registration_request,
        "importer": importer or TemplateImportForm(),
        "nid_warnings": _form_warnings(registration_request, form),
    }
    if registration_request is not None and registration_request.is_revision:
        current = registration_request.revises.current_version()
        working = {name: form[name].value() or "" for name in TEXT_FIELDS if name in form.fields}
        context["published"] = current
        context["diffs"] = [d for d in field_diffs(
            template_values(current) if current else {}, working) if d.changed]
        if current is not None:  # the draft's own text is in the form below
            context["downloads"] = [(f"published version {current.number}", reverse(
                "namespaces:version-txt", args=[current.nid, current.number]))]
    if registration_request is not None:
        context["conflicts"] = RegistrationRequest.objects.conflicting_with(registration_request)
    return context


def _form_warnings(registration_request: RegistrationRequest | None,
                   form: RequestForm) -> list:
    """The conflict warnings for the NID the form holds, shown with the field
    (the live check replaces them while the registrant types)."""
    if "proposed_nid" not in form.fields:
        return []
    nid = (form["proposed_nid"].value() or "").strip()
    kind = form["kind"].value() if "kind" in form.fields else Namespace.Kind.FORMAL
    if kind != Namespace.Kind.FORMAL or not plausible_text(nid, 64):
        return []
    return nid_warnings(nid, organisation=form["registrant_organisation"].value() or "",
                        request_id=registration_request.pk if registration_request else None)


def _save(request, registration_request: RegistrationRequest | None):
    submitting = "submit" in request.POST
    form = RequestForm(request.POST, instance=registration_request, submitting=submitting,
                       revision=bool(registration_request and registration_request.is_revision),
                       registrant=request.user)
    if not form.is_valid():
        messages.error(request, "Please correct the fields marked below; nothing you typed "
                                "has been lost.")
        return render(request, "review/request_form.html",
                      _form_context(registration_request, form), status=400)
    data = form.cleaned_data
    values = {name: data[name] for name in TEXT_FIELDS if name in data}
    try:
        if registration_request is None:
            registration_request = actions.request_create(
                actor=request.user, kind=data["kind"], proposed_nid=data["proposed_nid"],
                fast_track=data["fast_track"], values=values,
            )
        else:
            registration_request = actions.request_update(
                request=registration_request, actor=request.user, edit_version=data["edit_version"],
                kind=data.get("kind", registration_request.kind),
                proposed_nid=data.get("proposed_nid", ""),
                fast_track=data["fast_track"], values=values,
            )
        if submitting:
            name = "resubmit" if registration_request.state == State.CHANGES_REQUESTED else "submit"
            actions.request_transition(request=registration_request, transition=name,
                                       actor=request.user)
    except (actions.StaleEdit, actions.TransitionRefused) as exc:
        form.add_error(None, str(exc))
        if registration_request is not None and registration_request.pk:
            registration_request.refresh_from_db()
        return render(request, "review/request_form.html",
                      _form_context(registration_request, form), status=409)
    if submitting:
        messages.success(request, "Submitted. The template has been sent to the review list "
                                  f"({settings.REVIEW_LIST_ADDRESS}) and the designated experts.")
        return redirect(registration_request)
    messages.success(request, "Draft saved.")
    return redirect("review:edit", pk=registration_request.pk)


def request_page(request, pk):
    registration_request = _get_registration_request(request, pk)
    user = request.user
    # What a refused action had typed, for the one form it came from (see _keep_unsent).
    unsent = request.session.pop("unsent", {})
    rounds = list(registration_request.rounds.order_by("-number"))
    events = list(registration_request.events.select_related("actor", "round"))
    for event in events:
        event.label = workflow.event_label(event.transition)
    shown = rounds[0] if rounds else registration_request
    context = {
        "registration_request": registration_request,
        "shown": shown,
        "shown_values": template_values(shown),
        "sections": SECTIONS,
        "rounds": rounds,
        "events": events,
        "comments": visible_comments(registration_request, user),
        "transitions": workflow.available(registration_request, user),
        "is_registrant": user.is_authenticated and user.pk == registration_request.registrant_id,
        "user_is_expert": is_expert(user),
        "user_is_staff": is_iana_staff(user),
        "conflicts": RegistrationRequest.objects.conflicting_with(registration_request),
        "nid_warnings": _request_warnings(registration_request),
        "experts": get_user_model().objects.filter(groups__name=EXPERT).order_by("email"),
        "audiences": [(a, Comment.Audience(a).label)
                      for a in workflow.comment_audiences(registration_request, user)],
        "period_ends": registration_request.review_period_ends(),
        "now": timezone.now(),
        "unsent": unsent,
    }
    if len(rounds) >= 2:
        context["round_diffs"] = _round_diffs(request, rounds)
    return render(request, "review/request_page.html", context)


def _request_warnings(registration_request: RegistrationRequest, index=None) -> list:
    """The section 5.1 / 6.2 warnings for the NID a request proposes."""
    if registration_request.is_revision or \
            registration_request.kind != Namespace.Kind.FORMAL or \
            not registration_request.proposed_nid:
        return []
    return nid_warnings(registration_request.proposed_nid,
                        organisation=registration_request.registrant_organisation,
                        request_id=registration_request.pk, index=index)


def _round_diffs(request, rounds):
    a, b = pick_pair(request.GET, rounds)
    return {"a": a, "b": b, "diffs": field_diffs(a.values(), b.values()),
            "left_label": f"Round {a.number}", "right_label": f"Round {b.number}",
            "downloads": [(f"round {r.number}", reverse("review:round-txt", args=[r.request_id,
                                                                                   r.number]))
                          for r in (a, b)]}


@require_GET
def round_txt(request, pk, number):
    """A submitted round as plain text, in the layout of the published templates."""
    registration_request = _get_registration_request(request, pk)
    chosen = registration_request.rounds.filter(number=number).first()
    if chosen is None:
        raise Http404("No such round.")
    text = render_text(nid=chosen.nid or registration_request.display_nid, version=chosen.version,
                       date=chosen.date, values=chosen.values(), fast_track=chosen.fast_track)
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


def _keep_unsent(request, target: str, comment: str, early_reason: str = "") -> None:
    """Keep what a refused action typed, to put back into the form it came from
    after the redirect (nothing typed is lost)."""
    request.session["unsent"] = {"target": target, "comment": comment[:20_000],
                                 "early_reason": early_reason[:2_000]}


@login_required
@require_POST
def transition(request, pk, name):
    registration_request = _get_registration_request(request, pk)
    form = TransitionForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        _keep_unsent(request, name, request.POST.get("comment", ""),
                     request.POST.get("early_reason", ""))
        return redirect(registration_request)
    data = form.cleaned_data
    try:
        actions.request_transition(request=registration_request, transition=name,
                                   actor=request.user,
                                   comment=data.get("comment", ""),
                                   early_reason=data.get("early_reason", ""))
    except actions.TransitionRefused as exc:
        messages.error(request, str(exc))
        _keep_unsent(request, name, data.get("comment", ""), data.get("early_reason", ""))
        return redirect(registration_request)
    label = workflow.TRANSITIONS[name].label
    messages.success(request, f"Done: {label.lower()}.")
    return redirect(registration_request)


@login_required
@require_POST
@limited("comment", key="user")
def comment(request, pk):
    registration_request = _get_registration_request(request, pk)
    form = CommentForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        _keep_unsent(request, "comment", request.POST.get("body", ""))
        return redirect(registration_request)
    try:
        actions.request_comment(request=registration_request, actor=request.user,
                                body=form.cleaned_data["body"],
                                audience=form.cleaned_data["audience"])
    except actions.TransitionRefused as exc:
        messages.error(request, str(exc))
        _keep_unsent(request, "comment", form.cleaned_data["body"])
        return redirect(registration_request)
    messages.success(request, "Comment posted.")
    return redirect(f"{registration_request.get_absolute_url()}#comments")


@login_required
@require_POST
def assign(request, pk):
    registration_request = _get_registration_request(request, pk)
    form = AssignForm(request.POST)
    expert = None
    if form.is_valid() and form.cleaned_data["expert"]:
        expert = get_user_model().objects.filter(pk=form.cleaned_data["expert"]).first()
    try:
        actions.request_assign(request=registration_request, expert=expert, actor=request.user)
    except actions.TransitionRefused as exc:
        messages.error(request, str(exc))
    if request.POST.get("next") == "dashboard":
        return redirect("review:dashboard")
    return redirect(registration_request)


@login_required
@require_POST
def standardisation(request, pk):
    registration_request = _get_registration_request(request, pk)
    form = StandardisationForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect(registration_request)
    try:
        actions.request_set_standardisation(request=registration_request, actor=request.user,
                                            involved=form.cleaned_data["involved"],
                                            comment=form.cleaned_data["comment"])
    except actions.TransitionRefused as exc:
        messages.error(request, str(exc))
    return redirect(registration_request)


def public_review(request):
    pending = (RegistrationRequest.objects.in_public_review()
               .select_related("registrant", "revises").order_by("review_started_at"))
    return render(request, "review/public_review.html", {"pending": pending, "now": timezone.now()})


def _queue(states):
    return (RegistrationRequest.objects.filter(state__in=states)
            .select_related("registrant", "revises", "assigned_expert")
            .order_by("last_activity_at"))


@login_required
def dashboard(request):
    if not is_expert(request.user):
        raise PermissionDenied("The dashboard is for designated experts.")
    mine = request.GET.get("mine") == "1"
    keys = RegistrationRequest.objects.conflicting_nid_keys()
    index = confusion_index()
    columns = []
    for state in (State.IN_REVIEW, State.CHANGES_REQUESTED, State.AWAITING_IESG, State.APPROVED):
        items = _queue([state])
        if mine:
            items = items.filter(assigned_expert=request.user)
        items = list(items)
        for item in items:
            item.conflict = item.proposed_nid.lower() in keys if item.proposed_nid else False
            item.warnings = _request_warnings(item, index)
        columns.append((State(state).label, state, items))
    return render(request, "review/dashboard.html", {
        "columns": columns, "mine": mine, "now": timezone.now(),
        "experts": get_user_model().objects.filter(groups__name=EXPERT).order_by("email"),
        "unassigned": RegistrationRequest.objects.filter(state__in=OPEN_STATES,
                                             assigned_expert__isnull=True).count(),
    })


@login_required
def staff_queue(request):
    if not is_iana_staff(request.user):
        raise PermissionDenied("The queue is for IANA staff.")
    return render(request, "review/staff_queue.html", {
        "ready": _queue([State.APPROVED]),
        "iesg": _queue([State.AWAITING_IESG]),
        "recent": RegistrationRequest.objects.filter(state=State.REGISTERED)
        .select_related("published_version__namespace").order_by("-updated_at")[:20],
        "now": timezone.now(),
    })


@require_GET
@limited("nid_check")
def nid_check(request):
    """Live check of a proposed NID for the request form (sections 2.1, 5.1, 5.2)."""
    nid = request.GET.get("nid", "")[:100]
    kind = request.GET.get("kind", "formal")
    registered = Namespace.objects.by_nid(nid).values_list("nid", flat=True) if nid else []
    if kind == "informal":
        problems = check_informal_nid(nid, registered)
    else:
        problems = check_formal_nid(nid, registered)
    others = (RegistrationRequest.objects.open().filter(proposed_nid__lower=nid.lower()).count()
              if plausible_text(nid, 64) else 0)
    organisation = request.GET.get("organisation", "")[:300]
    request_id = request.GET.get("request", "")
    warnings = nid_warnings(
        nid, organisation=organisation if plausible_text(organisation, 300) else "",
        request_id=int(request_id) if request_id.isdigit() and len(request_id) < 12 else None,
    ) if kind != "informal" and plausible_text(nid, 64) else []
    return JsonResponse({
        "nid": nid,
        "acceptable": not problems,
        "problems": [{"code": p.code, "message": str(p)} for p in problems],
        "warnings": [warning_json(w) for w in warnings],
        "other_open_requests": others,
    })
