""" "Content seen?" on the proxy: ``POST /{index}/_collapse/lookup``.

Body: ``{"text": "..."}`` or ``{"doc": {...}}`` (its text: the fields the index records,
``indexer init --text-field``, default title + body/text), optional ``"size"`` (candidates
fetched, default 100). Answer: ``{"took", "fingerprint": {simhash, token_count, version},
"candidates", "matches": [{"_id", "_index", "hamming", "similarity", "exact", "title", "url"}]}``,
closest first. Candidates come from the block fields (terms lookups, no scan) and are verified
by the grouping rule with the proxy's thresholds (``indexer.lookup``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from collapse.errors import BadRequest
from collapse.index_fields import IndexFields
from collapse.settings import Settings
from collapse.upstream import Upstream, forwarded_request_headers, forwarded_response_headers
from indexer.documents import DocumentError, document_text
from indexer.fingerprints import fingerprint
from indexer.grouping import Thresholds
from indexer.lookup import matches, search_body

router = APIRouter(tags=["lookup"])


async def _text(request: Request, index: str, body: Any) -> str:
    if not isinstance(body, dict):
        raise BadRequest("the lookup body must be a JSON object with 'text' or 'doc'")
    if isinstance(body.get("text"), str) and body["text"].strip():
        return str(body["text"])
    doc = body.get("doc")
    if not isinstance(doc, dict):
        raise BadRequest("the lookup body needs a non-empty 'text' or a 'doc' object")
    cache: IndexFields = request.app.state.index_fields
    fields = await cache.get([index], forwarded_request_headers(request.headers))
    try:
        return document_text(doc, fields[index])
    except DocumentError as exc:
        raise BadRequest(f"doc: {exc}") from exc


@router.post("/{index}/_collapse/lookup", summary="Stored near-duplicates of a text or document")
async def lookup(index: str, request: Request) -> Response:
    started = time.perf_counter()
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise BadRequest(f"request body is not JSON: {exc.msg}") from exc
    text = await _text(request, index, body)
    size = body.get("size", 100)
    if not isinstance(size, int) or not 1 <= size <= 10_000:
        raise BadRequest("size must be an integer between 1 and 10000")
    record = fingerprint(text)
    upstream: Upstream = request.app.state.upstream
    answer = await upstream.request(
        "POST",
        f"/{index}/_search",
        content=json.dumps(search_body(record, size)).encode(),
        headers={"content-type": "application/json"},
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
