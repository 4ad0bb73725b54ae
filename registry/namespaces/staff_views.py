"""The IANA staff page of one namespace: the registry row (holder, references, note,
dates, template URL), deprecation with its replacement, reinstatement, and the
namespace's history. Every save is an action that writes a NamespaceEvent with the
reason; a refused form comes back with everything typed and the error at its field."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from registry.accounts.models import User
from registry.namespaces.actions import (
    ACTIVE,
    DEPRECATED,
    RecordInvalid,
    RegistryError,
    namespace_set_status,
    namespace_update_record,
)
from registry.namespaces.forms import DeprecateForm, RecordForm, ReinstateForm
from registry.namespaces.models import Namespace
from registry.namespaces.template import CONTACT_FIELDS, field_label
from registry.namespaces.views import namespace_or_404
from registry.review import workflow


@login_required
def find_namespace(request: HttpRequest) -> HttpResponse:
    """The staff queue's "registry record of" box: to the record, or back with a message."""
    workflow.require_staff_pages(request.user)
    nid = request.GET.get("nid", "").strip()[:64]
    namespace = Namespace.objects.by_nid(nid).first() if nid else None
    if namespace is None:
        messages.error(request, f'"{nid}" is not a registered NID.' if nid
                       else "Type the NID of a registered namespace.")
        return redirect("review:staff-queue")
    return redirect("namespaces:staff-namespace", namespace.nid)


def _carried_out(form: forms.BaseForm, write: Callable[[], object]) -> bool:
    """Whether a staff write went through; if not, its refusal is on ``form``, at the
    field it is about (or above the form)."""
    try:
        write()
    except RecordInvalid as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
    except RegistryError as exc:
        form.add_error(None, str(exc))
    else:
        return True
    return False


@login_required
def namespace_record(request: HttpRequest, nid: str) -> HttpResponse:
    workflow.require_staff_pages(request.user)
    namespace = namespace_or_404(nid)
    actor = cast(User, request.user)  # login_required
    which = request.POST.get("form") if request.method == "POST" else None
    record = RecordForm(request.POST if which == "record" else None, instance=namespace,
                        prefix="record")
    status_data = request.POST if which == "status" else None
    status: DeprecateForm | ReinstateForm = (
        DeprecateForm(status_data, namespace=namespace, prefix="status")
        if namespace.status == ACTIVE else ReinstateForm(status_data, prefix="status"))
    if which == "record" and record.is_valid():
        changes = record.changes()
        if _carried_out(record, lambda: namespace_update_record(
                namespace=namespace, changes=changes, reason=record.cleaned_data["reason"],
                actor=actor)):
            messages.success(request, "Registry record saved." if changes
                             else "Nothing changed, so nothing was saved.")
            return redirect("namespaces:staff-namespace", namespace.nid)
    if which == "status" and status.is_valid():
        target = DEPRECATED if namespace.status == ACTIVE else ACTIVE
        if _carried_out(status, lambda: namespace_set_status(
                namespace=namespace, status=target, comment=status.cleaned_data["comment"],
                replaced_by=status.cleaned_data.get("replaced_by", ""), actor=actor)):
            messages.success(request, f"{namespace.nid} is now {target}.")
            return redirect("namespaces:staff-namespace", namespace.nid)
    from registry.review.models import RegistrationRequest

    # A revision open now: a holder change strands it (it can then only be closed).
    # (a draft is its registrant's alone: staff are not told of one).
    open_revision = (RegistrationRequest.objects.open().filter(revises=namespace)
                     .select_related("revises").first())
    events = (namespace.events.select_related("actor", "version")
              .order_by("-created_at", "-id"))
    current = namespace.current_version()
    contact = [(field_label(c.published), getattr(current, c.published),
                getattr(current, c.private)) for c in CONTACT_FIELDS] if current else []
    return render(request, "namespaces/staff_namespace.html", {
        "namespace": namespace, "record": record, "status": status, "events": events,
        "current": current, "contact": contact, "open_revision": open_revision,
        "revision_stranded": open_revision is not None and workflow.holder_changed(open_revision),
        "replaces": Namespace.objects.filter(replaced_by=namespace).order_by("nid"),
    }, status=400 if which and request.method == "POST" else 200)
