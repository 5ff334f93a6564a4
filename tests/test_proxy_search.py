"""Collapsed ``_search`` through the proxy, on the real node."""

from __future__ import annotations

import random
import re
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.settings import Settings
from tests.conftest import only_elasticsearch
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

pytestmark = [pytest.mark.es, pytest.mark.opensearch]


def wire_story(es: Elasticsearch, index: str, *, copies: int = 20, others: int = 40) -> None:
    """A syndicated story in ``copies`` copies (c0 ranks first) among unrelated documents.

    ``n`` orders them: the copies at 0, 2, 4, ... and the unrelated ones in between and after.
    """
    rng = random.Random(5)
    story = variants(text(rng, 300, "earthquake"), copies, rng)
    unrelated = [text(rng, 200, "earthquake") for _ in range(others)]
    docs = [
        {"_id": f"c{i}", "n": 2 * i, "body": t, "collapse_fp": fp}
        for i, (t, fp) in enumerate(zip(story, fingerprints(story), strict=True))
    ]
    docs += [
        {"_id": f"u{i}", "n": 2 * i + 1, "body": t, "collapse_fp": fp}
        for i, (t, fp) in enumerate(zip(unrelated, fingerprints(unrelated), strict=True))
    ]
    create_index(es, index)
    index_docs(es, index, docs)


def search(proxy_url: str, index: str, body: dict[str, Any], **params: Any) -> dict[str, Any]:
    answer = httpx.post(f"{proxy_url}/{index}/_search", json=body, params=params, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def folded_groups(proxy_url: str, index: str, body: dict[str, Any]) -> dict[str, list[str]]:
    """Each result of a collapsed search (up to 10 members shown) and its members' ids."""
    out = search(proxy_url, index, body, collapse_members=10)
    return {
        h["_id"]: sorted(m["_id"] for m in h["_collapse"]["members"]) for h in out["hits"]["hits"]
    }


SORTED = {"query": {"match": {"body": "earthquake"}}, "sort": [{"n": "asc"}]}


def test_twenty_copies_collapse_to_one_with_folded_19(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    out = search(proxy_url, index_name, {**SORTED, "size": 10}, collapse_members=50)
    hits = out["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["c0", *(f"u{i}" for i in range(9))]
    assert hits[0]["_collapse"]["folded"] == 19
    members = hits[0]["_collapse"]["members"]
    assert sorted(m["_id"] for m in members) == sorted(f"c{i}" for i in range(1, 20))
    defaults = Settings()
    assert all(
        0 < m["hamming"] <= defaults.collapse_max_distance
        and m["similarity"] >= defaults.collapse_min_similarity
        for m in members
    )
    assert all(h["_collapse"]["folded"] == 0 for h in hits[1:])
    assert out["hits"]["total"] == {"value": 60, "relation": "eq"}  # Elasticsearch's own count
    info = out["collapse"]
    assert info["enabled"] and info["groups"] == 10 and info["folded"] == 19
    assert info["window"] >= 30 and info["degraded"] is False
    assert info["folded_relation"] == "eq"  # every candidate beyond the window was examined
    assert all("collapse_fp" not in h["_source"] for h in hits)


def test_copies_beyond_the_window_are_counted(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    out = search(
        proxy_url, index_name, {**SORTED, "size": 3}, collapse_window=10, collapse_explain="true"
    )
    rep = out["hits"]["hits"][0]
    assert out["collapse"]["window"] == 10  # c0..c4 in it, c5..c19 beyond
    assert rep["_id"] == "c0" and rep["_collapse"]["folded"] == 19
    found = {m["_id"]: m for m in rep["_collapse"]["members"]}
    assert found["c1"]["found"] == "window"
    assert {m["found"] for m in rep["_collapse"]["members"]} <= {"window", "probe"}
    out = search(
        proxy_url,
        index_name,
        {**SORTED, "size": 3},
        collapse_window=10,
        collapse_members=30,
        collapse_explain="true",
    )
    beyond = [m for m in out["hits"]["hits"][0]["_collapse"]["members"] if m["found"] == "probe"]
    assert sorted(m["_id"] for m in beyond) == sorted(f"c{i}" for i in range(5, 20))
    assert all(m["block"] is None or 0 <= m["block"] < 4 for m in beyond)
    # what the probe looks copies up by: each shares a MinHash band with c0
    assert all(m["band"] is not None and 0 <= m["band"] < 16 for m in beyond)


@only_elasticsearch
def test_a_knn_search_counts_no_copy_it_does_not_match(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """The copies c1..c19 share blocks with c0 but are far from the query vector: not among the
    k nearest, they do not match the kNN search and are not counted (the count says gte)."""
    rng = random.Random(8)
    story = variants(text(rng, 300, "earthquake"), 20, rng)
    unrelated = [text(rng, 200, "earthquake") for _ in range(40)]
    docs = [
        {"_id": f"c{i}", "body": t, "v": [1.0, 0.0, 0.0] if i == 0 else [0.0, 1.0, 0.0]}
        for i, t in enumerate(story)
    ]
    docs += [
        {"_id": f"u{i}", "body": t, "v": [1.0, 0.01 * i, 0.0]} for i, t in enumerate(unrelated)
    ]
    for doc, fp in zip(docs, fingerprints([d["body"] for d in docs]), strict=True):
        doc["collapse_fp"] = fp
    create_index(es, index_name, v={"type": "dense_vector", "dims": 3, "similarity": "cosine"})
    index_docs(es, index_name, docs)
    knn = {"field": "v", "query_vector": [1.0, 0.0, 0.0], "k": 30, "num_candidates": 60}
    out = search(proxy_url, index_name, {"knn": knn, "size": 3}, collapse_window=10)
    assert out["hits"]["total"]["value"] == 30
    assert out["hits"]["hits"][0]["_id"] == "c0"
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 0
    assert out["collapse"]["folded_relation"] == "gte"
    # collapse_total counts the groups among the 30 nearest (c0 and 29 unrelated), not the index.
    total = search(proxy_url, index_name, {"knn": knn, "size": 3}, collapse_total="true")
    assert total["collapse"]["total_groups"] == 30


def _without_took(raw: bytes) -> bytes:
    return re.sub(rb'"took":\d+', b'"took":0', raw, count=1)


def test_collapse_false_is_elasticsearchs_answer_byte_for_byte(
    es: Elasticsearch, es_url: str, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    body = b'{"query":{"match":{"body":"earthquake"}},"size":7,"sort":[{"n":"desc"}]}'
    headers = {"content-type": "application/json"}
    direct = httpx.post(f"{es_url}/{index_name}/_search", content=body, headers=headers)
    proxied = httpx.post(
        f"{proxy_url}/{index_name}/_search?collapse=false", content=body, headers=headers
    )
    assert proxied.status_code == direct.status_code == 200
    assert _without_took(proxied.content) == _without_took(direct.content)
    assert proxied.headers["content-type"] == direct.headers["content-type"]
    assert proxied.headers["x-elastic-product"] == "Elasticsearch"


def test_documents_without_fingerprints_pass_through(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    create_index(es, index_name)
    rng = random.Random(2)
    same = text(rng, 120, "harbour")
    index_docs(es, index_name, [{"_id": f"p{i}", "n": i, "body": same} for i in range(4)])
    out = search(proxy_url, index_name, {"query": {"match": {"body": "harbour"}}, "sort": ["n"]})
    assert [h["_id"] for h in out["hits"]["hits"]] == ["p0", "p1", "p2", "p3"]
    assert all(h["_collapse"]["folded"] == 0 for h in out["hits"]["hits"])
    assert out["collapse"]["without_fingerprint"] == 4


def test_source_filtering_is_the_users(es: Elasticsearch, index_name: str, proxy_url: str) -> None:
    wire_story(es, index_name, copies=3, others=3)
    q = {"query": {"match": {"body": "earthquake"}}, "sort": ["n"]}
    out = search(proxy_url, index_name, {**q, "_source": False})
    assert all("_source" not in h for h in out["hits"]["hits"])
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 2
    out = search(proxy_url, index_name, {**q, "_source": ["n"]})
    assert out["hits"]["hits"][1]["_source"] == {"n": 1}
    out = search(proxy_url, index_name, q, _source_includes="n,collapse_fp.exact_key")
    assert set(out["hits"]["hits"][0]["_source"]) == {"n", "collapse_fp"}


@pytest.mark.parametrize(
    "params",
    [
        {"collapse_max_distance": "65"},
        {"collapse_max_distance": "x"},
        {"collapse_min_similarity": "1.5"},
        {"collapse": "maybe"},
        {"collapse_window": "0"},
        {"collapse_members": "-1"},
        {"collapse_bogus": "1"},
    ],
)
def test_bad_controls_answer_400_in_elasticsearchs_shape(
    proxy_url: str, params: dict[str, str]
) -> None:
    answer = httpx.post(f"{proxy_url}/_search", json={}, params=params)
    assert answer.status_code == 400
    body = answer.json()
    assert body["status"] == 400
    assert body["error"]["type"] == "illegal_argument_exception"
    assert body["error"]["root_cause"][0]["reason"]


def test_elasticsearch_errors_pass_through_when_collapsing(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    create_index(es, index_name)
    answer = httpx.post(f"{proxy_url}/{index_name}/_search", json={"query": {"no_such_query": {}}})
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "parsing_exception"


def test_msearch_collapses_each_search(es: Elasticsearch, index_name: str, proxy_url: str) -> None:
    wire_story(es, index_name)
    lines = [
        {"index": index_name},
        {**SORTED, "size": 2},
        {"index": index_name},
        {"query": {"match": {"body": "nothing-matches-this"}}},
    ]
    body = "\n".join(__import__("json").dumps(line) for line in lines) + "\n"
    answer = httpx.post(
        f"{proxy_url}/_msearch", content=body, headers={"content-type": "application/x-ndjson"}
    )
    assert answer.status_code == 200
    first, second = answer.json()["responses"]
    assert [h["_id"] for h in first["hits"]["hits"]] == ["c0", "u0"]
    assert first["hits"]["hits"][0]["_collapse"]["folded"] == 19
    assert first["status"] == 200 and first["collapse"]["groups"] == 2
    assert second["hits"]["hits"] == [] and second["collapse"]["groups"] == 0


def test_collapse_total_counts_groups_of_all_hits(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    out = search(proxy_url, index_name, {**SORTED, "size": 2}, collapse_total="true")
    assert out["collapse"]["total_groups"] == 41  # the story once, 40 unrelated documents
    assert out["collapse"]["total_groups_relation"] == "eq"


def test_query_string_search_is_collapsed_too(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    answer = httpx.get(
        f"{proxy_url}/{index_name}/_search",
        params={"q": "body:earthquake", "sort": "n:asc", "size": "2", "_source": "false"},
    )
    assert answer.status_code == 200, answer.text
    hits = answer.json()["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["c0", "u0"]
    assert hits[0]["_collapse"]["folded"] == 19 and "_source" not in hits[0]


def test_past_the_time_budget_the_answer_is_degraded_not_failed(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    from collapse.app import create_app
    from collapse.settings import Settings
    from tests.conftest import ServerThread

    wire_story(es, index_name)
    settings = Settings(es_url=[es_url], collapse_time_budget_ms=1)
    with ServerThread(create_app(settings)) as server:
        out = search(server.url, index_name, {**SORTED, "size": 3}, collapse_window=10)
    assert out["collapse"]["degraded"] is True
    assert out["collapse"]["reason"].startswith("time_budget")
    assert out["collapse"]["folded_relation"] == "gte"
    assert out["hits"]["hits"][0]["_id"] == "c0"
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 4  # the copies in the window only


def test_copies_across_indices_collapse_under_a_pattern(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    rng = random.Random(9)
    story = variants(text(rng, 300, "harvest"), 6, rng)
    fps = fingerprints(story)
    second = f"{index_name}-b"
    try:
        create_index(es, index_name)
        create_index(es, second)
        for k, (t, fp) in enumerate(zip(story, fps, strict=True)):
            target = index_name if k % 2 == 0 else second
            index_docs(
                es,
                target,
                [{"_id": "same-id" if k < 2 else f"d{k}", "n": k, "body": t, "collapse_fp": fp}],
            )
        for target in (f"{index_name},{second}", f"{index_name}*"):
            out = search(
                proxy_url,
                target,
                {**SORTED, "query": {"match": {"body": "harvest"}}, "size": 1},
                collapse_window=2,
            )
            hits = out["hits"]["hits"]
            assert [(h["_index"], h["_id"]) for h in hits] == [(index_name, "same-id")]
            members = {(m["_index"], m["_id"]) for m in hits[0]["_collapse"]["members"]}
            assert (second, "same-id") in members and hits[0]["_collapse"]["folded"] == 5
    finally:
        es.options(ignore_status=404).indices.delete(index=second)


def test_scroll_searches_pass_through(es: Elasticsearch, index_name: str, proxy_url: str) -> None:
    wire_story(es, index_name, copies=3, others=3)
    out = search(proxy_url, index_name, {**SORTED, "size": 4}, scroll="1m")
    assert "collapse" not in out and len(out["hits"]["hits"]) == 4
    es.clear_scroll(scroll_id=out["_scroll_id"])
