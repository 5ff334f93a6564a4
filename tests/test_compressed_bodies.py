"""Request bodies sent compressed (``Content-Encoding: gzip`` / ``deflate``), as
elasticsearch-py's ``http_compress=True`` and Beats send them, are searched and written
through the proxy as Elasticsearch would take them; bodies that do not decode, decode past
the size limit or use another coding are refused with nothing written."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.codings import decode_body
from collapse.errors import BadRequest, PayloadTooLarge, UnsupportedEncoding
from collapse.settings import Settings
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index
from tests.conftest import ServerThread
from tests.test_ingest import prose
from tests.test_proxy_search import SORTED, wire_story

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

KEY = "compressed-bodies-key-0123456789"
LIMIT = 200_000  # the small proxy's max_body_bytes


@pytest.fixture(scope="module")
def small_writer(es_url: str) -> Iterator[str]:
    """A proxy with the write path on and a body limit of :data:`LIMIT` bytes."""
    settings = Settings(es_url=[es_url], write_api_key=KEY, max_body_bytes=LIMIT)
    with ServerThread(create_app(settings)) as server:
        yield server.url


def _post(url: str, body: bytes, encoding: str, **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", "content-encoding": encoding, **headers}
    return httpx.post(url, content=body, headers=sent, timeout=30)


def test_the_official_client_with_http_compress_searches_collapsed(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    client = Elasticsearch(proxy_url, http_compress=True, request_timeout=30)
    out = client.search(index=index_name, query=SORTED["query"], sort=SORTED["sort"], size=3)
    assert [h["_id"] for h in out["hits"]["hits"]] == ["c0", "u0", "u1"]
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 19
    multi = client.msearch(searches=[{"index": index_name}, {**SORTED, "size": 1}])
    assert multi["responses"][0]["hits"]["hits"][0]["_collapse"]["folded"] == 19
    assert client.count(index=index_name, query=SORTED["query"])["count"] == 60


@pytest.mark.parametrize(
    "encoding, pack",
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("gzip", lambda b: gzip.compress(b[:7]) + gzip.compress(b[7:])),  # two gzip members
        ("deflate", zlib.compress),  # a zlib stream, as HTTP's deflate is defined
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate data, as some clients send
        ("gzip, deflate", lambda b: zlib.compress(gzip.compress(b))),  # applied in this order
        ("identity", lambda b: b),
    ],
)
def test_every_coding_gives_the_answer_of_the_plain_body(
    es: Elasticsearch,
    index_name: str,
    proxy_url: str,
    encoding: str,
    pack: Callable[[bytes], bytes],
) -> None:
    wire_story(es, index_name)
    body = json.dumps({**SORTED, "size": 4}).encode()
    url = f"{proxy_url}/{index_name}/_search"
    plain = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=30)
    packed = _post(url, pack(body), encoding)
    assert packed.status_code == 200, packed.text
    ids = [h["_id"] for h in packed.json()["hits"]["hits"]]
    assert ids == [h["_id"] for h in plain.json()["hits"]["hits"]] == ["c0", "u0", "u1", "u2"]
    assert packed.json()["hits"]["hits"][0]["_collapse"]["folded"] == 19


def _bulk(index: str, n: int, seed: int = 0) -> bytes:
    lines = []
    for i in range(n):
        lines.append(json.dumps({"index": {"_index": index, "_id": f"d{seed}-{i}"}}))
        lines.append(json.dumps({"title": f"Story {i}", "body": prose(seed + i, 120)}))
    return ("\n".join(lines) + "\n").encode()


def test_a_gzip_bulk_load_is_written_with_fingerprints(
    es: Elasticsearch, index_name: str, small_writer: str
) -> None:
    ensure_index(es, index_name)
    answer = _post(
        f"{small_writer}/_bulk?refresh=true",
        gzip.compress(_bulk(index_name, 5)),
        "gzip",
        **{"x-api-key": KEY, "content-type": "application/x-ndjson"},
    )
    assert answer.status_code == 200 and not answer.json()["errors"], answer.text
    for i in range(5):
        source = es.get(index=index_name, id=f"d0-{i}")["_source"]
        assert source["title"] == f"Story {i}"
        assert source[FINGERPRINT_FIELD]["token_count"] > 50


@pytest.mark.parametrize(
    "body, encoding, status, words",
    [
        ("not gzip", "gzip", 400, "does not decode"),
        ("truncated", "gzip", 400, "ends before"),
        ("bomb", "gzip", 413, "max_body_bytes"),
        ("plain", "br", 415, "gzip and deflate only"),
    ],
)
def test_a_body_that_does_not_decode_is_refused_and_nothing_is_written(
    es: Elasticsearch,
    index_name: str,
    small_writer: str,
    body: str,
    encoding: str,
    status: int,
    words: str,
) -> None:
    ensure_index(es, index_name)
    bulk = _bulk(index_name, 3)
    sent = {
        "not gzip": b"this is not gzip at all",
        "truncated": gzip.compress(bulk)[:-9],
        "bomb": gzip.compress(bulk + b"\n" * (LIMIT * 3)),  # a few KB that decode past the limit
        "plain": bulk,
    }[body]
    assert len(sent) < LIMIT
    answer = _post(
        f"{small_writer}/_bulk?refresh=true",
        sent,
        encoding,
        **{"x-api-key": KEY, "content-type": "application/x-ndjson"},
    )
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert words in error["reason"] and error["root_cause"][0]["reason"] == error["reason"]
    assert answer.json()["status"] == status
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == 0


def test_decode_body_undoes_random_codings_and_holds_the_limit() -> None:
    rng = random.Random(11)
    coders: dict[str, Callable[[bytes], bytes]] = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
    }
    for _ in range(200):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 3000)))
        data += b"a" * rng.randrange(0, 5000)  # something that compresses
        codings = [rng.choice(list(coders)) for _ in range(rng.randrange(1, 3))]
        packed = data
        for coding in codings:
            packed = coders[coding](packed)
        assert decode_body(packed, codings, 10**7) == data
        if len(codings) == 1:  # (an inner coding's bytes may outgrow the data they hold)
            assert decode_body(packed, codings, len(data)) == data
        with pytest.raises(PayloadTooLarge):
            decode_body(packed, codings, len(data) - 1)
    with pytest.raises(BadRequest):
        decode_body(gzip.compress(b"{}") + b"junk", ["gzip"], 100)
    with pytest.raises(BadRequest):
        decode_body(zlib.compress(b"{}") + zlib.compress(b"{}"), ["deflate"], 100)
    with pytest.raises(UnsupportedEncoding):
        decode_body(b"{}", ["zstd"], 100)


def test_a_compressed_body_larger_than_the_limit_as_sent_is_refused_while_it_streams(
    small_writer: str,
) -> None:
    """Chunked (no Content-Length), so the size is known only as the body arrives."""
    rng = random.Random(5)
    noise = bytes(rng.getrandbits(8) for _ in range(LIMIT - 10))  # does not compress
    packed = gzip.compress(noise)
    assert len(noise) < LIMIT < len(packed)  # over the limit as sent, not once decoded

    def chunks() -> Iterator[bytes]:
        for at in range(0, len(packed), 16_384):
            yield packed[at : at + 16_384]

    answer = httpx.post(
        f"{small_writer}/_search",
        content=chunks(),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
        timeout=30,
    )
    assert answer.status_code == 413, answer.text
    assert "max_body_bytes" in answer.json()["error"]["reason"]
