"""Property-based run of every API operation against the served OpenAPI schema (schemathesis):
no 5xx, and every response conforms to the schema (status code, content type, body, headers)."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from config.wsgi import application

pytestmark = [pytest.mark.slow]

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


@pytest.fixture
def auth(db, editor, settings):  # type: ignore[no-untyped-def]
    from django.core.cache import cache
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from triage.tokens import token_create

    settings.FIXBASE_API_RATE = "100000/s"
    cache.clear()
    # As Django's test client does: the test's transaction must outlive each WSGI request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield {"Authorization": f"Token {token_create(editor, 'fuzz', ('triage', 'write'))[1]}"}
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms_to_the_schema(case, auth):  # type: ignore[no-untyped-def]
    # What the API promises: no 5xx, and responses as documented. (Lenient parsing of optional
    # query parameters, e.g. an unparsable page_size falling back to the default, is allowed.)
    case.call_and_validate(headers=auth, checks=CHECKS)
