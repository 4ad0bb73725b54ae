"""Schemathesis against /api/schema: every operation the document declares, with every
check (status codes, content types, headers, response schemas, negative data rejected,
positive data accepted, unsupported methods answered 405), on bounded examples, valid
and invalid. It reads the schema the server serves, so an endpoint added to openapi.py
is covered too."""

import datetime as dt

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.generation import GenerationMode

from registry.namespaces.actions import namespace_register
from registry.wsgi import application
from tests.factories import complete_values

MAX_EXAMPLES = 25  # per operation and mode: bounded (derandomized in CI, conftest.py)

load_all_checks()
ALL_CHECKS = [check for name, check in zip(CHECKS.get_all_names(), CHECKS.get_all(),
                                           strict=True)
              # Response time is the benchmark's concern; a slow shared CI box is not a bug.
              if name != "max_response_time"]


@pytest.fixture
def _one_connection(db):
    """The WSGI app closes the database connection after each request (Django's test
    client stops it from doing so; Schemathesis calls the app itself): keep the test's."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(_one_connection, staff, registrant, settings):
    settings.ALLOWED_HOSTS = ["*"]  # Schemathesis' WSGI client names its own host
    namespace_register(kind="formal", nid="conform", values=complete_values(registrant),
                       date=dt.date(2026, 11, 1), actor=staff)
    schema = schemathesis.openapi.from_wsgi("/api/schema", application)
    # A page number the schema allows (1 or more) can lie past the last page, which
    # only the data decides: that refusal is a declared 400, not a failure.
    schema.config.checks.positive_data_acceptance.expected_statuses = [
        "2xx", "304", "400", "404"]
    return schema


def _conforms(operation, mode) -> None:
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def conforms(data):
        case = data.draw(operation.as_strategy(generation_mode=mode))
        # Werkzeug's WSGI client asks for gzip like a browser but does not inflate it.
        case.call_and_validate(checks=ALL_CHECKS, headers={"Accept-Encoding": "identity"})

    conforms()


@pytest.mark.schemathesis
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_conforms_to_its_schema(api_schema, mode):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert {"/api/namespaces/", "/api/check"} <= {operation.path for operation in operations}
    failures = []
    for operation in operations:
        try:
            _conforms(operation, mode)
        except Unsatisfiable:  # no invalid input exists (a path of any string)
            assert mode == GenerationMode.NEGATIVE
        except Exception as exc:  # noqa: BLE001 - every operation's failure, then one report
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert not failures, "\n\n".join(failures)
