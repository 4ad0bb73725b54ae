"""A Redis stopped under load: the site answers without it, slower and correct.

Two Redis, as production has them: the public cache (CACHE_URL) and the one of
REDIS_URL (rate limits, log-in throttling, the Celery broker). Each is killed
in turn while clients read anonymous and signed-in pages; nothing answers 500, every
answer carries the security headers, and the site uses the Redis again once it is
back, without a hand step."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
import redis
from django.conf import settings

from registry.namespaces.models import Namespace
from registry.review.models import Comment, OutboundMessage, RegistrationRequest
from tests.factories import make_registration, make_user
from tests.faults.conftest import (
    Call,
    Load,
    assert_never_500_and_always_headed,
    by_label,
    report,
    server_environment,
    signed_in_session,
    statuses,
    wait_until,
)

pytestmark = pytest.mark.postgres

CSRF = "f" * 32  # a CSRF secret of the test's own: cookie and form field agree


def session_cookie(user) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={signed_in_session(user)}; csrftoken={CSRF}"


def post(path: str, cookie: str, **fields: str) -> Call:
    return Call(path, path, "POST", {"Cookie": cookie,
                                     "Content-Type": "application/x-www-form-urlencoded"},
                urlencode({"csrfmiddlewaretoken": CSRF, **fields}).encode())


def pages(cookie: str, page: str) -> list[Call]:
    """Anonymous and signed-in pages, ``page`` one of the registry's own."""
    signed_in = {"Cookie": cookie}
    return [
        Call("anonymous /", "/"),
        Call("anonymous page", page),
        Call("anonymous search", "/search/?q=isbn"),
        Call("anonymous API", "/api/namespaces/"),
        Call("anonymous review list", "/requests/review/"),
        Call("signed-in /", "/", headers=signed_in),
        Call("signed-in my requests", "/requests/", headers=signed_in),
        Call("signed-in page", page, headers=signed_in),
    ]


def test_the_public_cache_redis_killed_under_load(
        registry, test_database_url, redis_servers, gunicorn_servers, tmp_path):
    cache, main = redis_servers(), redis_servers()
    cookie = session_cookie(make_user("reader@example.org"))
    server = gunicorn_servers(server_environment(
        database_url=test_database_url, redis_url=main.url, cache_url=cache.url,
        export_root=tmp_path / "exports"))
    # Pages no process has in its own memory yet: each is read from the cache, or built.
    cold = [f"{prefix}{nid}/" for nid in Namespace.objects.values_list("nid", flat=True)
            for prefix in ("/namespaces/", "/api/namespaces/")]
    calls = [*pages(cookie, "/namespaces/isbn/"),
             Call.rotating("anonymous pages in turn", cold[::2]),
             Call.rotating("signed-in pages in turn", cold[1::2], headers={"Cookie": cookie})]
    with Load(server.port, calls) as load:
        time.sleep(2)
        killed_at = load.now()
        cache.kill()
        time.sleep(3)
        back_at = load.now()
        cache.start()
        time.sleep(2.5)
    answers = load.answers
    assert_never_500_and_always_headed(answers)
    assert statuses(answers) == {"200": len(answers)}, by_label(answers)
    outage = load.between(killed_at, back_at)
    assert len(outage) > 20 and {a.label for a in outage} == {c.label for c in load.calls}
    # Back without a hand step: a page built now is cached in the Redis again.
    assert server.request(Call("new page", "/search/?q=after+the+outage")).status == 200
    assert redis.Redis.from_url(cache.url).dbsize() > 0
    report("public cache Redis killed 3 s", {
        "requests": len(answers), "during the outage": len(outage),
        "statuses": statuses(answers), "during": statuses(outage)})


def test_the_counts_and_broker_redis_killed(
        test_database_url, redis_servers, gunicorn_servers, tmp_path):
    """Sessions are the database's; a write that queues mail commits and answers,
    its mail waiting in the outbox; search fails open; comments and log-in fail closed
    with a 503 and write nothing."""
    cache, main = redis_servers(), redis_servers()
    registrant = make_user("registrant@example.org")
    draft = make_registration(registrant, nid="faultdraft", submit=False)
    submitted = make_registration(registrant, nid="faultsent")
    cookie, leaving = session_cookie(registrant), session_cookie(registrant)
    server = gunicorn_servers(server_environment(
        database_url=test_database_url, redis_url=main.url, cache_url=cache.url,
        export_root=tmp_path / "exports"))
    with Load(server.port, pages(cookie, submitted.get_absolute_url())) as load:
        time.sleep(1.5)
        main.kill()
        killed_at = load.now()
        time.sleep(0.5)
        submit = server.request(post(f"/requests/{draft.pk}/do/submit/", cookie))
        comment = server.request(post(f"/requests/{submitted.pk}/comment/", cookie,
                                      body="During the outage.", audience="public"))
        login = server.request(post("/accounts/login/", f"csrftoken={CSRF}",
                                    login="registrant@example.org", password="wrong"))
        searches = [server.request(Call("search", f"/search/?q=outage{n}")) for n in range(3)]
        # As the navigation's "Log out" does: the page that asks, then its form.
        asking = server.request(Call("log-out page", "/accounts/logout/",
                                     headers={"Cookie": leaving}))
        logout = server.request(post("/accounts/logout/", leaving))
        back_at = load.now()
        main.start()
        time.sleep(2.5)
    answers = load.answers
    assert_never_500_and_always_headed(
        [*answers, submit, comment, login, *searches, asking, logout])
    assert statuses(answers) == {"200": len(answers)}, by_label(answers)
    assert len(load.between(killed_at, back_at)) > 10

    # The write committed and answered; its mail waits in the outbox for the broker.
    assert submit.status == 302
    assert RegistrationRequest.objects.get(pk=draft.pk).state != draft.state
    waiting = OutboundMessage.objects.filter(registration_id=draft.pk)
    assert waiting.exists() and not waiting.filter(queued_at__isnull=False).exists()
    # Fail closed: no count could be kept, nothing written.
    assert comment.status == 503 and int(comment.headers["Retry-After"]) > 0
    assert not Comment.objects.filter(body="During the outage.").exists()
    assert login.status == 503 and "Retry-After" in login.headers
    # Fail open: a search the cache cannot answer is still answered.
    assert [answer.status for answer in searches] == [200, 200, 200]
    assert asking.status == 200 and logout.status == 302

    # Back: counts are kept again, and a comment goes through.
    def comment_posted() -> bool:
        answer = server.request(post(f"/requests/{submitted.pk}/comment/", cookie,
                                     body="After the outage.", audience="public"))
        return answer.status == 302
    recovery = wait_until(comment_posted, 10, "a comment after the Redis came back", 0.2)
    report("counts/broker Redis killed", {
        "requests": len(answers), "statuses": statuses(answers),
        "submit": submit.status, "comment": comment.status, "log-in": login.status,
        "search": [answer.status for answer in searches],
        "comment accepted again after (s)": round(recovery, 2)})
