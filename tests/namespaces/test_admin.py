"""The admin shows history read-only and changes status only through the action."""

import datetime as dt

import pytest

from registry.namespaces.actions import namespace_register
from registry.namespaces.models import Namespace, NamespaceEvent
from tests.factories import complete_values
from tests.html import field_errors, find, one, page, text, texts


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)  # IANA staff: is_staff with the group's permissions
    return client


@pytest.fixture
def namespace(staff):
    return namespace_register(kind="formal", nid="adminns", values=complete_values(),
                              date=dt.date(2026, 11, 1), actor=staff)


def test_namespace_and_versions_are_listed_and_readable(admin_client, namespace):
    changelist = page(admin_client.get("/admin/namespaces/namespace/"))
    assert "adminns" in texts(changelist, "//table[@id='result_list']//th[@class='field-nid']")
    response = admin_client.get(f"/admin/namespaces/namespace/{namespace.pk}/change/")
    assert response.status_code == 200
    record = page(response)  # the namespace's own fields: the page without its inlines
    for inline in find(record, "//*[contains(@class, 'inline-group')]"):
        inline.drop_tree()
    assert "Names archive records persistently." not in text(record)
    version = namespace.versions.get()
    assert admin_client.get(f"/admin/namespaces/templateversion/{version.pk}/change/"
                            ).status_code == 200


def test_versions_and_namespaces_cannot_be_deleted_or_added(admin_client, namespace):
    version = namespace.versions.get()
    assert admin_client.get(f"/admin/namespaces/templateversion/{version.pk}/delete/"
                            ).status_code == 403
    assert admin_client.get(f"/admin/namespaces/namespace/{namespace.pk}/delete/"
                            ).status_code == 403
    assert admin_client.get("/admin/namespaces/namespace/add/").status_code == 403


def test_deprecating_from_the_admin_writes_the_event(admin_client, namespace, staff):
    url = "/admin/namespaces/namespace/"
    form = admin_client.post(url, {"action": "deprecate", "_selected_action": [namespace.pk]})
    assert text(one(page(form), "//label[@for='id_comment']")) == "Why, and what to use instead:"
    admin_client.post(url, {"action": "deprecate", "_selected_action": [namespace.pk],
                            "apply": "1", "comment": "Superseded by urn:newns."})
    namespace.refresh_from_db()
    assert namespace.status == "deprecated"
    event = NamespaceEvent.objects.get(kind="status_changed")
    assert event.actor == staff and event.comment == "Superseded by urn:newns."
    assert Namespace.objects.count() == 1


def test_admin_forms_follow_the_text_policy(admin_client, namespace, registrant):
    response = admin_client.post(f"/admin/namespaces/namespace/{namespace.pk}/change/", {
        "registered_on": "2026-11-01", "references": '["RFC8141"]', "template_url": "",
        "template_date": "", "registry_note": "Note \u202eeton", "holder": "",
        "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0",
        "events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0"})
    assert response.status_code == 200  # the form again, with the reason at the field
    [error] = field_errors(page(response), "registry_note")
    assert "bidirectional control" in error
    namespace.refresh_from_db()
    assert namespace.registry_note == ""
    response = admin_client.post(f"/admin/accounts/user/{registrant.pk}/change/", {
        "email": registrant.email, "username": registrant.username, "first_name": "Pat",
        "last_name": "Example", "organisation": "Evil \u202egro.live",
        "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 200
    [error] = field_errors(page(response), "organisation")
    assert "bidirectional control" in error
    registrant.refresh_from_db()
    assert registrant.organisation == "Example Archive Foundation"
