"""IANA staff pages for accounts and roles: find an account, recognize a standards
body, grant or end a role, correct a name, make someone the holder of a namespace.
Each save is an action with its event and reason; a refused form keeps what was typed
and shows the error at its field."""

from __future__ import annotations

import copy
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from registry.accounts import actions
from registry.accounts.forms import HolderForm, ProfileForm, ReasonForm
from registry.accounts.models import User
from registry.accounts.roles import ROLE_GROUPS, load_roles, role_label
from registry.namespaces.actions import RegistryError, namespace_update_record
from registry.review import workflow
from registry.review.models import RegistrationRequest

# The role's own name, first letter raised ("IANA staff" stays as it is written).
FILTERS = {"recognized": "Recognized standards bodies",
           **{r: r[0].upper() + r[1:] for r in ROLE_GROUPS}}


@login_required
def accounts(request: HttpRequest) -> HttpResponse:
    workflow.require_staff_pages(request.user)
    q = request.GET.get("q", "")[:200]
    show = request.GET.get("show", "")
    found = User.objects.search(q)
    if show == "recognized":
        found = found.recognized()
    elif show in ROLE_GROUPS:
        found = found.in_role(show)
    page = Paginator(found.order_by("email"), 50).get_page(request.GET.get("page"))
    load_roles(page)  # role_label asks each account's roles: one query for the page
    for account in page:
        account.role = role_label(account)
    return render(request, "accounts/accounts.html", {
        "page": page, "q": q, "show": show, "filters": FILTERS,
    })


def _forms(request: HttpRequest, account: User, which: str | None) -> dict[str, Any]:
    data = request.POST if request.method == "POST" else None
    held_roles = {g.name for g in account.groups.all()}
    return {
        "recognition": ReasonForm(data if which == "recognition" else None,
                                  prefix="recognition"),
        "roles": [(role, role in held_roles,
                   ReasonForm(data if which == f"role:{role}" else None,
                              prefix=f"role-{role.replace(' ', '-')}"))
                  for role in ROLE_GROUPS],
        # A copy: the form puts what was typed into its instance, and the page around
        # it names the account as it is stored until a change is saved.
        "profile": ProfileForm(data if which == "profile" else None,
                               instance=copy.copy(account), prefix="profile"),
        "holder": HolderForm(data if which == "holder" else None, prefix="holder"),
    }


def _save(request: HttpRequest, account: User, which: str, forms: dict[str, Any]) -> str | None:
    """Apply the posted form through its action; the success message, or None when the
    form (now carrying its errors) must be shown again."""
    actor = cast(User, request.user)  # login_required
    if which == "recognition" and forms["recognition"].is_valid():
        reason = forms["recognition"].cleaned_data["reason"]
        recognition = (actions.user_unrecognize if account.recognized_standards_body
                       else actions.user_recognize)
        account = recognition(user=account, reason=reason, actor=actor)
        return (f"{account.display_name} is now a recognized standards body: they may use the "
                "fast track." if account.recognized_standards_body
                else f"{account.display_name} is no longer a recognized standards body.")
    for role, held, form in forms["roles"]:
        if which == f"role:{role}" and form.is_valid():
            role_change = actions.role_revoke if held else actions.role_grant
            role_change(user=account, role=role, reason=form.cleaned_data["reason"], actor=actor)
            return (f"{account.display_name} is no longer {role}." if held
                    else f"{account.display_name} is now {role}.")
    profile = forms["profile"]
    if which == "profile" and profile.is_valid():
        changes = {name: profile.cleaned_data[name] for name in profile.changed_data
                   if name in actions.PROFILE_FIELDS}
        actions.user_update_profile(user=account, changes=changes,
                                    reason=profile.cleaned_data["reason"], actor=actor)
        return "Profile saved." if changes else "Nothing changed, so nothing was saved."
    holder = forms["holder"]
    if which == "holder" and holder.is_valid():
        namespace = holder.cleaned_data["nid"]
        namespace_update_record(namespace=namespace, changes={"holder": account},
                                reason=holder.cleaned_data["reason"], actor=actor)
        return f"{account.display_name} now holds {namespace.nid}."
    return None


def _form_of(which: str, forms: dict[str, Any]) -> Any:
    if which.startswith("role:"):
        return next((f for role, _, f in forms["roles"] if which == f"role:{role}"), None)
    return forms.get(which)


@login_required
def account(request: HttpRequest, pk: int) -> HttpResponse:
    workflow.require_staff_pages(request.user)
    account = get_object_or_404(User, pk=pk)
    which = request.POST.get("form", "") if request.method == "POST" else None
    forms = _forms(request, account, which)
    if which:
        try:
            done = _save(request, account, which, forms)
        except (actions.AccountRefused, RegistryError) as exc:
            form = _form_of(which, forms)
            if form is None:
                raise PermissionDenied(str(exc)) from exc
            field = getattr(exc, "field", None)  # the refusal's field, when it is this form's
            form.add_error(field if field in form.fields else None, str(exc))
        else:
            if done:
                messages.success(request, done)
                return redirect("accounts:account", account.pk)
    return render(request, "accounts/account.html", {
        "account": account, "role": role_label(account), **forms,
        "verified": actions.address_verified(account),
        "held": account.namespaces.order_by("nid"),
        # Their requests as the workflow lets staff see them: a draft stays private.
        "requests": RegistrationRequest.objects.of(account).visible_to(request.user)
        .select_related("revises", "published_version", "submitted_round")
        .order_by("-updated_at")[:50],
        "events": account.account_events.select_related("actor"),
    }, status=400 if which else 200)
