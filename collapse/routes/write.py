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
from urllib.parse import quote

import httpx
from fastapi import APIRouter, Request, Response
from prometheus_client import Counter

from collapse import jsonio
from collapse.credentials import client_credentials
from collapse.enrich import (
    CONCURRENCY_KEYS,
    BulkItem,
    Doc,
    EnrichRules,
    ModelCache,
    Outcome,
    Target,
    enrich,
    guard_updates,
    hosts_needed,
    is_version_conflict,
    parse_bulk,
    parse_document,
    render_bulk,
    targets,
    update_lookups,
)
from collapse.errors import UpstreamUnavailable
from collapse.filter_path import FilterPath
from collapse.filter_path import take as take_filter_path
from collapse.index_fields import IndexFields
from collapse.routes.passthrough import elasticsearch_params, forward
from collapse.upstream import Upstream, forwarded_request_headers, forwarded_response_headers
from collapse.write_mapping import MappingGuard

__all__ = [
    "UPDATE_ATTEMPTS",
    "WRITE_DOCUMENTS",
    "bulk_all",
    "bulk_index",
    "create_doc",
    "delete_doc",
    "index_auto_id",
    "index_doc",
    "router",
    "update_doc",
]

#: Attempts of an update whose document changed between its read and its write (the last one
#: unconditional).
UPDATE_ATTEMPTS = 3

router = APIRouter(tags=["write"])

WRITE_DOCUMENTS = Counter(
    "collapse_write_documents_total",
    "Documents written through the proxy, by whether they got a collapse_fp fingerprint.",
    ["outcome"],
)


def _rules(request: Request) -> EnrichRules:
    rules = getattr(request.app.state, "write_rules", None)
    if rules is None:
        rules = request.app.state.write_rules = EnrichRules()
    return rules


async def _with_fields(
    request: Request, rules: EnrichRules, indices: set[str], may_create: bool = True
) -> EnrichRules:
    """``rules`` knowing the text fields each of ``indices`` records, once ``collapse_fp`` is
    mapped there (``collapse.write_mapping``; ``may_create``: a missing index may be created
    with it)."""
    if not indices:
        return rules
    guard: MappingGuard | None = getattr(request.app.state, "mapping_guard", None)
    if guard is not None:
        await guard.ensure(indices, _internal_headers(request), may_create=may_create)
    cache: IndexFields = request.app.state.index_fields
    fields = await cache.get(indices, _internal_headers(request))
    return rules.model_copy(update={"fields": {**rules.fields, **fields}})


async def _stored_sources(
    upstream: Upstream, lookups: list[tuple[int, Doc]], headers: dict[str, str]
) -> tuple[dict[int, Doc | None], dict[int, tuple[int, int]]]:
    """The stored text fields of the updated documents (one ``_mget`` for all of them), and the
    ``_seq_no``/``_primary_term`` they were read at."""
    if not lookups:
        return {}, {}
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
    sources: dict[int, Doc | None] = {}
    versions: dict[int, tuple[int, int]] = {}
    for (pos, _), doc in zip(lookups, docs, strict=False):
        if not doc.get("found"):
            sources[pos] = None
            continue
        sources[pos] = doc.get("_source") or {}
        if isinstance(doc.get("_seq_no"), int) and isinstance(doc.get("_primary_term"), int):
            versions[pos] = (doc["_seq_no"], doc["_primary_term"])
    return sources, versions


async def _fingerprint(request: Request, found: list[Target], rules: EnrichRules) -> Outcome:
    """Load the needed boilerplate models (cached, batched), then fingerprint in a thread."""
    cache: ModelCache = request.app.state.models
    models = await cache.get(hosts_needed(found, rules), _internal_headers(request))
    return await asyncio.to_thread(enrich, found, models, rules)


async def _upstream_write(
    request: Request, method: str, path: str, content: bytes, params: list[tuple[str, str]]
) -> httpx.Response:
    upstream: Upstream = request.app.state.upstream
    return await upstream.request(
        method,
        path,
        params=params,
        content=content,
        headers=forwarded_request_headers(request.headers),
    )


def _answer(answer: httpx.Response, outcome: Outcome, content: bytes | None = None) -> Response:
    WRITE_DOCUMENTS.labels(outcome="fingerprinted").inc(outcome.fingerprinted)
    WRITE_DOCUMENTS.labels(outcome="not_fingerprinted").inc(outcome.skipped)
    headers = forwarded_response_headers(answer.headers)
    headers.pop("content-length", None)
    headers["X-Collapse-Fingerprinted"] = str(outcome.fingerprinted)
    headers["X-Collapse-Not-Fingerprinted"] = str(outcome.skipped)
    body = answer.content if content is None else content
    return Response(content=body, status_code=answer.status_code, headers=headers)


async def _send(
    request: Request, method: str, path: str, content: bytes, outcome: Outcome
) -> Response:
    answer = await _upstream_write(request, method, path, content, elasticsearch_params(request))
    return _answer(answer, outcome)


def _requires_alias(request: Request) -> bool:
    """The request's ``require_alias``: Elasticsearch then creates no index for the write."""
    value = request.query_params.get("require_alias")
    return value is not None and value.lower() in ("", "true")


def _internal_headers(request: Request) -> dict[str, str]:
    trace = {k: v for k, v in request.headers.items() if k.lower() == "traceparent"}
    return {**client_credentials(request.headers), **trace}


async def _items_enriched(
    request: Request, items: list[BulkItem], index: str | None, rules: EnrichRules, guard: bool
) -> tuple[Outcome, list[int]]:
    """Fingerprint the items in place; with ``guard``, updates computed from a stored document
    are made conditional on it (:func:`collapse.enrich.guard_updates`): their positions."""
    routing = request.query_params.get("routing")
    named = {t for item in items if item.source is not None and (t := item.target(index))}
    aliases_only = _requires_alias(request) or any(
        str(item.meta.get("require_alias")).lower() == "true" for item in items
    )
    rules = await _with_fields(request, rules, named, may_create=not aliases_only)
    lookups = update_lookups(items, index, routing, rules)
    upstream = request.app.state.upstream
    stored, versions = await _stored_sources(upstream, lookups, _internal_headers(request))
    found, skipped = targets(items, index, stored, rules)
    outcome = await _fingerprint(request, found, rules)
    outcome.skipped += skipped
    return outcome, guard_updates(items, versions) if guard else []


def _filtered(body: dict[str, Any], filter_path: FilterPath | None) -> bytes:
    return jsonio.dumps(filter_path.apply(body) if filter_path is not None else body)


def _result(entry: Any) -> dict[str, Any]:
    """The answer of one bulk item (``{"update": {...}}`` → ``{...}``)."""
    if isinstance(entry, dict) and len(entry) == 1:
        (value,) = entry.values()
        if isinstance(value, dict):
            return value
    return {}


async def _bulk(request: Request, index: str | None) -> Response:
    body = await request.body()
    path = f"/{index}/_bulk" if index else "/_bulk"
    if not body.strip():
        return await forward(request, path)  # Elasticsearch's own "request body is required"
    rules = _rules(request)
    params = elasticsearch_params(request)
    items = await asyncio.to_thread(parse_bulk, body)
    outcome, guarded = await _items_enriched(request, items, index, rules, guard=True)
    content = await asyncio.to_thread(render_bulk, items)
    # Conflicts are read from the answer: a filter_path is then applied here, not upstream.
    filter_path, params = take_filter_path(params) if guarded else (None, params)
    answer = await _upstream_write(request, request.method, path, content, params)
    if not guarded or answer.status_code != 200:
        return _answer(answer, outcome)
    result = jsonio.loads(answer.content)
    results = result.get("items")
    if not isinstance(results, list) or len(results) != len(items):
        return _answer(answer, outcome, _filtered(result, filter_path))
    pending = [pos for pos in guarded if is_version_conflict(_result(results[pos]))]
    attempt = 1
    while pending:
        # Their documents changed between the read and the update: read again, fingerprint
        # again, send again; the last attempt unconditionally (what the client asked for).
        attempt += 1
        last = attempt >= UPDATE_ATTEMPTS
        fresh = await asyncio.to_thread(parse_bulk, body)
        again = [fresh[pos] for pos in pending]
        _, guarded_again = await _items_enriched(request, again, index, rules, guard=not last)
        retry = await _upstream_write(request, "POST", path, render_bulk(again), params)
        retried = jsonio.loads(retry.content).get("items") if retry.status_code == 200 else None
        if not isinstance(retried, list) or len(retried) != len(again):
            break  # the conflicts stand as Elasticsearch reported them
        still = []
        for k, pos in enumerate(pending):
            results[pos] = retried[k]
            if k in guarded_again and is_version_conflict(_result(retried[k])):
                still.append(pos)
        pending = still
    result["errors"] = any("error" in _result(entry) for entry in results)
    return _answer(answer, outcome, _filtered(result, filter_path))


def _id_path(index: str, endpoint: str, doc_id: str) -> str:
    """The upstream path of a single-document endpoint, the id percent-encoded: the route got
    it decoded, and ``?``, ``#``, ``%`` or spaces sent as they are would make Elasticsearch
    write another id than the client named (and than the fingerprint's ``id``)."""
    return f"/{index}/{endpoint}/{quote(doc_id, safe='')}"


async def _document(request: Request, index: str, path: str, doc_id: str | None) -> Response:
    body = await request.body()
    if not body.strip():
        return await forward(request, path)
    doc = parse_document(body)
    target = Target(doc, index, doc, doc_id=doc_id or None)
    may_create = not _requires_alias(request)
    rules = await _with_fields(request, _rules(request), {index}, may_create=may_create)
    outcome = await _fingerprint(request, [target], rules)
    return await _send(request, request.method, path, jsonio.dumps(doc), outcome)


@router.api_route("/_bulk", methods=["POST", "PUT"], summary="Bulk, fingerprinted")
async def bulk_all(request: Request) -> Response:
    return await _bulk(request, None)


@router.api_route("/{index}/_bulk", methods=["POST", "PUT"], summary="Bulk, fingerprinted")
async def bulk_index(index: str, request: Request) -> Response:
    return await _bulk(request, index)


@router.post("/{index}/_doc", summary="Index a document (auto id), fingerprinted")
async def index_auto_id(index: str, request: Request) -> Response:
    return await _document(request, index, f"/{index}/_doc", None)  # id from Elasticsearch


@router.api_route(
    "/{index}/_doc/{doc_id:path}",
    methods=["PUT", "POST"],
    summary="Index a document, fingerprinted",
)
async def index_doc(index: str, doc_id: str, request: Request) -> Response:
    return await _document(request, index, _id_path(index, "_doc", doc_id), doc_id)


@router.api_route(
    "/{index}/_create/{doc_id:path}",
    methods=["PUT", "POST"],
    summary="Create a document, fingerprinted",
)
async def create_doc(index: str, doc_id: str, request: Request) -> Response:
    return await _document(request, index, _id_path(index, "_create", doc_id), doc_id)


@router.post("/{index}/_update/{doc_id:path}", summary="Partial update, fingerprint kept current")
async def update_doc(index: str, doc_id: str, request: Request) -> Response:
    path = _id_path(index, "_update", doc_id)
    body = await request.body()
    if not body.strip():
        return await forward(request, path)
    rules = _rules(request)
    params = elasticsearch_params(request)
    guard = not (CONCURRENCY_KEYS & {name for name, _ in params})  # else the client's own
    filter_path, params = take_filter_path(params) if guard else (None, params)
    attempt = 0
    while True:
        attempt += 1
        last = attempt >= UPDATE_ATTEMPTS
        meta: Doc = {"_index": index, "_id": doc_id}
        item = BulkItem("update", meta, b"", source=parse_document(body))
        outcome, guarded = await _items_enriched(
            request, [item], index, rules, guard=guard and not last
        )
        condition = (
            [(name, str(meta.pop(name))) for name in ("if_seq_no", "if_primary_term")]
            if guarded
            else []
        )
        answer = await _upstream_write(
            request, "POST", path, jsonio.dumps(item.source), params + condition
        )
        if not condition or answer.status_code != 409:
            if filter_path is not None and answer.status_code < 300:
                return _answer(
                    answer, outcome, _filtered(jsonio.loads(answer.content), filter_path)
                )
            return _answer(answer, outcome)
        try:
            refused = jsonio.loads(answer.content)
        except Exception:
            return _answer(answer, outcome)
        if not is_version_conflict({"status": 409, "error": refused.get("error")}):
            return _answer(answer, outcome)


@router.delete("/{index}/_doc/{doc_id:path}", summary="Delete a document (forwarded unchanged)")
async def delete_doc(index: str, doc_id: str, request: Request) -> Response:
    return await forward(request, _id_path(index, "_doc", doc_id))
