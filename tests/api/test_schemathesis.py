"""Property-based tests of the whole API against its own OpenAPI schema (schemathesis).

Examples, coverage and fuzzing phases run for every operation with a curator's token; every
response must be free of server errors and conform to the documented status codes, content
types, headers and schemas. Case counts per operation are written to test-artifacts/.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from memory.services.store import memory_store
from memory.services.tokens import token_create
from tests.conftest import join

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("embedder")]

MAX_EXAMPLES = 200
CASES: Counter = Counter()
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "seed": 20261121,
        "generation": {"max-examples": MAX_EXAMPLES},
        "phases": {
            "examples": {"enabled": True},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": False},
        },
        "checks": {
            "enabled": False,
            "not_a_server_error": {"enabled": True},
            "status_code_conformance": {"enabled": True},
            "content_type_conformance": {"enabled": True},
            "response_schema_conformance": {"enabled": True},
            "response_headers_conformance": {"enabled": True},
        },
    }
)


@pytest.fixture(autouse=True)
def requests_keep_the_test_connection():
    # In-process WSGI calls would close the test's database connection at the end of each request
    # (Django's test client avoids this the same way).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def curator_key(team) -> str:
    curator = join(get_user_model().objects.create_user(username="fuzz-curator"), team, "curator")
    memory_store(
        team=team,
        content="Mark Robinson owns the billing API",
        entities=["person:mark-robinson", "project:billing-api"],
    )
    memory_store(
        team=team,
        content="Mark Smith owns mobile releases",
        entities=["person:mark-smith", "project:mobile-app"],
    )
    memory_store(team=team, content="Always run make migrate-test before pytest", memory_type="commitment")
    return token_create(user=curator, scopes=["read", "write", "curate"])[1]


# Generating the schema touches no database, so it can be loaded when the module is collected.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(), config=CONFIG)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=MAX_EXAMPLES)
def test_the_api_honours_its_schema(case, curator_key):
    CASES[case.operation.label] += 1
    case.call_and_validate(headers={"Authorization": f"Bearer {curator_key}"})


def teardown_module(module) -> None:
    if CASES:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "schemathesis-cases.json").write_text(json.dumps(dict(sorted(CASES.items())), indent=2))
