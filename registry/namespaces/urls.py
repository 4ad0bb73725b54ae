from django.urls import path, re_path

from registry.namespaces import api, staff_views, views

app_name = "namespaces"

urlpatterns = [
    path("", views.registry_page, name="registry"),
    path("search/", views.search, name="search"),
    path("check/", views.check_page, name="check"),
    path("namespaces/<str:nid>/", views.detail, name="detail"),
    path("namespaces/<str:nid>/template.txt", views.template_txt, name="template-txt"),
    path("namespaces/<str:nid>/v/<int:number>/", views.version, name="version"),
    path("namespaces/<str:nid>/v/<int:number>/template.txt", views.template_txt,
         name="version-txt"),
    path("namespaces/<str:nid>/diff/", views.diff, name="diff"),
    path("namespaces/<str:nid>/history/", views.history, name="history"),
    path("iana/namespaces/", staff_views.find_namespace, name="staff-namespace-find"),
    path("iana/namespaces/<str:nid>/", staff_views.namespace_record, name="staff-namespace"),
    path("registry.xml", api.registry_xml_view, name="registry-xml"),
    path("registry.csv", api.registry_csv_view, name="registry-csv"),
    path("urn-namespaces-1.csv", api.formal_csv_view, name="formal-csv"),
    path("urn-namespaces-2.csv", api.informal_csv_view, name="informal-csv"),
    path("feed.atom", api.registry_feed, name="feed"),
    path("api/namespaces/", api.namespaces_list, name="api-list"),
    path("api/namespaces/<str:nid>/", api.namespace_detail, name="api-detail"),
    path("api/check", api.check_json, name="api-check"),
    path("api/equivalent", api.equivalent, name="api-equivalent"),
    path("profiles.json", api.profiles_json, name="profiles-json"),
    path("resolve/", views.resolve, name="resolve-query"),
    # Any character, line breaks too (<path:> stops at one, and the URLconf's 404 would
    # answer where the view says what is wrong with the URN, as the query form does).
    re_path(r"^resolve/(?P<urn>[\s\S]+)\Z", views.resolve, name="resolve"),
    path("api/schema", api.openapi_schema, name="api-schema"),
]
