"""OpenSearch behind the same proxy and indexer: the engine is detected, and OpenSearch's own
Python client works through the proxy (on either engine; its point-in-time calls on OpenSearch).

CI runs this module, with every test marked ``opensearch``, against OpenSearch too
(``ENGINE=opensearch``, ``scripts/opensearch``).
"""

from __future__ import annotations

from typing import Any

import pytest
from elasticsearch import Elasticsearch
from fastapi import FastAPI
from opensearchpy import OpenSearch

from collapse.app import create_app
from collapse.settings import Settings
from indexer.engine import ELASTICSEARCH, OPENSEARCH, engine_of_root, padded_base64
from indexer.es import connect, engine_of
from tests.conftest import ENGINE, ServerThread
from tests.test_proxy_search import SORTED, wire_story

pytestmark = [pytest.mark.es, pytest.mark.opensearch]


def test_engine_of_roots_answer() -> None:
    assert engine_of_root(405, {"error": "Incorrect HTTP method for uri [/]"}) == ELASTICSEARCH
    assert engine_of_root(200, {"version": {"number": "9.5.4", "build_flavor": "default"}}) == (
        ELASTICSEARCH
    )
    answer = {"version": {"distribution": "opensearch", "number": "3.3.0"}}
    assert engine_of_root(200, answer) == OPENSEARCH
    assert engine_of_root(401, answer) == ELASTICSEARCH  # not told: Elasticsearch is assumed
    assert [padded_base64(v) for v in ("YWI", "YWI=", "YWJj", "")] == ["YWI=", "YWI=", "YWJj", ""]


def test_the_indexer_and_the_proxy_detect_the_engine(es_url: str) -> None:
    es = connect(es_url)
    try:
        assert engine_of(es) == ENGINE
        assert es.cluster.health()["status"] in ("green", "yellow")
    finally:
        es.close()
    app: FastAPI = create_app(Settings(es_url=[es_url]))
    with ServerThread(app):
        assert app.state.upstream.engine == ENGINE


@pytest.fixture
def opensearch_client(proxy_url: str) -> OpenSearch:
    """OpenSearch's own client, pointed at the proxy."""
    return OpenSearch(proxy_url, timeout=30)


def test_opensearch_py_searches_counts_and_gets_through_the_proxy(
    es: Elasticsearch, index_name: str, opensearch_client: OpenSearch
) -> None:
    wire_story(es, index_name)
    client = opensearch_client
    out = client.search(index=index_name, body={**SORTED, "size": 3})
    assert [h["_id"] for h in out["hits"]["hits"]] == ["c0", "u0", "u1"]
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 19
    assert out["hits"]["total"]["value"] == 60
    assert "collapse_fp" not in out["hits"]["hits"][0]["_source"]
    body = {**SORTED, "size": 3}
    plain = client.search(index=index_name, body=body, params={"collapse": "false"})
    assert [h["_id"] for h in plain["hits"]["hits"]] == ["c0", "u0", "c1"]
    assert client.count(index=index_name)["count"] == 60
    doc = client.get(index=index_name, id="c3")
    assert doc["found"] and "collapse_fp" not in doc["_source"]
    got = client.mget(index=index_name, body={"ids": ["c1", "u2", "none"]})
    assert [d["found"] for d in got["docs"]] == [True, True, False]
    multi = client.msearch(body=[{"index": index_name}, {**SORTED, "size": 1}])
    assert multi["responses"][0]["hits"]["hits"][0]["_collapse"]["folded"] == 19


@pytest.mark.skipif(ENGINE != OPENSEARCH, reason="OpenSearch's point-in-time API")
def test_opensearch_py_pages_a_point_in_time_through_the_proxy(
    es: Elasticsearch, index_name: str, opensearch_client: OpenSearch
) -> None:
    """``create_pit``/``delete_pit`` (OpenSearch's paths) through the proxy, and the pages of a
    ``pit`` search continued with ``search_after`` show the story once."""
    wire_story(es, index_name)
    client = opensearch_client
    pit = client.create_pit(index=index_name, params={"keep_alive": "1m"})["pit_id"]
    try:
        shown: list[str] = []
        after: list[Any] | None = None
        for _ in range(4):
            body: dict[str, Any] = {**SORTED, "size": 6, "pit": {"id": pit, "keep_alive": "1m"}}
            body.pop("index", None)
            if after is not None:
                body["search_after"] = after
            hits = client.search(body=body)["hits"]["hits"]
            shown += [h["_id"] for h in hits]
            after = hits[-1]["sort"]
        assert shown == ["c0", *(f"u{i}" for i in range(23))]
    finally:
        closed = client.delete_pit(body={"pit_id": [pit]})
    assert closed["pits"][0]["successful"] is True
