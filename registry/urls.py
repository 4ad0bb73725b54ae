from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("registry.namespaces.urls")),
    path("requests/", include("registry.review.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
]

handler404 = "registry.namespaces.views.handler404"
