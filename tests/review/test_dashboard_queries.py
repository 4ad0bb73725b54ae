"""The experts' dashboard reads its requests, its experts and their assign choices in a
number of queries that grows neither with its rows nor with its experts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import make_registration, make_user
from tests.review.helpers import more_experts


def _queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("review:dashboard")).status_code == 200
    return len(captured)


@pytest.mark.parametrize("viewer", ["staff", "expert"])
def test_more_requests_and_experts_cost_no_more_queries(client, request, viewer, registrant,
                                                       expert, second_expert, staff):
    client.force_login(request.getfixturevalue(viewer))
    make_registration(registrant, nid="dashone")
    _queries(client)  # the first answer after a change reads what the next ones keep
    few = _queries(client)
    for n in range(4):
        make_registration(make_user(f"r{n}@example.org", organisation=f"Org {n}"),
                          nid=f"dashmore{n}")
    more_experts(6, prefix="dashexpert")
    _queries(client)
    assert _queries(client) == few
