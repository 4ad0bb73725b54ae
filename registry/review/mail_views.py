"""The staff quarantine: mail nobody could be credited with (held, about no request,
unreadable or past the parser's bounds), where IANA staff read it and attach it to
a request by hand (``actions.inbound_message_attach``, which writes the event).
Who may is ``workflow.can_handle_quarantine``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from registry.review import actions, workflow
from registry.review.forms import AttachMailForm
from registry.review.models import InboundMessage, RegistrationRequest

PAGE_SIZE = 25


def _staff_only(request) -> None:
    if not workflow.can_handle_quarantine(request.user):
        raise PermissionDenied("The mail quarantine is for IANA staff.")


@login_required
@require_GET
def quarantine(request) -> HttpResponse:
    _staff_only(request)
    return _page(request)


def _page(request, *, bound: AttachMailForm | None = None, bound_pk: int | None = None,
          status: int = 200) -> HttpResponse:
    paginator = Paginator(InboundMessage.objects.quarantine(), PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    rows = [(message, bound if message.pk == bound_pk and bound is not None
             else AttachMailForm(initial={"registration": message.registration_id or None},
                                 prefix=f"m{message.pk}"))
            for message in page.object_list]
    return render(request, "review/quarantine.html", {
        "rows": rows, "page": page, "total": paginator.count,
    }, status=status)


@login_required
@require_POST
def attach(request, message_pk: int) -> HttpResponse:
    _staff_only(request)
    message = get_object_or_404(InboundMessage.objects.defer("raw"), pk=message_pk)
    form = AttachMailForm(request.POST, prefix=f"m{message.pk}")
    if not form.is_valid():
        return _page(request, bound=form, bound_pk=message.pk, status=400)
    # A request staff may not see (another's draft) is answered as one that does not exist.
    target = (RegistrationRequest.objects.visible_to(request.user)
              .filter(pk=form.cleaned_data["registration"]).first())
    if target is None:
        form.add_error("registration", f"There is no request #{form.cleaned_data['registration']}.")
        return _page(request, bound=form, bound_pk=message.pk, status=400)
    try:
        actions.inbound_message_attach(message=message, registration=target,
                                       audience=form.cleaned_data["audience"],
                                       actor=request.user)
    except workflow.Refused as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _page(request, bound=form, bound_pk=message.pk, status=409)
    messages.success(request, f"The message is attached to request #{target.pk}, credited to "
                              "nobody (sender not verified).")
    return redirect(reverse("review:request", args=[target.pk]) + "#comments")


@login_required
@require_GET
def raw_message(request, message_pk: int) -> HttpResponse:
    """The message exactly as received, as text, for staff (never rendered as HTML);
    one that became a comment only to those who may read that comment (an expert's
    internal answer by mail is the experts')."""
    _staff_only(request)
    message = get_object_or_404(InboundMessage.objects.select_related("comment__registration"),
                                pk=message_pk)
    if not workflow.can_read_message(message, request.user):
        raise Http404("No such message.")
    response = HttpResponse(bytes(message.raw), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="message-{message.pk}.eml"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
