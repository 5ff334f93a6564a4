"""Beyond one machine: a local two-node cluster (several shards, a replica), and several proxy
worker processes.

The cluster is two nodes of the same distribution on loopback ports (HTTP 9260/9261, transport
9360/9361), with a unique cluster name, fresh state and small heaps, started and removed by this
module; the shared node on 9200 is only used for the single-shard reference answer.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.settings import Settings
from indexer.mapping import index_mappings
from tests.conftest import ROOT, ServerThread, free_port
from tests.es_nodes import LocalNode, fresh_state_dir, remove_state, wait, wait_for
from tests.proxy_support import PARAMS, fingerprints, index_docs, text, variants

pytestmark = pytest.mark.slow

STORIES, COPIES, UNRELATED = 6, 5, 30
QUERY = {"query": {"match": {"body": "earthquake"}}, "sort": [{"n": "asc"}], "size": 12}


def corpus() -> list[dict[str, Any]]:
    """``STORIES`` syndicated stories in ``COPIES`` copies each, among unrelated documents."""
    rng = random.Random(11)
    docs: list[dict[str, Any]] = []
    for s in range(STORIES):
        copies = variants(text(rng, 250, "earthquake"), COPIES, rng)
        for c, (t, fp) in enumerate(zip(copies, fingerprints(copies), strict=True)):
            docs.append({"_id": f"s{s}c{c}", "n": len(docs), "body": t, "collapse_fp": fp})
    others = [text(rng, 200, "earthquake") for _ in range(UNRELATED)]
    for u, (t, fp) in enumerate(zip(others, fingerprints(others), strict=True)):
        docs.append({"_id": f"u{u}", "n": len(docs), "body": t, "collapse_fp": fp})
    # Interleave so that a page holds copies of several stories and unrelated documents.
    rng.shuffle(docs)
    for n, doc in enumerate(docs):
        doc["n"] = n
    return docs


def create(es: Elasticsearch, index: str, shards: int, replicas: int) -> None:
    mappings = index_mappings(PARAMS)
    mappings["properties"].update({"body": {"type": "text"}, "n": {"type": "integer"}})
    es.indices.create(
        index=index,
        mappings=mappings,
        settings={"number_of_shards": shards, "number_of_replicas": replicas},
    )


class Cluster:
    def __init__(self) -> None:
        self.state = fresh_state_dir()
        name = f"neardup-two-{uuid.uuid4().hex[:8]}"
        seeds = "127.0.0.1:9360, 127.0.0.1:9361"
        masters = "node-9260, node-9261"
        self.nodes = [
            LocalNode(
                9260 + i,
                9360 + i,
                state=self.state,
                cluster_name=name,
                node_name=f"node-{9260 + i}",
                seed_hosts=seeds,
                initial_masters=masters,
            )
            for i in range(2)
        ]
        self.urls = [node.url for node in self.nodes]

    def start(self) -> None:
        starting = [node.start_async() for node in self.nodes]
        for node, process in zip(self.nodes, starting, strict=True):
            wait(process, f"start node {node.port}")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        remove_state(self.state)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    two = Cluster()
    try:
        two.start()
        client = Elasticsearch(two.urls, request_timeout=60)
        health = client.cluster.health(wait_for_nodes="2", wait_for_status="green", timeout="60s")
        assert health["number_of_nodes"] == 2
        client.close()
        yield two
    finally:
        two.stop()


@pytest.fixture(scope="module")
def cluster_es(cluster: Cluster) -> Iterator[Elasticsearch]:
    client = Elasticsearch(cluster.urls, request_timeout=60)
    yield client
    client.close()


@pytest.fixture(scope="module")
def cluster_index(cluster_es: Elasticsearch) -> str:
    index = "stories"
    create(cluster_es, index, shards=3, replicas=1)
    # Every copy allocated before writing, and refreshed after: replicas that were still
    # recovering while the documents came may otherwise show them a little later.
    cluster_es.cluster.health(index=index, wait_for_status="green", timeout="60s")
    index_docs(cluster_es, index, corpus())
    cluster_es.indices.refresh(index=index)
    return index


@pytest.fixture(scope="module")
def cluster_proxy(cluster: Cluster, cluster_index: str) -> Iterator[str]:
    settings = Settings(es_url=cluster.urls, es_retries=1, es_retry_backoff=0.05)
    with ServerThread(create_app(settings)) as server:
        yield server.url


def collapsed(proxy: str, index: str, **params: Any) -> dict[str, Any]:
    answer = httpx.post(
        f"{proxy}/{index}/_search",
        json=QUERY,
        params={"collapse_members": 20, **params},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def essence(body: dict[str, Any]) -> list[tuple[str, int, list[str]]]:
    """What a collapsed page says: representatives, their folded counts and members."""
    return [
        (
            hit["_id"],
            hit["_collapse"]["folded"],
            sorted(m["_id"] for m in hit["_collapse"]["members"]),
        )
        for hit in body["hits"]["hits"]
    ]


def test_the_index_spreads_over_both_nodes(cluster_es: Elasticsearch, cluster_index: str) -> None:
    shards = cluster_es.cat.shards(index=cluster_index, format="json")
    assert len(shards) == 6
    assert {s["node"] for s in shards} == {"node-9260", "node-9261"}
    shard_of: dict[str, int] = {}
    for shard in range(3):
        found = cluster_es.search(
            index=cluster_index, preference=f"_shards:{shard}", size=1000, source=False
        )
        shard_of.update({hit["_id"]: shard for hit in found["hits"]["hits"]})
    assert len(shard_of) == STORIES * COPIES + UNRELATED
    assert set(shard_of.values()) == {0, 1, 2}
    spread = [s for s in range(STORIES) if len({shard_of[f"s{s}c{c}"] for c in range(COPIES)}) > 1]
    assert spread, "copies of a story sit on different shards"


def unhurried(urls: list[str]) -> Settings:
    """A proxy whose time budget no loaded test machine reaches: the comparison is of shards."""
    return Settings(
        es_url=urls, es_retries=1, es_retry_backoff=0.05, collapse_time_budget_ms=120_000
    )


def test_collapses_across_shards_as_on_one_shard(
    es: Elasticsearch, es_url: str, index_name: str, cluster: Cluster, cluster_index: str
) -> None:
    create(es, index_name, shards=1, replicas=0)
    index_docs(es, index_name, corpus())

    with (
        ServerThread(create_app(unhurried([es_url]))) as one,
        ServerThread(create_app(unhurried(cluster.urls))) as three,
    ):
        reference = collapsed(one.url, index_name)
        spread = collapsed(three.url, cluster_index)
    for answer in (reference, spread):
        assert answer["collapse"]["degraded"] is False, answer["collapse"]
        assert answer["collapse"]["folded_relation"] == "eq", answer["collapse"]
    assert spread["_shards"]["total"] == 3
    assert essence(spread) == essence(reference)

    page = essence(spread)
    stories_on_page = [rep for rep, _, _ in page if not rep.startswith("u")]
    assert len({rep.split("c")[0] for rep in stories_on_page}) == len(stories_on_page)
    for rep, folded, members in page:
        if rep.startswith("s"):
            story = rep.split("c")[0]
            assert folded == COPIES - 1
            assert members == sorted(f"{story}c{c}" for c in range(COPIES) if f"{story}c{c}" != rep)
        else:
            assert folded == 0
    assert spread["collapse"]["degraded"] is False


def test_several_workers_give_the_same_answers_as_one(
    cluster: Cluster, cluster_proxy: str, cluster_index: str
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "collapse", "--workers", "2", "--port", str(port)],
        env={**env, "ES_URL": ",".join(cluster.urls)},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{url}/health"), 60, "the worker processes to serve")
        one = essence(collapsed(cluster_proxy, cluster_index))
        answers = [essence(collapsed(url, cluster_index)) for _ in range(30)]
        assert all(answer == one for answer in answers)
        pids = {httpx.get(f"{url}/metrics").text.count("process_") for _ in range(5)}
        assert pids  # every worker answers the exposition
        metrics = httpx.get(f"{url}/metrics").text
        served = sum(
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith(
                'collapse_http_requests_total{method="POST",route="/{index}/_search"'
            )
        )
        assert served == 30, "the exposition adds up the counters of both workers"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_keeps_answering_while_one_node_is_stopped(
    cluster: Cluster, cluster_es: Elasticsearch, cluster_proxy: str, cluster_index: str
) -> None:
    before = essence(collapsed(cluster_proxy, cluster_index))
    master = cluster_es.cat.master(format="json")[0]["node"]
    other = next(node for node in cluster.nodes if f"node-{node.port}" != master)
    survivor = next(node for node in cluster.nodes if node is not other)
    other.stop()

    health = httpx.get(
        f"{survivor.url}/_cluster/health",
        params={"wait_for_nodes": "1", "wait_for_status": "yellow", "timeout": "60s"},
        timeout=90,
    ).json()
    assert health["status"] == "yellow" and health["number_of_nodes"] == 1
    began = time.monotonic()
    for _ in range(10):
        assert essence(collapsed(cluster_proxy, cluster_index)) == before
    assert time.monotonic() - began < 30
