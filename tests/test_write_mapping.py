"""Writes through the proxy map ``collapse_fp`` where the target index lacks it, on the real node:
an index the user created with their own mapping gets it beside their fields (and ``indexer
init`` then accepts the index), a missing index is created with it where Elasticsearch would
create it for the write, and nothing is created where it would not."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.settings import Settings
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index, fingerprint_mapping
from tests.conftest import ServerThread
from tests.faults import HoldingRelay
from tests.test_ingest import prose, read_from_doc_values

pytestmark = pytest.mark.opensearch

KEY = "write-mapping-key-0123456789"
AUTH = {"x-api-key": KEY}
NDJSON = {"content-type": "application/x-ndjson", **AUTH}
USER_MAPPING: dict[str, Any] = {
    "_meta": {"owner": "the app"},
    "properties": {"title": {"type": "text"}, "body": {"type": "text"}, "tag": {"type": "keyword"}},
}


@pytest.fixture(scope="module")
def writer(es_url: str) -> Iterator[str]:
    with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=KEY))) as server:
        yield server.url


def _fp_mapping(es: Elasticsearch, index: str) -> dict[str, Any]:
    mappings = es.indices.get_mapping(index=index)[index]["mappings"]
    return mappings["properties"].get(FINGERPRINT_FIELD, {})


def _bulk(url: str, index: str, n: int, params: dict[str, str] | None = None) -> httpx.Response:
    lines = []
    for i in range(n):
        lines.append(json.dumps({"index": {"_index": index, "_id": f"d{i}"}}))
        lines.append(json.dumps({"title": "Story", "body": prose(7, 80), "tag": "t"}))
    return httpx.post(
        f"{url}/_bulk",
        params={"refresh": "true", **(params or {})},
        content="\n".join(lines) + "\n",
        headers=NDJSON,
        timeout=30,
    )


def test_an_index_with_the_users_own_mapping_gets_collapse_fp_beside_it(
    es: Elasticsearch, writer: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings=USER_MAPPING)
    answer = _bulk(writer, index_name, 3)
    assert answer.status_code == 200 and not answer.json()["errors"], answer.text
    assert answer.headers["x-collapse-fingerprinted"] == "3"
    mappings = es.indices.get_mapping(index=index_name)[index_name]["mappings"]
    # the user's fields and _meta untouched; collapse_fp as init maps it, not dynamically
    assert mappings["_meta"] == USER_MAPPING["_meta"]
    assert {k: mappings["properties"][k] for k in ("title", "body", "tag")} == USER_MAPPING[
        "properties"
    ]
    fp = _fp_mapping(es, index_name)
    assert fp["properties"]["band"] == {"type": "keyword", "doc_values": False}
    assert fp["properties"]["packed"]["type"] == "binary"
    assert str(fp.get("dynamic")).lower() == "false"
    # the proxy's refills read the fingerprints from doc values, and init accepts the index
    by_id, without = read_from_doc_values(es, index_name)
    assert set(by_id) == {"d0", "d1", "d2"} and without == 0
    assert ensure_index(es, index_name) == "compatible"


def test_a_missing_index_is_created_with_it_where_elasticsearch_would_create_one(
    es: Elasticsearch, writer: str, index_name: str
) -> None:
    answer = httpx.put(
        f"{writer}/{index_name}/_doc/one",
        params={"refresh": "true"},
        json={"title": "Story", "body": prose(3, 80)},
        headers=AUTH,
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    fp = _fp_mapping(es, index_name)
    assert fp["properties"] == fingerprint_mapping()["properties"]  # as init maps it
    assert str(fp["dynamic"]).lower() == "false"
    assert es.get(index=index_name, id="one")["_source"][FINGERPRINT_FIELD]["band"]


def test_a_write_arriving_during_the_first_check_waits_for_it(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Let through, it would auto-create the index with collapse_fp mapped dynamically."""
    relay = HoldingRelay(urlsplit(es_url).port or 9200, b"/_mapping/field/")
    try:
        settings = Settings(es_url=[relay.url], write_api_key=KEY)
        with ServerThread(create_app(settings)) as server, ThreadPoolExecutor(2) as pool:
            first = pool.submit(_bulk, server.url, index_name, 2)
            assert relay.held.wait(10)  # the first write's check, held at the relay
            second = pool.submit(_bulk, server.url, index_name, 2)
            time.sleep(0.5)  # ample for the second write to reach the node, were it let through
            assert not es.indices.exists(index=index_name)
            relay.release.set()
            answers = [first.result(30), second.result(30)]
    finally:
        relay.close()
    assert all(a.status_code == 200 and not a.json()["errors"] for a in answers)
    assert _fp_mapping(es, index_name)["properties"]["band"]["type"] == "keyword"


def test_a_write_naming_a_pattern_changes_no_mapping(
    es: Elasticsearch, writer: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings=USER_MAPPING)
    answer = _bulk(writer, index_name + "*", 1)  # Elasticsearch refuses the item
    assert answer.status_code in (200, 400), answer.text
    assert FINGERPRINT_FIELD not in es.indices.get_mapping(index=index_name)[index_name][
        "mappings"
    ].get("properties", {})


def test_nothing_is_created_for_a_write_that_requires_an_alias(
    es: Elasticsearch, writer: str, index_name: str
) -> None:
    answer = _bulk(writer, index_name, 1, {"require_alias": "true"})
    assert answer.status_code == 200 and answer.json()["errors"], answer.text
    assert not es.indices.exists(index=index_name)


def test_nothing_is_created_where_the_cluster_does_not_auto_create(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.cluster.put_settings(persistent={"action.auto_create_index": "false"})
    try:
        # a proxy of its own: the setting is read once per period
        with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=KEY))) as server:
            answer = _bulk(server.url, index_name, 1)
        assert answer.status_code == 200 and answer.json()["errors"], answer.text
        assert not es.indices.exists(index=index_name)
    finally:
        es.cluster.put_settings(persistent={"action.auto_create_index": None})


def test_a_dynamically_mapped_fingerprint_is_left_and_writes_go_on(
    es: Elasticsearch, writer: str, index_name: str
) -> None:
    es.index(
        index=index_name,
        id="old",
        document={"body": "x", FINGERPRINT_FIELD: {"version": "v", "band": ["00aa"]}},
        refresh=True,
    )
    before = _fp_mapping(es, index_name)
    assert before["properties"]["band"]["type"] == "text"
    answer = _bulk(writer, index_name, 2)
    assert answer.status_code == 200 and not answer.json()["errors"], answer.text
    assert es.count(index=index_name)["count"] == 3
    assert _fp_mapping(es, index_name)["properties"]["band"]["type"] == "text"


def test_the_setting_off_changes_no_mapping(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings=USER_MAPPING)
    settings = Settings(es_url=[es_url], write_api_key=KEY, write_map_fingerprints=False)
    with ServerThread(create_app(settings)) as server:
        answer = _bulk(server.url, index_name, 1)
    assert answer.status_code == 200 and not answer.json()["errors"], answer.text
    assert _fp_mapping(es, index_name)["properties"]["band"]["type"] == "text"
