"""``filter_path`` on collapsed searches: applied by the proxy, exactly as Elasticsearch does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.filter_path import parse
from tests.test_proxy_search import SORTED, wire_story

pytestmark = pytest.mark.es

FILTERS = [
    "hits.hits._id",
    "hits.total,-hits.total.relation",
    "-hits.hits._source",
    "hits.hits._so*.n",
    "**.value",
    "took,nomatch",
    "nomatch",
    "hits.hits",
    "-**._source,hits.hits._id",
    "-hits.total.value,-hits.total.relation",
    "hits.hits._source.n,-hits.hits._source.n",
    "hits.*.*,-hits.hits",
    "hits.hits._source.n,hits.hits._id,aggregations.**",
    "aggregations.by_n.buckets.key",
    "-aggregations.by_n.buckets.doc_count,-hits",
    "_shards.*,-_shards.s*",
]
BODIES: list[dict[str, Any]] = [
    {"query": {"match": {"body": "earthquake"}}, "size": 3, "_source": ["n"]},
    {"query": {"match": {"body": "no-such-word-anywhere"}}, "size": 3},
    {
        "size": 2,
        "_source": ["n"],
        "aggs": {"by_n": {"histogram": {"field": "n", "interval": 20}}},
    },
]


def _without_took(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: _without_took(v) for k, v in body.items() if k != "took"}
    if isinstance(body, list):
        return [_without_took(v) for v in body]
    return body


@pytest.mark.parametrize("spec", FILTERS)
def test_the_filter_matches_elasticsearch_s_own(
    es: Elasticsearch, es_url: str, index_name: str, spec: str
) -> None:
    """Elasticsearch as the oracle: its full answer filtered by the proxy's code equals its own
    filtered answer."""
    wire_story(es, index_name, copies=3, others=5)
    for body in BODIES:
        url = f"{es_url}/{index_name}/_search"
        full = httpx.post(url, json=body).json()
        filtered = httpx.post(url, json=body, params={"filter_path": spec}).json()
        fp = parse(spec)
        assert fp is not None
        assert _without_took(fp.apply(full)) == _without_took(filtered), (spec, body)


def test_collapsing_still_reads_fingerprints_under_a_filter(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """Passed on to Elasticsearch, ``filter_path=hits.hits._id`` would strip ``collapse_fp``:
    the story's 20 copies would no longer fold."""
    wire_story(es, index_name)
    answer = httpx.post(
        f"{proxy_url}/{index_name}/_search",
        json={**SORTED, "size": 5},
        params={"filter_path": "hits.hits._id,hits.hits._collapse.folded,collapse.folded"},
    )
    assert answer.status_code == 200, answer.text
    out = answer.json()
    assert out["hits"]["hits"] == [
        {"_id": "c0", "_collapse": {"folded": 19}},
        *({"_id": f"u{i}", "_collapse": {"folded": 0}} for i in range(4)),
    ]
    assert out["collapse"] == {"folded": 19}
    assert set(out) == {"hits", "collapse"}


def test_msearch_and_expander_filter_their_answers(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    lines = (
        f'{{"index": "{index_name}"}}\n{{"query": {{"match": {{"body": "earthquake"}}}}, '
        '"sort": [{"n": "asc"}], "size": 2}\n'
    )
    answer = httpx.post(
        f"{proxy_url}/_msearch",
        content=lines * 2,
        headers={"content-type": "application/x-ndjson"},
        params={"filter_path": "responses.hits.hits._id,responses.hits.hits._collapse.folded"},
    )
    assert answer.status_code == 200, answer.text
    page = {
        "hits": {
            "hits": [
                {"_id": "c0", "_collapse": {"folded": 19}},
                {"_id": "u0", "_collapse": {"folded": 0}},
            ]
        }
    }
    assert answer.json() == {"responses": [page, page]}

    expanded = httpx.post(
        f"{proxy_url}/{index_name}/_collapse/c0",
        json={"query": {"match": {"body": "earthquake"}}},
        params={"filter_path": "hits.total.value,-hits.hits"},
    )
    assert expanded.status_code == 200, expanded.text
    assert expanded.json() == {"hits": {"total": {"value": 19}}}


def test_an_empty_filter_changes_nothing() -> None:
    assert parse("") is None
    assert parse(" , ") is None
    assert parse(None) is None
