"""Counts every request and times it, by route template, method and status."""

from __future__ import annotations

import functools
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.metrics import HTTP_LATENCY, HTTP_REQUESTS

__all__ = ["MetricsMiddleware"]


@functools.lru_cache(maxsize=1024)
def _counter(route: str, method: str, status: str) -> Any:
    """The request counter of one label set (a label lookup takes a lock and a hash)."""
    return HTTP_REQUESTS.labels(route=route, method=method, status=status)


@functools.lru_cache(maxsize=512)
def _histogram(route: str, method: str) -> Any:
    """The latency histogram of one route and method."""
    return HTTP_LATENCY.labels(route=route, method=method)


class MetricsMiddleware:
    """Records ``collapse_http_requests_total`` and ``collapse_http_request_duration_seconds``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_recording(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_recording)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"]
            _counter(route, method, str(status)).inc()
            _histogram(route, method).observe(time.perf_counter() - started)
