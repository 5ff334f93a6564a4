"""Endpoints forwarded unchanged: ``GET|HEAD /``, ``_count``, ``GET|HEAD /{index}/_doc/{id}``.

Nothing here is collapsed: ``hits.total`` and ``_count`` count documents as Elasticsearch does.
``GET /`` is Elasticsearch's own answer (the minimal distribution answers 405; the official
client's ``info()`` then raises as it would against that node).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request, Response

from collapse.routes.passthrough import forward

router = APIRouter(tags=["documents"])


@router.api_route("/", methods=["GET", "HEAD"], summary="Elasticsearch's root (cluster info)")
async def root(request: Request) -> Response:
    return await forward(request, "/")


@router.api_route("/_count", methods=["GET", "POST"], summary="Count, as Elasticsearch does")
async def count_all(request: Request) -> Response:
    return await forward(request, "/_count")


@router.api_route("/{index}/_count", methods=["GET", "POST"], summary="Count in an index")
async def count_index(index: str, request: Request) -> Response:
    return await forward(request, f"/{index}/_count")


@router.api_route("/{index}/_doc/{doc_id:path}", methods=["GET", "HEAD"], summary="Get a document")
async def get_doc(index: str, doc_id: str, request: Request) -> Response:
    return await forward(request, f"/{index}/_doc/{quote(doc_id, safe='')}")


@router.api_route("/{index}/_source/{doc_id:path}", methods=["GET", "HEAD"], summary="Get a source")
async def get_source(index: str, doc_id: str, request: Request) -> Response:
    return await forward(request, f"/{index}/_source/{quote(doc_id, safe='')}")
