"""The write path on the real node: documents written through the proxy carry the fingerprint
``indexer ingest`` computes for them, answers are Elasticsearch's, and refused writes reach
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np
import pytest
from elasticsearch import ApiError, Elasticsearch, helpers

from collapse.app import create_app
from collapse.enrich import parse_bulk, render_bulk
from collapse.errors import BadRequest
from collapse.settings import Settings
from indexer.boilerplate import HostModel, doc_shingle_sets
from indexer.boilerplate_store import MODEL_KEY, model_version, save_models
from indexer.fingerprints import decode_id, encode_id
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index
from indexer.prepare import PrepareConfig, Ready, prepare_batch
from indexer.sources import RawItem
from tests.conftest import ServerThread
from tests.faults import HoldingRelay
from tests.test_ingest import PACKED_FIELD, assert_packed_holds, prose, read_from_doc_values

pytestmark = pytest.mark.opensearch

KEY = "write-path-key-0123456789"
AUTH = {"x-api-key": KEY}
NDJSON = {"content-type": "application/x-ndjson", **AUTH}


@pytest.fixture(scope="module")
def writer(es_url: str) -> Iterator[str]:
    """A proxy with the write path on (the key configured)."""
    with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=KEY))) as server:
        yield server.url


@pytest.fixture
def index(es: Elasticsearch, index_name: str) -> str:
    ensure_index(es, index_name)
    return index_name


def doc(seed: int, **extra: Any) -> dict[str, Any]:
    return {"title": f"Story {seed}", "body": prose(seed, 120), "tag": "t", **extra}


def expected_fp(
    source: dict[str, Any], doc_id: str | None, models: dict[str, HostModel] | None = None
) -> dict:
    """What ``indexer ingest`` stores for this document under ``doc_id`` (its worker-side
    preparation); ``doc_id`` None: an id Elasticsearch generates, so no ``collapse_fp.id``."""
    item = RawItem(0, "test", 1, "jsonl", json.dumps({**source, "id": doc_id or "x"}).encode())
    (ready,) = prepare_batch([item], PrepareConfig(), models or {})
    assert isinstance(ready, Ready)
    fp = json.loads(ready.body)[FINGERPRINT_FIELD]
    assert fp.pop("id") == encode_id(doc_id or "x")
    return {**fp, "id": encode_id(doc_id)} if doc_id is not None else fp


def stored(es: Elasticsearch, index: str, doc_id: str) -> dict[str, Any]:
    return es.get(index=index, id=doc_id)["_source"]


def test_single_document_writes_store_the_indexers_fingerprint(
    es: Elasticsearch, writer: str, index: str
) -> None:
    put = httpx.put(f"{writer}/{index}/_doc/1", json=doc(1), headers=AUTH)
    assert put.status_code == 201 and put.json()["result"] == "created"
    assert put.headers["x-collapse-fingerprinted"] == "1"
    again = httpx.post(f"{writer}/{index}/_doc/1", json=doc(2), headers=AUTH)
    assert again.status_code == 200 and again.json()["result"] == "updated"
    auto = httpx.post(
        f"{writer}/{index}/_doc", json=doc(3), headers=AUTH, params={"refresh": "true"}
    )
    assert auto.status_code == 201 and auto.json()["forced_refresh"] is True
    created = httpx.put(f"{writer}/{index}/_create/c", json=doc(4), headers=AUTH)
    assert created.status_code == 201 and set(created.json()) >= {"_index", "_id", "_version"}

    for doc_id, seed, named in (("1", 2, True), (auto.json()["_id"], 3, False), ("c", 4, True)):
        source = stored(es, index, doc_id)
        assert source[FINGERPRINT_FIELD] == expected_fp(doc(seed), doc_id if named else None)
        assert {k: v for k, v in source.items() if k != FINGERPRINT_FIELD} == doc(seed)


def test_ids_with_a_slash_are_written_read_and_deleted_whole(
    es: Elasticsearch, writer: str, index: str
) -> None:
    client = Elasticsearch(writer, headers=AUTH, request_timeout=30)
    doc_id = "site/2026/story 1"
    try:
        made = client.index(index=index, id=doc_id, document=doc(1), refresh=True)
        assert made["_id"] == doc_id and made["result"] == "created"
        assert client.create(index=index, id="b/2", document=doc(2))["_id"] == "b/2"
        client.update(index=index, id="b/2", doc={"tag": "u"}, refresh=True)
        assert client.get(index=index, id=doc_id)["_id"] == doc_id
        assert stored(es, index, doc_id)[FINGERPRINT_FIELD] == expected_fp(doc(1), doc_id)
        assert stored(es, index, "b/2")[FINGERPRINT_FIELD] == expected_fp(doc(2), "b/2")
        assert stored(es, index, "b/2")["tag"] == "u"
        assert client.delete(index=index, id=doc_id, refresh=True)["result"] == "deleted"
        assert not es.exists(index=index, id=doc_id)
    finally:
        client.close()


def test_explicit_ids_are_readable_from_doc_values_and_generated_ones_are_not(
    es: Elasticsearch, writer: str, index: str
) -> None:
    """A document written with an id the client names carries that ``_id`` in
    ``collapse_fp.id``: a doc-values-only search reads it, and the packed fingerprint, back.
    One whose id Elasticsearch generates has none (the proxy does not make ids up), but its
    ``packed`` all the same (it does not depend on the id)."""
    single = "dossier été ☃ a?b#c%d+e"  # non-ASCII, and what a URL path must escape
    in_bulk = ["dossier/été ☃", "日本/語", "new/ü"]
    client = Elasticsearch(writer, headers=AUTH, request_timeout=30)
    try:
        assert client.index(index=index, id=single, document=doc(1))["_id"] == single
        edited = client.update(index=index, id=single, doc={"title": "Edited"})
        assert edited["result"] == "updated"
        assert client.create(index=index, id="é", document=doc(2))["result"] == "created"
        auto = client.index(index=index, document=doc(3))["_id"]
    finally:
        client.close()
    body = bulk_body(
        [
            {"index": {"_id": in_bulk[0]}},
            doc(4),
            {"create": {"_id": in_bulk[1]}},
            doc(5),
            {"update": {"_id": in_bulk[2]}},
            {"doc": doc(6), "doc_as_upsert": True},
            {"index": {}},  # an id Elasticsearch generates
            doc(7),
            {"index": {"_id": 8}},  # a number: Elasticsearch keeps its JSON text as the id
            doc(8),
        ]
    )
    answer = httpx.post(f"{writer}/{index}/_bulk", content=body, headers=NDJSON)
    assert answer.status_code == 200 and answer.json()["errors"] is False, answer.text
    generated = answer.json()["items"][3]["index"]["_id"]
    assert answer.headers["x-collapse-fingerprinted"] == "5"
    named = [single, "é", *in_bulk]
    es.indices.refresh(index=index)
    slim, without = read_from_doc_values(es, index)
    assert set(slim) == set(named)
    assert without == 3  # auto, generated, "8"
    for doc_id in named:
        fp = stored(es, index, doc_id)[FINGERPRINT_FIELD]
        assert decode_id(fp["id"]) == doc_id
        assert slim[doc_id] == {PACKED_FIELD: fp["packed"]}, doc_id
        assert_packed_holds(slim[doc_id][PACKED_FIELD], fp)
    assert stored(es, index, single)[FINGERPRINT_FIELD] == expected_fp(
        {**doc(1), "title": "Edited"}, single
    )
    for doc_id, seed in ((auto, 3), (generated, 7), ("8", 8)):
        fp = stored(es, index, doc_id)[FINGERPRINT_FIELD]
        assert "id" not in fp and fp == expected_fp(doc(seed), None), doc_id


def test_create_conflict_and_es_errors_pass_through(
    es: Elasticsearch, writer: str, index: str
) -> None:
    assert httpx.put(f"{writer}/{index}/_create/c", json=doc(1), headers=AUTH).status_code == 201
    conflict = httpx.put(f"{writer}/{index}/_create/c", json=doc(2), headers=AUTH)
    direct = es.options(ignore_status=409).create(index=index, id="c", document=doc(2))
    assert conflict.status_code == 409
    assert conflict.json()["error"]["type"] == direct.body["error"]["type"]
    assert stored(es, index, "c")["body"] == doc(1)["body"]


def test_document_without_text_is_forwarded_without_fingerprint(
    es: Elasticsearch, writer: str, index: str
) -> None:
    answer = httpx.put(f"{writer}/{index}/_doc/n", json={"title": "only a title"}, headers=AUTH)
    assert answer.status_code == 201
    assert answer.headers["x-collapse-not-fingerprinted"] == "1"
    assert stored(es, index, "n") == {"title": "only a title"}


def bulk_body(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_bulk_index_create_update_delete(es: Elasticsearch, writer: str, index: str) -> None:
    es.index(index=index, id="gone", document={"body": "to delete"})
    es.index(index=index, id="taken", document={"body": "first"}, refresh=True)
    body = bulk_body(
        [
            {"index": {"_id": "a"}},
            doc(1),
            {"create": {"_index": index, "_id": "b"}},
            doc(2, url="https://news.example/b"),
            {"create": {"_id": "taken"}},
            doc(3),
            {"delete": {"_id": "gone"}},
        ]
    )
    answer = httpx.post(f"{writer}/{index}/_bulk", content=body, headers=NDJSON)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["errors"] is True
    assert [next(iter(i.values()))["status"] for i in result["items"]] == [201, 201, 409, 200]
    assert result["items"][2]["create"]["error"]["type"] == "version_conflict_engine_exception"
    assert answer.headers["x-collapse-fingerprinted"] == "3"
    assert stored(es, index, "a")[FINGERPRINT_FIELD] == expected_fp(doc(1), "a")
    b = doc(2, url="https://news.example/b")
    assert stored(es, index, "b")[FINGERPRINT_FIELD] == expected_fp(b, "b")
    assert FINGERPRINT_FIELD not in stored(es, index, "taken")
    assert not es.exists(index=index, id="gone")

    # Updates: text changes are merged over the stored document (one _mget), others left alone.
    updates = bulk_body(
        [
            {"update": {"_id": "a"}},
            {"doc": {"body": prose(9, 120)}},
            {"update": {"_id": "b"}},
            {"doc": {"tag": "other"}},
            {"update": {"_id": "new"}},
            {"doc": doc(5), "doc_as_upsert": True},
            {"update": {"_id": "missing"}},
            {"doc": {"body": "x"}},
        ]
    )
    answer = httpx.post(
        f"{writer}/{index}/_bulk", content=updates, headers=NDJSON, params={"refresh": "wait_for"}
    )
    items = answer.json()["items"]
    assert [i["update"]["status"] for i in items] == [200, 200, 201, 404]
    assert stored(es, index, "a")[FINGERPRINT_FIELD] == expected_fp(
        {**doc(1), "body": prose(9, 120)}, "a"
    )
    assert stored(es, index, "b")[FINGERPRINT_FIELD] == expected_fp(b, "b")
    assert stored(es, index, "b")["tag"] == "other"
    assert stored(es, index, "new")[FINGERPRINT_FIELD] == expected_fp(doc(5), "new")


def test_update_endpoint_keeps_the_fingerprint_current(
    es: Elasticsearch, writer: str, index: str
) -> None:
    es.index(index=index, id="u", document=doc(1))
    answer = httpx.post(
        f"{writer}/{index}/_update/u", json={"doc": {"title": "New title"}}, headers=AUTH
    )
    assert answer.status_code == 200 and answer.json()["result"] == "updated"
    assert stored(es, index, "u")[FINGERPRINT_FIELD] == expected_fp(
        {**doc(1), "title": "New title"}, "u"
    )
    emptied = httpx.post(f"{writer}/{index}/_update/u", json={"doc": {"body": None}}, headers=AUTH)
    assert emptied.status_code == 200
    assert emptied.headers["x-collapse-not-fingerprinted"] == "1"
    assert stored(es, index, "u")[FINGERPRINT_FIELD] is None  # no stale fingerprint


def test_an_update_clears_the_sketches_an_earlier_generation_stored(
    es: Elasticsearch, writer: str, index: str
) -> None:
    """A stored object of an earlier generation holds ``minhash`` and ``numbers`` beside
    ``packed``: the update's new fingerprint is merged into it, with null over those two."""
    earlier = {
        **expected_fp(doc(1), "u"),
        "version": "sh5-older",
        "minhash": "AA==",
        "numbers": "AAAA",
    }
    es.index(index=index, id="u", document={**doc(1), FINGERPRINT_FIELD: earlier})
    answer = httpx.post(
        f"{writer}/{index}/_update/u", json={"doc": {"title": "New title"}}, headers=AUTH
    )
    assert answer.status_code == 200 and answer.json()["result"] == "updated"
    want = expected_fp({**doc(1), "title": "New title"}, "u")
    assert stored(es, index, "u")[FINGERPRINT_FIELD] == {**want, "minhash": None, "numbers": None}


@pytest.mark.parametrize("route", ["update", "bulk", "bulk filtered", "update filtered"])
def test_a_write_between_the_read_and_the_update_is_not_overwritten_with_a_stale_fingerprint(
    es: Elasticsearch, es_url: str, index: str, route: str
) -> None:
    """The update's fingerprint is computed from the document read first; when another client
    rewrites the body before the update lands, the proxy's conditional update is refused, it
    reads again and the stored fingerprint is that of the text finally stored."""
    es.index(index=index, id="r", document=doc(1), refresh=True)
    filtered = route.endswith("filtered")  # the conflict is read from the answer even then
    route = route.split()[0]
    params = {"filter_path": "items.*.result,result"} if filtered else {}
    pattern = f"/{index}/_update/r".encode() if route == "update" else b"_bulk"
    relay = HoldingRelay(int(es_url.rsplit(":", 1)[1]), pattern)
    settings = Settings(es_url=[relay.url], write_api_key=KEY)
    try:
        with ServerThread(create_app(settings)) as server, ThreadPoolExecutor(1) as pool:
            if route == "update":
                sent = pool.submit(
                    httpx.post,
                    f"{server.url}/{index}/_update/r",
                    json={"doc": {"title": "Edited"}},
                    headers=AUTH,
                    params=params,
                    timeout=60,
                )
            else:
                lines = '{"update": {"_id": "r"}}\n{"doc": {"title": "Edited"}}\n'
                sent = pool.submit(
                    httpx.post,
                    f"{server.url}/{index}/_bulk",
                    content=lines,
                    headers=NDJSON,
                    params=params,
                    timeout=60,
                )
            assert relay.held.wait(30), "the proxy's update never came"
            es.index(index=index, id="r", document=doc(2))  # another client, directly
            relay.release.set()
            answer = sent.result(60)
    finally:
        relay.close()
    assert answer.status_code == 200, answer.text
    if filtered:  # applied by the proxy, as Elasticsearch would have
        want = {"items": [{"update": {"result": "updated"}}]} if route == "bulk" else {}
        assert answer.json() == (want or {"result": "updated"})
    elif route == "bulk":
        assert answer.json()["errors"] is False
        assert answer.json()["items"][0]["update"]["result"] == "updated"
    final = stored(es, index, "r")
    assert final["body"] == doc(2)["body"] and final["title"] == "Edited"
    assert final[FINGERPRINT_FIELD] == expected_fp({**doc(2), "title": "Edited"}, "r")


def test_the_clients_own_concurrency_control_is_kept(
    es: Elasticsearch, writer: str, index: str
) -> None:
    """An update conditional on a version the client names is refused as Elasticsearch refuses
    it: the proxy neither retries it nor replaces the condition with its own."""
    es.index(index=index, id="c", document=doc(1), refresh=True)
    lines = (
        '{"update": {"_id": "c", "if_seq_no": 99, "if_primary_term": 1}}\n'
        '{"doc": {"title": "Edited"}}\n'
    )
    bulk = httpx.post(f"{writer}/{index}/_bulk", content=lines, headers=NDJSON)
    assert bulk.status_code == 200 and bulk.json()["errors"] is True
    assert bulk.json()["items"][0]["update"]["status"] == 409
    single = httpx.post(
        f"{writer}/{index}/_update/c",
        params={"if_seq_no": "99", "if_primary_term": "1"},
        json={"doc": {"title": "Edited"}},
        headers=AUTH,
    )
    assert single.status_code == 409
    assert single.json()["error"]["type"] == "version_conflict_engine_exception"
    assert stored(es, index, "c")["title"] == doc(1)["title"]


def test_the_hosts_boilerplate_model_is_applied(es: Elasticsearch, es_url: str, index: str) -> None:
    store = f"{index}-models"
    furniture = prose(77, 300)
    sets = doc_shingle_sets([furniture], PrepareConfig().params)[0]
    model = HostModel("shop.example", 40, np.sort(sets.sim), np.sort(sets.mins))
    save_models(es, index, PrepareConfig().params.version, [model], store)
    page = {
        "title": "P",
        "body": furniture + " " + prose(5, 200),
        "url": "https://www.shop.example/p",
    }
    settings = Settings(es_url=[es_url], write_api_key=KEY, write_model_store=store)
    try:
        with ServerThread(create_app(settings)) as server:
            answer = httpx.put(f"{server.url}/{index}/_doc/p", json=page, headers=AUTH)
            assert answer.status_code == 201
            fp = stored(es, index, "p")[FINGERPRINT_FIELD]
            assert fp == expected_fp(page, "p", {"shop.example": model})
            assert fp != expected_fp(page, "p")
            assert fp[MODEL_KEY] == model_version(model)  # which model made it
            # moved to a host without a model: the stored model's name goes too
            moved = {"url": "https://other.example/p"}
            answer = httpx.post(
                f"{server.url}/{index}/_update/p", json={"doc": moved}, headers=AUTH
            )
            assert answer.status_code == 200, answer.text
            fp = stored(es, index, "p")[FINGERPRINT_FIELD]
            assert fp == {**expected_fp({**page, **moved}, "p"), MODEL_KEY: None}
    finally:
        es.options(ignore_status=404).indices.delete(index=store)


def count(es: Elasticsearch, index: str) -> int:
    es.indices.refresh(index=index)
    return int(es.count(index=index)["count"])


@pytest.mark.parametrize(
    "body",
    [
        b'{"index":{"_id":"1"}}\n{"body":"ok"}\n{"index":{"_id":"2"}}\n{"body": broken\n',
        b'{"index":{"_id":"1"}}\n{"body":"ok"}\n{"upsert_all":{"_id":"2"}}\n{"body":"x"}\n',
        b'{"index":{"_id":"1"}}\n{"body":"ok"}\n{"create":{"_id":"2"}}\n',
        b'{"index":{"_id":"1"}}\n["not", "an", "object"]\n',
        b'{"index":{"_id":"1"},"delete":{"_id":"2"}}\n{"body":"ok"}\n',
    ],
)
def test_malformed_bulk_answers_400_and_writes_nothing(
    es: Elasticsearch, writer: str, index: str, body: bytes
) -> None:
    answer = httpx.post(f"{writer}/{index}/_bulk", content=body, headers=NDJSON)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["type"] == "illegal_argument_exception"
    assert answer.json()["status"] == 400
    assert count(es, index) == 0


def test_refused_writes_reach_nothing(
    es: Elasticsearch, writer: str, proxy_url: str, index: str
) -> None:
    body = bulk_body([{"index": {"_id": "1"}}, doc(1)])
    missing = httpx.post(
        f"{writer}/{index}/_bulk", content=body, headers={"content-type": "application/x-ndjson"}
    )
    wrong = httpx.put(f"{writer}/{index}/_doc/1", json=doc(1), headers={"x-api-key": KEY + "x"})
    disabled = httpx.put(f"{proxy_url}/{index}/_doc/1", json=doc(1), headers=AUTH)
    assert (missing.status_code, wrong.status_code, disabled.status_code) == (401, 403, 403)
    for answer in (missing, wrong, disabled):
        assert answer.json()["error"]["type"] == "security_exception"
    assert count(es, index) == 0


def test_official_client_index_and_bulk(es: Elasticsearch, writer: str, index: str) -> None:
    client = Elasticsearch(writer, headers=AUTH, request_timeout=30)
    try:
        made = client.index(index=index, id="1", document=doc(1), refresh=True)
        assert made["result"] == "created"
        ok, errors = helpers.bulk(
            client,
            ({"_index": index, "_id": str(i), "_source": doc(i)} for i in range(2, 6)),
            refresh="wait_for",
        )
        assert (ok, errors) == (4, [])
        with pytest.raises(ApiError) as refused:
            Elasticsearch(writer).index(index=index, id="9", document=doc(9))
        assert refused.value.status_code == 401
    finally:
        client.close()
    for i in range(1, 6):
        assert stored(es, index, str(i))[FINGERPRINT_FIELD] == expected_fp(doc(i), str(i))


def test_unchanged_lines_are_forwarded_byte_for_byte() -> None:
    body = (
        b'{ "delete" : { "_id" : "1" } }\n'
        b'{"update":{"_id":"2"}}\n{ "doc" : { "tag" : 1.50 } }\n'
        b'{"index":{"_id":"3"}}\n{"title":"t"}\n'
    )
    items = parse_bulk(body)
    assert render_bulk(items) == body
    with pytest.raises(BadRequest):
        parse_bulk(b'{"index":{}}\n')
