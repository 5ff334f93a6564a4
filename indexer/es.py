"""The Elasticsearch client of the CLI, and the fail-fast reachability check."""

from __future__ import annotations

from elasticsearch import ApiError, Elasticsearch, TransportError

__all__ = ["DEFAULT_ES_URL", "ClusterUnavailable", "connect"]

DEFAULT_ES_URL = "http://127.0.0.1:9200"


class ClusterUnavailable(Exception):
    """No node answered at the URL(s) tried; the message names them."""


def connect(url: str, *, timeout: float = 60.0, check_timeout: float = 5.0) -> Elasticsearch:
    """A client on ``url`` (comma-separated nodes) that has answered once, or ClusterUnavailable.

    The check is a cluster health call with no retries, so an unreachable cluster fails in
    seconds. (``GET /`` is not used: minimal distributions answer it with 405.)
    """
    nodes = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
    if not nodes:
        raise ClusterUnavailable("no Elasticsearch URL given (--es-url or ES_URL)")
    es = Elasticsearch(
        nodes,
        request_timeout=timeout,
        max_retries=3,
        retry_on_timeout=True,
        retry_on_status=(502, 503, 504),
    )
    try:
        es.options(request_timeout=check_timeout, max_retries=0).cluster.health()
    except (TransportError, ApiError) as exc:
        es.close()
        raise ClusterUnavailable(
            f"Elasticsearch is unreachable at {', '.join(nodes)}: {exc}"
        ) from exc
    return es
