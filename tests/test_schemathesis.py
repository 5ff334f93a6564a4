"""Property-based API testing: schemathesis generates requests from the proxy's own OpenAPI
schema and sends them to the proxy in front of the real node; none may answer 5xx.

Bounded: ``MAX_EXAMPLES`` generated requests per operation, no deadline per example. The schema
is the app's own (``create_app().openapi()``); the requests go over HTTP to ``proxy_url``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from collapse.app import create_app
from collapse.settings import Settings
from indexer.mapping import ensure_index

MAX_EXAMPLES = 30

SCHEMA = schemathesis.openapi.from_dict(create_app(Settings()).openapi())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]


@pytest.fixture(scope="module")
def fingerprinted_index(es: Elasticsearch) -> Iterator[str]:
    """A deployed proxy has an index with the fingerprint mapping, so /ready answers 200.

    (Without one, /ready's documented answer is 503 ``not_ready``, which is not a fault.)
    """
    name = "test-schemathesis-ready"
    ensure_index(es, name)
    yield name
    es.options(ignore_status=404).indices.delete(index=name)


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_no_generated_request_answers_5xx(
    operation: object, proxy_url: str, fingerprinted_index: str
) -> None:
    @given(case=operation.as_strategy())  # type: ignore[attr-defined]
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def no_server_error(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=proxy_url, checks=[not_a_server_error], timeout=30)

    no_server_error()
