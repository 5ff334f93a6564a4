"""The window: the ranked hits a collapsed search groups, fetched and grouped.

Round one fetches the window with what must be in before it is grouped: the cursor's
representatives (or, for a ``search_after`` without our cursor, the ranking down to it), the
``collapse_total`` search, and a check of the request's own ``from + size``. A refusal for a
result window larger than the index allows (``collapse.result_window``) sends round one again,
every fetch sized within the limit. Then up to ``collapse_refills`` refills extend the window
while it holds too few groups for the page, each sized by :func:`refill_step`, read from doc
values where allowed (``collapse.search.reads``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import collapse.search.grouped as grouped
import collapse.search.reads as reads
from collapse import paging, result_window, slim
from collapse.executor import SubResult
from collapse.search.budget import Budget
from collapse.search.fetches import (
    Limits,
    check_body,
    prefix_body,
    prior_body,
    total_reading,
    window_body,
)
from collapse.search.request import Hit, SearchRequest, key

__all__ = ["Window", "fetch_window", "refill_step", "total_of"]


def refill_step(hits: int, groups: int, wanted: int) -> int:
    """How many more hits to fetch when ``hits`` made ``groups`` groups and ``wanted`` are needed.

    The groups seen so far tell how many hits a group takes here: fetch enough for the missing
    groups at that rate, with a quarter more for luck, at least half again what is held and at
    most four times it: a result list full of copies fills its page in one or two refills.
    """
    if groups <= 0:
        return max(hits, 1)
    needed = -(-hits * wanted * 5 // (groups * 4))  # ceil(hits * wanted / groups * 1.25)
    return max(min(needed - hits, 4 * hits), -(-hits // 2), 1)


def total_of(body: dict[str, Any]) -> tuple[int | None, bool]:
    """``hits.total`` as (value, exact) whichever form Elasticsearch used."""
    total = body.get("hits", {}).get("total")
    if isinstance(total, int):
        return total, True
    if isinstance(total, dict):
        return int(total.get("value", 0)), total.get("relation", "eq") == "eq"
    return None, False


@dataclass(frozen=True)
class Window:
    """The grouped window, the first fetch's answer and what went wrong on the way."""

    first: SubResult
    groups: grouped.Grouped
    #: Fetch sizes within the index's result window, as learnt while fetching.
    limits: Limits
    #: Elasticsearch has no more hits: nothing lies beyond the window.
    complete: bool
    took: int
    #: ``collapse_total``'s answer (None: not asked, or not answered).
    total: SubResult | None
    degraded: tuple[str, ...]

    @property
    def hits(self) -> list[Hit]:
        return self.groups.hits


@dataclass(frozen=True)
class _RoundOne:
    """Round one's answers, taken apart (``first`` None: round one goes again, ``limits``)."""

    limits: Limits
    first: SubResult | None
    asked: int  # hits the first fetch asked for
    prior: list[Hit]
    total: SubResult | None
    total_again: reads.Reading | None
    failed: SubResult | None
    degraded: tuple[str, ...]


async def _round_one(req: SearchRequest, limits: Limits, send: reads.Send) -> _RoundOne:
    """The window with the cursor lookup (or the prefix), ``collapse_total`` and the check."""
    prior = req.internal(prior_body(req, limits)) if req.cursor is not None else None
    prefix = req.own(prefix_body(req, limits)) if req.rebuild else None
    window = req.own(window_body(req, limits.target))
    total = total_reading(req, limits) if req.ctl.total else None
    check = None
    if req.end > limits.max_window and "search_after" not in req.body:
        check = req.own(check_body(req))
    subs = [
        s for s in (prior, prefix, window, total.sub if total else None, check) if s is not None
    ]
    answers = dict(zip(map(id, subs), await send(subs), strict=True))
    redo = False
    degraded: list[str] = []
    prior_hits: list[Hit] = []
    for lookup in (prior, prefix):
        if lookup is None:
            continue
        result = answers[id(lookup)]
        learnt = limits.learnt(result)
        if learnt is not None:
            limits, redo = learnt, True
        elif not result.ok or not result.body:
            degraded.append(
                "cursor lookup failed"
                if lookup is prior
                else "rebuilding the earlier pages' groups failed"
            )
        elif lookup is prior:
            found = {key(h): h for h in result.body.get("hits", {}).get("hits", [])}
            prior_hits = [found[k] for k in req.shown_before if k in found]
        else:
            hits = result.body.get("hits", {}).get("hits", [])
            prior_hits = paging.hits_before(hits, req.body["search_after"])
    first: SubResult | None = answers[id(window)]
    assert first is not None
    failed: SubResult | None = None
    learnt = None if redo else limits.learnt(first)
    if redo or learnt is not None:
        limits, first = learnt or limits, None
    elif not first.ok or first.body is None:
        failed, first = first, None
    total_result, total_again = None, None
    if total is not None:
        result = answers[id(total.sub)]
        if result_window.learn(req.index, result, remember=False) is not None:
            learnt = limits.learnt(result)
            limits = learnt or limits
            if learnt is not None and (first is not None or failed is not None):
                total_again = total_reading(req, limits)  # sent again within the limit
            elif first is not None or failed is not None:
                total_result = result
        elif reads.take(req, "total", total, [result], identified=False):
            total_result = result
        else:
            total_again = total_reading(req, limits)  # refused from doc values: in full
    if check is not None and not answers[id(check)].ok:
        failed = answers[id(check)]  # Elasticsearch's refusal of the request's own from + size
    asked = int(window.body["size"])
    return _RoundOne(
        limits, first, asked, prior_hits, total_result, total_again, failed, tuple(degraded)
    )


def _step(req: SearchRequest, limits: Limits, hits: int, groups: int, total: int | None) -> int:
    """Hits the next refill asks for (0: none)."""
    if groups >= req.end or hits >= limits.max_window:
        return 0
    if total is not None and hits >= total:
        return 0
    return min(refill_step(hits, groups, req.end), limits.max_window - hits)


async def fetch_window(req: SearchRequest, send: reads.Send, budget: Budget) -> Window | SubResult:
    """The grouped window, or the failed answer to pass on as it is."""
    limits = Limits(req, None if req.pit is not None else result_window.limit_of(req.index))
    one = await _round_one(req, limits, send)
    while one.first is None and one.failed is None:  # refused for a limit learnt just now
        one = await _round_one(req, one.limits, send)
    if one.failed is not None:
        return one.failed
    first, limits, t = one.first, one.limits, req.thresholds
    assert first is not None and first.body is not None
    degraded = list(one.degraded)
    hits = first.body.get("hits", {}).get("hits", [])
    took = int(first.body.get("took", 0))
    total, exact = total_of(first.body)
    everything = exact and total is not None and "search_after" not in req.body
    complete = len(hits) < one.asked or (everything and total is not None and total <= len(hits))
    groups = grouped.start(hits, one.prior, None if req.cursor is None else list(req.cursor), t)
    total_result, total_again = one.total, one.total_again
    exhausted, fetches = complete, 1
    while True:
        step = 0
        if not exhausted and fetches <= req.settings.collapse_refills:
            step = _step(req, limits, len(groups.hits), len(groups.representatives), total)
        refill = None
        if step > 0:
            body = window_body(req, step, groups.hits)
            refill = reads.prepare(req, body, slim.refill_body, req.own, allowed=req.slim)
        subs = [r.sub for r in (total_again, refill) if r is not None]
        if not subs:
            break
        if budget.left() <= 0:
            degraded.append(f"time_budget: the window took longer than {budget.ms} ms")
            break
        answers = dict(zip(map(id, subs), await send(subs), strict=True))
        if total_again is not None:
            result = answers[id(total_again.sub)]
            if result_window.learn(req.index, result, remember=False) is not None:
                learnt = limits.learnt(result)
                limits = learnt or limits
                total_again = None if learnt is None else total_reading(req, limits)
                total_result = result if learnt is None else total_result
            elif reads.take(req, "total", total_again, [result], identified=False):
                total_result, total_again = result, None
            else:
                total_again = total_reading(req, limits)
        if refill is None:
            continue
        result = answers[id(refill.sub)]
        if not reads.take(req, "refill", refill, [result]):
            continue  # refused from doc values: the same refill again, in full
        fetches += 1
        if not result.ok or result.body is None:
            degraded.append("refill failed")
            exhausted = True
            continue
        took += int(result.body.get("took", 0))
        got = result.body.get("hits", {}).get("hits", [])
        groups = grouped.extend(groups, got, one.prior, t)
        if len(got) < step or (everything and total is not None and total <= len(groups.hits)):
            exhausted = complete = True
    return Window(first, groups, limits, complete, took, total_result, tuple(degraded))
