"""Three nodes, one of them failing: the core claims of ``bench/faults_cluster.py`` on a short run.

The cluster is ``scripts/cluster`` on its own ports (HTTP 9520-9522, transport 9620-9622) and a
fresh state folder, wiped afterwards. 32 clients search through the proxy while the master is
stopped and started again: no error before or after, and no more failures than requests in flight
at the stop. An ingestion sent to one node is cut by that node's SIGKILL and finished by
``--resume`` with the three nodes listed: every document exactly once, on every copy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.faults_cluster import Cluster, Proxy, create_index, ingest_kill, search_outage
from indexer.es import connect
from tests.conftest import free_port
from tests.es_nodes import fresh_state_dir


@pytest.fixture(scope="module")
def three() -> Iterator[Cluster]:
    cluster = Cluster(9520, state=fresh_state_dir())
    try:
        cluster.run("start")
        cluster.wait_green()
        yield cluster
    finally:
        cluster.run("wipe")


def test_the_indexer_skips_a_listed_node_that_is_down(es_url: str) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    for _ in range(8):  # the client starts at a random node of the list
        connect(f"{down},{es_url}").close()


@pytest.mark.slow
def test_searches_survive_a_node_stopped_and_started(three: Cluster, tmp_path: Path) -> None:
    es = three.es()
    create_index(es, "faults-search", 500)
    es.close()
    proxy = Proxy(three.urls, tmp_path / "proxy.log")
    try:
        report = asyncio.run(
            search_outage(three, proxy.url, "faults-search", clients=32, before=2, down=2, after=2)
        )
    finally:
        proxy.close()
    summary = report.summary()
    assert report.problems() == [], summary
    assert report.phases["before"].failed == report.phases["after"].failed == 0, summary
    assert report.failed <= report.in_flight_at_stop <= 32, summary
    assert report.green_seconds < 180, summary


@pytest.mark.slow
def test_an_ingestion_cut_by_a_killed_node_resumes_to_each_document_once(
    three: Cluster, tmp_path: Path
) -> None:
    report = ingest_kill(three, "faults-ingest", tmp_path, docs=3000, ingest_to="one")
    summary = report.summary()
    assert report.first_exit == 3 and report.resumed and report.resume_exit == 0, summary
    assert 0 < report.settled_at_kill < 3000, summary
    assert report.count == report.distinct_ids == 3000 and report.ids_match, summary
    assert (report.primaries_docs, report.all_copies_docs) == (3000, 6000), summary
    log = (tmp_path / "faults-ingest.ingest.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log, log[-3000:]  # the cut run says --resume, nothing more
