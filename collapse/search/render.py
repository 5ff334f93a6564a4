"""The collapsed answer: Elasticsearch's first answer with the page of representatives, each
with its ``_collapse``, and the top-level ``collapse`` object (docs/proxy.md describes both)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from collapse import metrics, paging
from collapse.executor import SubResult
from collapse.search.beyond import Beyond
from collapse.search.members import NOTHING_FOUND, members
from collapse.search.request import DocKey, SearchRequest, key
from collapse.search.window import Window, total_of
from indexer.grouping import group
from indexer.hits import decode

__all__ = ["Outcome", "render", "total_groups"]


@dataclass(frozen=True)
class Outcome:
    """A collapsed search that ran: its request, window and what lay beyond it."""

    req: SearchRequest
    window: Window
    beyond: Beyond

    @property
    def page(self) -> list[int]:
        """Window positions of the page's representatives."""
        return self.window.groups.representatives[self.req.start : self.req.end]

    @property
    def degraded(self) -> list[str]:
        return [*self.window.degraded, *self.beyond.degraded]

    def members(self, w: int, limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """The members folded behind the representative at window position ``w``."""
        found = self.beyond.found.get(w, NOTHING_FOUND)
        return members(self.window.groups, found, w, self.req.ctl.explain, limit)


def total_groups(
    req: SearchRequest, result: SubResult | None, version: str | None
) -> dict[str, Any]:
    """Distinct groups among all hits of ``collapse_total``'s answer (exact up to
    ``collapse_total_limit`` hits); empty when it failed."""
    if result is None or not result.ok or result.body is None:
        return {}
    hits = result.body.get("hits", {}).get("hits", [])
    total, exact = total_of(result.body)
    dec = decode(hits, req.settings.collapse_min_tokens, version)
    groups = int(np.count_nonzero(group(dec.prints, req.thresholds).is_rep))
    complete = exact and total is not None and total <= len(hits)
    return {"total_groups": groups, "total_groups_relation": "eq" if complete else "gte"}


def render(done: Outcome) -> dict[str, Any]:
    """The answer's body (the first fetch's, changed in place; its hits are stripped of what
    the user did not ask for)."""
    t0 = time.perf_counter_ns()
    req, window, beyond = done.req, done.window, done.beyond
    groups, explain = window.groups, req.ctl.explain
    assert window.first.body is not None
    out = window.first.body
    degraded = done.degraded
    page_hits = []
    folded_total = 0
    with_cursor = paging.carries_cursor(req.body)
    shown: list[DocKey] = groups.shown
    collapsed = groups.representatives
    rep_keys = [key(groups.hits[w]) for w in collapsed] if with_cursor else []
    behind: dict[int, list[int]] = {}  # representative -> its members, in rank order
    for m, r in enumerate(groups.grouping.rep.tolist()):
        if m != r:
            behind.setdefault(r, []).append(m)
    for pos in range(req.start, min(req.end, len(collapsed))):
        w = collapsed[pos]
        hit = groups.hits[w]
        found = beyond.found.get(w, NOTHING_FOUND)
        listed, folded = members(groups, found, w, explain, req.ctl.members, behind)
        folded_total += folded
        req.source.strip(hit)
        hit["_collapse"] = {"folded": folded, "members": listed}
        if with_cursor and isinstance(hit.get("sort"), list):
            cap = max(req.settings.collapse_cursor_reps, 1)
            carried = (shown + rep_keys[: pos + 1])[-cap:]
            hit["sort"] = [*hit["sort"], paging.encode_cursor(carried)]
        page_hits.append(hit)
    without = int((~groups.decoded.prints.present[groups.n_prior :]).sum())
    out.setdefault("hits", {})["hits"] = page_hits
    out["took"] = window.took
    info: dict[str, Any] = {
        "enabled": True,
        "max_distance": req.ctl.max_distance,
        "min_similarity": req.ctl.min_similarity,
        "window": len(groups.hits),
        "groups": len(page_hits),
        "folded": folded_total,
        "folded_relation": "gte" if beyond.truncated or degraded else "eq",
        "without_fingerprint": without,
    }
    if req.ctl.total:
        counted = total_groups(req, window.total, groups.version)
        if not counted:
            degraded.append("collapse_total failed")
        info.update(counted)
    ns = groups.ns + beyond.ns + time.perf_counter_ns() - t0
    info["took_ms"] = round(ns / 1e6, 3)
    info["degraded"] = bool(degraded)
    if degraded:
        info["reason"] = "; ".join(sorted(set(degraded)))
    out["collapse"] = info
    metrics.record_collapse(
        groups=len(page_hits),
        folded=folded_total,
        group_sizes=[1 + h["_collapse"]["folded"] for h in page_hits],
        without_fingerprint=without,
        degraded_reason=info.get("reason"),
    )
    return out
