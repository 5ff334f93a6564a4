"""Exposure: every index a read or write names — in its path or its body — must be served.

Runs after access control (so refused requests are never read) and the body limit (so a body
is read here only within it). For the index expression of the path, of each ``_msearch``
header, of each ``_mget`` doc, of each ``_bulk`` action, of a lookup inside a search body, and
for a search's point-in-time id, it asks :class:`collapse.exposure.Exposure`: a name outside the
allowlist answers 403, a wildcard is narrowed (the path or the header is rewritten before the
routes see it), a wildcard left with nothing and ``allow_no_indices=false`` answers 404. The
body, read once here, is handed on as it came (or rewritten). Scroll pages carry no index: the
route checks their hits (``collapse.routes.cursors``).

Request bodies are read as JSON; a YAML, CBOR or Smile body to these endpoints answers 400 (the
proxy could not see what it names).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, quote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse import jsonio
from collapse.credentials import CREDENTIAL_HEADERS
from collapse.errors import BadRequest, ProxyError
from collapse.exposure import Exposure, lookup_indices, not_found
from collapse.middleware.access import classify, routing_path
from collapse.upstream import Upstream

__all__ = ["ExposureMiddleware"]

#: Endpoints (the path segment after the index) that read or write documents of an index.
_INDEXED = frozenset(
    {
        "_search",
        "_msearch",
        "_count",
        "_mget",
        "_pit",
        "_doc",
        "_source",
        "_collapse",
        "_bulk",
        "_create",
        "_update",
    }
)
#: Endpoints whose body may hold a point-in-time id or a lookup of another index's document.
_SEARCH_BODY = frozenset({"_search", "_count", "_collapse"})
_FOREIGN_FORMATS = ("yaml", "cbor", "smile")
_INDEX_TEMPLATE = re.compile(r"^/\{index[^}]*\}")
#: :data:`CREDENTIAL_HEADERS` as ASGI's header names.
_CREDENTIALS = frozenset(name.encode("latin-1") for name in CREDENTIAL_HEADERS)
#: Scope keys this middleware may rewrite for the layers inside it.
_NARROWED = frozenset({"path", "raw_path", "headers"})


def _mentions_indices(raw: bytes) -> bool:
    """Whether a body may name a point in time or an index (``\\u`` escapes, comments and all:
    Elasticsearch's parser accepts comments, ours does not)."""
    return b"pit" in raw or b"index" in raw or b"\\" in raw


def _parse(raw: bytes) -> Any:
    """A JSON body or line; one the proxy cannot read is refused when it may name an index
    (Elasticsearch might read it), else None (it names none: Elasticsearch answers it)."""
    try:
        return jsonio.loads(raw)
    except Exception as exc:
        if _mentions_indices(raw):
            raise BadRequest(f"request body is not valid JSON: {exc}") from exc
        return None


class ExposureMiddleware:
    """Refuses or narrows what a request names outside the allowlist (``collapse.exposure``)."""

    def __init__(self, app: ASGIApp, exposure: Exposure) -> None:
        self.app = app
        self.exposure = exposure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = routing_path(scope)
        segments = path.strip("/").split("/")
        index: str | None = None
        if len(segments) >= 2 and (not segments[0].startswith("_") or segments[0] == "_all"):
            index = segments[0].replace("%2F", "/")
            segments = segments[1:]
        endpoint = segments[0]
        upstream: Upstream | None = getattr(scope["app"].state, "upstream", None)
        kind = ""
        if (
            endpoint not in _INDEXED
            or segments[1:2] == ["scroll"]
            or (index is None and endpoint == "_pit")
            or (index is None and segments[1:2] == ["point_in_time"])  # OpenSearch's close
            or upstream is None
            or (kind := classify(scope["method"], path)) not in ("read", "write")
        ):
            await self.app(scope, receive, send)
            return
        inner = dict(scope)  # narrowed here; the outer layers log and count the client's path
        try:
            receive = await self._check(
                inner, receive, upstream, index, endpoint, segments, kind == "write"
            )
        except ProxyError as exc:
            await exc.response()(scope, receive, send)
            return
        if all(inner[k] is scope[k] for k in _NARROWED if k in scope):  # nothing was narrowed
            await self.app(scope, receive, send)
            return
        try:
            await self.app(inner, receive, send)
        finally:  # what the inner layers add (the route template) is the request's own
            scope.update((k, v) for k, v in inner.items() if k not in _NARROWED)
            route = inner.get("route")
            if index is None and inner["path"] != scope["path"] and route is not None:
                # ``/_search`` narrowed to ``/a*,-b/_search``: labelled as the client sent it
                scope["route"] = SimpleNamespace(path=_INDEX_TEMPLATE.sub("", route.path, 1))

    async def _check(
        self,
        scope: Scope,
        receive: Receive,
        upstream: Upstream,
        index: str | None,
        endpoint: str,
        segments: list[str],
        write: bool,
    ) -> Receive:
        """Check (and narrow) the request; the receive channel that hands its body on."""
        # What the checks read of the headers: the client's credentials (``Exposure`` judges
        # with them, ``collapse.credentials``), and the content type.
        headers: dict[str, str] = {}
        content_type = ""
        for name, value in scope["headers"]:
            if name in _CREDENTIALS:
                headers[name.decode("latin-1")] = value.decode("latin-1")
            elif name == b"content-type" and not content_type:
                content_type = value.decode("latin-1")
        raw_query: bytes = scope.get("query_string", b"")
        # The query string matters here only for ``allow_no_indices``.
        query = dict(parse_qsl(raw_query.decode("latin-1"))) if b"allow" in raw_query else {}
        lookup = endpoint == "_collapse" and segments[1:] == ["lookup"]
        needs_body = endpoint in ("_msearch", "_mget", "_bulk") or (
            endpoint in _SEARCH_BODY and not lookup
        )
        raw, more = (await _read(receive)) if needs_body else (b"", receive)
        if raw.strip() and any(f in content_type for f in _FOREIGN_FORMATS):
            raise BadRequest("the collapsing proxy reads request bodies as JSON only")
        exposure = self.exposure
        body: bytes | None = None
        if endpoint == "_msearch":
            body = await self._msearch(scope, upstream, headers, query, index, raw)
        elif endpoint == "_mget":
            await exposure.check_names(upstream, headers, _mget_indices(raw, index))
        elif endpoint == "_bulk":
            await exposure.check_names(upstream, headers, _bulk_indices(raw, index))
        elif write:
            await exposure.check_names(upstream, headers, [index or ""])
        else:
            search = _parse(raw) if endpoint in _SEARCH_BODY and _mentions_indices(raw) else {}
            search = search if isinstance(search, dict) else {}
            pit = await self._search_body(upstream, headers, search)
            if index is not None or not isinstance(pit, dict):
                await self._path(scope, upstream, headers, index, query.get("allow_no_indices"))
        if body is not None:
            return _replay(scope, body, more, resized=True)
        return _replay(scope, raw, more, resized=False) if needs_body else receive

    async def _path(
        self,
        scope: Scope,
        upstream: Upstream,
        headers: dict[str, str],
        index: str | None,
        allow_no_indices: Any,
    ) -> None:
        """Refuse or narrow the path's index expression (rewriting the path)."""
        decision = await self.exposure.decide(upstream, headers, index)
        if decision.empty and str(allow_no_indices).lower() == "false":
            raise not_found(index or "_all")
        if decision.expression is not None:
            _rewrite_path(scope, index, decision.expression)

    async def _search_body(
        self, upstream: Upstream, headers: dict[str, str], search: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Check a search body's point in time and lookups; its ``pit`` (None: it has none)."""
        if not search:
            return None
        pit = search.get("pit")
        if isinstance(pit, dict) and isinstance(pit.get("id"), str):
            await self.exposure.check_pit(upstream, headers, pit["id"])
        for part in ("query", "post_filter", "knn", "retriever"):
            await self.exposure.check_names(upstream, headers, lookup_indices(search.get(part)))
        return pit if isinstance(pit, dict) else None

    async def _msearch(
        self,
        scope: Scope,
        upstream: Upstream,
        headers: dict[str, str],
        query: dict[str, str],
        index: str | None,
        raw: bytes,
    ) -> bytes | None:
        """The ``_msearch`` body with each header's index narrowed (None: unchanged). A header
        the proxy cannot read names no index: it searches the path's, narrowed in the path."""
        lines = raw.split(b"\n")
        # Header and body lines alternate, blank lines skipped (as the route and Elasticsearch).
        parsed = [(n, _parse(line)) for n, line in enumerate(lines) if line.strip()]
        changed = unread = False
        for k in range(0, len(parsed), 2):
            number, header = parsed[k]
            search = parsed[k + 1][1] if k + 1 < len(parsed) else {}
            pit = await self._search_body(
                upstream, headers, search if isinstance(search, dict) else {}
            )
            if not isinstance(header, dict):
                unread = True
                continue
            target = header.get("index", index)
            if isinstance(target, list):
                target = ",".join(str(t) for t in target)
            if target is None and pit is not None:
                continue  # a point in time names its own indices
            target = target if isinstance(target, str) else None
            decision = await self.exposure.decide(upstream, headers, target)
            no_indices = header.get("allow_no_indices", query.get("allow_no_indices"))
            if decision.empty and str(no_indices).lower() == "false":
                raise not_found(target or "_all")
            if decision.expression is not None:
                lines[number] = jsonio.dumps({**header, "index": decision.expression})
                changed = True
        if unread:
            await self._path(scope, upstream, headers, index, query.get("allow_no_indices"))
        return b"\n".join(lines) if changed else None


def _mget_indices(raw: bytes, index: str | None) -> list[str]:
    """The indices an ``_mget`` reads: the path's, and each doc's ``_index``."""
    names = [index] if index is not None else []
    body = _parse(raw) if raw.strip() else {}
    docs = body.get("docs") if isinstance(body, dict) else None
    for doc in docs if isinstance(docs, list) else ():
        if isinstance(doc, dict) and isinstance(doc.get("_index"), str):
            names.append(doc["_index"])
    return names


def _bulk_indices(raw: bytes, index: str | None) -> list[str]:
    """The index each ``_bulk`` action writes to (its ``_index``, else the path's)."""
    names: list[str] = []
    lines = [line for line in raw.split(b"\n") if line.strip()]
    i = 0
    while i < len(lines):
        action = _parse(lines[i])
        i += 1
        if not isinstance(action, dict) or len(action) != 1:
            continue  # the write route refuses it
        ((kind, meta),) = action.items()
        target = meta.get("_index", index) if isinstance(meta, dict) else index
        names.append(target if isinstance(target, str) else "")
        if kind != "delete":
            i += 1
    return names


async def _read(receive: Receive) -> tuple[bytes, Receive]:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), receive


def _replay(scope: Scope, body: bytes, receive: Receive, resized: bool) -> Receive:
    """A receive channel that gives ``body`` once, then the client's own (disconnects);
    ``resized``: the body is not the one the client sent (its Content-Length is set to it)."""
    given = False
    if resized:
        scope["headers"] = [
            (name, str(len(body)).encode() if name == b"content-length" else value)
            for name, value in scope["headers"]
        ]

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _rewrite_path(scope: Scope, index: str | None, expression: str) -> None:
    """Put ``expression`` in the path's index segment (adding one when the path had none)."""
    path: str = scope["path"]
    raw = bytes(scope.get("raw_path") or path.encode("latin-1")).decode("latin-1")
    raw_rest = raw.split("?", 1)[0]
    if index is not None:
        raw_rest = "/" + raw_rest.lstrip("/").split("/", 1)[1]
        rest = "/" + path.lstrip("/").split("/", 1)[1] if "%2F" not in raw.upper() else None
    else:
        rest = path
    encoded = quote(expression, safe=",*:+")
    scope["raw_path"] = f"/{encoded}{raw_rest}".encode("latin-1")
    scope["path"] = f"/{expression}{rest if rest is not None else raw_rest}"
