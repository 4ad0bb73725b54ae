"""A signed-in request reads its session and account (user, roles) in the registry
generation's query: no SQL of its own, no cache, and every change of what the
navigation shows, or of what lets the session in, is seen by the next request."""

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from lxml import html as lxml_html

from registry.accounts import signed_in as signed_in_module
from registry.accounts.actions import role_grant, role_revoke, user_recognize, user_update_profile
from registry.accounts.models import AccountSession, User
from registry.accounts.roles import EXPERT_GROUP, STAFF_GROUP

PAGES = ["/", "/requests/review/", "/search/?q=isbn"]  # cached public pages
ROLE = "//nav//*[@data-role]"
WHO = "//nav//*[@id='who']"


def nav(client, path="/"):
    response = client.get(path)
    assert response.status_code == 200
    return lxml_html.fromstring(response.content).xpath("//nav[@aria-label='Main']")[0]


def role_of(client):
    found = nav(client).xpath(".//*[@data-role]")
    return found[0].text_content() if found else None


def signed_in(client, path="/"):
    return not nav(client, path).xpath(".//a[@href='/accounts/login/']")


@pytest.fixture
def signed_in_client(client, registrant):
    client.force_login(registrant)
    return client


@pytest.mark.parametrize("path", PAGES)
def test_a_warm_signed_in_page_reads_nothing_of_its_own(
        signed_in_client, path, django_assert_num_queries):
    signed_in_client.get(path)
    signed_in_client.get(path)
    with django_assert_num_queries(1):  # the registry generation, as for anyone
        tree = nav(signed_in_client, path)
    assert tree.xpath(ROLE)[0].text_content() == "registrant"


def test_a_page_that_is_not_cached_gets_the_cached_navigation_too(
        signed_in_client, registrant, django_assert_max_num_queries):
    signed_in_client.get("/requests/")
    with django_assert_max_num_queries(3):
        tree = nav(signed_in_client, "/requests/")
    assert "registrant@example.org" in tree.xpath(".//*[@aria-labelledby='who']")[0].text_content()


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_page_with_no_form_masks_no_token_and_sets_no_cookie(signed_in_client, path):
    signed_in_client.get(path)
    response = signed_in_client.get(path)
    tree = lxml_html.fromstring(response.content)
    assert not tree.xpath("//input[@name='csrfmiddlewaretoken']")
    assert settings.CSRF_COOKIE_NAME not in response.cookies


def test_log_out_is_a_link_to_the_page_that_asks(registrant):
    client = Client(enforce_csrf_checks=True)
    client.force_login(registrant)
    link = nav(client).xpath(".//a[text()='Log out']")[0].get("href")
    page = client.get(link)
    assert page.status_code == 200 and signed_in(client)  # asking signs nobody out
    form = lxml_html.fromstring(page.content).xpath(f"//main//form[@action='{link}']")[0]
    assert form.get("method") == "post"
    token = form.xpath(".//input[@name='csrfmiddlewaretoken']")[0].get("value")
    assert client.post(link, {"csrfmiddlewaretoken": "x" * 64}).status_code == 403
    assert signed_in(client)
    assert client.post(link, {"csrfmiddlewaretoken": token}).status_code == 302
    assert not signed_in(client)


def test_the_search_text_is_escaped_into_the_cached_navigation(signed_in_client):
    text = '"><script>alert(1)</script>'
    response = signed_in_client.get("/search/", {"q": text})
    assert b"<script>alert(1)" not in response.content
    box = lxml_html.fromstring(response.content).xpath("//nav//input[@name='q']")[0]
    assert box.get("value") == text
    assert b"\x00" not in response.content


@pytest.mark.parametrize("change, role", [
    (lambda user: role_grant(user=user, role=EXPERT_GROUP, reason="Appointed.", actor=None),
     "designated expert"),
    (lambda user: role_grant(user=user, role=STAFF_GROUP, reason="Hired.", actor=None),
     "IANA staff"),
    (lambda user: user_recognize(user=user, reason="IESG decision.", actor=None),
     "standards body"),
    (lambda user: Group.objects.get(name=EXPERT_GROUP).user_set.add(user), "designated expert"),
], ids=["expert", "staff", "recognized", "added to the group"])
def test_a_new_role_shows_at_the_next_request(signed_in_client, registrant, change, role):
    assert role_of(signed_in_client) == "registrant"
    change(registrant)
    assert role_of(signed_in_client) == role


def test_a_role_taken_away_shows_at_the_next_request(client, expert):
    client.force_login(expert)
    tree = nav(client)
    assert tree.xpath(".//a[@href='/requests/dashboard/']")
    role_revoke(user=expert, role=EXPERT_GROUP, reason="Term ended.", actor=None)
    tree = nav(client)
    assert not tree.xpath(".//a[@href='/requests/dashboard/']")
    assert tree.xpath(ROLE)[0].text_content() == "registrant"


def test_a_group_cleared_or_deleted_shows_at_the_next_request(client, expert, second_expert):
    other = Client()
    client.force_login(expert)
    other.force_login(second_expert)
    assert role_of(client) == role_of(other) == "designated expert"
    group = Group.objects.get(name=EXPERT_GROUP)
    group.user_set.clear()
    assert role_of(client) == "registrant"
    role_grant(user=second_expert, role=EXPERT_GROUP, reason="Back.", actor=None)
    assert role_of(other) == "designated expert"
    group.delete()
    assert role_of(other) == "registrant"


def test_a_new_name_or_organisation_shows_at_the_next_request(signed_in_client, registrant):
    assert "Ada" not in nav(signed_in_client).xpath(WHO)[0].text_content()
    user_update_profile(user=registrant, changes={"first_name": "Ada", "last_name": "Byron",
                                                  "organisation": "Analytical Engines"},
                        reason="Married.", actor=None)
    tree = nav(signed_in_client)
    assert "Ada" in tree.xpath(WHO)[0].text_content()
    assert "Analytical Engines" in tree.xpath(".//*[@aria-labelledby='who']")[0].text_content()


def test_a_deactivated_account_is_signed_out_at_the_next_request(signed_in_client, registrant):
    assert signed_in(signed_in_client)
    user_update_profile(user=registrant, changes={"is_active": False}, reason="Left.",
                        actor=None)
    assert not signed_in(signed_in_client)
    assert SESSION_KEY not in signed_in_client.session  # the session itself is gone
    registrant.is_active = True
    registrant.save()
    assert not signed_in(signed_in_client)  # reactivation does not bring it back


def test_a_new_password_signs_out_every_other_session(registrant):
    registrant.set_password("first-password-1")
    registrant.save()
    mine, elsewhere = Client(), Client()
    for browser in (mine, elsewhere):
        assert browser.login(email="registrant@example.org", password="first-password-1")
        assert signed_in(browser)
    response = mine.post("/accounts/password/change/", {
        "oldpassword": "first-password-1", "password1": "second-password-2",
        "password2": "second-password-2"})
    assert response.status_code == 302
    assert signed_in(mine)  # the session that changed it follows the new hash
    assert not signed_in(elsewhere)


def test_a_password_set_outside_a_request_signs_everyone_out(signed_in_client, registrant):
    assert signed_in(signed_in_client)
    user = User.objects.get(pk=registrant.pk)
    user.set_password("changed-elsewhere-3")
    user.save()
    assert not signed_in(signed_in_client)


def test_the_session_row_names_its_account_from_log_in_to_log_out(client, registrant):
    client.force_login(registrant)
    key = client.session.session_key
    assert AccountSession.objects.get(session_key=key).account_id == registrant.pk
    client.post("/accounts/logout/")
    assert not AccountSession.objects.filter(session_key=key).exists()
    client.get("/")
    assert not AccountSession.objects.filter(account_id=registrant.pk).exists()


def test_a_session_row_naming_another_account_signs_in_only_its_own(
        signed_in_client, registrant, expert):
    # The row's account only joins the query; the session's own data decides who it is.
    AccountSession.objects.update(account_id=expert.pk)
    assert role_of(signed_in_client) == "registrant"
    assert "registrant@example.org" in nav(signed_in_client).text_content()


def test_an_expired_session_is_signed_out(signed_in_client):
    from datetime import timedelta

    from django.utils import timezone

    assert signed_in(signed_in_client)
    AccountSession.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert not signed_in(signed_in_client)


def test_deleting_an_account_deletes_its_sessions(signed_in_client, registrant):
    assert AccountSession.objects.filter(account_id=registrant.pk).exists()
    User.objects.filter(pk=registrant.pk).delete()
    assert not AccountSession.objects.filter(account_id=registrant.pk).exists()
    assert not signed_in(signed_in_client)


def test_the_account_read_with_its_session_saves_as_it_was_read(signed_in_client, registrant):
    registrant.set_password("kept-password-4")
    registrant.save()
    signed_in_client.force_login(registrant)
    response = signed_in_client.get("/")
    user = response.wsgi_request.user
    user.first_name = "Saved"
    user.save()
    fresh = User.objects.get(pk=registrant.pk)
    assert fresh.first_name == "Saved" and fresh.check_password("kept-password-4")
    assert fresh.date_joined == registrant.date_joined


def test_a_navigation_is_rendered_once_per_process_for_what_it_shows(
        signed_in_client, registrant, monkeypatch):
    rendered = []
    real = signed_in_module.render_navigation
    monkeypatch.setattr(signed_in_module, "render_navigation",
                        lambda user: rendered.append(user.pk) or real(user))
    signed_in_module._navigations.clear()
    for path in PAGES:
        nav(signed_in_client, path)
    assert rendered == [registrant.pk]
    user_update_profile(user=registrant, changes={"first_name": "Renamed"}, reason="Typo.",
                        actor=None)
    assert "Renamed" in nav(signed_in_client).xpath(WHO)[0].text_content()
    assert rendered == [registrant.pk, registrant.pk]


def test_the_anonymous_navigation_offers_log_in(client, db):
    tree = nav(client)
    assert tree.xpath(".//a[@href='/accounts/login/']")
    assert not tree.xpath(".//input[@name='csrfmiddlewaretoken']")
    assert "csrftoken" not in client.get("/").cookies


def test_a_page_rendered_without_a_request_still_has_the_navigation(db):
    from django.template.loader import render_to_string

    tree = lxml_html.fromstring(render_to_string("404.html", {}))
    assert tree.xpath("//nav[@aria-label='Main']//a[@href='/accounts/login/']")


def _other_connection():
    import psycopg

    config = connection.settings_dict
    return psycopg.connect(dbname=config["NAME"], user=config["USER"], host=config["HOST"],
                           port=config["PORT"] or 5432, password=config["PASSWORD"] or None,
                           autocommit=True)


@pytest.fixture
def kept_connection(transactional_db):
    """The connection as production keeps it (settings.py): the visitor query prepared."""
    connection.ensure_connection()
    connection.connection.prepare_threshold = 0
    yield connection
    connection.close()


@pytest.mark.postgres
def test_the_visitor_query_is_prepared_on_a_kept_connection(kept_connection, registrant):
    client = Client()
    client.force_login(registrant)
    assert signed_in(client)
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    assert [text for text in statements if "session_data" in text]


@pytest.mark.postgres
def test_a_column_changed_under_the_prepared_query_costs_one_new_connection(
        kept_connection, registrant):
    client = Client(raise_request_exception=False)
    client.force_login(registrant)
    assert signed_in(client)
    before = kept_connection.connection.info.backend_pid
    with _other_connection() as other:  # a migration, while this process serves
        other.execute("ALTER TABLE accounts_user ALTER COLUMN organisation TYPE varchar(300)")
    try:
        assert [signed_in(client) for _ in range(3)] == [True, True, True]
        assert kept_connection.connection.info.backend_pid != before
    finally:
        with _other_connection() as other:
            other.execute("ALTER TABLE accounts_user ALTER COLUMN organisation TYPE varchar(200)")


def test_a_column_whose_value_cannot_be_hashed_still_keys_its_navigation(registrant):
    registrant.organisation = ["a list, as a JSON column would give"]
    registrant._role_cache = set()
    key = signed_in_module._shown(registrant)
    assert hash(key) and "a list, as a JSON column would give" in key[0]
