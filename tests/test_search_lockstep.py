"""An ``_msearch``'s searches run as coroutines of their own and still travel together
(``collapse.rounds``), on the real node: one ``_msearch`` per round for all of them, and each
answer the same as that search sent alone."""

from __future__ import annotations

import json

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.metrics import UPSTREAM_REQUESTS
from tests.test_proxy_search import wire_story

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

SORTED = {"query": {"match": {"body": "earthquake"}}, "sort": [{"n": "asc"}]}


def _sent(endpoint: str) -> float:
    return sum(
        sample.value
        for metric in UPSTREAM_REQUESTS.collect()
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels.get("endpoint") == endpoint
    )


def test_an_msearch_costs_the_round_trips_of_one_search(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    searches = [
        {**SORTED, "size": 2},
        {**SORTED, "size": 3, "from": 1},
        {"query": {"match": {"body": "nothing-matches-this"}}},
    ]
    alone = [
        httpx.post(f"{proxy_url}/{index_name}/_search", json=body, timeout=30).json()
        for body in searches
    ]
    lines = [line for body in searches for line in ({"index": index_name}, body)]
    before = (_sent("_msearch"), _sent("_search"))
    answer = httpx.post(
        f"{proxy_url}/_msearch",
        content="\n".join(json.dumps(line) for line in lines) + "\n",
        headers={"content-type": "application/x-ndjson"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    # The windows in one _msearch, then the probes of the two searches that have copies
    # beyond their window in another: nothing sent alone.
    assert (_sent("_msearch") - before[0], _sent("_search") - before[1]) == (2, 0)
    for item, own in zip(answer.json()["responses"], alone, strict=True):
        assert item.pop("status") == 200
        for out in (item, own):
            out.pop("took")
            out["collapse"].pop("took_ms")
        assert item == own
