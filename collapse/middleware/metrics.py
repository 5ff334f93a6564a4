"""Counts every request and times it, by route template, method and status."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.metrics import HTTP_LATENCY, HTTP_REQUESTS

__all__ = ["MetricsMiddleware"]


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
            HTTP_REQUESTS.labels(route=route, method=method, status=str(status)).inc()
            HTTP_LATENCY.labels(route=route, method=method).observe(time.perf_counter() - started)
