"""The public cache: every writer moves the registry generation in its own
transaction, a change is visible at once, visitors get their own navigation on
the shared body, and exports are built once per generation with ETag and 304."""

import datetime as dt
import gzip
import threading
import time

import pytest
from django.db import transaction
from django.urls import reverse
from lxml import html as lxml_html

from registry.accounts.actions import user_update_profile
from registry.namespaces.actions import (
    namespace_import,
    namespace_register,
    namespace_set_status,
    namespace_update_record,
    person_sync,
    registry_changed,
    registry_metadata_set,
    version_publish,
)
from registry.namespaces.iana import Person, Record
from registry.namespaces.models import Namespace, RegistryGeneration
from registry.review import actions as review_actions
from tests.factories import approve, complete_values, make_registration
from tests.html import page, texts

NID_LINKS = '//a[contains(concat(" ", @class, " "), " nid ")]'


def generation() -> int:
    return RegistryGeneration.objects.get(pk=1).number


def register(nid, actor, **extra):
    return namespace_register(kind="formal", nid=nid, values=complete_values(**extra),
                              date=dt.date(2026, 1, 5), actor=actor)


def nids_on(client, path="/"):
    tree = lxml_html.fromstring(client.get(path).content)
    return [a.text_content() for a in tree.xpath(NID_LINKS)]


def test_every_writer_moves_the_generation(db, staff, registrant):
    moves = [
        lambda: register("movetest", staff),
        lambda: version_publish(namespace=Namespace.objects.by_nid("movetest").get(),
                                values=complete_values(revision_information="Second."),
                                date=dt.date(2026, 2, 1), actor=staff),
        lambda: namespace_set_status(namespace=Namespace.objects.by_nid("movetest").get(),
                                     status="deprecated", comment="Use x.", actor=staff),
        lambda: namespace_update_record(namespace=Namespace.objects.by_nid("movetest").get(),
                                        changes={"registry_note": "Edited."},
                                        reason="A note for readers.", actor=staff),
        lambda: namespace_import(record=Record(kind="formal", name="imported1",
                                               references=[{"type": "rfc", "data": "rfc1"}])),
        lambda: person_sync(person=Person(person_id="New_Person", name="New Person")),
        lambda: registry_metadata_set(key="formal", experts="Someone New"),
        lambda: make_registration(registrant, nid="viareview"),  # a transition: in review
        lambda: user_update_profile(user=registrant, changes={"last_name": "Corrected"},
                                    reason="A typo.", actor=staff),  # named by a comment
    ]
    for move in moves:
        before = generation()
        move()
        assert generation() > before


def test_a_refused_or_rolled_back_change_leaves_the_generation(db, staff):
    before = generation()
    with pytest.raises(RuntimeError), transaction.atomic():
        register("rolledback", staff)
        raise RuntimeError("the caller fails after the action")
    assert generation() == before
    assert not Namespace.objects.by_nid("rolledback").exists()


def test_the_generation_moves_only_inside_a_transaction(transactional_db):
    with pytest.raises(RuntimeError, match="transaction"):
        registry_changed()


def test_a_change_is_visible_on_the_next_request(client, registry, staff):
    assert "fresh" not in nids_on(client)
    assert client.get("/search/?q=fresh").status_code == 200
    register("fresh", staff)
    assert "fresh" in nids_on(client)
    assert "fresh" in nids_on(client, "/search/?q=fresh")
    namespace_set_status(namespace=Namespace.objects.by_nid("fresh").get(), status="deprecated",
                         comment="Use isbn.", actor=staff)
    tree = lxml_html.fromstring(client.get("/?status=deprecated").content)
    table = tree.xpath('//*[@id="formal-table"]')[0]
    assert [a.text_content() for a in table.xpath("." + NID_LINKS)] == ["fresh"]


def test_pages_are_built_once_per_generation(client, registry, django_assert_max_num_queries):
    client.get("/namespaces/isbn/")
    with django_assert_max_num_queries(1):  # the generation, nothing else
        assert client.get("/namespaces/isbn/").status_code == 200


def test_signed_in_visitors_get_their_own_navigation_on_the_cached_body(
        client, registry, registrant):
    anonymous = lxml_html.fromstring(client.get("/").content)
    assert anonymous.xpath("//nav//a[@href='/accounts/login/']")
    client.force_login(registrant)
    signed_in = lxml_html.fromstring(client.get("/").content)
    assert not signed_in.xpath("//nav//a[@href='/accounts/login/']")
    assert signed_in.xpath("//nav//a[@href='/accounts/logout/']")
    assert ([a.text_content() for a in signed_in.xpath(NID_LINKS)]
            == [a.text_content() for a in anonymous.xpath(NID_LINKS)])


def test_only_the_holder_sees_the_new_version_button(client, staff, registrant,
                                                     other_registrant):
    namespace_register(kind="formal", nid="heldns", values=complete_values(registrant),
                       date=dt.date(2026, 1, 5), actor=staff, holder=registrant)

    def buttons():
        tree = lxml_html.fromstring(client.get("/namespaces/heldns/").content)
        return tree.xpath("//form[@action='/requests/new/']//input[@name='revises']")

    def staff_links():
        tree = lxml_html.fromstring(client.get("/namespaces/heldns/").content)
        record = reverse("namespaces:staff-namespace", args=["heldns"])
        return tree.xpath(f"//main//a[@href='{record}']")

    assert not buttons() and not staff_links()
    client.force_login(other_registrant)
    assert not buttons() and not staff_links()
    client.force_login(registrant)
    assert [b.get("value") for b in buttons()] == ["heldns"]
    token = lxml_html.fromstring(client.get("/namespaces/heldns/").content).xpath(
        "//form[@action='/requests/new/']//input[@name='csrfmiddlewaretoken']")
    assert token and token[0].get("value")
    assert not staff_links()
    client.force_login(staff)
    assert staff_links() and not buttons()


def test_the_search_box_keeps_the_query_on_a_cached_page(client, registry):
    for _ in range(2):
        tree = lxml_html.fromstring(client.get("/search/?q=isbn").content)
        assert tree.xpath("//nav//input[@name='q']")[0].get("value") == "isbn"


def test_messages_reach_the_visitor_through_a_cached_page(client, registry, registrant):
    client.force_login(registrant)
    response = client.get("/requests/new/?revises=isbn", follow=True)
    tree = lxml_html.fromstring(response.content)
    alert = tree.xpath('//main//div[contains(@class, "alert")]')[0]
    # not the holder of isbn: told why, not pointed to a button they do not have
    assert "Only the holder of a namespace can revise it." in alert.text_content()


def test_the_public_review_list_follows_transitions(client, registrant, expert, staff):
    registration = make_registration(registrant, nid="reviewme")
    tree = lxml_html.fromstring(client.get("/requests/review/").content)
    assert [a.text_content() for a in tree.xpath('//*[@id="pending"]' + NID_LINKS)] == ["reviewme"]
    review_actions.registration_transition(registration=registration, transition="approve",
                                           actor=expert,
                                           comment="Fine.", early_reason="Test.")
    tree = lxml_html.fromstring(client.get("/requests/review/").content)
    assert not tree.xpath('//*[@id="pending"]' + NID_LINKS)


@pytest.mark.parametrize("path", ["/registry.csv", "/registry.xml", "/feed.atom",
                                  "/api/namespaces/", "/api/namespaces/isbn/",
                                  "/namespaces/isbn/template.txt"])
def test_exports_are_compressed_and_conditional(client, registry, path):
    plain = client.get(path)
    zipped = client.get(path, HTTP_ACCEPT_ENCODING="gzip, br")
    assert plain.status_code == zipped.status_code == 200
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.getvalue()) == plain.getvalue()
    assert "Accept-Encoding" in plain["Vary"]
    assert plain["ETag"] != zipped["ETag"]
    # Each representation's own ETag earns a 304 (weak comparison), never the other's.
    for etag, accept in ((plain["ETag"], "identity"), (zipped["ETag"], "gzip"),
                         (f"W/{zipped['ETag']}", "gzip")):
        assert client.get(path, HTTP_IF_NONE_MATCH=etag,
                          HTTP_ACCEPT_ENCODING=accept).status_code == 304
    assert client.get(path, HTTP_IF_NONE_MATCH=zipped["ETag"]).status_code == 200
    assert client.get(path, HTTP_IF_NONE_MATCH=plain["ETag"],
                      HTTP_ACCEPT_ENCODING="gzip").status_code == 200
    assert client.get(path, HTTP_IF_MODIFIED_SINCE=plain["Last-Modified"]).status_code == 304


def test_an_export_changes_with_the_registry(client, registry, staff):
    first = client.get("/registry.csv")
    register("newrow", staff)
    second = client.get("/registry.csv", HTTP_IF_NONE_MATCH=first["ETag"])
    assert second.status_code == 200
    assert second["ETag"] != first["ETag"]
    assert b"newrow" in second.getvalue() and b"newrow" not in first.getvalue()


def test_exports_are_built_once_per_generation(client, registry, django_assert_max_num_queries):
    client.get("/registry.xml")
    with django_assert_max_num_queries(1):
        assert client.get("/registry.xml").status_code == 200


def test_errors_are_not_cached(client, registry, staff):
    assert client.get("/api/namespaces/later/").status_code == 404
    namespace_register(kind="formal", nid="later", values=complete_values(),
                       date=dt.date(2026, 1, 5), actor=staff)
    assert client.get("/api/namespaces/later/").status_code == 200


def test_unread_query_parameters_share_the_entry(client, registry,
                                                 django_assert_max_num_queries):
    client.get("/namespaces/isbn/")
    with django_assert_max_num_queries(1):
        client.get("/namespaces/isbn/?utm_source=crawler")


def test_the_experts_named_on_the_registry_page_follow_role_and_name_changes(client, db):
    # No list from IANA here (it would be named instead): the expert accounts are.
    from registry.accounts.actions import role_grant, role_revoke
    from registry.accounts.roles import EXPERT_GROUP
    from tests.factories import make_user

    def named() -> str:
        tree = lxml_html.fromstring(client.get("/").content)
        return " ".join(p.text_content() for p in tree.xpath("//p[contains(., 'Designated')]"))

    person = make_user("newexpert@example.org")
    assert "Designated" not in named()
    person = role_grant(user=person, role=EXPERT_GROUP, reason="Appointed.", actor=None)
    assert person.display_name in named()
    assert person.display_name.encode() in client.get("/registry.xml").getvalue()
    user_update_profile(user=person, changes={"first_name": "Ada", "last_name": "Reviewer"},
                        reason="Her name.", actor=None)
    assert "Ada Reviewer" in named()
    assert b"Ada Reviewer" in client.get("/registry.xml").getvalue()  # the exports name them
    role_revoke(user=person, role=EXPERT_GROUP, reason="Stepped down.", actor=None)
    assert "Ada Reviewer" not in named()


def test_a_corrected_name_shows_at_once_wherever_the_public_pages_name_the_person(
        client, registrant, other_registrant, expert, staff):
    """Not only an expert's: IANA staff are named by the decisions they took on a
    namespace's page, anyone signed in by their public comments on the review list."""
    approve(make_registration(registrant, nid="decidedns"), expert, staff, register=True)
    review_actions.registration_comment(registration=make_registration(registrant, nid="talked"),
                                        actor=other_registrant, body="Why not urn:isbn?",
                                        audience="public")

    def deciders() -> list[str]:
        doc = page(client.get("/namespaces/decidedns/"))
        return texts(doc, '//*[@id="review-record"]/following-sibling::ul[1]/li/ul/li')

    def commenters() -> list[str]:
        doc = page(client.get("/requests/review/"))
        return texts(doc, '//*[@id="pending"]//*[contains(@class, "comment-author")]')

    assert any(f"({staff.display_name})" in decision for decision in deciders())
    assert commenters() == [other_registrant.display_name]
    for person, name in ((staff, "Grace"), (other_registrant, "Ramón")):
        user_update_profile(user=person, changes={"first_name": name}, reason="Misspelt.",
                            actor=None)
    shown = (any(f"(Grace {staff.last_name})" in decision for decision in deciders()),
             commenters() == [f"Ramón {other_registrant.last_name}"])
    assert shown == (True, True)  # (the decider renamed, the commenter renamed)


def test_signed_in_pages_are_never_compressed(client, registry, registrant):
    """BREACH: the visitor's own part (their name and address; on a page with a form, its
    masked CSRF token) is never compressed beside a search query that an attacker
    chooses; a visitor without a session gets the gzip form of the very same body."""
    path = f"/search/?q={registrant.email}"
    anonymous = client.get(path, HTTP_ACCEPT_ENCODING="gzip")
    assert anonymous["Content-Encoding"] == "gzip"
    client.force_login(registrant)
    asked = client.get(path, HTTP_ACCEPT_ENCODING="gzip, br")
    assert "Content-Encoding" not in asked
    assert {"Cookie", "Accept-Encoding"} <= {v.strip() for v in asked["Vary"].split(",")}
    nav = lxml_html.fromstring(asked.content).xpath("//nav")[0]
    assert registrant.email in nav.text_content()


def test_after_a_publish_one_process_builds_a_page_and_the_others_wait_for_it(db):
    """Single flight: a second builder of the same entry waits for the first's."""
    from registry.namespaces.public_cache import _built_once

    started, release = threading.Event(), threading.Event()
    made = []

    def slow():
        started.set()
        release.wait(5)
        made.append("first")
        return {"body": "first", "slots": {}, "size": 5}

    first = threading.Thread(target=_built_once, args=("public:page:test:k", slow))
    first.start()
    started.wait(5)
    threading.Timer(0.2, release.set).start()
    entry = _built_once("public:page:test:k", lambda: made.append("second") or {})
    first.join(5)
    assert entry["body"] == "first" and made == ["first"]


def test_a_waiter_builds_itself_when_the_builder_fails(db):
    from django.http import Http404

    from registry.namespaces.public_cache import BUILD_WAIT_SECONDS, _built_once

    started, release = threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait(5)
        raise Http404

    def run():
        with pytest.raises(Http404):
            _built_once("public:page:test:gone", failing)

    first = threading.Thread(target=run)
    first.start()
    started.wait(5)
    release.set()
    waited = time.monotonic()
    entry = _built_once("public:page:test:gone",
                        lambda: {"body": "mine", "slots": {}, "size": 4})
    first.join(5)
    assert entry["body"] == "mine"
    assert time.monotonic() - waited < BUILD_WAIT_SECONDS  # not left waiting for the bound
