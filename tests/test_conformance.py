"""Conformance: requests written from Elasticsearch's documented behaviour for search, msearch,
count, get, mget, scroll and point in time, each sent to the real node directly and through the
proxy with collapsing on, and the answers compared.

On an index without near-duplicates the answers must be the same apart from what the proxy
documents (docs/proxy.md): ``_collapse`` on each hit and ``collapse`` at the top of a collapsed
answer, ``collapse_fp`` left out of ``_source``, ``took`` (the proxy sums its fetches), and the
``"collapse:<cursor>"`` value appended to ``sort`` on searches that page with ``search_after``.
Over an index with near-duplicates, point-in-time pages never show a group twice.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from indexer.engine import OPENSEARCH
from indexer.es import close_point_in_time, open_point_in_time
from tests.conftest import ENGINE
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

TAGS = ["red", "green", "blue"]


@pytest.fixture(scope="module")
def plain(es: Elasticsearch) -> Iterator[str]:
    """30 unrelated fingerprinted documents: nothing folds, so answers must match."""
    name = f"test-conformance-{uuid.uuid4().hex[:8]}"
    rng = random.Random(19)
    texts = [text(rng, 150, "harbour" if i % 2 else "") for i in range(30)]
    create_index(es, name, tag={"type": "keyword"})
    index_docs(
        es,
        name,
        [
            {
                "_id": f"d{i}",
                "n": i,
                "tag": TAGS[i % 3],
                "title": f"title {i} harbour",
                "body": t,
                "collapse_fp": fp,
            }
            for i, (t, fp) in enumerate(zip(texts, fingerprints(texts), strict=True))
        ],
    )
    yield name
    es.options(ignore_status=404).indices.delete(index=name)


@pytest.fixture(scope="module")
def dups(es: Elasticsearch) -> Iterator[tuple[str, dict[str, str]]]:
    """15 stories in 4 copies each among 40 unrelated documents (55 groups); id -> story."""
    name = f"test-conformance-dups-{uuid.uuid4().hex[:8]}"
    rng = random.Random(23)
    texts: list[tuple[str, str, str]] = []
    for s in range(15):
        for k, t in enumerate(variants(text(rng, 250, "storm"), 4, rng)):
            texts.append((f"s{s}c{k}", f"s{s}", t))
    texts += [(f"u{i}", f"u{i}", text(rng, 200, "storm")) for i in range(40)]
    rng.shuffle(texts)
    fps = fingerprints([t for _, _, t in texts])
    create_index(es, name)
    index_docs(
        es,
        name,
        [
            {"_id": doc_id, "n": n, "body": t, "collapse_fp": fp}
            for n, ((doc_id, _, t), fp) in enumerate(zip(texts, fps, strict=True))
        ],
    )
    yield name, {doc_id: story for doc_id, story, _ in texts}
    es.options(ignore_status=404).indices.delete(index=name)


def normal(answer: Any) -> Any:
    """An answer without what the proxy documents as its own (module docstring)."""
    if isinstance(answer, list):
        return [normal(a) for a in answer]
    if not isinstance(answer, dict):
        return answer
    out = {k: normal(v) for k, v in answer.items() if k not in ("took", "collapse", "_collapse")}
    if isinstance(out.get("_source"), dict):
        out["_source"].pop("collapse_fp", None)
    out.pop("collapse_fp", None)  # a _source endpoint's answer is the source itself
    sort = out.get("sort")
    if isinstance(sort, list) and sort and str(sort[-1]).startswith("collapse:"):
        out["sort"] = sort[:-1]
    out.pop("pit_id", None)
    out.pop("_scroll_id", None)
    return out


def both(
    es_url: str, proxy_url: str, method: str, path: str, **kw: Any
) -> tuple[httpx.Response, httpx.Response]:
    direct = httpx.request(method, es_url + path, timeout=30, **kw)
    proxied = httpx.request(method, proxy_url + path, timeout=30, **kw)
    return direct, proxied


def same(es_url: str, proxy_url: str, method: str, path: str, **kw: Any) -> httpx.Response:
    """Send to both, assert the same status and (normalised) body; the proxy's answer."""
    direct, proxied = both(es_url, proxy_url, method, path, **kw)
    assert proxied.status_code == direct.status_code, (path, kw, proxied.text)
    if method == "HEAD":
        return proxied
    assert normal(proxied.json()) == normal(direct.json()), (path, kw)
    return proxied


SEARCHES: list[dict[str, Any]] = [
    {},
    {"query": {"match_all": {}}},
    {"query": {"match": {"body": "harbour"}}},
    {"query": {"match": {"body": "harbour"}}, "from": 3, "size": 4},
    {"query": {"term": {"tag": "red"}}, "sort": [{"n": "desc"}]},
    {"sort": [{"n": "asc"}], "_source": ["n", "tag"], "size": 5},
    {"sort": [{"n": "asc"}], "_source": False, "size": 3},
    {"sort": [{"n": "asc"}], "_source": {"excludes": ["body"]}, "size": 3},
    {"query": {"match": {"title": "harbour"}}, "highlight": {"fields": {"title": {}}}},
    {"query": {"match_all": {}}, "post_filter": {"term": {"tag": "blue"}}, "sort": ["n"]},
    {"track_total_hits": False, "sort": ["n"], "size": 2},
    {"track_total_hits": 5, "sort": ["n"], "size": 2},
    {"size": 0, "aggs": {"tags": {"terms": {"field": "tag"}}}},
    {"query": {"match": {"body": "nosuchwordanywhere"}}},
    {"sort": [{"n": "asc"}], "search_after": [10], "size": 5},
    {"sort": [{"n": "asc"}], "version": True, "seq_no_primary_term": True, "size": 2},
    {"sort": [{"n": "asc"}], "fields": ["tag"], "size": 2},
    {"query": {"range": {"n": {"gte": 5, "lt": 9}}}, "sort": [{"n": "desc"}]},
    {"collapse": {"field": "tag"}, "sort": [{"n": "asc"}]},
    {"query": {"bogus": {}}},
    {"size": -1},
    {"from": -1},
    {"sort": [{"nosuchfield": "asc"}]},
]


@pytest.mark.parametrize("body", SEARCHES, ids=[str(i) for i in range(len(SEARCHES))])
def test_search_bodies(es_url: str, proxy_url: str, plain: str, body: dict[str, Any]) -> None:
    same(es_url, proxy_url, "POST", f"/{plain}/_search", json=body)


@pytest.mark.parametrize(
    "params",
    [
        {"q": "body:harbour"},
        {"q": "harbour", "df": "title", "size": "3", "sort": "n:asc"},
        {"size": "2", "from": "1", "sort": "n:desc"},
        {"_source_includes": "n", "sort": "n"},
        {"_source": "false", "sort": "n"},
        {"filter_path": "hits.hits._id,hits.total", "sort": "n"},
        {"track_total_hits": "false", "sort": "n"},
        {"size": "abc"},
    ],
)
def test_search_query_strings(
    es_url: str, proxy_url: str, plain: str, params: dict[str, str]
) -> None:
    same(es_url, proxy_url, "GET", f"/{plain}/_search", params=params)


def test_search_all_indices_and_missing_ones(es_url: str, proxy_url: str, plain: str) -> None:
    same(es_url, proxy_url, "POST", f"/{plain}-nope/_search", json={})
    same(es_url, proxy_url, "POST", f"/{plain}-nope/_search?ignore_unavailable=true", json={})
    same(es_url, proxy_url, "POST", f"/{plain},{plain}-nope*/_search", json={"sort": ["n"]})


def test_msearch(es_url: str, proxy_url: str, plain: str) -> None:
    lines = [
        {"index": plain},
        {"query": {"match": {"body": "harbour"}}, "size": 3},
        {},
        {"sort": ["n"], "size": 2},
        {"index": f"{plain}-nope"},
        {},
        {"index": plain},
        {"query": {"bogus": {}}},
    ]
    content = b"".join(httpx.Request("POST", "/", json=line).content + b"\n" for line in lines)
    headers = {"content-type": "application/x-ndjson"}
    same(es_url, proxy_url, "POST", f"/{plain}/_msearch", content=content, headers=headers)
    bad = b'{"index": "' + plain.encode() + b'", "nope": 1}\n{}\n'
    same(es_url, proxy_url, "POST", "/_msearch", content=bad, headers=headers)


@pytest.mark.parametrize(
    "kw",
    [
        {"method": "GET"},
        {"method": "POST", "json": {"query": {"term": {"tag": "red"}}}},
        {"method": "GET", "params": {"q": "body:harbour"}},
        {"method": "POST", "json": {"query": {"bogus": {}}}},
    ],
)
def test_count(es_url: str, proxy_url: str, plain: str, kw: dict[str, Any]) -> None:
    kw = dict(kw)
    same(es_url, proxy_url, kw.pop("method"), f"/{plain}/_count", **kw)


def test_get(es_url: str, proxy_url: str, plain: str) -> None:
    same(es_url, proxy_url, "GET", f"/{plain}/_doc/d3")
    same(es_url, proxy_url, "GET", f"/{plain}/_doc/nope")
    same(es_url, proxy_url, "GET", f"/{plain}-nope/_doc/d3")
    same(es_url, proxy_url, "GET", f"/{plain}/_doc/d3", params={"_source_includes": "n,tag"})
    same(es_url, proxy_url, "GET", f"/{plain}/_doc/d3", params={"_source": "false"})
    same(es_url, proxy_url, "GET", f"/{plain}/_source/d3")
    same(es_url, proxy_url, "HEAD", f"/{plain}/_doc/d3")
    same(es_url, proxy_url, "HEAD", f"/{plain}/_doc/nope")


def test_mget(es_url: str, proxy_url: str, plain: str) -> None:
    docs = [{"_index": plain, "_id": "d1"}, {"_index": plain, "_id": "nope"}]
    same(es_url, proxy_url, "POST", "/_mget", json={"docs": docs})
    same(es_url, proxy_url, "POST", f"/{plain}/_mget", json={"ids": ["d2", "d5"]})
    same(
        es_url,
        proxy_url,
        "POST",
        f"/{plain}/_mget",
        json={"docs": [{"_id": "d2", "_source": ["n"]}, {"_id": "d4", "_source": False}]},
    )
    same(
        es_url, proxy_url, "POST", f"/{plain}/_mget", json={"ids": ["d2"]}, params={"_source": "n"}
    )
    same(
        es_url,
        proxy_url,
        "POST",
        "/_mget",
        json={"docs": [{"_index": f"{plain}-nope", "_id": "1"}]},
    )
    same(es_url, proxy_url, "POST", "/_mget", json={})


def test_scroll(es_url: str, proxy_url: str, plain: str) -> None:
    pages: dict[str, list[list[Any]]] = {}
    for base in (es_url, proxy_url):
        first = httpx.post(
            f"{base}/{plain}/_search", params={"scroll": "1m"}, json={"size": 8, "sort": ["n"]}
        ).json()
        got = [normal(first["hits"]["hits"])]
        scroll_id = first["_scroll_id"]
        while got[-1]:
            nxt = httpx.post(
                f"{base}/_search/scroll", json={"scroll": "1m", "scroll_id": scroll_id}
            )
            assert nxt.status_code == 200, nxt.text
            got.append(normal(nxt.json()["hits"]["hits"]))
            scroll_id = nxt.json()["_scroll_id"]
        cleared = httpx.request("DELETE", f"{base}/_search/scroll", json={"scroll_id": scroll_id})
        assert cleared.json() == {"succeeded": True, "num_freed": 1}
        pages[base] = got
    assert pages[proxy_url] == pages[es_url]
    assert [len(p) for p in pages[es_url]] == [8, 8, 8, 6, 0]
    same(es_url, proxy_url, "POST", "/_search/scroll", json={"scroll_id": "bogus"})


def test_point_in_time(es: Elasticsearch, es_url: str, proxy_url: str, plain: str) -> None:
    opened = httpx.post(f"{proxy_url}/{plain}/_pit", params={"keep_alive": "1m"})
    assert opened.status_code == 200 and set(opened.json()) >= {"id", "_shards"}
    pit = opened.json()["id"]
    try:
        body: dict[str, Any] = {"size": 7, "pit": {"id": pit}, "sort": [{"n": "asc"}]}
        direct, proxied = dict(body), dict(body)  # each continued from its own last hit
        seen = 0
        while True:
            want = httpx.post(f"{es_url}/_search", json=direct).json()
            answer = httpx.post(f"{proxy_url}/_search", json=proxied)
            assert answer.status_code == 200, answer.text
            got = answer.json()
            assert normal(got) == normal(want)
            hits = got["hits"]["hits"]
            if not hits:
                break
            assert all(h["sort"][-1].startswith("collapse:") for h in hits)
            seen += len(hits)
            direct["search_after"] = want["hits"]["hits"][-1]["sort"]
            proxied["search_after"] = hits[-1]["sort"]
        assert seen == 30
    finally:
        closed = httpx.request("DELETE", f"{proxy_url}/_pit", json={"id": pit})
    assert closed.json() == {"succeeded": True, "num_freed": 1}
    if ENGINE == OPENSEARCH:  # the proxy answers Elasticsearch's paths; OpenSearch has none
        return
    same(es_url, proxy_url, "DELETE", "/_pit", json={"id": pit})
    same(es_url, proxy_url, "POST", f"/{plain}-nope/_pit", params={"keep_alive": "1m"})


def test_point_in_time_pages_over_duplicates_never_repeat_a_group(
    es: Elasticsearch, proxy_url: str, dups: tuple[str, dict[str, str]]
) -> None:
    index, story = dups
    pit = open_point_in_time(es, index, "2m")
    shown: list[str] = []
    folded: set[str] = set()
    try:
        after: list[Any] | None = None
        for _ in range(10):
            body: dict[str, Any] = {
                "size": 5,
                "query": {"match": {"body": "storm"}},
                "pit": {"id": pit, "keep_alive": "2m"},
                "sort": [{"n": "asc"}],
            }
            if after is not None:
                body["search_after"] = after
            answer = httpx.post(
                f"{proxy_url}/_search", json=body, params={"collapse_members": 10}, timeout=30
            )
            assert answer.status_code == 200, answer.text
            assert answer.json()["collapse"]["degraded"] is False
            hits = answer.json()["hits"]["hits"]
            assert len(hits) == 5
            for hit in hits:
                assert hit["_id"] not in folded
                assert story[hit["_id"]] not in {story[i] for i in shown}
                shown.append(hit["_id"])
                members = {m["_id"] for m in hit["_collapse"]["members"]}
                assert {story[m] for m in members} <= {story[hit["_id"]]}
                folded |= members
            after = hits[-1]["sort"]
    finally:
        close_point_in_time(es, pit)
    assert len(shown) == 50 and len({story[i] for i in shown}) == 50
    assert len(folded) == 3 * sum(1 for i in shown if story[i].startswith("s"))
