""" "Content seen?" on the proxy: ``POST /{index}/_collapse/lookup``.

Body: ``{"text": "..."}`` or ``{"doc": {...}}`` (its text: the fields the index records,
``indexer init --text-field``, default title + body/text; its ``url``: the host whose
boilerplate model applies), optional ``"size"`` (candidates fetched, default 100). Answer:
``{"took", "fingerprint": {simhash, token_count, version}, "candidates", "matches": [{"_id",
"_index", "hamming", "similarity", "exact", "title", "url"}]}``, closest first.

The steps are ``indexer lookup``'s (:mod:`indexer.lookup`): same fingerprint, same stored
boilerplate model, same candidates and rule, at the proxy's thresholds (whose defaults are the
CLI's). Every request to Elasticsearch carries the client's credentials
(:mod:`collapse.credentials`).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from collapse.credentials import client_credentials
from collapse.enrich import ModelCache
from collapse.errors import BadRequest
from collapse.index_fields import IndexFields
from collapse.settings import Settings
from collapse.upstream import Upstream, forwarded_response_headers
from indexer.documents import DocumentError
from indexer.grouping import Thresholds
from indexer.lookup import lookup_record, matches, search_body, text_and_host

__all__ = ["router"]

router = APIRouter(tags=["lookup"])


async def _text_and_host(
    request: Request, index: str, body: Any, credentials: dict[str, str]
) -> tuple[str, str | None]:
    if not isinstance(body, dict):
        raise BadRequest("the lookup body must be a JSON object with 'text' or 'doc'")
    if isinstance(body.get("text"), str) and body["text"].strip():
        return str(body["text"]), None
    doc = body.get("doc")
    if not isinstance(doc, dict):
        raise BadRequest("the lookup body needs a non-empty 'text' or a 'doc' object")
    cache: IndexFields = request.app.state.index_fields
    fields = await cache.get([index], credentials)
    try:
        return text_and_host(doc, fields[index])
    except DocumentError as exc:
        raise BadRequest(f"doc: {exc}") from exc


@router.post("/{index}/_collapse/lookup", summary="Stored near-duplicates of a text or document")
async def lookup(index: str, request: Request) -> Response:
    started = time.perf_counter()
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise BadRequest(f"request body is not JSON: {exc.msg}") from exc
    credentials = client_credentials(request.headers)
    text, host = await _text_and_host(request, index, body, credentials)
    size = body.get("size", 100)
    if not isinstance(size, int) or not 1 <= size <= 10_000:
        raise BadRequest("size must be an integer between 1 and 10000")
    model = None
    if host is not None:
        models: ModelCache = request.app.state.models
        model = (await models.get([(index, host)], credentials)).get((index, host))
    record = await asyncio.to_thread(lookup_record, text, model)
    index_meta: IndexFields = request.app.state.index_fields
    probes = await index_meta.probes(index, credentials)
    upstream: Upstream = request.app.state.upstream
    answer = await upstream.request(
        "POST",
        f"/{index}/_search",
        content=json.dumps(search_body(record, size, probes)).encode(),
        headers={**credentials, "content-type": "application/json"},
    )
    if answer.status_code != 200:
        return Response(
            answer.content, answer.status_code, forwarded_response_headers(answer.headers)
        )
    settings: Settings = request.app.state.settings
    t = Thresholds(
        settings.collapse_max_distance,
        settings.collapse_min_similarity,
        settings.collapse_min_tokens,
    )
    result = matches(record, answer.json()["hits"]["hits"], t)
    out = {
        "took": round((time.perf_counter() - started) * 1000),
        "fingerprint": {
            "simhash": result.simhash,
            "token_count": result.token_count,
            "version": result.version,
        },
        "candidates": result.candidates,
        "matches": [
            {"_id": m.id, "_index": m.index, **m.model_dump(exclude={"id", "index"})}
            for m in result.matches
        ],
    }
    return JSONResponse(out, headers={"X-Elastic-Product": "Elasticsearch"})
