"""Errors through the proxy are Elasticsearch's own, status and body: each request is sent to
the real node directly and through the proxy (collapsing on), and the answers compared."""

from __future__ import annotations

import datetime
import random
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from tests.proxy_support import create_index, fingerprints, index_docs, text

pytestmark = pytest.mark.es


@pytest.fixture
def small_window(es: Elasticsearch, index_name: str) -> str:
    """Twelve unrelated documents in an index whose ``max_result_window`` is 20 (below the
    proxy's default window of 30 hits)."""
    rng = random.Random(3)
    texts = [text(rng, 120, "harbour") for _ in range(12)]
    create_index(es, index_name)
    es.indices.put_settings(index=index_name, settings={"index.max_result_window": 20})
    index_docs(
        es,
        index_name,
        [
            {"_id": f"d{n}", "n": n, "body": t, "collapse_fp": fp}
            for n, (t, fp) in enumerate(zip(texts, fingerprints(texts), strict=True))
        ],
    )
    return index_name


def both(
    es_url: str, proxy_url: str, method: str, path: str, **kw: Any
) -> tuple[httpx.Response, httpx.Response]:
    direct = httpx.request(method, es_url + path, timeout=30, **kw)
    proxied = httpx.request(method, proxy_url + path, timeout=30, **kw)
    return direct, proxied


def same_error(direct: httpx.Response, proxied: httpx.Response) -> None:
    assert direct.status_code >= 400, direct.text
    assert (proxied.status_code, proxied.json()) == (direct.status_code, direct.json())


@pytest.mark.parametrize(
    "request_kw",
    [
        {"params": {"from": "-1"}},
        {"params": {"size": "-1"}},
        {"json": {"from": -2}},
        {"json": {"size": -3}},
        {"params": {"size": "ten"}},
        {"content": b'{"query": ', "headers": {"content-type": "application/json"}},
    ],
)
def test_invalid_from_size_and_bodies_get_elasticsearchs_error(
    es_url: str, proxy_url: str, small_window: str, request_kw: dict[str, Any]
) -> None:
    same_error(*both(es_url, proxy_url, "POST", f"/{small_window}/_search", **request_kw))


@pytest.mark.parametrize(("start", "size"), [(25, 10), (15, 10), (0, 21), (2000, 10)])
def test_beyond_max_result_window_is_elasticsearchs_400(
    es_url: str, proxy_url: str, small_window: str, start: int, size: int
) -> None:
    body = {"from": start, "size": size, "sort": ["n"]}
    same_error(*both(es_url, proxy_url, "POST", f"/{small_window}/_search", json=body))


def test_a_small_max_result_window_still_answers_like_elasticsearch(
    es_url: str, proxy_url: str, small_window: str
) -> None:
    for body in ({"size": 10, "sort": ["n"]}, {"from": 10, "size": 10, "sort": ["n"]}):
        for _ in range(2):  # learnt on the first request, known on the second
            direct, proxied = both(es_url, proxy_url, "POST", f"/{small_window}/_search", json=body)
            assert proxied.status_code == 200, proxied.text
            ids = [h["_id"] for h in proxied.json()["hits"]["hits"]]
            assert ids == [h["_id"] for h in direct.json()["hits"]["hits"]]
            assert proxied.json()["collapse"]["degraded"] is False
    total = httpx.post(
        f"{proxy_url}/{small_window}/_search",
        params={"collapse_total": "true"},
        json={"query": {"match": {"body": "harbour"}}},
    ).json()
    assert total["collapse"]["degraded"] is False and total["collapse"]["total_groups"] == 12


def test_small_window_point_in_time(es: Elasticsearch, proxy_url: str, small_window: str) -> None:
    pit = es.open_point_in_time(index=small_window, keep_alive="1m")["id"]
    try:
        body = {"size": 5, "pit": {"id": pit, "keep_alive": "1m"}, "sort": [{"n": "asc"}]}
        got = httpx.post(f"{proxy_url}/_search", json=body)
        assert got.status_code == 200, got.text
        assert [h["_source"]["n"] for h in got.json()["hits"]["hits"]] == [0, 1, 2, 3, 4]
    finally:
        es.close_point_in_time(id=pit)


@pytest.mark.parametrize(
    "lines",
    [
        b'{"index": "{i}", "bogus": 1}\n{}\n',
        b"not json\n{}\n",
        b'{"index": "{i}"}\n{"size": -1}\n{"index": "{i}"}\n{}\n',
        b'{"index": "{i}"}\n{"query": {"nope": {}}}\n',
    ],
)
def test_invalid_msearch_gets_elasticsearchs_answer(
    es_url: str, proxy_url: str, small_window: str, lines: bytes
) -> None:
    content = lines.replace(b"{i}", small_window.encode())
    headers = {"content-type": "application/x-ndjson"}
    direct, proxied = both(es_url, proxy_url, "POST", "/_msearch", content=content, headers=headers)
    assert proxied.status_code == direct.status_code, proxied.text
    if direct.status_code >= 400:
        assert proxied.json() == direct.json()
    else:  # an item's own error, in its place
        assert [r.get("error") for r in proxied.json()["responses"]] == [
            r.get("error") for r in direct.json()["responses"]
        ]


@pytest.fixture
def dated(es: Elasticsearch) -> Iterator[str]:
    """A date-math expression for today's index of a fresh prefix; the index exists."""
    prefix = f"test-datemath-{uuid.uuid4().hex[:8]}"
    today = datetime.datetime.now(datetime.UTC).strftime("%Y.%m.%d")
    create_index(es, f"{prefix}-{today}")
    rng = random.Random(4)
    t = text(rng, 120, "harbour")
    index_docs(es, f"{prefix}-{today}", [{"_id": "a", "n": 1, "body": t}])
    yield prefix
    es.options(ignore_status=404).indices.delete(index=f"{prefix}-{today}")


def test_date_math_index_names(es_url: str, proxy_url: str, dated: str) -> None:
    path = f"/%3C{dated}-%7Bnow%2Fd%7D%3E"
    for endpoint in ("_search", "_count", "_msearch"):
        kw: dict[str, Any] = {"json": {}}
        if endpoint == "_msearch":
            kw = {"content": b"{}\n{}\n", "headers": {"content-type": "application/x-ndjson"}}
        direct, proxied = both(es_url, proxy_url, "POST", f"{path}/{endpoint}", **kw)
        assert proxied.status_code == 200 == direct.status_code, proxied.text
        if endpoint == "_search":
            assert [h["_id"] for h in proxied.json()["hits"]["hits"]] == ["a"]
    missing = f"/%3C{dated}-missing-%7Bnow%2Fd%7D%3E/_search"
    direct = httpx.get(es_url + missing)
    for params in ({}, {"collapse": "false"}):
        same_error(direct, httpx.get(proxy_url + missing, params=params))
    assert direct.json()["error"]["type"] == "index_not_found_exception"
