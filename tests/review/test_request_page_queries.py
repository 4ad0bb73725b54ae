"""The request page, as IANA staff or a designated expert read it, offers its assign
choices in a number of queries that does not grow with the experts (nor with the
availability each of them set)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_registration
from tests.review.helpers import more_experts


def _queries(client, registration) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(registration.get_absolute_url()).status_code == 200
    return len(captured)


@pytest.mark.parametrize("viewer", ["staff", "expert"])
def test_more_experts_cost_no_more_queries(client, request, viewer, registrant, expert,
                                           second_expert, staff):
    client.force_login(request.getfixturevalue(viewer))
    registration = make_registration(registrant, nid="pagequeries")
    _queries(client, registration)  # the first answer after a change reads what the next keep
    few = _queries(client, registration)
    more_experts(6, prefix="pageexpert")
    _queries(client, registration)
    assert _queries(client, registration) == few
