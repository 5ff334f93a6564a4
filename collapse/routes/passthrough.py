"""Forwarding to Elasticsearch unchanged: the helpers every route uses when it does not collapse.

``forward`` sends the client's method, body and query string (without ``collapse*``) and answers
with Elasticsearch's bytes, status and headers as they came: no parsing, no re-serialisation.
"""

from __future__ import annotations

from fastapi import Request, Response

from collapse.upstream import Upstream, forwarded_request_headers, forwarded_response_headers


def elasticsearch_params(request: Request) -> list[tuple[str, str]]:
    """The query string without the proxy's own ``collapse`` and ``collapse_*`` parameters."""
    return [
        (key, value)
        for key, value in request.query_params.multi_items()
        if key != "collapse" and not key.startswith("collapse_")
    ]


async def forward(request: Request, path: str) -> Response:
    """Send the request to Elasticsearch as it came and answer with what Elasticsearch sent."""
    upstream: Upstream = request.app.state.upstream
    answer = await upstream.request(
        request.method,
        path,
        params=elasticsearch_params(request),
        content=await request.body(),
        headers=forwarded_request_headers(request.headers),
    )
    return Response(
        content=answer.content,
        status_code=answer.status_code,
        headers=forwarded_response_headers(answer.headers),
    )
