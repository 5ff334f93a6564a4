"""``collapse=false`` searches, streamed through without FastAPI's routing and request models.

The innermost middleware: a ``_search``/``_msearch`` with ``collapse=false`` (or a ``scroll``) has
passed the request id, metrics, CORS, access control and body limit like every request; here it
goes straight to Elasticsearch and Elasticsearch's bytes, status and headers go straight back —
what ``routes.passthrough.forward`` does, minus the router, the dependency machinery and the
exception wrappers (measured ~0.2 ms of CPU per request on the bench machine). The route
template is put in the scope so metrics label it like the routed request.
"""

from __future__ import annotations

import logging
import re
from types import SimpleNamespace
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from collapse.errors import ProxyError
from collapse.upstream import FORWARDED_REQUEST_HEADERS, FORWARDED_RESPONSE_HEADERS, Upstream

error_log = logging.getLogger("collapse.error")

_SEARCH_PATH = re.compile(r"(?:/(?P<index>[^/_][^/]*|_all))?/(?P<endpoint>_search|_msearch)")
_ROUTES = {
    (False, "_search"): SimpleNamespace(path="/_search"),
    (True, "_search"): SimpleNamespace(path="/{index}/_search"),
    (False, "_msearch"): SimpleNamespace(path="/_msearch"),
    (True, "_msearch"): SimpleNamespace(path="/{index}/_msearch"),
}


def _forwarded(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in query if k != "collapse" and not k.startswith("collapse_")]


class PassThroughMiddleware:
    """Forwards ``collapse=false`` searches; everything else goes on to the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        raw_query: bytes = scope.get("query_string", b"")
        if b"collapse" not in raw_query and b"scroll" not in raw_query:
            await self.app(scope, receive, send)
            return
        match = _SEARCH_PATH.fullmatch(scope["path"])
        if match is None:
            await self.app(scope, receive, send)
            return
        query = parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True)
        collapse = [v for k, v in query if k == "collapse"]
        off = bool(collapse) and collapse[-1].strip().lower() == "false"
        if not off and not any(k == "scroll" for k, _ in query):  # a scroll is never collapsed
            await self.app(scope, receive, send)
            return
        upstream: Upstream | None = getattr(scope["app"].state, "upstream", None)
        if upstream is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = _ROUTES[(match["index"] is not None, match["endpoint"])]
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
            if name.decode("latin-1") in FORWARDED_REQUEST_HEADERS
        }
        try:
            answer = await upstream.request(
                scope["method"],
                scope["path"],
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
        out = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in answer.headers.multi_items()
            if name.lower() in FORWARDED_RESPONSE_HEADERS
        ]
        body = answer.content
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": answer.status_code, "headers": out})
        await send({"type": "http.response.body", "body": body})
