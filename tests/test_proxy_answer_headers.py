"""The collapsed answer's headers and body, made without ``Response(headers=...)``, are the bytes
that ``Response`` made from the same headers (what the client sees must not move)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.responses import Response

from collapse import jsonio
from collapse.routes.search import _answer
from collapse.upstream import forwarded_response_headers


def _as_before(status: int, body: dict[str, Any], upstream_headers: Any) -> Response:
    """The answer as ``routes.search._answer`` made it until 2026-12-02."""
    headers = forwarded_response_headers(upstream_headers)
    headers.pop("content-length", None)
    headers.pop("Content-Length", None)
    names = {k.lower() for k in headers}
    if "x-elastic-product" not in names:
        headers["X-Elastic-Product"] = "Elasticsearch"
    if "content-type" not in names:
        headers["content-type"] = "application/json"
    return Response(content=jsonio.dumps(body), status_code=status, headers=headers)


HEADER_SETS: list[Any] = [
    {},
    {"X-Elastic-Product": "Elasticsearch", "content-type": "application/json"},
    httpx.Headers(
        [
            ("X-elastic-product", "Elasticsearch"),
            ("content-type", "application/vnd.elasticsearch+json;compatible-with=9"),
            ("content-length", "123"),
            ("Warning", '299 Elasticsearch-9.5.4 "a"'),
            ("warning", '299 Elasticsearch-9.5.4 "b"'),
            ("X-Unrelated", "x"),
        ]
    ),
    {"Content-Length": "5", "CONTENT-LENGTH": "7", "Content-Type": "application/json"},
    {"x-elastic-product": "Elasticsearch", "Content-Type": "a", "content-type": "b"},
    {"Warning": "299 x", "X-Opaque-Id": "abc"},
]


@pytest.mark.parametrize("headers", HEADER_SETS)
@pytest.mark.parametrize("status", [200, 201, 204, 304, 404, 500])
def test_answer_bytes_as_before(headers: Any, status: int) -> None:
    body = {"took": 3, "hits": {"hits": [{"_id": "é", "_score": 1.5}]}, "collapse": {}}
    made, before = _answer(status, dict(body), headers), _as_before(status, dict(body), headers)
    assert made.status_code == before.status_code
    assert made.raw_headers == before.raw_headers
    assert bytes(made.body) == bytes(before.body)
