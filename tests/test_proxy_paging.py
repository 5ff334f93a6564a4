"""Paging through collapsed results: from/size and search_after never repeat a group."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from indexer.engine import OPENSEARCH
from indexer.es import close_point_in_time, open_point_in_time
from tests.conftest import ENGINE
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

QUERY = {"query": {"match": {"body": "storm"}}, "sort": [{"n": "asc"}]}


def scattered_stories(es: Elasticsearch, index: str) -> dict[str, str]:
    """6 stories in 5 copies each, shuffled among 30 unrelated documents; id -> story."""
    rng = random.Random(11)
    texts: list[tuple[str, str, str]] = []
    for s in range(6):
        for k, t in enumerate(variants(text(rng, 250, "storm"), 5, rng)):
            texts.append((f"s{s}c{k}", f"s{s}", t))
    texts += [(f"u{i}", f"u{i}", text(rng, 200, "storm")) for i in range(30)]
    rng.shuffle(texts)
    fps = fingerprints([t for _, _, t in texts])
    docs = [
        {"_id": doc_id, "n": n, "body": t, "collapse_fp": fp}
        for n, ((doc_id, _, t), fp) in enumerate(zip(texts, fps, strict=True))
    ]
    create_index(es, index)
    index_docs(es, index, docs)
    return {doc_id: story for doc_id, story, _ in texts}


def page(proxy_url: str, index: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    answer = httpx.post(
        f"{proxy_url}/{index}/_search", json=body, params={"collapse_members": 50}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["hits"]["hits"]


def check_pages(pages: list[list[dict[str, Any]]], story: dict[str, str]) -> None:
    """No group twice, no folded document resurfacing, every group one story."""
    shown: set[str] = set()
    folded: set[str] = set()
    for hits in pages:
        for hit in hits:
            assert hit["_id"] not in shown and hit["_id"] not in folded
            assert story[hit["_id"]] not in {story[i] for i in shown}
            shown.add(hit["_id"])
            members = {m["_id"] for m in hit["_collapse"]["members"]}
            assert {story[m] for m in members} <= {story[hit["_id"]]}
            folded |= members


def test_from_size_pages_never_repeat_a_group(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    story = scattered_stories(es, index_name)
    pages = [page(proxy_url, index_name, {**QUERY, "from": f, "size": 5}) for f in (0, 5, 10)]
    assert [len(p) for p in pages] == [5, 5, 5]
    check_pages(pages, story)
    one = page(proxy_url, index_name, {**QUERY, "size": 15})
    assert [h["_id"] for p in pages for h in p] == [h["_id"] for h in one]
    stories = [h for h in one if story[h["_id"]].startswith("s")]
    assert stories and all(h["_collapse"]["folded"] == 4 for h in stories)


def test_search_after_pages_never_repeat_a_group(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    story = scattered_stories(es, index_name)
    pages: list[list[dict[str, Any]]] = []
    after: list[Any] | None = None
    for _ in range(3):
        body: dict[str, Any] = {**QUERY, "size": 5}
        if after is not None:
            body["search_after"] = after
        hits = page(proxy_url, index_name, body)
        pages.append(hits)
        # The first page carries no cursor (nothing says it will be continued): the second is
        # continued from the hit its search_after names; from then on the cursor rides along.
        cursor = [str(h["sort"][-1]).startswith("collapse:") for h in hits]
        assert cursor == [after is not None] * len(hits)
        after = hits[-1]["sort"]
    check_pages(pages, story)
    one = page(proxy_url, index_name, {**QUERY, "size": 15})
    assert [h["_id"] for p in pages for h in p] == [h["_id"] for h in one]


def test_a_short_page_means_the_results_ended(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    scattered_stories(es, index_name)
    hits = page(proxy_url, index_name, {**QUERY, "size": 50})
    assert len(hits) == 36  # 6 stories + 30 unrelated: all groups, from a window refilled


def test_plain_search_after_without_cursor_still_works(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    scattered_stories(es, index_name)
    hits = page(proxy_url, index_name, {**QUERY, "size": 5, "search_after": [10]})
    assert all(h["sort"][0] > 10 for h in hits)


def test_point_in_time_pages_never_repeat_a_group(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    story = scattered_stories(es, index_name)
    pit = open_point_in_time(es, index_name, "1m")
    try:
        pages: list[list[dict[str, Any]]] = []
        after: list[Any] | None = None
        for _ in range(3):
            body: dict[str, Any] = {**QUERY, "size": 5, "pit": {"id": pit, "keep_alive": "1m"}}
            if after is not None:
                body["search_after"] = after
            answer = httpx.post(f"{proxy_url}/_search", json=body, params={"collapse_members": 50})
            assert answer.status_code == 200, answer.text
            assert answer.json()["collapse"]["degraded"] is False
            hits = answer.json()["hits"]["hits"]
            pages.append(hits)
            after = hits[-1]["sort"]
        check_pages(pages, story)
        one = page(proxy_url, index_name, {**QUERY, "size": 15})
        assert [h["_id"] for p in pages for h in p] == [h["_id"] for h in one]
    finally:
        close_point_in_time(es, pit)


def test_the_cursor_rides_only_where_search_after_pages(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    scattered_stories(es, index_name)
    plain = page(proxy_url, index_name, {**QUERY, "size": 5})
    assert all(len(h["sort"]) == 1 for h in plain)  # Elasticsearch's own sort values
    later = page(proxy_url, index_name, {**QUERY, "size": 5, "search_after": plain[-1]["sort"]})
    assert all(len(h["sort"]) == 2 and h["sort"][1].startswith("collapse:") for h in later)
    native = {**QUERY, "size": 5, "collapse": {"field": "n"}}
    bodies = [native, {**native, "search_after": [3]}]
    if ENGINE == OPENSEARCH and es.info()["version"]["number"].startswith("2."):
        bodies.pop()  # OpenSearch 2 refuses collapse with search_after itself
    for body in bodies:
        hits = page(proxy_url, index_name, body)
        direct = {
            h["_id"]: h["sort"]
            for h in es.search(index=index_name, body={**body, "size": 60})["hits"]["hits"]
        }
        assert hits and all(h["sort"] == direct[h["_id"]] for h in hits)
