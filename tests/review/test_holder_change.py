"""A holder change hands over a namespace, never its registrant's private contact: the
new holder's revision starts from their own account, the history names the change,
the Reference column names the new holder, and the old holder is offered nothing
they cannot do. Holders, revisions and the private contact cross here."""

import pytest
from django.urls import reverse

from registry.namespaces.actions import namespace_update_record
from registry.namespaces.models import Namespace, NamespaceEvent
from registry.namespaces.template import PRIVATE_FIELDS
from registry.review import actions
from registry.review.models import OutboundMessage
from tests.factories import approve, make_registration, make_user
from tests.html import find, page, text

PRIVATE = {"private_contact_name": "Priya Personal",
           "private_contact_email": "priya@home.example",
           "private_contact_phone": "+1 555 0199", "private_contact_postal": "9 Home Lane"}


@pytest.fixture
def handed_over(registrant, expert, staff):
    """A namespace whose registrant kept a private contact, handed to another person."""
    registration = make_registration(registrant, nid="handover", contact_name="URN desk",
                                     documentation="https://archive.example/spec", **PRIVATE)
    approve(registration, expert, staff, register=True)
    namespace = Namespace.objects.by_nid("handover").get()
    new_holder = make_user("newholder@example.org", organisation="Successor Institute")
    namespace = namespace_update_record(namespace=namespace, changes={"holder": new_holder},
                                        reason="The archive passed to its successor.",
                                        actor=staff)
    return namespace, new_holder


def _describe_revision(revision, registrant):
    """A revision's draft with what it changes written in (a revision must say so)."""
    return actions.registration_update(
        registration=revision, actor=registrant, edit_version=revision.edit_version,
        kind=revision.kind, proposed_nid="", fast_track=False,
        values={**revision.values(), "revision_information": "Adds a mirror."})


def _submitted_revision(namespace, registrant):
    revision = _describe_revision(
        actions.registration_create(actor=registrant, revises=namespace), registrant)
    return actions.registration_transition(registration=revision, transition="submit",
                                           actor=registrant)


def test_the_new_holders_revision_carries_none_of_the_old_private_contact(
        client, handed_over, expert, staff):
    namespace, new_holder = handed_over
    draft = actions.registration_create(actor=new_holder, revises=namespace)
    assert {name: getattr(draft, name) for name in PRIVATE_FIELDS} == {
        "private_contact_name": new_holder.get_full_name(),
        "private_contact_email": new_holder.email,
        "private_contact_phone": "", "private_contact_postal": ""}
    client.force_login(new_holder)
    for url in (reverse("review:edit", args=[draft.pk]), draft.get_absolute_url()):
        body = client.get(url).content.decode()
        for value in PRIVATE.values():
            assert value not in body, (url, value)
    draft = actions.registration_update(
        registration=draft, actor=new_holder, edit_version=draft.edit_version,
        kind=draft.kind, proposed_nid="", fast_track=False,
        values={**draft.values(), "revision_information": "New holder."})
    draft = actions.registration_transition(registration=draft, transition="submit",
                                            actor=new_holder)
    approve(draft, expert, staff, register=True)
    version = namespace.current_version()
    assert version.number == 2
    assert not {getattr(version, name) for name in PRIVATE_FIELDS} & set(PRIVATE.values())


def test_the_registrant_who_gave_it_keeps_their_own_private_contact(registrant, expert, staff):
    registration = make_registration(registrant, nid="keepmine", **PRIVATE)
    approve(registration, expert, staff, register=True)
    draft = actions.registration_create(actor=registrant,
                                        revises=Namespace.objects.by_nid("keepmine").get())
    assert {name: getattr(draft, name) for name in PRIVATE_FIELDS} == PRIVATE


def test_the_history_names_a_holder_change_and_the_reference_the_new_holder(
        client, handed_over):
    namespace, new_holder = handed_over
    event = namespace.events.first()
    assert event.kind == NamespaceEvent.Kind.HOLDER_CHANGED
    assert namespace.references == [{"type": "uri", "data": "https://archive.example/spec",
                                     "text": "Successor Institute"}]
    doc = page(client.get(reverse("namespaces:history", args=["handover"])))
    assert "Holder changed" in text(doc)
    assert new_holder.email not in text(doc)
    registry = client.get(reverse("namespaces:registry-csv"))
    body = (b"".join(registry) if registry.streaming else registry.content).decode()
    line = next(row for row in body.splitlines() if "handover" in row)
    assert "Successor Institute" in line and "Example Archive Foundation" not in line


def test_the_old_holder_is_not_sent_to_a_button_they_do_not_have(client, handed_over,
                                                                   registrant):
    client.force_login(registrant)
    doc = page(client.get(reverse("namespaces:detail", args=["handover"])))
    assert not find(doc, "//button[normalize-space()='Start a new version']")
    response = client.get(reverse("review:new") + "?revises=handover", follow=True)
    said = text(page(response))
    assert "Start a new version" not in said
    assert "Only the holder of a namespace can revise it." in said


def test_both_holders_are_told_through_the_outbox_once_it_commits(
        registrant, expert, staff, mailoutbox, django_capture_on_commit_callbacks):
    registration = make_registration(registrant, nid="toldns", **PRIVATE)
    approve(registration, expert, staff, register=True)
    namespace = Namespace.objects.by_nid("toldns").get()
    new_holder = make_user("successor@example.org", organisation="Successor Institute")
    mailoutbox.clear()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        namespace_update_record(namespace=namespace, changes={"holder": new_holder},
                                reason="Transferred, ticket 99.", actor=staff)
    rows = OutboundMessage.objects.filter(registration__isnull=True, audience="holder")
    assert sorted(r.to[0] for r in rows) == sorted([new_holder.email, registrant.email])
    assert not mailoutbox and callbacks  # nothing leaves before the change commits
    for callback in callbacks:
        callback()
    assert sorted(m.recipients()[0] for m in mailoutbox) == sorted([new_holder.email,
                                                                     registrant.email])
    for message in mailoutbox:
        assert len(message.recipients()) == 1  # neither address shown to the other
        assert "Transferred, ticket 99." in message.body
        for value in PRIVATE.values():
            assert value not in message.body
    told = {m.recipients()[0]: m for m in mailoutbox}
    assert "no longer hold" in told[registrant.email].subject
    assert "now hold" in told[new_holder.email].subject


def test_drafts_filled_before_the_fix_lose_the_other_persons_private_contact(handed_over):
    from importlib import import_module

    from django.apps import apps

    from registry.review.models import RegistrationRequest

    namespace, new_holder = handed_over
    draft = actions.registration_create(actor=new_holder, revises=namespace)
    RegistrationRequest.objects.filter(pk=draft.pk).update(**PRIVATE)  # as before the fix
    migration = import_module("registry.review.migrations.0017_drop_inherited_private_contact")
    migration.drop_inherited(apps, None)
    draft.refresh_from_db()
    assert {name: getattr(draft, name) for name in PRIVATE_FIELDS} == {
        "private_contact_name": new_holder.get_full_name(),
        "private_contact_email": new_holder.email,
        "private_contact_phone": "", "private_contact_postal": ""}


def test_the_new_holder_is_not_asked_to_finish_the_previous_holders_revision(
        client, registrant, expert, staff):
    """A revision the previous holder started before the change is not the new holder's
    to finish or withdraw: the namespace page and the refusal say whose it is."""
    approve(make_registration(registrant, nid="midflight"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("midflight").get()
    started = _submitted_revision(namespace, registrant)
    successor = make_user("successor@example.org", organisation="Successor Institute")
    namespace = namespace_update_record(namespace=namespace, changes={"holder": successor},
                                        reason="Passed to its successor.", actor=staff)
    client.force_login(successor)
    said = text(page(client.get(namespace.get_absolute_url())).xpath(
        "//p[@data-revise-refusal]")[0])
    assert f"Request #{started.pk}" in said and "started by its previous holder" in said
    assert "finish or withdraw" not in said
    with pytest.raises(actions.TransitionRefused, match="started by its previous holder"):
        actions.registration_create(actor=successor, revises=namespace)


def test_a_revision_started_before_a_holder_change_is_not_published(
        client, registrant, expert, staff):
    """The previous holder's revision cannot become the new holder's next version (it
    would carry the previous holder's text and contact for IANA); staff close it."""
    approve(make_registration(registrant, nid="passedon"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("passedon").get()
    revision = _submitted_revision(namespace, registrant)
    revision = approve(revision, expert)
    namespace_update_record(namespace=namespace,
                            changes={"holder": make_user("heir@example.org")},
                            reason="Passed to its heir.", actor=staff)
    revision.refresh_from_db()
    with pytest.raises(actions.TransitionRefused, match="changed holder"):
        actions.registration_transition(registration=revision, transition="register",
                                        actor=staff)
    assert namespace.current_version().number == 1
    client.force_login(staff)
    doc = page(client.get(revision.get_absolute_url()))
    assert not find(doc, "//button[contains(., 'Complete the registration')]")
    said = text(find(doc, "//*[@id='holder-changed']")[0])
    assert "passedon changed holder after this revision was started" in said
    assert "Close it below" in said
    # Nor does it wait in the queue for ever: staff close it, with the reason.
    queue = page(client.get("/requests/iana/"))
    assert find(queue, f"//table[@id='ready']//a[@href='/requests/{revision.pk}/#do-close']")
    closed = actions.registration_transition(registration=revision, transition="close",
                                             actor=staff, comment="The namespace has a new "
                                             "holder; the heir will revise it.")
    assert closed.state == "closed"
    assert find(page(client.get(revision.get_absolute_url())), "//*[@id='holder-changed']") == []


def test_staff_are_told_a_holder_change_strands_the_open_revision(client, registrant, expert,
                                                                   staff):
    approve(make_registration(registrant, nid="forewarned"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("forewarned").get()
    revision = actions.registration_create(actor=registrant, revises=namespace)
    client.force_login(staff)
    url = reverse("namespaces:staff-namespace", args=["forewarned"])
    # A draft is its registrant's alone: staff are not told of it.
    assert find(page(client.get(url)), "//*[@id='open-revision']") == []
    revision = _describe_revision(revision, registrant)
    revision = actions.registration_transition(registration=revision, transition="submit",
                                               actor=registrant)
    said = text(find(page(client.get(url)), "//*[@id='open-revision']")[0])
    assert f"Request #{revision.pk}" in said and "If you change the holder" in said
    namespace_update_record(namespace=namespace, changes={"holder": make_user("x@example.org")},
                            reason="Handed over.", actor=staff)
    said = text(find(page(client.get(url)), "//*[@id='open-revision']")[0])
    assert "started by a previous holder" in said and "close it with a reason" in said


def test_a_previous_holders_draft_never_blocks_the_new_holder(client, registrant, expert, staff):
    """Nobody but its registrant can end a draft, and after a holder change it can never
    be submitted: it does not stop the new holder starting the next version, nor is it
    named to him."""
    approve(make_registration(registrant, nid="unblocked"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("unblocked").get()
    draft = actions.registration_create(actor=registrant, revises=namespace)
    successor = make_user("successor@example.org", organisation="Successor Institute")
    namespace = namespace_update_record(namespace=namespace, changes={"holder": successor},
                                        reason="Passed to its successor.", actor=staff)
    client.force_login(successor)
    doc = page(client.get(namespace.get_absolute_url()))
    assert find(doc, "//button[contains(., 'Start a new version')]")
    assert f"#{draft.pk}" not in text(find(doc, "//main")[0])
    mine = page(client.get(reverse("review:my-requests")))
    assert find(mine, "//button[contains(., 'start a new version')]")
    started = actions.registration_create(actor=successor, revises=namespace)
    assert started.registrant == successor
    with pytest.raises(actions.TransitionRefused, match="changed holder"):
        actions.registration_transition(registration=draft, transition="submit",
                                        actor=registrant)
