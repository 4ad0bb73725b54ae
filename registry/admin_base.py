"""What the registry's admin pages share.

History, requests, mail and IANA's side of the registry are read in the admin,
never written there (``ReadOnlyAdmin``, ``ReadOnlyInline``). The rows staff may
change there, namespaces and accounts, come into being elsewhere (the review
workflow, signing up) and are never deleted (``NoAddNoDeleteMixin``); their
changes go through the apps' actions, each with a reason kept in the history
(``reason_action``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

__all__ = ["NoAddNoDeleteMixin", "ReadOnlyAdmin", "ReadOnlyInline", "ReadOnlyMixin",
           "reason_action"]


class NoAddNoDeleteMixin:
    """Rows the admin neither adds nor deletes: they are made by the workflow, a
    command or their owner, and their history refers to them for good."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyMixin(NoAddNoDeleteMixin):
    """Rows the admin only shows."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """A model the admin only shows; ``readonly_fields`` names what its page shows."""


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    """The rows of a history (rounds, events, comments, mail) under the row they belong
    to: every one of ``fields`` shown, none editable."""

    extra = 0
    show_change_link = True

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields or ()


def reason_page(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet,
                form: forms.Form, title: str, intro: str) -> HttpResponse:
    """The intermediate page of an admin action that asks for a reason."""
    return render(request, "admin/reason_action.html", {
        **modeladmin.admin_site.each_context(request), "title": title, "form": form,
        "objects": queryset, "action": request.POST.get("action"), "intro": intro,
        "opts": modeladmin.model._meta,
    })


def reason_action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet, *,
                  form_class: type[forms.Form], title: str, intro: str,
                  change: Callable[[Any, dict[str, Any]], object],
                  refused: type[Exception], label: Callable[[Any], str],
                  done: Callable[[int], str]) -> HttpResponse:
    """An admin action that asks for a reason: the page with ``form_class`` until it is
    sent valid, then ``change(row, cleaned_data)`` (an action, which keeps the reason in
    the row's history) for each selected row. A row the action refuses (``refused``) is
    named with ``label(row)`` and the reason; the others are counted in ``done(count)``."""
    form = form_class(request.POST if "apply" in request.POST else None)
    if not (form.is_bound and form.is_valid()):
        return reason_page(modeladmin, request, queryset, form, title, intro)
    count = 0
    for row in queryset:
        try:
            change(row, form.cleaned_data)
            count += 1
        except refused as exc:
            modeladmin.message_user(request, f"{label(row)}: {exc}", messages.ERROR)
    if count:
        modeladmin.message_user(request, done(count))
    return redirect(request.get_full_path())
