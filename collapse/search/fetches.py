"""The bodies of the window's fetches, sized within the index's result window.

Pure functions of the request: the first fetch and the refills, the cursor's representatives,
the ranking before a ``search_after`` without our cursor, ``collapse_total``'s search and the
check of the request's own ``from + size`` (``collapse.search.window`` sends them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import collapse.search.reads as reads
from collapse import paging, probe, result_window, slim
from collapse.executor import SubResult
from collapse.search.request import FIRST_ONLY, Hit, SearchRequest
from indexer.hits import FINGERPRINT_FIELD, VERIFY_SOURCE

__all__ = [
    "Limits",
    "check_body",
    "prefix_body",
    "prior_body",
    "total_reading",
    "window_body",
]


@dataclass(frozen=True)
class Limits:
    """Fetch sizes within ``index.max_result_window`` when known (``es``)."""

    req: SearchRequest
    es: int | None

    @property
    def max_window(self) -> int:
        limit = self.req.settings.collapse_max_window
        return limit if self.es is None else min(limit, self.es)

    @property
    def target(self) -> int:
        s, req = self.req.settings, self.req
        return paging.window_size(
            req.start,
            req.size,
            factor=s.collapse_window_factor,
            min_window=s.collapse_min_window,
            max_window=self.max_window,
            override=req.ctl.window,
        )

    def cap(self, size: int) -> int:
        return size if self.es is None else min(size, self.es)

    def learnt(self, result: SubResult) -> Limits | None:
        """The limits after ``result``, when it is a refusal naming a limit that is news."""
        if result.ok:
            return None
        found = result_window.learn(self.req.index, result, remember=self.req.pit is None)
        if found is None or (self.es is not None and found >= self.es):
            return None
        return Limits(self.req, found)


def window_body(req: SearchRequest, size: int, after: list[Hit] | None = None) -> dict[str, Any]:
    """The window's first fetch (``after`` None), or a refill of ``size`` after ``after``."""
    body = dict(req.body)
    if req.source.send is not None:
        body["_source"] = req.source.send
    if after is None:
        body["from"] = 0
        body["size"] = size
        return body
    for name in FIRST_ONLY:
        body.pop(name, None)
    body["track_total_hits"] = False
    body["size"] = size
    if "search_after" in req.body and isinstance(after[-1].get("sort"), list):
        body["search_after"] = after[-1]["sort"]
        body.pop("from", None)
    else:
        body["from"] = len(after)
    return body


def prior_body(req: SearchRequest, limits: Limits) -> dict[str, Any]:
    """The cursor's representatives, fingerprints only."""
    keys = req.shown_before
    return {
        "query": {"bool": {"should": probe.exclude_seen(keys), "minimum_should_match": 1}},
        "size": limits.cap(max(len(keys), 1)),
        "_source": [FINGERPRINT_FIELD],
    }


def prefix_body(req: SearchRequest, limits: Limits) -> dict[str, Any]:
    """The ranking from its top, fingerprints only: the hits before ``search_after``."""
    body = {k: v for k, v in req.body.items() if k in paging.RANKING_KEYS}
    body.update({"size": limits.max_window, "_source": VERIFY_SOURCE, "track_total_hits": False})
    return body


def check_body(req: SearchRequest) -> dict[str, Any]:
    """The request's own ``from + size`` beyond the proxy's window: a search that fetches
    nothing, for Elasticsearch's refusal when that is beyond the index's result window."""
    body = {k: v for k, v in req.body.items() if k not in FIRST_ONLY}
    body.update({"from": req.end, "size": 0, "track_total_hits": False})
    return body


def total_reading(req: SearchRequest, limits: Limits) -> reads.Reading:
    """``collapse_total``'s search: what selects the hits, fingerprints only."""
    body: dict[str, Any] = {
        "size": limits.cap(req.settings.collapse_total_limit),
        "_source": VERIFY_SOURCE,
        "track_total_hits": True,
    }
    # What selects the hits travels as it is (a kNN search or a retriever included: a
    # match_all beside them would add every document).
    for name in ("query", "knn", "retriever", "post_filter", "sort", "search_after"):
        if name in req.body:
            body[name] = req.body[name]
    if not any(body.get(name) for name in ("query", "knn", "retriever")):
        body["query"] = {"match_all": {}}
    return reads.prepare(req, body, slim.total_body, req.internal)
