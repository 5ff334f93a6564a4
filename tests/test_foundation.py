"""The foundation works end to end: a real node, an index, documents, a search through the proxy."""

from __future__ import annotations

import httpx
from elasticsearch import Elasticsearch, helpers


def test_documents_written_to_real_node_are_found_through_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    docs = [
        {"_index": index_name, "_id": str(i), "body": text}
        for i, text in enumerate(["the quick brown fox", "a lazy dog sleeps", "the fox jumps"])
    ]
    ok, errors = helpers.bulk(es, docs, refresh="wait_for")
    assert (ok, errors) == (3, [])

    answer = httpx.post(
        f"{proxy_url}/{index_name}/_search",
        json={"query": {"match": {"body": "fox"}}},
        params={"collapse": "false"},
    )
    assert answer.status_code == 200
    assert answer.headers["x-elastic-product"] == "Elasticsearch"
    ids = sorted(hit["_id"] for hit in answer.json()["hits"]["hits"])
    assert ids == ["0", "2"]


def test_elasticsearch_errors_pass_through_with_their_status(proxy_url: str) -> None:
    answer = httpx.post(f"{proxy_url}/no-such-index-anywhere/_search", json={})
    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "index_not_found_exception"


def test_unreachable_cluster_answers_503_in_elasticsearch_shape() -> None:
    from collapse.app import create_app
    from collapse.settings import Settings
    from tests.conftest import ServerThread, free_port

    dead = f"http://127.0.0.1:{free_port()}"
    with ServerThread(create_app(Settings(es_url=[dead]))) as server:
        answer = httpx.get(f"{server.url}/_search")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == 503
    assert body["error"]["type"] == "upstream_unavailable"
    assert dead in body["error"]["reason"]
