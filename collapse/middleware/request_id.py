"""A request id for every request, echoed back, sent upstream; one JSON access-log line; the
request's count and latency.

The id is the client's ``X-Request-Id`` or ``X-Opaque-Id`` when it is a short token, otherwise
a new random one. It is answered in ``X-Request-Id``, kept in ``collapse.logging.request_id_var``
for every log line of the request, and sent to Elasticsearch as ``X-Opaque-Id`` by
``collapse.upstream``. The access-log line (logger ``collapse.access``) has method, path, status,
duration and client address; never headers, bodies or the query string's values. The same
layer records ``collapse_http_requests_total`` and ``collapse_http_request_duration_seconds`` by
route template, method and status (``collapse.middleware.metrics``): one layer where a request
is observed, not two around each other (what that saves: docs/proxy.md).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.errors import ProxyError
from collapse.logging import log_info, request_id_var
from collapse.middleware.metrics import record

__all__ = [
    "REQUEST_ID_HEADERS",
    "RequestIdMiddleware",
    "access_log",
    "error_log",
    "incoming_request_id",
]

REQUEST_ID_HEADERS = (b"x-request-id", b"x-opaque-id")
_ANSWER_HEADER = b"x-request-id"
_VALID_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")

access_log = logging.getLogger("collapse.access")
error_log = logging.getLogger("collapse.error")


def incoming_request_id(scope: Scope) -> str | None:
    """The client's request id, if it sent a usable one."""
    for name, value in scope["headers"]:
        if name in REQUEST_ID_HEADERS:
            text = value.decode("latin-1")
            if _VALID_ID.fullmatch(text):
                return text
    return None


#: The bits of a version-4 UUID (RFC 4122) that are not random: version 4, variant 10.
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (4 << 76) | (0x8000 << 48)


def new_request_id() -> str:
    """A new id: ``uuid.uuid4().hex``, without making the ``UUID`` object."""
    value = int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET
    return f"{value:032x}"


class RequestIdMiddleware:
    """Assigns the request id, counts and times the request, and writes the access-log line
    when the answer is complete."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = incoming_request_id(scope) or new_request_id()
        answered = (_ANSWER_HEADER, request_id.encode("latin-1"))
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        began = time.perf_counter()
        status = 500
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status = message["status"]
                started = True
                headers = message.get("headers") or ()
                message["headers"] = [h for h in headers if h[0] != _ANSWER_HEADER] + [answered]
            await send(message)

        try:
            try:
                await self.app(scope, receive, send_with_id)
            finally:  # counted as the app answered it (500 when it raised before answering)
                record(scope, status, time.perf_counter() - began)
        except Exception as exc:
            error_log.exception("unhandled error", extra={"path": scope["path"]})
            if started:
                raise
            # Answered here rather than by Starlette so that the 500 carries the request id.
            error = ProxyError(f"internal error of the proxy ({type(exc).__name__})")
            await error.response()(scope, receive, send_with_id)
        finally:
            client = scope.get("client")
            log_info(
                access_log,
                "%s %s %d",
                (scope["method"], scope["path"], status),
                {
                    "method": scope["method"],
                    "path": scope["path"],
                    "query_keys": _query_keys(scope),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - began) * 1000, 2),
                    "client": client[0] if client else None,
                    "route": getattr(scope.get("route"), "path", None),
                },
            )
            request_id_var.reset(token)


def _query_keys(scope: Scope) -> list[str]:
    """The names (never the values) of the query-string parameters."""
    query: bytes = scope.get("query_string", b"")
    if not query:
        return []
    return list(_names(query))


@functools.lru_cache(maxsize=1024)
def _names(query: bytes) -> tuple[str, ...]:
    """:func:`_query_keys` of a query string (most requests repeat a few query strings)."""
    raw = query.decode("latin-1")
    return tuple(sorted({part.split("=", 1)[0][:64] for part in raw.split("&") if part}))
