"""No query per row: every list page makes the same number of queries with 3 rows
as with 30, and a public page makes at most 5 even when nothing is cached."""

import datetime as dt

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.namespaces.actions import namespace_register, namespace_set_status, version_publish
from registry.namespaces.export_build import build_current_exports
from registry.namespaces.export_files import EXPORTS
from registry.namespaces.models import ExportGeneration
from registry.namespaces.public_cache import local_store
from tests.factories import approve, complete_values, make_registration

PUBLIC_PAGES = [
    "/", "/?letter=w&sort=-date&status=active", "/search/?q=widget", "/search/?q=words",
    "/namespaces/widget000/", "/namespaces/widget000/v/1/", "/namespaces/widget000/history/",
    "/namespaces/widget000/diff/?a=1&b=2", "/requests/review/", "/api/namespaces/",
    "/namespaces/registered000/", "/namespaces/registered001/v/1/",  # with a review record
    "/api/namespaces/widget000/", "/feed.atom", "/registry.csv", "/registry.xml",
    "/urn-namespaces-1.csv", "/urn-namespaces-2.csv",
]
# Every page and API response makes at most 5.
COLD_LIMIT = 5
# The whole-registry exports are built once per generation by a worker right after the
# commit (export_build.build_current_exports): the lock, the generation (the snapshot's,
# the frame's last change), the stored generations, metadata, experts (the expert
# accounts too when IANA's list of a sub-registry is empty), people, then per
# sub-registry and chunk of 2,000 records the (id, stamp) pairs in order and the records
# the previous generation does not have; the new generation stored (its row, its pieces)
# and the old ones deleted (a constant three statements): never a query per row. A
# request for an export then reads the generation and copies the file it needs.
EXPORT_PATHS = {f"/{name}" for name in EXPORTS}
EXPORT_BUILD_LIMIT = 24
PRIVATE_PAGES = [
    ("registrant", "/requests/"),
    ("expert", "/requests/dashboard/"),
    ("staff", "/requests/iana/"),
    ("admin", "/admin/namespaces/namespace/"),
    ("admin", "/admin/namespaces/templateversion/"),
    ("admin", "request changelist"),
    ("admin", "/admin/accounts/user/"),
]


def grow(size: int, *, staff, registrant, expert) -> None:
    """Namespaces with versions and events, and requests in every queue, up to ``size``."""
    from registry.namespaces.models import Namespace

    have = Namespace.objects.filter(nid__startswith="widget").count()
    for i in range(have, size):
        namespace = namespace_register(
            kind="formal", nid=f"widget{i:03d}", date=dt.date(2026, 1, 1), actor=staff,
            holder=registrant,
            values=complete_values(purpose="Many words.", documentation=f"RFC {i + 1}"))
        version_publish(namespace=namespace, date=dt.date(2026, 2, 1), actor=staff,
                        values=complete_values(purpose="More words.", revision_information="v2"))
        if i % 2:
            namespace_set_status(namespace=namespace, status="deprecated", comment="Replaced.",
                                 actor=staff)
        make_registration(registrant, nid=f"pending{i:03d}")
        approve(make_registration(registrant, nid=f"approved{i:03d}"), expert)
        approve(make_registration(registrant, nid=f"registered{i:03d}"), expert, staff,
                register=True)


def cold_queries(client, path: str) -> int:
    cache.clear()
    local_store.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200, path
    return len(queries)


@pytest.fixture
def people(db, staff, registrant, expert):
    from tests.factories import make_user

    admin = make_user("admin@example.org")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    return {"staff": staff, "registrant": registrant, "expert": expert, "admin": admin}


def request_changelist() -> str:
    from django.urls import reverse

    from registry.review import models as review_models

    model = getattr(review_models, "RegistrationRequest", None) or review_models.Request
    return reverse(f"admin:review_{model._meta.model_name}_changelist")


def test_no_page_makes_a_query_per_row(client, people):
    """Once with 2 rows of everything, once with 12: the same count on every page,
    and at most 5 for a public page rendered from nothing."""
    def measure() -> dict:
        counts = {}
        ExportGeneration.objects.all().delete()  # from scratch each time: every record
        with CaptureQueriesContext(connection) as built:
            build_current_exports()
        counts["the exports' build"] = len(built)
        for path in PUBLIC_PAGES:
            client.logout()
            counts[path] = cold_queries(client, path)
        for who, path in PRIVATE_PAGES:
            path = request_changelist() if path == "request changelist" else path
            client.force_login(people[who])
            counts[(who, path)] = cold_queries(client, path)
        return counts

    grown = {k: people[k] for k in ("staff", "registrant", "expert")}
    grow(2, **grown)
    few = measure()
    grow(12, **grown)
    many = measure()
    assert many == few
    assert set(PUBLIC_PAGES) >= EXPORT_PATHS
    assert {path: n for path, n in many.items()
            if path in PUBLIC_PAGES and n > COLD_LIMIT} == {}
    assert many["the exports' build"] <= EXPORT_BUILD_LIMIT
