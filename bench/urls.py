"""The registry's URLs plus the benchmark's floor: a trivial view through the same
middleware, reachable only under bench/settings.py."""

from django.http import HttpResponse
from django.urls import include, path


def floor(request):
    return HttpResponse("ok", content_type="text/plain")


def visitor_floor(request):
    """The floor that also reads who is signed in: what any page for a visitor with a
    session pays before its own work (the session, the account)."""
    return HttpResponse("ok" if request.user.is_authenticated else "-", content_type="text/plain")


urlpatterns = [
    path("bench-floor/", floor),
    path("bench-floor/visitor/", visitor_floor),
    path("", include("registry.urls")),
]

handler404 = "registry.namespaces.views.handler404"
