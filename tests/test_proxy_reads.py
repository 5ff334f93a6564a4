"""Scroll, point in time and ``_mget`` through the proxy, and ``collapse_fp`` kept out of the
documents it returns, on the real node."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from tests.proxy_support import create_index, fingerprints, index_docs, text

pytestmark = [pytest.mark.es, pytest.mark.opensearch]


@pytest.fixture
def docs(es: Elasticsearch, index_name: str) -> str:
    """Twelve unrelated fingerprinted documents, ``n`` 0..11."""
    rng = random.Random(5)
    texts = [text(rng, 120, "harbour") for _ in range(12)]
    create_index(es, index_name)
    index_docs(
        es,
        index_name,
        [
            {"_id": f"d{n}", "n": n, "body": t, "collapse_fp": fp}
            for n, (t, fp) in enumerate(zip(texts, fingerprints(texts), strict=True))
        ],
    )
    return index_name


def test_get_hides_the_fingerprint_unless_asked(proxy_url: str, docs: str) -> None:
    got = httpx.get(f"{proxy_url}/{docs}/_doc/d1").json()
    assert got["found"] and "collapse_fp" not in got["_source"] and got["_source"]["n"] == 1
    source = httpx.get(f"{proxy_url}/{docs}/_source/d1").json()
    assert "collapse_fp" not in source and source["n"] == 1
    asked = httpx.get(f"{proxy_url}/{docs}/_doc/d1", params={"_source_includes": "collapse_fp"})
    assert set(asked.json()["_source"]) == {"collapse_fp"}
    asked = httpx.get(f"{proxy_url}/{docs}/_doc/d1", params={"_source": "n,collapse_fp.simhash"})
    assert set(asked.json()["_source"]["collapse_fp"]) == {"simhash"}
    some = httpx.get(f"{proxy_url}/{docs}/_doc/d1", params={"_source_excludes": "body"}).json()
    assert set(some["_source"]) == {"n"}
    none = httpx.get(f"{proxy_url}/{docs}/_doc/d1", params={"_source": "false"}).json()
    assert "_source" not in none
    stored = httpx.get(f"{proxy_url}/{docs}/_doc/d1", params={"stored_fields": "n"}).json()
    assert "_source" not in stored


def test_mget_hides_the_fingerprint_per_doc(es: Elasticsearch, proxy_url: str, docs: str) -> None:
    body: dict[str, Any] = {
        "docs": [
            {"_index": docs, "_id": "d1"},
            {"_index": docs, "_id": "d2", "_source": ["n"]},
            {"_index": docs, "_id": "d3", "_source": {"excludes": ["body"]}},
            {"_index": docs, "_id": "d4", "_source": True},
            {"_index": docs, "_id": "d5", "_source": ["collapse_fp.simhash"]},
            {"_index": docs, "_id": "nope"},
            {"_index": f"{docs}-missing", "_id": "d1"},
        ]
    }
    got = httpx.post(f"{proxy_url}/_mget", json=body).json()["docs"]
    direct = es.mget(body=body)["docs"]
    assert [d.get("found") for d in got] == [d.get("found") for d in direct]
    assert got[-1]["error"] == direct[-1]["error"]
    assert set(got[0]["_source"]) == {"n", "body"}
    assert set(got[1]["_source"]) == {"n"}
    assert set(got[2]["_source"]) == {"n"}
    assert set(got[3]["_source"]) == {"n", "body"}
    assert set(got[4]["_source"]["collapse_fp"]) == {"simhash"}
    by_index = httpx.request("GET", f"{proxy_url}/{docs}/_mget", json={"ids": ["d1", "d7"]}).json()[
        "docs"
    ]
    assert [d["_source"]["n"] for d in by_index] == [1, 7]
    assert all("collapse_fp" not in d["_source"] for d in by_index)
    asked = httpx.post(
        f"{proxy_url}/{docs}/_mget", json={"ids": ["d1"]}, params={"_source": "collapse_fp"}
    ).json()["docs"]
    assert set(asked[0]["_source"]) == {"collapse_fp"}


def test_scroll_pages_every_document_once_and_clears(proxy_url: str, docs: str) -> None:
    first = httpx.post(
        f"{proxy_url}/{docs}/_search",
        params={"scroll": "1m"},
        json={"size": 5, "sort": ["n"], "_source": ["n"]},
    )
    assert first.status_code == 200, first.text
    answer = first.json()
    seen = [h["_source"]["n"] for h in answer["hits"]["hits"]]
    scroll_id = answer["_scroll_id"]
    for use_path in (False, True):
        if use_path:
            nxt = httpx.get(f"{proxy_url}/_search/scroll/{scroll_id}", params={"scroll": "1m"})
        else:
            nxt = httpx.post(
                f"{proxy_url}/_search/scroll", json={"scroll": "1m", "scroll_id": scroll_id}
            )
        assert nxt.status_code == 200, nxt.text
        seen += [h["_source"]["n"] for h in nxt.json()["hits"]["hits"]]
        scroll_id = nxt.json()["_scroll_id"]
    assert seen == list(range(12))
    cleared = httpx.request("DELETE", f"{proxy_url}/_search/scroll", json={"scroll_id": scroll_id})
    assert cleared.status_code == 200 and cleared.json()["succeeded"] is True
    gone = httpx.post(f"{proxy_url}/_search/scroll", json={"scroll_id": scroll_id})
    assert (
        gone.status_code == 404
        and gone.json()["error"]["type"] == "search_phase_execution_exception"
    )


def test_point_in_time_opens_searches_and_closes(proxy_url: str, docs: str) -> None:
    opened = httpx.post(f"{proxy_url}/{docs}/_pit", params={"keep_alive": "1m"})
    assert opened.status_code == 200, opened.text
    pit = opened.json()["id"]
    body = {"size": 4, "pit": {"id": pit, "keep_alive": "1m"}, "sort": [{"n": "asc"}]}
    answer = httpx.post(f"{proxy_url}/_search", json=body)
    assert answer.status_code == 200, answer.text
    assert [h["_source"]["n"] for h in answer.json()["hits"]["hits"]] == [0, 1, 2, 3]
    assert answer.json()["pit_id"]
    closed = httpx.request("DELETE", f"{proxy_url}/_pit", json={"id": pit})
    assert closed.status_code == 200 and closed.json()["succeeded"] is True
    again = httpx.post(f"{proxy_url}/_search", json=body)
    assert again.status_code == 404, again.text
