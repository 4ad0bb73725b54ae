"""The registry's URLs plus the benchmark's floor: a trivial view through the same
middleware, reachable only under bench/settings.py."""

from django.http import HttpResponse
from django.urls import include, path


def floor(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("bench-floor/", floor),
    path("", include("registry.urls")),
]

handler404 = "registry.namespaces.views.handler404"
