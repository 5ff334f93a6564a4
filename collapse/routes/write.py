"""The write path: documents indexed through the proxy get ``collapse_fp`` on the way.

    PUT|POST  /{index}/_doc/{id}     POST /{index}/_doc     PUT|POST /{index}/_create/{id}
    POST      /{index}/_update/{id}  DELETE /{index}/_doc/{id} (forwarded unchanged)
    POST|PUT  /_bulk  /{index}/_bulk

Access: the middleware (``collapse.middleware.access``) lets these through only with the
configured ``WRITE_API_KEY`` in ``X-API-Key``; without a configured key they answer 403, so the
write path is off by default. What is fingerprinted and how: ``collapse.enrich``. The answer is
Elasticsearch's, status and body unchanged, plus two headers counting the documents:
``X-Collapse-Fingerprinted`` and ``X-Collapse-Not-Fingerprinted`` (no text, script updates).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import Counter

from collapse import jsonio
from collapse.enrich import (
    BulkItem,
    EnrichRules,
    ModelCache,
    Outcome,
    Target,
    enrich,
    hosts_needed,
    parse_bulk,
    parse_document,
    render_bulk,
    targets,
    update_lookups,
)
from collapse.errors import UpstreamUnavailable
from collapse.routes.passthrough import elasticsearch_params, forward
from collapse.settings import Settings
from collapse.upstream import Upstream, forwarded_request_headers, forwarded_response_headers

router = APIRouter(tags=["write"])

WRITE_DOCUMENTS = Counter(
    "collapse_write_documents_total",
    "Documents written through the proxy, by whether they got a collapse_fp fingerprint.",
    ["outcome"],
)

Doc = dict[str, Any]


def _rules(request: Request) -> EnrichRules:
    rules = getattr(request.app.state, "write_rules", None)
    if rules is None:
        settings: Settings = request.app.state.settings
        rules = EnrichRules(
            text_fields=tuple(settings.write_text_fields),
            required_fields=tuple(settings.write_required_fields),
        )
        request.app.state.write_rules = rules
    return rules


def _models(request: Request, rules: EnrichRules) -> ModelCache:
    cache = getattr(request.app.state, "write_models", None)
    if cache is None:
        settings: Settings = request.app.state.settings
        cache = ModelCache(
            request.app.state.upstream,
            rules.params.version,
            settings.write_model_store,
            settings.write_model_cache_seconds,
        )
        request.app.state.write_models = cache
    return cache


async def _stored_sources(
    upstream: Upstream, lookups: list[tuple[int, Doc]], headers: dict[str, str]
) -> dict[int, Doc | None]:
    """The stored text fields of the updated documents, one ``_mget`` for all of them."""
    if not lookups:
        return {}
    answer = await upstream.request(
        "POST",
        "/_mget",
        content=jsonio.dumps({"docs": [entry for _, entry in lookups]}),
        headers={**headers, "content-type": "application/json", "accept": "application/json"},
    )
    if answer.status_code >= 300:
        raise UpstreamUnavailable(
            f"could not read the documents being updated (Elasticsearch answered "
            f"{answer.status_code}: {answer.text[:200]})"
        )
    docs = jsonio.loads(answer.content).get("docs", [])
    return {
        pos: (doc.get("_source") or {}) if doc.get("found") else None
        for (pos, _), doc in zip(lookups, docs, strict=False)
    }


async def _fingerprint(request: Request, found: list[Target], rules: EnrichRules) -> Outcome:
    """Load the needed boilerplate models (cached, batched), then fingerprint in a thread."""
    models = await _models(request, rules).get(hosts_needed(found))
    return await asyncio.to_thread(enrich, found, models, rules)


async def _send(
    request: Request, method: str, path: str, content: bytes, outcome: Outcome
) -> Response:
    upstream: Upstream = request.app.state.upstream
    answer = await upstream.request(
        method,
        path,
        params=elasticsearch_params(request),
        content=content,
        headers=forwarded_request_headers(request.headers),
    )
    WRITE_DOCUMENTS.labels(outcome="fingerprinted").inc(outcome.fingerprinted)
    WRITE_DOCUMENTS.labels(outcome="not_fingerprinted").inc(outcome.skipped)
    headers = forwarded_response_headers(answer.headers)
    headers["X-Collapse-Fingerprinted"] = str(outcome.fingerprinted)
    headers["X-Collapse-Not-Fingerprinted"] = str(outcome.skipped)
    return Response(content=answer.content, status_code=answer.status_code, headers=headers)


def _internal_headers(request: Request) -> dict[str, str]:
    return {
        k: v for k, v in request.headers.items() if k.lower() in ("authorization", "traceparent")
    }


async def _items_enriched(
    request: Request, items: list[BulkItem], index: str | None, rules: EnrichRules
) -> Outcome:
    routing = request.query_params.get("routing")
    lookups = update_lookups(items, index, routing, rules)
    stored = await _stored_sources(request.app.state.upstream, lookups, _internal_headers(request))
    found, skipped = targets(items, index, stored, rules)
    outcome = await _fingerprint(request, found, rules)
    outcome.skipped += skipped
    return outcome


async def _bulk(request: Request, index: str | None) -> Response:
    body = await request.body()
    path = f"/{index}/_bulk" if index else "/_bulk"
    if not body.strip():
        return await forward(request, path)  # Elasticsearch's own "request body is required"
    rules = _rules(request)
    items = await asyncio.to_thread(parse_bulk, body)
    outcome = await _items_enriched(request, items, index, rules)
    content = await asyncio.to_thread(render_bulk, items)
    return await _send(request, request.method, path, content, outcome)


async def _document(request: Request, index: str, path: str) -> Response:
    body = await request.body()
    if not body.strip():
        return await forward(request, path)
    doc = parse_document(body)
    outcome = await _fingerprint(request, [Target(doc, index, doc)], _rules(request))
    return await _send(request, request.method, path, jsonio.dumps(doc), outcome)


@router.api_route("/_bulk", methods=["POST", "PUT"], summary="Bulk, fingerprinted")
async def bulk_all(request: Request) -> Response:
    return await _bulk(request, None)


@router.api_route("/{index}/_bulk", methods=["POST", "PUT"], summary="Bulk, fingerprinted")
async def bulk_index(index: str, request: Request) -> Response:
    return await _bulk(request, index)


@router.post("/{index}/_doc", summary="Index a document (auto id), fingerprinted")
async def index_auto_id(index: str, request: Request) -> Response:
    return await _document(request, index, f"/{index}/_doc")


@router.api_route(
    "/{index}/_doc/{doc_id}", methods=["PUT", "POST"], summary="Index a document, fingerprinted"
)
async def index_doc(index: str, doc_id: str, request: Request) -> Response:
    return await _document(request, index, f"/{index}/_doc/{doc_id}")


@router.api_route(
    "/{index}/_create/{doc_id}", methods=["PUT", "POST"], summary="Create a document, fingerprinted"
)
async def create_doc(index: str, doc_id: str, request: Request) -> Response:
    return await _document(request, index, f"/{index}/_create/{doc_id}")


@router.post("/{index}/_update/{doc_id}", summary="Partial update, fingerprint kept current")
async def update_doc(index: str, doc_id: str, request: Request) -> Response:
    path = f"/{index}/_update/{doc_id}"
    body = await request.body()
    if not body.strip():
        return await forward(request, path)
    item = BulkItem("update", {"_index": index, "_id": doc_id}, b"", source=parse_document(body))
    outcome = await _items_enriched(request, [item], index, _rules(request))
    return await _send(request, "POST", path, jsonio.dumps(item.source), outcome)


@router.delete("/{index}/_doc/{doc_id}", summary="Delete a document (forwarded unchanged)")
async def delete_doc(index: str, doc_id: str, request: Request) -> Response:
    return await forward(request, f"/{index}/_doc/{doc_id}")
