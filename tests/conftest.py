"""Shared fixtures: the real Elasticsearch node, a fresh index per test, the proxy on a real port.

Tests that need Elasticsearch fail (they do not skip) when no node answers: start one with
``scripts/elasticsearch start`` or point ``ES_URL`` at a cluster. With ``ENGINE=opensearch`` the
node is OpenSearch instead (``scripts/opensearch start``, or ``OS_URL``), and ``es`` is the
indexer's client for it (``indexer.es.client``); CI runs the tests marked ``opensearch`` so.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from elasticsearch import Elasticsearch

from indexer.engine import OPENSEARCH, Engine
from indexer.es import client, detect_engine

ROOT = Path(__file__).resolve().parent.parent
#: The engine the tests run against: ``ENGINE=opensearch`` or Elasticsearch.
ENGINE: Engine = OPENSEARCH if os.environ.get("ENGINE") == OPENSEARCH else "elasticsearch"
#: For a test of something OpenSearch lacks (its minimal distribution has no ``dense_vector``).
only_elasticsearch = pytest.mark.skipif(ENGINE == OPENSEARCH, reason="Elasticsearch only")


def _es_url() -> str:
    url = os.environ.get("OS_URL" if ENGINE == OPENSEARCH else "ES_URL")
    if url:
        return url.split(",")[0].strip().rstrip("/")
    script = "opensearch" if ENGINE == OPENSEARCH else "elasticsearch"
    out = subprocess.run(
        [str(ROOT / "scripts" / script), "url"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.fixture(scope="session")
def es_url() -> str:
    """URL of the real Elasticsearch node the tests run against."""
    return _es_url()


@pytest.fixture(scope="session")
def es(es_url: str) -> Iterator[Elasticsearch]:
    """An official client on the real node; fails the test run when nothing answers, or when
    the node is not the engine asked for (``ENGINE``)."""
    es = client(es_url, ENGINE, request_timeout=30)
    try:
        es.cluster.health(wait_for_status="yellow", timeout="30s")
        found = detect_engine(es)
    except Exception as exc:
        pytest.fail(
            f"no {ENGINE} node answers at {es_url} ({exc!r}); run `scripts/{ENGINE} start` "
            f"or set {'OS_URL' if ENGINE == OPENSEARCH else 'ES_URL'}",
            pytrace=False,
        )
    if found != ENGINE:
        pytest.fail(f"{es_url} is {found}, not {ENGINE} (ENGINE)", pytrace=False)
    yield es
    es.close()


@pytest.fixture
def index_name(es: Elasticsearch, request: pytest.FixtureRequest) -> Iterator[str]:
    """A unique index name for this test; the index (if created) is deleted afterwards."""
    stem = "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-")
    name = f"test-{stem}-{uuid.uuid4().hex[:8]}"
    yield name
    es.options(ignore_status=404).indices.delete(index=name)
    es.options(ignore_status=404).indices.delete_index_template(name=name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """A real uvicorn server for an ASGI app, in a thread, on a free loopback port."""

    def __init__(self, app: object) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the proxy did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def proxy_url(es_url: str, es: Elasticsearch) -> Iterator[str]:
    """The collapsing proxy, with default settings, served on a real port in front of ``es_url``."""
    from collapse.app import create_app
    from collapse.settings import Settings

    with ServerThread(create_app(Settings(es_url=[es_url]))) as server:
        yield server.url
