"""The expander: ``GET|POST /{index}/_collapse/{id}`` — every near-duplicate of one document that
matches the query ("show similar"), ranked as the query ranks them, with distances.

Two round trips: the document's fingerprint, then ONE search for the candidates (the user's
query AND a shared block or exact key, as in ``collapse.probe``), verified by the grouping rule
against the document. Copies further than B−1 bits apart are found only when they share a
block (approximate beyond 7 bits with eight 8-bit blocks). ``hits.total`` counts the verified
near-duplicates among the candidates fetched: ``eq`` when every candidate was fetched.
``from``/``size`` page the verified copies (default size ``collapse_expand_size``); when a page
needs more candidates than the first search brought, further ones are read (each round as
large as all before it, at most 10,000 candidates).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response

from collapse import jsonio, probe
from collapse.errors import BadRequest, NotFound
from collapse.executor import Executor, SubSearch
from collapse.filter_path import parse as parse_filter_path
from collapse.params import CollapseParams
from collapse.pipeline import _int, total_of
from collapse.routes.passthrough import elasticsearch_params
from collapse.routes.search import _answer
from collapse.settings import Settings
from collapse.source import SourcePlan, plan
from collapse.upstream import Upstream, forwarded_response_headers
from indexer.candidates import candidates_query
from indexer.grouping import Thresholds, assign, matched_band, matched_block
from indexer.hits import FINGERPRINT_FIELD, Decoded, decode, fp_of, probe_keys

router = APIRouter(tags=["search"])


#: Most candidates one expander call reads (Elasticsearch's default ``max_result_window``).
_MAX_CANDIDATES = 10_000


def _verified(
    hits: list[dict[str, Any]],
    me: Decoded,
    t: Thresholds,
    explain: bool,
    min_tokens: int,
    source: SourcePlan,
) -> list[dict[str, Any]]:
    """The candidates that verify against the document, each with its ``_collapse`` entry."""
    assert me.params is not None
    got = decode(hits, min_tokens, me.params.version)
    best, ham, sim = assign(got.prints, me.prints, t)
    kept = []
    for i, hit in enumerate(hits):
        if best[i] < 0:
            continue
        entry: dict[str, Any] = {"hamming": int(ham[i]), "similarity": round(float(sim[i]), 4)}
        if explain:
            entry["block"] = matched_block(
                int(got.prints.simhash[i]), int(me.prints.simhash[0]), me.blocks
            )
            entry["band"] = matched_band(got.prints.minhash[i], me.prints.minhash[0])
        source.strip(hit)
        hit["_collapse"] = entry
        kept.append(hit)
    return kept


@router.api_route(
    "/{index}/_collapse/{doc_id:path}",
    methods=["GET", "POST"],
    summary="Near-duplicates of one document that match the query",
)
async def expand(index: str, doc_id: str, request: Request) -> Response:
    settings: Settings = request.app.state.settings
    upstream: Upstream = request.app.state.upstream
    started = time.perf_counter()
    controls = {k: v for k, v in request.query_params.items() if k.startswith("collapse")}
    ctl = CollapseParams.from_query(controls, settings)
    t = Thresholds(ctl.max_distance, ctl.min_similarity, settings.collapse_min_tokens)
    body = jsonio.parse_body(await request.body())
    query = dict(elasticsearch_params(request))
    filter_path = parse_filter_path(query.pop("filter_path", None))
    size = _int(query.pop("size", body.pop("size", settings.collapse_expand_size)), "size")
    start = _int(query.pop("from", body.pop("from", 0)), "from")
    if size < 0 or start < 0:
        raise BadRequest("[from] and [size] must be non-negative")
    source = plan(body, query)
    executor = Executor(upstream, request.headers, [], batch=False)

    lookup = SubSearch(
        index,
        {"query": {"ids": {"values": [doc_id]}}, "size": 1, "_source": [FINGERPRINT_FIELD]},
    )
    (found,) = await executor.run([lookup])
    if not found.ok or found.body is None:
        return Response(found.raw, found.status, headers=forwarded_response_headers(found.headers))
    docs = found.body.get("hits", {}).get("hits", [])
    if not docs:
        raise NotFound(f"document [{doc_id}] not found in [{index}]", index=index, id=doc_id)
    doc = docs[0]
    me = decode([doc], settings.collapse_min_tokens)
    info: dict[str, Any] = {
        "enabled": True,
        "max_distance": t.max_distance,
        "min_similarity": t.min_similarity,
        "of": {"_index": doc.get("_index"), "_id": doc.get("_id")},
    }
    if me.params is None or not me.prints.present[0]:
        info.update(degraded=True, reason="the document has no fingerprint")
        empty: dict[str, Any] = {
            "total": {"value": 0, "relation": "eq"},
            "max_score": None,
            "hits": [],
        }
        return _answer(
            200, {"took": 0, "hits": empty, "collapse": info}, found.headers, filter_path
        )

    candidates = dict(body)
    # A short document groups by exact key only: other keys would bring no verifiable copy.
    keys = probe_keys(doc, me.blocks) if me.prints.token_count[0] >= t.min_tokens else []
    exact_key = str((fp_of(doc) or {}).get("exact_key") or "")
    candidates["query"] = candidates_query(body, keys, [exact_key])
    candidates["query"]["bool"]["must_not"] = probe.exclude_seen([(doc["_index"], doc["_id"])])
    candidates.pop("post_filter", None)
    candidates["track_total_hits"] = True
    if source.send is not None:
        candidates["_source"] = source.send
    # Candidates come in rounds (from 0, each as large as what came before) until the page of
    # verified copies [from, from + size) is full, the candidates end, or 10,000 were read.
    kept: list[dict[str, Any]] = []
    fetched = 0
    step = max(start + size, settings.collapse_expand_size)
    fetched_all = False
    out: dict[str, Any] = {}
    answer_headers: Any = found.headers
    while True:
        candidates["from"] = fetched
        candidates["size"] = min(step, _MAX_CANDIDATES - fetched)
        (answer,) = await executor.run([SubSearch(index, dict(candidates), {}, primary=False)])
        if not answer.ok or answer.body is None:
            return Response(
                answer.raw, answer.status, headers=forwarded_response_headers(answer.headers)
            )
        hits = answer.body.get("hits", {}).get("hits", [])
        fetched += len(hits)
        kept += _verified(hits, me, t, ctl.explain, settings.collapse_min_tokens, source)
        total = total_of(answer.body)[0]
        fetched_all = total is not None and total <= fetched
        if not out:
            out, answer_headers = answer.body, answer.headers
        if fetched_all or len(kept) >= start + size or fetched >= _MAX_CANDIDATES or not hits:
            break
        step = fetched
    out["hits"]["hits"] = kept[start : start + size]
    out["hits"]["total"] = {"value": len(kept), "relation": "eq" if fetched_all else "gte"}
    info["candidates"] = fetched
    info["took_ms"] = round((time.perf_counter() - started) * 1000, 3)
    info["degraded"] = False
    out["collapse"] = info
    return _answer(200, out, answer_headers, filter_path)
