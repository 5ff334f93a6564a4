"""Reads forwarded to Elasticsearch: ``GET|HEAD /``, ``_count``, ``_doc``, ``_source``, ``_mget``.

Nothing here is collapsed: ``hits.total`` and ``_count`` count documents as Elasticsearch does.
``GET /`` is Elasticsearch's own answer (the minimal distribution answers 405; the official
client's ``info()`` then raises as it would against that node). Documents come back without
``collapse_fp`` in ``_source``, as searches show them, unless the request names it in its
``_source`` filtering (``collapse.doc_source``): Elasticsearch filters it out, the
answer's bytes are its own.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response

from collapse import jsonio
from collapse.doc_source import hiding_doc_source, hiding_params
from collapse.errors import Malformed
from collapse.routes.passthrough import elasticsearch_params, forward, raw_path

__all__ = [
    "count_all",
    "count_index",
    "get_doc",
    "get_source",
    "mget_all",
    "mget_index",
    "root",
    "router",
]

router = APIRouter(tags=["documents"])


@router.api_route("/", methods=["GET", "HEAD"], summary="Elasticsearch's root (cluster info)")
async def root(request: Request) -> Response:
    return await forward(request, "/")


@router.api_route("/_count", methods=["GET", "POST"], summary="Count, as Elasticsearch does")
async def count_all(request: Request) -> Response:
    return await forward(request, "/_count")


@router.api_route("/{index:path}/_count", methods=["GET", "POST"], summary="Count in an index")
async def count_index(index: str, request: Request) -> Response:
    return await forward(request, raw_path(request))


@router.api_route("/{index}/_doc/{doc_id:path}", methods=["GET", "HEAD"], summary="Get a document")
async def get_doc(index: str, doc_id: str, request: Request) -> Response:
    path = f"/{index}/_doc/{quote(doc_id, safe='')}"
    return await forward(request, path, params=hiding_params(elasticsearch_params(request)))


@router.api_route("/{index}/_source/{doc_id:path}", methods=["GET", "HEAD"], summary="Get a source")
async def get_source(index: str, doc_id: str, request: Request) -> Response:
    path = f"/{index}/_source/{quote(doc_id, safe='')}"
    return await forward(request, path, params=hiding_params(elasticsearch_params(request)))


async def _mget(request: Request, path: str) -> Response:
    """``_mget`` with ``collapse_fp`` hidden: in the query string, and in each doc's own
    ``_source`` (which replaces the query string's for that doc)."""
    params = hiding_params(elasticsearch_params(request))
    raw = await request.body()
    try:
        body = jsonio.parse_body(raw)
    except Malformed:
        return await forward(request, path)  # Elasticsearch's own parse error
    docs = body.get("docs")
    if not isinstance(docs, list) or not any(isinstance(d, dict) and "_source" in d for d in docs):
        return await forward(request, path, params=params)
    body["docs"] = [_hiding_doc(d) for d in docs]
    return await forward(request, path, params=params, content=jsonio.dumps(body))


def _hiding_doc(doc: Any) -> Any:
    if isinstance(doc, dict) and "_source" in doc:
        return {**doc, "_source": hiding_doc_source(doc["_source"])}
    return doc


@router.api_route("/_mget", methods=["GET", "POST"], summary="Get several documents")
async def mget_all(request: Request) -> Response:
    return await _mget(request, "/_mget")


@router.api_route(
    "/{index:path}/_mget", methods=["GET", "POST"], summary="Get documents of an index"
)
async def mget_index(index: str, request: Request) -> Response:
    return await _mget(request, raw_path(request))
