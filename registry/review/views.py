"""Pages of the review: registrants' requests and form, the public review,
the expert dashboard and the IANA staff queue. Every write calls actions.py;
every "may this person see or do this?" is asked of the workflow package."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST, require_safe

from registry.accounts import actions as account_actions
from registry.accounts.forms import AvailabilityForm
from registry.namespaces.advice import confusion_index, nid_warnings, warning_json
from registry.namespaces.models import Namespace
from registry.namespaces.presentation import field_diffs
from registry.namespaces.public_cache import public_document, public_page
from registry.namespaces.query_params import Param, canonical_query, choice, positive_integer
from registry.namespaces.querysets import plausible_text
from registry.namespaces.template import (
    TEMPLATE_FIELDS,
    TEXT_FIELDS,
    render_text,
    template_values,
)
from registry.protection import limited
from registry.review import actions, stats, workflow
from registry.review.forms import (
    AssignForm,
    CommentForm,
    RequestForm,
    StandardisationForm,
    TemplateImportForm,
    TransitionForm,
)
from registry.review.models import (
    OutboundMessage,
    RegistrationRequest,
    State,
)
from registry.review.presenters import experts_with_load, registration_page_context
from registry.review.presenters import registration_warnings as _registration_warnings
from urn8141 import check_formal_nid, check_informal_nid


def _get_registration(request, pk: int) -> RegistrationRequest:
    """The request, if ``request.user`` may see it; a private draft gets the same
    answer as a request that does not exist."""
    registration = get_object_or_404(
        RegistrationRequest.objects.select_related("registrant", "revises", "assigned_expert"),
        pk=pk)
    if not workflow.can_view(registration, request.user):
        raise Http404("No such request.")
    return registration


def _held_by(user):
    """The namespaces ``user`` holds, each with its open revision (read by
    workflow.revise_refusal), in one query."""
    open_revision = workflow.blocking_revisions(
        RegistrationRequest.objects.filter(revises=OuterRef("pk")), user)
    return Namespace.objects.filter(holder=user).annotate(
        open_revision_pk=Subquery(open_revision.values("pk")[:1]),
        open_revision_registrant_id=Subquery(open_revision.values("registrant_id")[:1]))


@login_required
@require_GET
def my_requests(request):
    mine = (RegistrationRequest.objects.of(request.user)
            .select_related("revises", "published_version")
            .with_race().order_by("-updated_at"))
    rows = [(r, workflow.race_of(r), workflow.can_edit(r, request.user)) for r in mine]
    held = [(ns, workflow.can_revise(ns, request.user)) for ns in _held_by(request.user)]
    return render(request, "review/my_requests.html", {"rows": rows, "held": held})


@login_required
def new_registration(request):
    if request.GET.get("revises"):
        # Starting a revision writes a draft, so it is a POST (the namespace page's button).
        # The NID comes from the address bar: only a registered one is linked to.
        revises = Namespace.objects.by_nid(request.GET["revises"]).first()
        if revises is None:
            raise Http404("No such namespace.")
        problem = workflow.revise_refusal(revises, request.user)
        messages.info(request, str(problem) if problem is not None
                      else "Use “Start a new version” on the namespace page.")
        return redirect(revises)
    if request.method == "POST" and request.POST.get("revises"):
        return _start_revision(request, request.POST["revises"])
    if request.method == "POST" and "other_template" in request.POST:
        return _import_other_template(request)
    if request.method == "POST" and "import_template" in request.POST:
        return _import_template(request, None)
    if request.method == "POST":
        return _save(request, None)
    form = RequestForm(initial=_new_initial(request.user))
    return render(request, "review/request_form.html", _form_context(None, form))


def _new_initial(user) -> dict[str, Any]:
    # The contact for IANA starts from the account's own name and address (the policy's
    # own_private_contact, as a new version does); what is published (a role address
    # is suggested) the registrant chooses.
    return {"edit_version": 0, "kind": Namespace.Kind.FORMAL, "form_token": uuid.uuid4(),
            "registrant_organisation": user.organisation,
            **workflow.own_private_contact(user)}


def _import_other_template(request):
    """"Make a request for the other one too": a new request's form filled in from
    another template of the text that filled the form it was asked from, starting
    from a new request's values, nothing of the other form's."""
    data = QueryDict(mutable=True)
    data.update({name: "" if value is None else str(value)
                 for name, value in _new_initial(request.user).items()})
    data.update({"import_template": "1", "template_text": request.POST.get("other_text", ""),
                 "template_number": request.POST.get("other_template", "")})
    return _import_template(request, None, data=data)


def _start_revision(request, nid: str):
    revises = Namespace.objects.by_nid(nid).first()
    if revises is None:
        raise Http404("No such namespace.")
    try:
        draft = actions.registration_create(actor=request.user, revises=revises)
    except workflow.NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc
    except workflow.Refused as exc:
        messages.error(request, str(exc))
        return redirect(revises)
    messages.info(request, f"A draft of version {_next_version(revises)} of {revises.nid} "
                           "starts from the published text.")
    return redirect("review:edit", pk=draft.pk)


def _next_version(namespace: Namespace) -> int:
    current = namespace.current_version()
    return (current.number if current else 0) + 1


@login_required
def edit_registration(request, pk):
    registration = _get_registration(request, pk)
    problem = workflow.edit_refusal(registration, request.user)
    if isinstance(problem, workflow.NotAllowed):
        raise Http404("No such request.")  # someone else's request has no edit page
    if request.method == "POST" and "import_template" in request.POST and problem is None:
        return _import_template(request, registration)
    if request.method == "POST":
        return _save(request, registration)
    if problem is not None:
        messages.info(request, str(problem))
        return redirect(registration)
    form = RequestForm(instance=registration,
                       initial={"edit_version": registration.edit_version},
                       revision=registration.is_revision)
    return render(request, "review/request_form.html", _form_context(registration, form))


def _import_template(request, registration: RegistrationRequest | None, *,
                     data: QueryDict | None = None):
    """Prefill the form from a pasted or uploaded template. Nothing is saved: the
    form comes back with the template's values in place of what it held (``data``,
    else what was posted), and the parts that could not be mapped are listed for the
    registrant to place."""
    revision = bool(registration and registration.is_revision)
    posted = request.POST if data is None else data
    importer = TemplateImportForm(posted, request.FILES if data is None else None)
    if not importer.is_valid():
        form = RequestForm(posted, instance=registration, revision=revision,
                           registrant=request.user)
        context = _form_context(registration, form, importer=importer)
        return render(request, "review/request_form.html", context, status=400)
    data, filled = importer.prefill(posted, revision=revision)
    form = RequestForm(data, instance=registration, revision=revision,
                       registrant=request.user)
    labels = [form.fields[name].label or name for name in filled if name in form.fields]
    messages.info(request, "The form is filled in from your template; nothing is saved until "
                           "you save the draft.")
    context = _form_context(registration, form, importer=importer)
    context["imported"] = {"parsed": importer.parsed, "filled": labels}
    return render(request, "review/request_form.html", context)


def _form_context(registration: RegistrationRequest | None, form: RequestForm,
                  importer: TemplateImportForm | None = None) -> dict:
    submit = (workflow.submit_transition(registration) if registration
              else workflow.TRANSITIONS["submit"])
    context: dict[str, Any] = {
        "form": form, "registration": registration, "submit": submit,
        "importer": importer or TemplateImportForm(),
        "nid_warnings": _form_warnings(registration, form),
    }
    if registration is not None and registration.is_revision:
        assert registration.revises is not None  # a revision revises one
        current = registration.revises.current_version()
        working = {name: form[name].value() or "" for name in TEXT_FIELDS if name in form.fields}
        context["published"] = current
        context["diffs"] = [d for d in field_diffs(
            template_values(current) if current else {}, working) if d.changed]
        if current is not None:  # the draft's own text is in the form below
            context["downloads"] = [(f"published version {current.number}", reverse(
                "namespaces:version-txt", args=[current.nid, current.number]))]
    if registration is not None:
        context["conflicts"] = RegistrationRequest.objects.conflicting_with(registration)
        context["taken_by"] = workflow.registered_meanwhile(registration)
    return context


def _form_warnings(registration: RegistrationRequest | None,
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
                        registration_id=registration.pk if registration else None)


def _form_token(request) -> uuid.UUID | None:
    try:
        return uuid.UUID(request.POST.get("form_token", ""))
    except ValueError:
        return None


def _made_by_this_form(request) -> HttpResponse | None:
    """The same new form posted again (a retry after a timeout, a double click): where
    the first post went, to the request it made, making nothing."""
    made = RegistrationRequest.objects.made_by_form(_form_token(request), request.user).first()
    if made is None:
        return None
    messages.info(request, "This form was sent already; this is the request it made.")
    if made.state == State.DRAFT:
        return redirect("review:edit", pk=made.pk)
    return redirect(made)


def _save(request, registration: RegistrationRequest | None):
    submitting = "submit" in request.POST
    if registration is None and (replayed := _made_by_this_form(request)) is not None:
        return replayed
    form = RequestForm(request.POST, instance=registration, submitting=submitting,
                       revision=bool(registration and registration.is_revision),
                       registrant=request.user)
    if registration is not None:
        problem = workflow.edit_refusal(registration, request.user)
        if problem is not None:  # typed text comes back, to copy
            form.is_valid()
            form.add_error(None, f"{problem} Your text is below so you can copy it.")
            return render(request, "review/request_form.html",
                          _form_context(registration, form), status=problem.status)
    if not form.is_valid():
        return render(request, "review/request_form.html",
                      _form_context(registration, form), status=400)
    data = form.cleaned_data
    values = {name: data[name] for name in TEMPLATE_FIELDS if name in data}
    move = None
    try:
        if registration is None:  # created and submitted in one transaction
            registration = actions.registration_create(
                actor=request.user, kind=data["kind"], proposed_nid=data["proposed_nid"],
                fast_track=data["fast_track"], values=values, form_token=data["form_token"],
                submit=submitting,
            )
            if submitting:  # the move a new request's submission took (the table's)
                move = workflow.submit_transition(form.instance)
                submitting = False
        else:
            registration = actions.registration_update(
                registration=registration, actor=request.user, edit_version=data["edit_version"],
                kind=data.get("kind", registration.kind),
                proposed_nid=data.get("proposed_nid", ""),
                fast_track=data["fast_track"], values=values,
            )
        if submitting:
            move = workflow.submit_transition(registration)
            actions.registration_transition(registration=registration,
                                            transition=move.name if move else "submit",
                                            actor=request.user)
    except workflow.Refused as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        if registration is not None and registration.pk:  # an existing one (a new one's
            registration.refresh_from_db()  # refusal left none: the form is new again)
        return render(request, "review/request_form.html",
                      _form_context(registration, form), status=exc.status)
    if move is not None:
        messages.success(request, move.done)
        return redirect(registration)
    messages.success(request, "Draft saved.")
    return redirect("review:edit", pk=registration.pk)


def _page(request, registration: RegistrationRequest, *, bound: dict | None = None,
          status: int = 200) -> HttpResponse:
    """The request page, built panel by panel (registry/review/presenters.py). ``bound``
    is a refused form to show as it was sent, with its errors at their fields:
    {"target": transition name | "comment" | "standardisation", "form": the bound form}."""
    context = registration_page_context(registration, request.user, query=request.GET,
                                        bound=bound)
    return render(request, "review/request_page.html", context, status=status)


@require_GET
def registration_page(request, pk):
    return _page(request, _get_registration(request, pk))


@login_required
@require_POST
def resend_mail(request, pk, message_pk):
    registration = _get_registration(request, pk)
    message = get_object_or_404(OutboundMessage, pk=message_pk, registration=registration)
    try:
        actions.message_resend(message=message, actor=request.user)
    except workflow.Refused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"“{message.summary}” is being sent again.")
    return redirect(f"{registration.get_absolute_url()}#mail")


@require_GET
def round_txt(request, pk, number):
    """A submitted round as plain text, in the layout of the published templates."""
    registration = _get_registration(request, pk)
    chosen = registration.rounds.filter(number=number).first()
    if chosen is None:
        raise Http404("No such round.")
    text = render_text(nid=chosen.nid or registration.display_nid, version=chosen.version,
                       date=chosen.date, values=chosen.values(), fast_track=chosen.fast_track)
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


def _carry_out(request, registration, target: str, form,
               act: Callable[[dict], object]) -> HttpResponse | None:
    """Do what a form posted from the request page asks: ``act(cleaned_data)`` calls
    the action. None once it is done; otherwise the page again with the form as it was
    sent and what is wrong at its field (or above the form), so nothing chosen or typed
    is lost: status 400 for an invalid form, the refusal's status when the workflow
    refuses."""
    status = 400
    if form.is_valid():
        try:
            act(form.cleaned_data)
            return None
        except workflow.Refused as problem:
            form.add_error(problem.field if problem.field in form.fields else None,
                           str(problem))
            status = problem.status
    return _page(request, registration, bound={"target": target, "form": form},
                 status=status)


@login_required
@require_POST
def transition(request, pk, name):
    registration = _get_registration(request, pk)
    move = workflow.TRANSITIONS.get(name)
    if move is None:
        raise Http404("No such action.")
    ends = registration.review_period_ends()
    form = TransitionForm(request.POST, transition=move,
                          period_ends=ends if ends and ends > timezone.now() else None)
    shown = _carry_out(request, registration, name, form, lambda data: (
        actions.registration_transition(registration=registration, transition=name,
                                        actor=request.user, comment=data["comment"],
                                        early_reason=data["early_reason"])))
    if shown is not None:
        return shown
    messages.success(request, move.done)
    return redirect(registration)


@login_required
@require_POST
@limited("comment", key="user")
def comment(request, pk):
    registration = _get_registration(request, pk)
    form = CommentForm(request.POST)
    shown = _carry_out(request, registration, "comment", form, lambda data: (
        actions.registration_comment(registration=registration, actor=request.user,
                                     body=data["body"], audience=data["audience"])))
    if shown is not None:
        return shown
    messages.success(request, "Comment posted.")
    return redirect(f"{registration.get_absolute_url()}#comments")


def _assigned_message(registration: RegistrationRequest, expert, actor) -> str:
    """What the person who assigned is told."""
    what = f"Request #{registration.pk} ({registration.display_nid})"
    if expert is None:
        return f"{what} is unassigned."
    if expert.pk == actor.pk:
        return f"{what} is assigned to you."
    away = ""
    if workflow.is_away(expert, today=timezone.localdate()):
        away = f" They are away until {expert.unavailable_until:%Y-%m-%d}."
    return f"{what} is assigned to {expert.display_name}; they are told by mail.{away}"


@login_required
@require_POST
def assign(request, pk):
    registration = _get_registration(request, pk)
    form = AssignForm(request.POST)
    expert = None
    if form.is_valid() and form.cleaned_data["expert"]:
        expert = get_user_model().objects.filter(pk=form.cleaned_data["expert"]).first()
    try:
        actions.registration_assign(registration=registration, expert=expert, actor=request.user)
    except workflow.Refused as exc:
        messages.error(request, str(exc))
        return _page(request, registration, status=exc.status)
    messages.success(request, _assigned_message(registration, expert, request.user))
    if request.POST.get("next") == "dashboard":
        return redirect("review:dashboard")
    return redirect(registration)


@login_required
@require_POST
def standardisation(request, pk):
    registration = _get_registration(request, pk)
    form = StandardisationForm(request.POST)
    shown = _carry_out(request, registration, "standardisation", form, lambda data: (
        actions.registration_set_standardisation(registration=registration, actor=request.user,
                                                 involved=data["involved"],
                                                 comment=data["comment"])))
    if shown is not None:
        return shown
    messages.success(request, "Standardisation is involved: approval goes to the IESG."
                     if form.cleaned_data["involved"] else "No standardisation involved.")
    return redirect(registration)


@require_GET
def public_review(request):
    # The same for every visitor, and changed only by transitions and public comments
    # (typed or from the list), which move the registry generation: cached like the
    # registry's pages.
    def build() -> dict:
        pending = (RegistrationRequest.objects.in_public_review()
                   .select_related("revises", "published_version").with_public_comments()
                   .order_by("review_started_at"))
        return {"pending": [(r, workflow.race_of(r)) for r in pending.with_race()]}

    return public_page(request, "review/public_review.html", build)


@login_required
@require_GET
def dashboard(request):
    if not workflow.can_see_dashboard(request.user):
        raise PermissionDenied("The dashboard is for designated experts and IANA staff.")
    mine = request.GET.get("mine") == "1"
    queue = RegistrationRequest.objects.dashboard_queue(
        assigned_to=request.user if mine else None)
    index = confusion_index()
    today = timezone.localdate()
    experts = experts_with_load()
    # The assignee marked away today, for each request assigned to one (else None).
    away = {e.pk: e for e in experts if workflow.is_away(e, today=today)}
    def row(r: RegistrationRequest) -> tuple:
        can_assign = workflow.can_assign(r, request.user)
        choices = ([e for e in experts if workflow.may_be_assigned(r, e, request.user)]
                   if can_assign else [])
        return (r, workflow.race_of(r), can_assign, choices, _registration_warnings(r, index),
                workflow.suggested_assignee(r, experts, today=today),
                away.get(r.assigned_expert_id))

    columns = [(State(state).label, state, [row(r) for r in rows])
               for state, rows in queue.items()]
    load = [(e, workflow.unavailability(e, today=today)) for e in experts]
    return render(request, "review/dashboard.html", {
        "columns": columns, "mine": mine, "now": timezone.now(),
        "experts": experts, "load": load,
        "can_set_availability": workflow.can_set_availability(request.user),
        "unassigned": RegistrationRequest.objects.unassigned().count(),
    })


@login_required
def availability(request):
    """A designated expert's own page: away until a day, the most open requests they
    take, and the requests assigned to them now."""
    if not workflow.can_set_availability(request.user):
        raise PermissionDenied("Availability is for designated experts.")
    today = timezone.localdate()
    expert = request.user
    initial = {"unavailable_until": expert.unavailable_until,
               "max_open_assignments": expert.max_open_assignments}
    form = AvailabilityForm(request.POST if request.method == "POST" else None,
                            initial=initial, today=today)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                account_actions.expert_set_availability(expert=expert, actor=expert,
                                                        **form.cleaned_data)
            except account_actions.AccountRefused as exc:
                form.add_error(None, str(exc))
                status = 403
            else:
                messages.success(request, "Your availability is saved." if form.has_changed()
                                 else "Nothing changed, so nothing was saved.")
                return redirect("review:availability")
    loaded = get_user_model().objects.with_load().get(pk=expert.pk)
    return render(request, "review/availability.html", {
        "form": form, "today": today,
        "open_assignments": workflow.open_assignments(loaded),
        "away": workflow.is_away(loaded, today=today),
        "takes_new": not workflow.unavailability(loaded, today=today),
        "assigned": RegistrationRequest.objects.open().filter(assigned_expert=expert)
        .select_related("revises", "published_version", "submitted_round")
        .order_by("last_activity_at"),
    }, status=status)


@require_safe
def stats_page(request):
    """/stats/: the registry's figures with their charts, tables and summaries; the
    same for every visitor and cached per generation, but for each expert's load,
    which only experts and IANA staff see (a per-visitor slot)."""
    def build() -> dict:
        figures = stats.public_figures()
        return {"figures": figures, "charts": stats.public_charts(figures),
                "slots": {"workload": {}}}

    return public_page(request, "review/stats.html", build)


@require_safe
def stats_json(request):
    """The figures of /stats/ as JSON: public ones cached per generation; experts and
    IANA staff also get each expert's load (not cached: it is not public)."""
    if workflow.can_see_workload(request.user):
        figures = stats.public_figures()
        figures["expert_load"] = stats.expert_load(timezone.localdate())
        return JsonResponse(figures)
    return public_document(request, lambda: JsonResponse(stats.public_figures()))


@login_required
@require_GET
def staff_queue(request):
    if not workflow.can_see_staff_queue(request.user):
        raise PermissionDenied("The queue is for IANA staff.")
    rows = list(RegistrationRequest.objects.staff_queue())
    ready = [(r, workflow.race_of(r), workflow.open_transitions(r, request.user))
             for r in rows if workflow.registers_from(r.state)]
    # Every other state the queue lists (its row's staff_next_step), in the table's order.
    waiting = [(meaning, [(r, workflow.race_of(r)) for r in rows if r.state == meaning.state])
               for meaning in workflow.STATES.values()
               if meaning.staff_queue and not workflow.registers_from(meaning.state)]
    return render(request, "review/staff_queue.html", {
        "ready": ready, "waiting": waiting,
        "recent": RegistrationRequest.objects.recently_registered(),
        "now": timezone.now(),
        "can_see_dashboard": workflow.can_see_dashboard(request.user),
    })


# What the live check reads (the OpenAPI document states the same limits).
NID_CHECK_MAX_CHARS = 100  # of the NID; the rest is not read
ORGANISATION_MAX_CHARS = 300
NID_CHECK_PARAMS = (Param("kind", choice(Namespace.Kind.values), default="formal",
                          empty_is_default=False),
                    Param("registration", positive_integer, empty_is_default=False))


@require_GET
@limited("nid_check")
def nid_check(request):
    """Live check of a proposed NID for the request form (sections 2.1, 5.1, 5.2)."""
    query = canonical_query(request, NID_CHECK_PARAMS)  # a bogus kind or request id: a 400
    nid = request.GET.get("nid", "")[:NID_CHECK_MAX_CHARS]
    kind = query["kind"]
    registered = Namespace.objects.by_nid(nid).values_list("nid", flat=True) if nid else []
    if kind == "informal":
        problems = check_informal_nid(nid, registered)
    else:
        problems = check_formal_nid(nid, registered)
    edited = query["registration"]
    proposing = RegistrationRequest.objects.proposing(nid)
    if edited:
        proposing = proposing.exclude(pk=int(edited))
    others = proposing.count() if plausible_text(nid, 64) else 0
    organisation = request.GET.get("organisation", "")[:ORGANISATION_MAX_CHARS]
    warnings = nid_warnings(
        nid, organisation=(organisation if plausible_text(organisation, ORGANISATION_MAX_CHARS)
                           else ""),
        registration_id=int(edited) if edited else None,
    ) if kind != "informal" and plausible_text(nid, 64) else []
    return JsonResponse({
        "nid": nid,
        "acceptable": not problems,
        "problems": [{"code": p.code, "message": str(p)} for p in problems],
        "warnings": [warning_json(w) for w in warnings],
        "other_open_requests": others,
    })
