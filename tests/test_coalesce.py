"""Searches of concurrent requests travel together (``collapse.coalesce``), on the real node:
each request still gets exactly the answer it gets alone, errors included."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.settings import Settings
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

pytestmark = pytest.mark.es


def stories(es: Elasticsearch, index: str) -> list[str]:
    """Eight stories in six copies each, among unrelated documents; one query word per story."""
    rng = random.Random(11)
    topics = ["flood", "harvest", "election", "bridge", "festival", "outage", "merger", "comet"]
    docs: list[dict[str, Any]] = []
    for topic in topics:
        copies = variants(text(rng, 250, topic), 6, rng)
        docs += [
            {"_id": f"{topic}{i}", "n": len(docs), "body": t, "collapse_fp": fp}
            for i, (t, fp) in enumerate(zip(copies, fingerprints(copies), strict=True))
        ]
        singles = [text(rng, 200, topic) for _ in range(12)]
        docs += [
            {"_id": f"{topic}-u{i}", "n": len(docs), "body": t, "collapse_fp": fp}
            for i, (t, fp) in enumerate(zip(singles, fingerprints(singles), strict=True))
        ]
    create_index(es, index)
    index_docs(es, index, docs)
    return topics


def _request(topic: str) -> dict[str, Any]:
    return {"query": {"match": {"body": topic}}, "sort": [{"n": "asc"}], "size": 1}


def _shape(answer: dict[str, Any]) -> list[tuple[str, int, list[str]]]:
    return [
        (h["_id"], h["_collapse"]["folded"], sorted(m["_id"] for m in h["_collapse"]["members"]))
        for h in answer["hits"]["hits"]
    ]


def test_probes_sent_together_answer_each_request_as_alone(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    from collapse.app import create_app
    from tests.conftest import ServerThread

    topics = stories(es, index_name)
    params = {"collapse_window": 3, "collapse_members": 10}  # 3 copies in it, 3 beyond
    settings = Settings(es_url=[es_url], collapse_coalesce=1)
    app = create_app(settings)
    with ServerThread(app) as server:
        url = f"{server.url}/{index_name}/_search"
        alone = {t: httpx.post(url, json=_request(t), params=params).json() for t in topics}
        coalescer = app.state.coalescer
        before = (coalescer.batches, coalescer.searches)

        async def together() -> list[dict[str, Any]]:
            async with httpx.AsyncClient(timeout=30) as client:
                answers = await asyncio.gather(
                    *(client.post(url, json=_request(t), params=params) for t in topics * 4)
                )
            return [a.json() for a in answers]

        answers = asyncio.run(together())
        batches = coalescer.batches - before[0]
        searches = coalescer.searches - before[1]
    for topic, answer in zip(topics * 4, answers, strict=True):
        assert _shape(answer) == _shape(alone[topic])
        assert answer["hits"]["hits"][0]["_collapse"]["folded"] == 5
        assert answer["hits"]["total"] == alone[topic]["hits"]["total"]
        assert "status" not in answer  # an _msearch item's, not a _search answer's
    assert searches == 2 * len(topics) * 4  # a window and a probe per request
    assert batches < searches  # ... and some of them shared an _msearch


def test_a_failing_search_among_coalesced_ones_gets_elasticsearchs_own_error(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """One request's query fails in Elasticsearch: it gets the status, headers and error body
    a direct ``_search`` gets; the requests it travelled with are answered as usual."""
    from collapse.app import create_app
    from tests.conftest import ServerThread

    topics = stories(es, index_name)
    bad = {"query": {"match": {"n": "not a number"}}, "size": 1}
    direct = httpx.post(f"{es_url}/{index_name}/_search", json=bad)
    assert direct.status_code == 400
    app = create_app(Settings(es_url=[es_url], collapse_coalesce=1))
    with ServerThread(app) as server:
        url = f"{server.url}/{index_name}/_search"

        async def together() -> list[httpx.Response]:
            async with httpx.AsyncClient(timeout=30) as client:
                bodies = [_request(t) for t in topics * 2] + [bad] * 3
                return list(await asyncio.gather(*(client.post(url, json=b) for b in bodies)))

        answers = asyncio.run(together())
    for answer in answers[: len(topics) * 2]:
        assert answer.status_code == 200
        assert answer.json()["hits"]["hits"][0]["_collapse"]["folded"] == 5
    for answer in answers[len(topics) * 2 :]:
        assert answer.status_code == 400
        assert answer.json() == direct.json()
        assert answer.headers["x-elastic-product"] == "Elasticsearch"


def test_coalescing_off_sends_every_probe_alone(es_url: str) -> None:
    from collapse.app import create_app

    app = create_app(Settings(es_url=[es_url], collapse_coalesce=0))

    async def started() -> object:
        async with app.router.lifespan_context(app):
            return app.state.coalescer

    assert asyncio.run(started()) is None
