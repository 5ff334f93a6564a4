"""Searches served without FastAPI's router: the proxy's hot path.

The innermost middleware. A ``_search`` or ``_msearch`` (GET or POST, on all indices or an index
expression) has passed the request id, metrics, CORS, access control and body limit like every
request; here it skips FastAPI's routing, dependency solving and exception wrappers (what
that saves: docs/proxy.md):

* with ``collapse=false`` (or a ``scroll``, or an answer asked in YAML, SMILE or CBOR) it
  goes straight to Elasticsearch, and
  Elasticsearch's bytes, status and headers go straight back (what
  ``routes.passthrough.forward`` does);
* otherwise it is handed to ``routes.search.collapsed_search`` or ``collapsed_msearch``: the
  functions the FastAPI routes call (they stay declared, for the OpenAPI schema and for index
  names the lane does not take), with the same error answers as the app's handlers.

The route template is put in the scope so that metrics and the access line label the request
like the routed one.
"""

from __future__ import annotations

import functools
import logging
import re
from types import SimpleNamespace
from urllib.parse import parse_qsl

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from collapse.errors import ProxyError
from collapse.middleware.access import routing_path
from collapse.params import other_format
from collapse.routes.search import collapsed_msearch, collapsed_search
from collapse.upstream import (
    FORWARDED_RESPONSE_HEADERS,
    PASSTHROUGH_REQUEST_HEADERS,
    Upstream,
)

__all__ = ["SearchLaneMiddleware", "error_log"]

error_log = logging.getLogger("collapse.error")

_SEARCH_PATH = re.compile(r"(?:/(?P<index>[^/_][^/]*|_all))?/(?P<endpoint>_search|_msearch)")
_ROUTES = {
    (False, "_search"): SimpleNamespace(path="/_search"),
    (True, "_search"): SimpleNamespace(path="/{index}/_search"),
    (False, "_msearch"): SimpleNamespace(path="/_msearch"),
    (True, "_msearch"): SimpleNamespace(path="/{index}/_msearch"),
}


#: :data:`PASSTHROUGH_REQUEST_HEADERS` as the bytes of ASGI's (lower-case) header names.
_ASKED = frozenset(name.encode("latin-1") for name in PASSTHROUGH_REQUEST_HEADERS)
#: :data:`FORWARDED_RESPONSE_HEADERS` as the bytes an answer's raw headers carry.
_ANSWERED = frozenset(name.encode("latin-1") for name in FORWARDED_RESPONSE_HEADERS)


@functools.lru_cache(maxsize=1024)
def _parsed(raw_query: bytes) -> tuple[tuple[str, str], ...]:
    """A query string's pairs (most pass-throughs send the same few query strings)."""
    return tuple(parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True))


def _forwarded(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in query if k != "collapse" and not k.startswith("collapse_")]


class _Read(Request):
    """A request whose body the lane has read (what ``Request.body`` gives, without its
    stream generator)."""

    def __init__(self, scope: Scope, receive: Receive, body: bytes) -> None:
        super().__init__(scope, receive)
        self._read = body

    async def body(self) -> bytes:
        return self._read


async def _body(receive: Receive) -> bytes:
    """The request's body, read as ``Request.body`` reads it (``ClientDisconnect`` when the
    client goes away first)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


class SearchLaneMiddleware:
    """Serves ``_search`` and ``_msearch``; everything else goes on to the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        # An index in date math (``<logs-{now/M}>``) comes with its ``/`` encoded: one segment.
        match = _SEARCH_PATH.fullmatch(routing_path(scope))
        upstream: Upstream | None = getattr(scope["app"].state, "upstream", None)
        if match is None or upstream is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = _ROUTES[(match["index"] is not None, match["endpoint"])]
        raw_query: bytes = scope.get("query_string", b"")
        query: list[tuple[str, str]] = []
        if b"collapse" in raw_query or b"scroll" in raw_query or b"format" in raw_query:
            query = list(_parsed(raw_query))
        collapse = [v for k, v in query if k == "collapse"]
        off = bool(collapse) and collapse[-1].strip().lower() == "false"
        fmt = next((v for k, v in reversed(query) if k == "format"), None)
        accept = next((v for k, v in scope["headers"] if k == b"accept"), None)
        # a scroll is never collapsed, nor an answer in YAML, SMILE or CBOR
        other = other_format(fmt, None if accept is None else accept.decode("latin-1"))
        if other and not query:
            query = list(_parsed(raw_query))  # forwarded whole: every parameter goes on
        if off or other or any(k == "scroll" for k, _ in query):
            await self._forward(scope, receive, send, upstream, query)
        else:
            index = match["index"].replace("%2F", "/") if match["index"] else None
            await self._collapse(scope, receive, send, index, match["endpoint"])

    async def _collapse(
        self, scope: Scope, receive: Receive, send: Send, index: str | None, endpoint: str
    ) -> None:
        handler = collapsed_search if endpoint == "_search" else collapsed_msearch
        response: Response
        try:
            response = await handler(_Read(scope, receive, await _body(receive)), index)
        except ProxyError as exc:  # as the app's handler answers it
            response = exc.response()
        # Anything else goes on up, as from the app: the body limit's own signal to the body
        # limit, the rest to the request id middleware's 500 (logged, with the request id).
        await response(scope, receive, send)

    async def _forward(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        upstream: Upstream,
        query: list[tuple[str, str]],
    ) -> None:
        """``collapse=false``: the request as it came, Elasticsearch's answer as it goes."""
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope["headers"]
            if name in _ASKED
        }
        try:
            raw_path = scope.get("raw_path") or scope["path"].encode("latin-1")
            answer = await upstream.exchange(
                scope["method"],
                bytes(raw_path).decode("latin-1").split("?", 1)[0],
                params=_forwarded(query),
                content=b"".join(chunks),
                headers=headers,
            )
        except ProxyError as exc:
            await exc.response()(scope, receive, send)
            return
        except Exception as exc:  # the app's handler would answer so: keep one error shape
            error_log.exception("unhandled error", extra={"path": scope["path"]})
            error = ProxyError(f"internal error of the proxy ({type(exc).__name__})")
            await error.response()(scope, receive, send)
            return
        # the body as it came: compressed by Elasticsearch when the client accepts it
        out = [(name, value) for name, value in answer.headers if name.lower() in _ANSWERED]
        body = answer.body
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": out})
        await send({"type": "http.response.body", "body": body})
