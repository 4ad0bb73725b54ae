"""The experts' dashboard reads its requests and their assign choices in a number of
queries that does not grow with its rows."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import make_registration, make_user


def _queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("review:dashboard")).status_code == 200
    return len(captured)


def test_more_requests_cost_no_more_queries(client, registrant, expert, second_expert, staff):
    client.force_login(staff)
    make_registration(registrant, nid="dashone")
    _queries(client)  # the first answer after a change reads what the next ones keep
    few = _queries(client)
    for n in range(4):
        make_registration(make_user(f"r{n}@example.org", organisation=f"Org {n}"),
                          nid=f"dashmore{n}")
    _queries(client)
    assert _queries(client) == few
