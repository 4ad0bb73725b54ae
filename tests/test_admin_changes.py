"""The admin, as IANA staff use it (group permissions, not a superuser): every change
form that saves leaves an event row, and every admin action needs its permission."""

import datetime as dt

import lxml.html
import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission

from registry.accounts import actions
from registry.accounts.models import AccountEvent, User
from registry.accounts.roles import STAFF_GROUP
from registry.namespaces import xrefs
from registry.namespaces.actions import namespace_register
from registry.namespaces.models import Namespace, NamespaceEvent
from tests.factories import complete_values, make_registration, make_user
from tests.html import field_value, texts

# For every model whose admin change form can save: one edit, and the event it must leave.
EDITS = {
    Namespace: ({"registry_note": "Checked against the IANA page.",
                 "references": "RFC8141\nRFC Errata 3188"}, NamespaceEvent, "namespace"),
    User: ({"organisation": "Renamed Body", "recognized_standards_body": "on"},
           AccountEvent, "user"),
}


@pytest.fixture
def staff_client(client, staff):
    assert staff.is_staff and not staff.is_superuser
    client.force_login(staff)
    return client


@pytest.fixture
def objects(staff, registrant):
    namespace = namespace_register(kind="formal", nid="walkns", values=complete_values(),
                                   date=dt.date(2026, 11, 1), actor=staff)
    registration = make_registration(registrant, nid="walkreq")
    return {Namespace: namespace, User: registrant, "registration": registration}


def form_data(page, form_id):
    """What a browser would post from the change form: every field as rendered."""
    form = page.xpath(f"//form[@id='{form_id}']")[0]
    data = {}
    for element in form.xpath(".//input[@name] | .//textarea[@name] | .//select[@name]"):
        name, kind = element.get("name"), element.get("type", "")
        if element.tag == "textarea":
            data[name] = element.text or ""
        elif element.tag == "select":
            chosen = element.xpath(".//option[@selected]/@value")
            data[name] = chosen[0] if chosen else ""
        elif kind in ("checkbox", "radio"):
            if element.get("checked") is not None:
                data.setdefault(name, []).append(element.get("value", "on"))
        elif kind != "submit":
            data[name] = element.get("value", "")
    return data


def test_staff_reach_the_admin_without_being_superusers(staff_client):
    index = staff_client.get("/admin/")
    assert index.status_code == 200
    links = lxml.html.fromstring(index.content).xpath("//a/@href")
    assert "/admin/namespaces/namespace/" in links and "/admin/accounts/user/" in links


def test_staff_read_every_admin_list_the_registry_keeps(staff_client):
    """The mail logs, IANA's people and the registry's own events included (the README
    sends staff there to read and re-send mail); a superuser is not needed for any."""
    lists = [f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
             for model in admin.site._registry
             if model._meta.app_label in ("accounts", "namespaces", "review")]
    assert len(lists) >= 10
    assert [url for url in lists if staff_client.get(url).status_code != 200] == []


def test_every_change_form_staff_can_save_leaves_an_event(staff_client, staff, objects):
    editable = []
    for model, model_admin in admin.site._registry.items():
        obj = objects.get(model) or model.objects.first()
        if obj is None or not staff.has_perm(f"{model._meta.app_label}.change_"
                                             f"{model._meta.model_name}"):
            continue
        if not model_admin.has_change_permission(_request(staff), obj):
            continue
        editable.append(model)
        assert model in EDITS, f"{model.__name__}'s admin saves, but no test checks its event"
        edit, event_model, link = EDITS[model]
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/{obj.pk}/change/"
        form_id = f"{model._meta.model_name}_form"
        data = {**form_data(lxml.html.fromstring(staff_client.get(url).content), form_id),
                **edit}
        before = event_model.objects.filter(**{link: obj}).count()

        refused = staff_client.post(url, {**data, "reason": ""})  # no reason: kept, at field
        assert refused.status_code == 200
        page = lxml.html.fromstring(refused.content)
        assert page.xpath("//*[contains(@class, 'field-reason')]//ul[@class='errorlist']")
        assert event_model.objects.filter(**{link: obj}).count() == before
        first_key = next(iter(edit))
        assert field_value(page, first_key) == edit[first_key]

        saved = staff_client.post(url, {**data, "reason": "Ticket 8141."})
        assert saved.status_code == 302, saved.content.decode()[:2000]
        events = event_model.objects.filter(**{link: obj}).order_by("-id")
        assert events.count() > before
        assert all(getattr(e, "actor", None) == staff for e in events[:events.count() - before])
    assert set(editable) == set(EDITS)


def test_saved_changes_are_the_ones_asked_for(staff_client, objects):
    namespace = objects[Namespace]
    url = f"/admin/namespaces/namespace/{namespace.pk}/change/"
    data = form_data(lxml.html.fromstring(staff_client.get(url).content), "namespace_form")
    staff_client.post(url, {**data, "references": "RFC8141\nRFC Errata 3188",
                            "reason": "Errata."})
    namespace.refresh_from_db()
    assert [xrefs.label(r) for r in namespace.references] == ["RFC8141", "RFC Errata 3188"]
    event = NamespaceEvent.objects.get(namespace=namespace, kind="record_changed")
    assert set(event.changes) == {"references"} and event.comment == "Errata."


def test_requests_and_history_are_read_only_in_the_admin(staff_client, objects):
    registration = objects["registration"]
    page = staff_client.get(f"/admin/review/registrationrequest/{registration.pk}/change/")
    assert page.status_code == 200
    assert not lxml.html.fromstring(page.content).xpath("//input[@type='submit']")
    response = staff_client.post(f"/admin/review/registrationrequest/{registration.pk}/change/",
                                 {"proposed_nid": "hijack"})
    assert response.status_code == 403


def test_deprecate_needs_the_status_permission(client, staff, objects):
    viewer = make_user("viewer@example.org")
    viewer.is_staff = True
    viewer.save(update_fields=["is_staff"])
    viewer.user_permissions.add(Permission.objects.get(codename="view_namespace"))
    client.force_login(viewer)
    namespace = objects[Namespace]
    listing = client.get("/admin/namespaces/namespace/")
    options = lxml.html.fromstring(listing.content).xpath("//select[@name='action']/option/@value")
    assert "deprecate" not in options and "reinstate" not in options
    client.post("/admin/namespaces/namespace/", {
        "action": "deprecate", "_selected_action": [namespace.pk], "apply": "1",
        "comment": "Gone."})
    namespace.refresh_from_db()
    assert namespace.status == "active"
    assert not NamespaceEvent.objects.filter(kind="status_changed").exists()


def test_recognize_action_needs_its_permission_and_a_reason(client, staff, objects):
    body = make_user("body@example.org")
    viewer = make_user("viewer@example.org")
    viewer.is_staff = True
    viewer.save(update_fields=["is_staff"])
    viewer.user_permissions.add(Permission.objects.get(codename="view_user"))
    client.force_login(viewer)
    client.post("/admin/accounts/user/", {"action": "recognize", "_selected_action": [body.pk],
                                          "apply": "1", "reason": "Because."})
    body.refresh_from_db()
    assert not body.recognized_standards_body
    client.force_login(staff)
    form = client.post("/admin/accounts/user/", {"action": "recognize",
                                                 "_selected_action": [body.pk]})
    assert lxml.html.fromstring(form.content).xpath("//textarea[@name='reason']")
    client.post("/admin/accounts/user/", {"action": "recognize", "_selected_action": [body.pk],
                                          "apply": "1", "reason": "IESG, 2026-11-20."})
    body.refresh_from_db()
    assert body.recognized_standards_body
    event = AccountEvent.objects.get(user=body, kind="recognized")
    assert (event.actor, event.reason) == (staff, "IESG, 2026-11-20.")


def test_deprecate_from_the_admin_with_a_pointer(staff_client, staff, objects):
    namespace = objects[Namespace]
    successor = namespace_register(kind="formal", nid="walknext", values=complete_values(),
                                   date=dt.date(2026, 11, 2), actor=staff)
    staff_client.post("/admin/namespaces/namespace/", {
        "action": "deprecate", "_selected_action": [namespace.pk], "apply": "1",
        "comment": "Superseded.", "replaced_by": "WalkNext"})
    namespace.refresh_from_db()
    assert (namespace.status, namespace.replaced_by) == ("deprecated", successor)


def test_admin_cannot_set_passwords_add_or_delete_people(staff_client, objects):
    user = objects[User]
    assert staff_client.get(f"/admin/accounts/user/{user.pk}/password/").status_code == 403
    assert staff_client.get("/admin/accounts/user/add/").status_code == 403
    assert staff_client.get(f"/admin/accounts/user/{user.pk}/delete/").status_code == 403


def _request(user):
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def test_refusals_in_the_admin_are_at_the_field_not_a_crash(staff_client, staff):
    from allauth.account.models import EmailAddress

    url = f"/admin/accounts/user/{staff.pk}/change/"
    data = form_data(lxml.html.fromstring(staff_client.get(url).content), "user_form")
    data.pop("is_active", None)  # unticked: deactivate myself
    data["roles"] = []  # and leave IANA staff
    response = staff_client.post(url, {**data, "reason": "Leaving."})
    assert response.status_code == 200
    page = lxml.html.fromstring(response.content)
    assert page.xpath("//*[contains(@class, 'field-is_active')]//ul[@class='errorlist']")
    assert page.xpath("//*[contains(@class, 'field-roles')]//ul[@class='errorlist']")
    newcomer = make_user("new@body.example")
    EmailAddress.objects.filter(user=newcomer).update(verified=False)
    url = f"/admin/accounts/user/{newcomer.pk}/change/"
    data = form_data(lxml.html.fromstring(staff_client.get(url).content), "user_form")
    response = staff_client.post(url, {**data, "recognized_standards_body": "on",
                                       "reason": "IESG."})
    assert response.status_code == 200
    assert "not verified yet" in lxml.html.fromstring(response.content).xpath(
        "string(//*[contains(@class, 'field-recognized_standards_body')])")
    assert not AccountEvent.objects.filter(user=newcomer, kind="recognized").exists()


def _unverified():
    from allauth.account.models import EmailAddress

    newcomer = make_user("new@body.example")
    EmailAddress.objects.filter(user=newcomer).update(verified=False)
    return newcomer


# Each account change the policy refuses: whose account, the admin form's field (and
# the value posted for it), and the action a staff page or a command would call.
REFUSED = {
    "deactivating oneself": (
        lambda staff: staff, "is_active", None,
        lambda user, staff: actions.user_update_profile(
            user=user, changes={"is_active": False}, reason="Leaving.", actor=staff)),
    "ending one's own staff role": (
        lambda staff: staff, "roles", [],
        lambda user, staff: actions.role_revoke(user=user, role=STAFF_GROUP,
                                                reason="Leaving.", actor=staff)),
    "recognizing an unverified address": (
        lambda staff: _unverified(), "recognized_standards_body", "on",
        lambda user, staff: actions.user_recognize(user=user, reason="IESG.", actor=staff)),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_the_admin_refuses_an_account_change_as_the_action_does(staff_client, staff, case):
    """One answer (actions.account_change_refusal): the admin's account form shows at
    its field the very words the action raises, and saves nothing."""
    whose, field, posted, act = REFUSED[case]
    user = whose(staff)
    with pytest.raises(actions.AccountRefused) as refused:
        act(user, staff)
    assert refused.value.field == field
    url = f"/admin/accounts/user/{user.pk}/change/"
    data = form_data(lxml.html.fromstring(staff_client.get(url).content), "user_form")
    data.pop(field, None)
    if posted is not None:
        data[field] = posted
    before = AccountEvent.objects.filter(user=user).count()
    response = staff_client.post(url, {**data, "reason": "Ticket 8141."})
    assert response.status_code == 200
    shown = texts(lxml.html.fromstring(response.content),
                  f"//*[contains(@class, 'field-{field}')]//ul[@class='errorlist']/li")
    assert shown == [str(refused.value)]
    assert AccountEvent.objects.filter(user=user).count() == before


def test_a_superuser_without_the_staff_role_reads_the_registry_in_the_admin_and_never_writes(
        client, objects):
    """The registry's writes are IANA staff's (workflow.can_keep_registry): the admin
    asks the same rule, so a superuser outside the role gets the record to read, no save
    button and no status actions, and a post changes nothing (403, not a 500)."""
    namespace = objects[Namespace]
    operator = User.objects.create_superuser(email="operator@example.org", password=None)
    client.force_login(operator)
    url = f"/admin/namespaces/namespace/{namespace.pk}/change/"
    page = lxml.html.fromstring(client.get(url).content)
    assert not page.xpath("//input[@name='_save']")
    assert not page.xpath("//textarea[@name='registry_note']")
    changelist = lxml.html.fromstring(client.get("/admin/namespaces/namespace/").content)
    assert not changelist.xpath("//select[@name='action']/option[@value='deprecate']")
    response = client.post(url, {"registry_note": "Changed by the operator.", "reason": "Why."})
    assert response.status_code == 403
    namespace.refresh_from_db()
    assert namespace.registry_note != "Changed by the operator."
    assert not NamespaceEvent.objects.filter(namespace=namespace, actor=operator).exists()
