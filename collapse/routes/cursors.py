"""Scroll and point in time: forwarded to Elasticsearch unchanged.

A scroll pages Elasticsearch's hits, not groups: a ``scroll`` search and its continuations
(``_search/scroll``) are Elasticsearch's own answers, uncollapsed, ``collapse_fp`` included
unless the request's ``_source`` filtering leaves it out. Opening and closing a point in time
are forwarded too; a ``_search`` with a ``pit`` is collapsed like any search
(``collapse.routes.search``), its pages kept consistent by the ``search_after`` cursor
(``collapse.paging``).

A scroll id names no index: a page whose hits come from an index the proxy does not serve (an
id obtained elsewhere) answers 403 (``collapse.exposure``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from collapse import jsonio
from collapse.exposure import Exposure
from collapse.routes.passthrough import forward, raw_path

__all__ = [
    "clear_scroll",
    "clear_scroll_by_id",
    "close_pit",
    "open_pit",
    "router",
    "scroll",
    "scroll_by_id",
]

router = APIRouter(tags=["scroll and point in time"])


async def _page(request: Request, path: str) -> Response:
    """The next page, refused when its hits come from an index the proxy does not serve."""
    page = await forward(request, path, encoded=False)  # its hits are checked here
    if page.status_code == 200:
        try:
            body = jsonio.loads(bytes(page.body))
        except Exception:
            body = None
        if isinstance(body, dict):
            exposure: Exposure = request.app.state.exposure
            await exposure.check_hits(request.app.state.upstream, request.headers, body)
    return page


@router.api_route("/_search/scroll", methods=["GET", "POST"], summary="Next page of a scroll")
async def scroll(request: Request) -> Response:
    return await _page(request, "/_search/scroll")


@router.api_route(
    "/_search/scroll/{scroll_id}", methods=["GET", "POST"], summary="Next page of a scroll"
)
async def scroll_by_id(scroll_id: str, request: Request) -> Response:
    return await _page(request, raw_path(request))


@router.delete("/_search/scroll", summary="Clear scrolls")
async def clear_scroll(request: Request) -> Response:
    return await forward(request, "/_search/scroll")


@router.delete("/_search/scroll/{scroll_id}", summary="Clear scrolls")
async def clear_scroll_by_id(scroll_id: str, request: Request) -> Response:
    return await forward(request, raw_path(request))


@router.post("/{index:path}/_pit", summary="Open a point in time")
async def open_pit(index: str, request: Request) -> Response:
    return await forward(request, raw_path(request))


@router.delete("/_pit", summary="Close a point in time")
async def close_pit(request: Request) -> Response:
    return await forward(request, "/_pit")
