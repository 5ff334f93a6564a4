"""The expander: ``GET|POST /{index}/_collapse/{id}`` — the near-duplicates a collapsed search
folded behind one of its representatives ("N similar results omitted — show").

The body is the search's own (its ``query``, ``from``/``size`` or ``search_after``, ``sort``,
``post_filter``, the same ``collapse_*`` controls): the expander runs that collapsed search
again — window, refills and probe, without ``_source``, highlighting or aggregations — and lists
the members it assigned to the representative
(:meth:`~collapse.search.Outcome.members`, which ``_collapse`` reads too). So
``hits.total`` is the representative's ``folded`` and the members are the same ones, as long as
the index does not change in between. ``from``/``size`` in the query string page the members
(default size ``collapse_expand_size``); the page's members are then fetched by id with the
user's request (``_source``, highlighting, fields), in rank order. Cost: the search's round
trips plus that fetch. A document that is not a representative on that page of the search
folds nothing: ``hits.total`` 0 and ``collapse.representative`` false; a missing one is a 404.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, Request, Response

from collapse import jsonio, probe, slim
from collapse.errors import BadRequest, NotFound
from collapse.executor import Executor, SubResult, SubSearch
from collapse.filter_path import parse as parse_filter_path
from collapse.index_fields import IndexFields
from collapse.params import CollapseParams
from collapse.routes.passthrough import elasticsearch_params
from collapse.routes.search import _answer
from collapse.search import collapse_all, key, parse, parse_int, total_of
from collapse.settings import Settings
from collapse.source import plan
from collapse.upstream import Upstream, forwarded_response_headers
from indexer.candidates import user_query

__all__ = ["expansion", "router"]

router = APIRouter(tags=["search"])

#: What the fetch of the members by id leaves out of the user's body: paging, and what would
#: add other hits or other parts to its answer.
_NOT_FETCHED = (
    "from",
    "size",
    "search_after",
    "knn",
    "retriever",
    "collapse",
    "aggs",
    "aggregations",
    "suggest",
    "profile",
)
#: A member's ``_collapse`` entry without what the hit itself carries.
_HIT_KEYS = ("_id", "_index", "_score")


def _members_fetch(
    body: dict[str, Any], query: dict[str, Any], keys: list[tuple[str, str]]
) -> dict[str, Any]:
    """The user's request restricted to these documents (same query: same ``_score``)."""
    out = {k: v for k, v in body.items() if k not in _NOT_FETCHED}
    these = {"bool": {"should": probe.exclude_seen(keys), "minimum_should_match": 1}}
    out["query"] = {"bool": {"must": [query], "filter": [these]}}
    out["size"] = len(keys)
    out["track_total_hits"] = False
    return out


@router.api_route(
    "/{index}/_collapse/{doc_id:path}",
    methods=["GET", "POST"],
    summary="The near-duplicates a collapsed search folded behind one representative",
)
async def expand(index: str, doc_id: str, request: Request) -> Response:
    started = time.perf_counter()
    upstream: Upstream = request.app.state.upstream
    controls = {k: v for k, v in request.query_params.items() if k.startswith("collapse")}
    query = dict(elasticsearch_params(request))
    filter_path = parse_filter_path(query.pop("filter_path", None))
    done = await expansion(
        request.app.state.settings,
        lambda rest: Executor(upstream, request.headers, rest, batch=False),
        request.app.state.index_fields,
        index,
        doc_id,
        await request.body(),
        query,
        controls,
        started,
    )
    if isinstance(done, SubResult):
        return Response(done.raw, done.status, headers=forwarded_response_headers(done.headers))
    out, headers = done
    return _answer(200, out, headers, filter_path, request)


async def expansion(
    settings: Settings,
    executor_for: Callable[[list[tuple[str, str]]], Executor],
    index_fields: IndexFields,
    index: str,
    doc_id: str,
    raw: bytes,
    query: dict[str, str],
    controls: Mapping[str, str],
    started: float,
) -> tuple[dict[str, Any], Mapping[str, str]] | SubResult:
    """The expander's answer and the headers it goes with, or Elasticsearch's failed answer
    (``query``: Elasticsearch's parameters, consumed; ``executor_for`` makes the executor for
    what is left of them). The route and ``collapse.inprocess`` both answer with it."""
    ctl = CollapseParams.from_query(controls, settings).model_copy(update={"total": False})
    body = jsonio.parse_body(raw)
    start = parse_int(query.pop("from", 0), "from")
    size = parse_int(query.pop("size", settings.collapse_expand_size), "size")
    if size < 0 or start < 0:
        raise BadRequest("[from] and [size] must be non-negative")
    source = plan(body, query)  # the members' _source (pops the query-string forms)
    # A point in time replaces the index, in the search and in the fetch of its members.
    target = None if isinstance(body.get("pit"), dict) else index
    search_body = {k: v for k, v in body.items() if k not in slim.DECORATION}
    search_body["_source"] = False
    req = parse(settings, ctl, target, search_body, query)
    executor = executor_for(list(query.items()))
    budget = settings.collapse_time_budget_ms
    (search,) = await collapse_all([req], executor, budget, index_fields)
    if isinstance(search, SubResult):
        return search
    window, degraded = search.window, search.degraded
    assert window.first.body is not None

    info: dict[str, Any] = {
        "enabled": True,
        "max_distance": ctl.max_distance,
        "min_similarity": ctl.min_similarity,
        "of": {"_index": index, "_id": doc_id},
        "representative": False,
    }
    rep = next((w for w in search.page if window.hits[w].get("_id") == doc_id), None)
    entries: list[dict[str, Any]] = []
    count = 0
    if rep is not None:
        info.update(of={"_index": window.hits[rep].get("_index"), "_id": doc_id})
        info["representative"] = True
        entries, count = search.members(rep)
    elif not any(h.get("_id") == doc_id for h in window.hits):
        await _exists(executor, index, doc_id)
    listed = entries[start : start + size]
    hits: list[dict[str, Any]] = []
    took = window.took
    answer_headers: Mapping[str, str] = window.first.headers
    if listed:
        keys = [(str(e["_index"]), str(e["_id"])) for e in listed]
        fetch = SubSearch(
            target, _members_fetch(body, user_query(req.body), keys), req.header, True
        )
        if source.send is not None:
            fetch.body["_source"] = source.send
        (fetched,) = await executor.run([fetch])
        if not fetched.ok or fetched.body is None:
            return fetched
        took += int(fetched.body.get("took", 0))
        answer_headers = fetched.headers
        by_key = {key(h): h for h in fetched.body.get("hits", {}).get("hits", [])}
        for k, entry in zip(keys, listed, strict=True):
            hit = by_key.get(k)
            if hit is None:  # deleted since the search
                degraded.append("a member could not be fetched")
                continue
            source.strip(hit)
            hit["_collapse"] = {n: v for n, v in entry.items() if n not in _HIT_KEYS}
            hits.append(hit)
    lower_bound = search.beyond.truncated or bool(degraded)
    scores = [h["_score"] for h in hits if isinstance(h.get("_score"), (int, float))]
    first = window.first.body
    out: dict[str, Any] = {
        "took": took,
        "timed_out": bool(first.get("timed_out", False)),
        "_shards": first.get("_shards", {}),
        "hits": {
            "total": {"value": count, "relation": "gte" if lower_bound else "eq"},
            "max_score": max(scores) if scores else None,
            "hits": hits,
        },
    }
    info["window"] = len(window.hits)
    info["candidates"] = len(window.hits) + search.beyond.probed
    info["took_ms"] = round((time.perf_counter() - started) * 1000, 3)
    info["degraded"] = bool(degraded)
    if degraded:
        info["reason"] = "; ".join(sorted(set(degraded)))
    out["collapse"] = info
    return out, answer_headers


async def _exists(executor: Executor, index: str, doc_id: str) -> None:
    """NotFound unless the document exists (any error of the lookup is passed on as such)."""
    lookup = SubSearch(index, {"query": {"ids": {"values": [doc_id]}}, "size": 0})
    (found,) = await executor.run([lookup])
    total = total_of(found.body)[0] if found.ok and found.body is not None else None
    if total == 0:
        raise NotFound(f"document [{doc_id}] not found in [{index}]", index=index, id=doc_id)
