"""/health, /ready, /metrics and the request id, on the real node."""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from prometheus_client.parser import text_string_to_metric_families

from collapse import logging as json_logging
from collapse import metrics
from collapse.app import create_app
from collapse.settings import Settings
from tests.conftest import ServerThread, free_port


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text answer, keyed by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def fingerprinted_index(es: Elasticsearch, index_name: str) -> str:
    es.indices.create(
        index=index_name,
        mappings={
            "properties": {
                "body": {"type": "text"},
                "collapse_fp": {"properties": {"simhash": {"type": "long"}}},
            }
        },
    )
    return index_name


def test_health_answers_while_elasticsearch_is_down() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with ServerThread(create_app(Settings(es_url=[dead]))) as server:
        health = httpx.get(f"{server.url}/health")
        ready = httpx.get(f"{server.url}/ready")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert ready.status_code == 503
    assert ready.json()["error"]["type"] == "not_ready"
    assert "not reachable" in ready.json()["error"]["reason"]


def test_ready_needs_the_fingerprint_mapping_on_the_named_indices(
    es: Elasticsearch, es_url: str, fingerprinted_index: str
) -> None:
    plain = f"{fingerprinted_index}-plain"
    es.indices.create(index=plain)
    try:
        named = Settings(es_url=[es_url], ready_indices=[fingerprinted_index])
        both = Settings(es_url=[es_url], ready_indices=[fingerprinted_index, plain])
        missing = Settings(es_url=[es_url], ready_indices=[f"{plain}-missing"])
        with ServerThread(create_app(named)) as a, ServerThread(create_app(both)) as b:
            ok, not_ok = httpx.get(f"{a.url}/ready"), httpx.get(f"{b.url}/ready")
        with ServerThread(create_app(missing)) as c:
            absent = httpx.get(f"{c.url}/ready")
    finally:
        es.indices.delete(index=plain)
    assert ok.status_code == 200
    assert ok.json() == {"status": "ready", "indices_with_fingerprints": [fingerprinted_index]}
    assert not_ok.status_code == 503 and plain in not_ok.json()["error"]["reason"]
    assert absent.status_code == 503


def test_ready_on_any_index_by_default(proxy_url: str, fingerprinted_index: str) -> None:
    answer = httpx.get(f"{proxy_url}/ready")
    assert answer.status_code == 200
    assert fingerprinted_index in answer.json()["indices_with_fingerprints"]


def test_request_id_is_answered_and_sent_to_elasticsearch(proxy_url: str) -> None:
    fresh = httpx.post(f"{proxy_url}/_search", json={"size": 0}, params={"collapse": "false"})
    request_id = fresh.headers["x-request-id"]
    assert len(request_id) >= 16
    # Elasticsearch echoes the X-Opaque-Id it received: the proxy sent its request id.
    assert fresh.headers["x-opaque-id"] == request_id

    given = httpx.post(
        f"{proxy_url}/_search",
        json={"size": 0},
        params={"collapse": "false"},
        headers={"x-request-id": "trace-abc.123"},
    )
    assert given.headers["x-request-id"] == "trace-abc.123"
    assert given.headers["x-opaque-id"] == "trace-abc.123"

    hostile = httpx.get(f"{proxy_url}/health", headers={"x-request-id": "a b;<x>" * 100})
    assert ";" not in hostile.headers["x-request-id"]
    assert len(hostile.headers["x-request-id"]) <= 128


@contextlib.contextmanager
def log_lines(settings: Settings) -> Iterator[tuple[list[dict[str, Any]], str]]:
    """Serve the proxy with ``settings``: (the JSON lines its loggers wrote, filled when it
    stops; its URL)."""
    app = create_app(settings)
    handler = next(h for h in logging.getLogger("collapse").handlers if hasattr(h, "setStream"))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    lines: list[dict[str, Any]] = []
    try:
        with ServerThread(app) as server:
            yield lines, server.url
    finally:
        handler.setStream(previous)
        json_logging.configure(Settings(es_url=settings.es_url))  # info for the other tests
    lines += [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]


def test_access_log_is_json_with_the_request_id(es_url: str) -> None:
    with log_lines(Settings(es_url=[es_url])) as (lines, url):
        answer = httpx.get(f"{url}/_search", params={"collapse": "false", "q": "x"})
    access = [entry for entry in lines if entry["logger"] == "collapse.access"]
    assert len(access) == 1
    entry = access[0]
    assert entry["request_id"] == answer.headers["x-request-id"]
    assert entry["status"] == answer.status_code
    assert entry["method"] == "GET" and entry["path"] == "/_search"
    assert entry["route"] == "/_search"
    assert entry["query_keys"] == ["collapse", "q"]
    assert isinstance(entry["duration_ms"], float)


def test_log_level_warning_drops_the_access_lines(es_url: str) -> None:
    """``--log-level warning`` (COLLAPSE_LOG_LEVEL) reaches the proxy's own loggers too."""
    with log_lines(Settings(es_url=[es_url], collapse_log_level="WARNING")) as (lines, url):
        answer = httpx.get(f"{url}/_search", params={"collapse": "false", "q": "x"})
        assert answer.status_code == 200
        logging.getLogger("collapse.upstream").warning("a warning still gets through")
    assert [entry["logger"] for entry in lines] == ["collapse.upstream"]


def test_metrics_count_requests_upstream_calls_and_denials(proxy_url: str) -> None:
    before = httpx.get(f"{proxy_url}/metrics").text
    httpx.post(f"{proxy_url}/_search", json={"size": 0}, params={"collapse": "false"})
    httpx.delete(f"{proxy_url}/some-index")
    answer = httpx.get(f"{proxy_url}/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    after = answer.text

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    route = {"route": "/_search", "method": "POST"}
    assert grew("collapse_http_requests_total", status="200", **route) == 1
    assert grew("collapse_http_request_duration_seconds_count", **route) == 1
    assert grew("collapse_http_requests_total", route="unmatched", method="DELETE", status="403")
    assert grew("collapse_upstream_requests_total", endpoint="_search", status="200") >= 1
    assert grew("collapse_upstream_request_duration_seconds_count", endpoint="_search") >= 1


def test_metrics_count_upstream_failures() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    settings = Settings(es_url=[dead], es_retries=1, es_retry_backoff=0.01)
    with ServerThread(create_app(settings)) as server:
        before = httpx.get(f"{server.url}/metrics").text
        httpx.post(f"{server.url}/x/_search", json={})
        after = httpx.get(f"{server.url}/metrics").text
    # The first request to fail is the one for the names collapse.exposure judges the index by.
    key = {"endpoint": "_resolve", "status": "unavailable"}
    assert (
        value(after, "collapse_upstream_requests_total", **key)
        - value(before, "collapse_upstream_requests_total", **key)
        == 1
    )
    assert (
        value(after, "collapse_upstream_retries_total", endpoint="_resolve")
        - value(before, "collapse_upstream_retries_total", endpoint="_resolve")
        == 1
    )


def test_collapse_metrics_record_groups_folds_and_degradation(proxy_url: str) -> None:
    before = httpx.get(f"{proxy_url}/metrics").text
    metrics.record_collapse(groups=7, folded=3, group_sizes=[1, 1, 4, 1, 1, 1, 1])
    metrics.record_collapse(
        groups=2,
        folded=4000,
        group_sizes=[4001, 1],
        without_fingerprint=5,
        degraded_reason="time_budget: the probe took longer than 1000 ms",
    )
    after = httpx.get(f"{proxy_url}/metrics").text

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("collapse_groups_per_page_count") == 2
    assert grew("collapse_groups_per_page_sum") == 9
    assert grew("collapse_folded_hits_per_page_sum") == 4003
    assert grew("collapse_group_size_count") == 9
    assert value(after, "collapse_largest_group_size") >= 4001
    assert grew("collapse_documents_without_fingerprint_total") == 5
    assert grew("collapse_degraded_answers_total", reason="time_budget") == 1


def test_metrics_are_not_secret_but_cheap(proxy_url: str) -> None:
    """The exposition names routes by template, so its size does not grow with index names."""
    for i in range(20):
        httpx.post(f"{proxy_url}/index-{i}/_search", json={}, params={"collapse": "false"})
    text = httpx.get(f"{proxy_url}/metrics").text
    assert "index-1" not in text
    assert 'route="/{index}/_search"' in text


def test_a_bug_answers_500_in_elasticsearch_shape_and_is_logged(es_url: str) -> None:
    from fastapi.routing import APIRoute

    async def broken() -> None:
        raise ZeroDivisionError("a bug of the proxy")

    app = create_app(Settings(es_url=[es_url]))
    app.router.routes.insert(0, APIRoute("/_mget", broken, methods=["GET"]))
    handler = next(h for h in logging.getLogger("collapse").handlers if hasattr(h, "setStream"))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        with ServerThread(app) as server:
            answer = httpx.get(f"{server.url}/_mget")
    finally:
        handler.setStream(previous)
    assert answer.status_code == 500
    body = answer.json()
    assert body["status"] == 500 and body["error"]["type"] == "proxy_exception"
    assert "ZeroDivisionError" in body["error"]["reason"]
    assert "Traceback" not in answer.text and "a bug of the proxy" not in answer.text
    lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    errors = [entry for entry in lines if entry["logger"] == "collapse.error"]
    assert errors and "ZeroDivisionError: a bug of the proxy" in errors[0]["exception"]
    assert errors[0]["request_id"] == answer.headers["x-request-id"]
