"""Every request counted and timed, by route template, method and status.

``record`` is called by ``collapse.middleware.request_id`` when a request's app returns (the
request id layer is where a request is observed: its id, its access line and these metrics).
"""

from __future__ import annotations

import functools
from typing import Any

from starlette.types import Scope

from collapse.metrics import HTTP_LATENCY, HTTP_REQUESTS

__all__ = ["record"]


@functools.lru_cache(maxsize=1024)
def _counter(route: str, method: str, status: str) -> Any:
    """The request counter of one label set (a label lookup takes a lock and a hash)."""
    return HTTP_REQUESTS.labels(route=route, method=method, status=status)


@functools.lru_cache(maxsize=512)
def _histogram(route: str, method: str) -> Any:
    """The latency histogram of one route and method."""
    return HTTP_LATENCY.labels(route=route, method=method)


def record(scope: Scope, status: int, seconds: float) -> None:
    """Count a request of ``scope`` answered with ``status`` and time it (``seconds``):
    ``collapse_http_requests_total`` and ``collapse_http_request_duration_seconds``."""
    route = getattr(scope.get("route"), "path", None) or "unmatched"
    method = scope["method"]
    _counter(route, method, str(status)).inc()
    _histogram(route, method).observe(seconds)
