from django.contrib import admin
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.urls import include, path

from registry import health
from registry.accounts import confirm
from registry.review import views as review_views
from registry.site_files import favicon

urlpatterns = [
    path("", include("registry.namespaces.urls")),
    path("api/nid-check", review_views.nid_check, name="nid-check"),
    path("requests/", include("registry.review.urls")),
    path("stats/", review_views.stats_page, name="stats"),
    path("stats.json", review_views.stats_json, name="stats-json"),
    # Before allauth's own: a confirmation link opened again says it is confirmed already.
    path("accounts/confirm-email/<str:key>/", confirm.confirm_email,
         name="account_confirm_email"),
    path("accounts/", include("allauth.urls")),
    path("iana/people/", include("registry.accounts.urls")),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("healthz/live", health.live, name="healthz-live"),
    path("healthz/ready", health.ready, name="healthz-ready"),
    path("favicon.ico", favicon, name="favicon"),
]
# Outside production (DEBUG) the source folders' static files are served by whatever
# serves the app, gunicorn too (dev.py start --services); production's are
# collectstatic's, from whitenoise (settings.py). In production this adds nothing.
urlpatterns += staticfiles_urlpatterns()

handler404 = "registry.namespaces.views.handler404"
handler500 = "registry.unavailable.server_error"
