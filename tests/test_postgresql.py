"""The PostgreSQL backend checks a persistent connection's health only after it has been
idle: a busy worker's cached page makes one round trip (its query), not two."""

import pytest
from django.db import connections

from registry.postgresql import base

pytestmark = pytest.mark.postgres


@pytest.fixture
def connection(db):
    wrapper = connections["default"]
    wrapper.ensure_connection()
    return wrapper


@pytest.fixture
def checks(connection, monkeypatch):
    made = []
    real = connection.is_usable

    def counted():
        made.append(1)
        return real()

    monkeypatch.setattr(connection, "is_usable", counted)
    monkeypatch.setattr(connection, "health_check_enabled", True)
    return made


def request_with_a_query(connection):
    connection.health_check_done = False  # what Django does as each request starts
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def test_a_connection_in_use_is_not_checked_before_each_request(connection, checks,
                                                                monkeypatch):
    assert isinstance(connection, base.DatabaseWrapper)
    request_with_a_query(connection)
    checks.clear()
    for _ in range(3):
        request_with_a_query(connection)
    assert checks == []
    monkeypatch.setattr(base, "CHECK_AFTER_IDLE_SECONDS", 0.0)  # as after a quiet second
    request_with_a_query(connection)
    assert checks == [1]
