"""The Elasticsearch client of the CLI (also on OpenSearch), and the fail-fast reachability check.

The indexer speaks to both engines through the official ``elasticsearch`` client: the calls it
makes (mappings, ``_bulk``, ``_search``, ``_mget``, templates) are the same REST API on
OpenSearch. On OpenSearch the client's nodes are :class:`OpenSearchNode`, which sends plain
media types and answers the client's product check; point-in-time calls go through
:func:`open_point_in_time` and :func:`close_point_in_time`, whose paths differ
(``indexer.engine``). Why not ``opensearch-py``: docs/decisions.md.
"""

from __future__ import annotations

from typing import Any

from elastic_transport import (
    ApiResponseMeta,
    HttpHeaders,
    TransportError,
    Urllib3HttpNode,
)
from elastic_transport._node import NodeApiResponse
from elastic_transport.client_utils import DEFAULT, DefaultType
from elasticsearch import ApiError, Elasticsearch

from indexer.engine import (
    ELASTICSEARCH,
    OPENSEARCH,
    Engine,
    engine_of_root,
    pit_close_request,
    pit_id_of,
    pit_open_path,
    plain_media_type,
)

__all__ = [
    "DEFAULT_ES_URL",
    "ClusterUnavailable",
    "OpenSearchNode",
    "client",
    "close_point_in_time",
    "connect",
    "detect_engine",
    "engine_of",
    "open_point_in_time",
]

DEFAULT_ES_URL = "http://127.0.0.1:9200"


class ClusterUnavailable(Exception):
    """No node answered at the URL(s) tried; the message names them."""


class OpenSearchNode(Urllib3HttpNode):
    """An OpenSearch node for the ``elasticsearch`` client.

    OpenSearch refuses the client's versioned media types (406), so they are sent plain; and
    the client refuses a 2xx answer without ``X-Elastic-Product: Elasticsearch``, which
    OpenSearch never sends, so the node adds it to OpenSearch's answers (the request and
    answer bodies are the same API on both engines).
    """

    def perform_request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: HttpHeaders | None = None,
        request_timeout: DefaultType | float | None = DEFAULT,
    ) -> NodeApiResponse:
        if headers is not None:
            headers = headers.copy()
            for name in ("accept", "content-type"):
                if name in headers:
                    headers[name] = plain_media_type(headers[name])
        meta, data = super().perform_request(
            method, target, body=body, headers=headers, request_timeout=request_timeout
        )
        answer_headers = HttpHeaders(meta.headers)
        answer_headers["x-elastic-product"] = "Elasticsearch"
        meta = ApiResponseMeta(
            status=meta.status,
            http_version=meta.http_version,
            headers=answer_headers,
            duration=meta.duration,
            node=meta.node,
        )
        return NodeApiResponse(meta, data)


def client(nodes: list[str] | str, engine: Engine, **kwargs: Any) -> Elasticsearch:
    """An ``elasticsearch`` client on ``nodes`` that works with ``engine``."""
    if engine == OPENSEARCH:
        kwargs["node_class"] = OpenSearchNode
    return Elasticsearch(nodes, **kwargs)


def detect_engine(es: Elasticsearch, timeout: float = 5.0) -> Engine:
    """The engine answering ``es``'s nodes, from ``GET /`` (raises the transport's errors).
    A node that fails moves the question on to the next: each node is asked at most once."""
    answer = es.transport.perform_request(
        "GET",
        "/",
        headers=HttpHeaders({"accept": "application/json"}),
        request_timeout=timeout,
        max_retries=len(es.transport.node_pool.all()) - 1,
    )
    return engine_of_root(answer.meta.status, answer.body)


def engine_of(es: Elasticsearch) -> Engine:
    """The engine a client made by :func:`client` (or :func:`connect`) talks to."""
    nodes = es.transport.node_pool.all()
    return OPENSEARCH if nodes and isinstance(nodes[0], OpenSearchNode) else ELASTICSEARCH


def open_point_in_time(es: Elasticsearch, index: str, keep_alive: str) -> str:
    """Open a point in time on ``index``; its id."""
    engine = engine_of(es)
    if engine == ELASTICSEARCH:
        return str(es.open_point_in_time(index=index, keep_alive=keep_alive).body["id"])
    answer = es.perform_request(
        "POST",
        pit_open_path(engine, index),
        params={"keep_alive": keep_alive},
        headers={"accept": "application/json"},
    )
    return pit_id_of(engine, answer.body)


def close_point_in_time(es: Elasticsearch, pit: str) -> None:
    """Close the point in time ``pit``; one already gone is no error."""
    engine = engine_of(es)
    if engine == ELASTICSEARCH:
        es.options(ignore_status=404).close_point_in_time(id=pit)
        return
    path, body = pit_close_request(engine, pit)
    es.options(ignore_status=404).perform_request(
        "DELETE",
        path,
        body=body,
        headers={"accept": "application/json", "content-type": "application/json"},
    )


def connect(url: str, *, timeout: float = 60.0, check_timeout: float = 5.0) -> Elasticsearch:
    """A client on ``url`` (comma-separated nodes) that has answered once, or ClusterUnavailable.

    The check asks ``GET /`` (which engine: Elasticsearch or OpenSearch) and then cluster
    health, each node tried at most once (a node that is down is skipped while another
    answers), so an unreachable cluster fails in seconds. (Elastic's minimal
    distribution answers ``GET /`` with 405: that is Elasticsearch.)
    """
    nodes = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
    if not nodes:
        raise ClusterUnavailable("no Elasticsearch URL given (--es-url or ES_URL)")
    settings: dict[str, Any] = {
        "request_timeout": timeout,
        "max_retries": 3,
        "retry_on_timeout": True,
        "retry_on_status": (502, 503, 504),
    }
    probe = Elasticsearch(nodes)
    try:
        engine = detect_engine(probe, check_timeout)
    except TransportError as exc:
        raise ClusterUnavailable(
            f"Elasticsearch is unreachable at {', '.join(nodes)}: {exc}"
        ) from exc
    finally:
        probe.close()
    es = client(nodes, engine, **settings)
    try:
        # One try per node: a node that is down costs nothing while another answers.
        es.options(request_timeout=check_timeout, max_retries=len(nodes) - 1).cluster.health()
    except (TransportError, ApiError) as exc:
        es.close()
        raise ClusterUnavailable(
            f"Elasticsearch is unreachable at {', '.join(nodes)}: {exc}"
        ) from exc
    return es
