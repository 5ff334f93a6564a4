"""Forwarding to Elasticsearch unchanged: the helpers every route uses when it does not collapse.

``forward`` sends the client's method, body and query string (without ``collapse*``) and answers
with Elasticsearch's bytes, status and headers as they came: no parsing, no re-serialisation,
compressed by Elasticsearch when the client accepts it (``Accept-Encoding`` passed on).
"""

from __future__ import annotations

from fastapi import Request, Response

from collapse.upstream import (
    FORWARDED_RESPONSE_HEADERS,
    Upstream,
    forwarded_request_headers,
    passthrough_request_headers,
)

__all__ = ["elasticsearch_params", "forward", "raw_path"]


def elasticsearch_params(request: Request) -> list[tuple[str, str]]:
    """The query string without the proxy's own ``collapse`` and ``collapse_*`` parameters."""
    return [
        (key, value)
        for key, value in request.query_params.multi_items()
        if key != "collapse" and not key.startswith("collapse_")
    ]


def raw_path(request: Request) -> str:
    """The request's path as the client encoded it: an index expression in date math
    (``%3Clogs-%7Bnow%2FM%7D%3E``) reaches Elasticsearch with its ``/`` still encoded."""
    raw = request.scope.get("raw_path")
    if not raw:
        return str(request.url.path)
    return bytes(raw).decode("latin-1").split("?", 1)[0]


async def forward(
    request: Request,
    path: str,
    *,
    params: list[tuple[str, str]] | None = None,
    content: bytes | None = None,
    encoded: bool = True,
) -> Response:
    """Send the request to Elasticsearch as it came and answer with what Elasticsearch sent
    (``params`` and ``content``, when given, replace the query string and the body).
    ``encoded``: the answer may come compressed, as the client accepts; False for a caller
    that reads the answer's body (it then comes plain)."""
    upstream: Upstream = request.app.state.upstream
    headers = (passthrough_request_headers if encoded else forwarded_request_headers)(
        request.headers
    )
    answer = await upstream.exchange(
        request.method,
        path,
        params=elasticsearch_params(request) if params is None else params,
        content=await request.body() if content is None else content,
        headers=headers,
    )
    response = Response(content=answer.body, status_code=answer.status)
    response.raw_headers = [
        *(
            (name.lower(), value)
            for name, value in answer.headers
            if name.lower().decode("latin-1") in FORWARDED_RESPONSE_HEADERS
        ),
        *((name, value) for name, value in response.raw_headers if name == b"content-length"),
    ]
    return response
