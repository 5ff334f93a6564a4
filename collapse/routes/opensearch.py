"""OpenSearch's own point-in-time paths, forwarded unchanged (``opensearch-py``'s
``create_pit``/``delete_pit``).

Elasticsearch's paths (``POST /{index}/_pit``, ``DELETE /_pit``, ``collapse.routes.cursors``)
work on OpenSearch too: ``collapse.upstream`` sends them as these. A ``_search`` with a ``pit``
is collapsed like any search on both engines. In front of Elasticsearch these paths get
Elasticsearch's own answer (it has no such endpoint).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from collapse.routes.passthrough import forward, raw_path

__all__ = ["close_point_in_time", "open_point_in_time", "router"]

router = APIRouter(tags=["scroll and point in time"])


@router.post(
    "/{index:path}/_search/point_in_time", summary="Open a point in time (OpenSearch's path)"
)
async def open_point_in_time(index: str, request: Request) -> Response:
    return await forward(request, raw_path(request))


@router.delete("/_search/point_in_time", summary="Close points in time (OpenSearch's path)")
async def close_point_in_time(request: Request) -> Response:
    return await forward(request, "/_search/point_in_time")
