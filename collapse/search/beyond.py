"""Beyond the window: the page's probe, its verification, and the fill.

The probe is ONE search for all representatives of the page (``collapse.probe``): candidates
that share a key with one, verified by the grouping rule and credited to the best-ranked
representative they verify against. The fill fetches in full, with the user's own request, the
page's representatives that a refill read from doc values; it travels beside the probe (in its
``_msearch`` when the request allows) and is never abandoned. Past the time budget the probe
is given up (``degraded``); a probe read from doc values that is refused goes once more in full.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import collapse.search.reads as reads
from collapse import probe, slim
from collapse.executor import Executor, SubResult, SubSearch
from collapse.search.budget import Budget
from collapse.search.members import Found, entry
from collapse.search.request import FIRST_ONLY, DocKey, Hit, SearchRequest, key
from collapse.search.window import Window, total_of
from indexer.candidates import user_query
from indexer.fingerprints.bits import popcount64
from indexer.grouping import Prints, Thresholds, assign
from indexer.hits import SLIM_KEY, decode, exact_keys_of, probe_keys_many, simhash_and_keys

__all__ = ["Beyond", "fill", "fill_body", "probe_and_fill", "probe_body", "verify"]


@dataclass(frozen=True)
class Beyond:
    """What the probe found for the page's representatives (by window position)."""

    found: dict[int, Found]
    probed: int = 0  # candidates the probe brought, verified or not
    truncated: bool = False  # more candidates than fetched: ``folded`` is a lower bound
    degraded: tuple[str, ...] = ()
    ns: int = 0


def probe_body(
    req: SearchRequest, window: Window, page: list[int], schemes: frozenset[str]
) -> dict[str, Any] | bool:
    """The page's probe in full (bool: none; True when copies beyond stay uncounted): its
    representatives' keys of the ``schemes`` the index records, and their exact keys."""
    params = window.groups.decoded.params
    if not req.settings.collapse_probe_size or params is None or window.complete:
        return False
    if not probe.probe_can_match(req.body):
        # The hits come from a kNN search or a retriever, which a filtered query cannot
        # reproduce: copies beyond the window stay uncounted, and the count says so.
        return True
    groups, n = window.groups, window.groups.n_prior
    prints = groups.decoded.prints
    rows = np.asarray(page, dtype=np.intp) + n
    rows = rows[prints.present[rows]]  # the fingerprinted
    keys = exact_keys_of([groups.hits[w] for w in (rows - n).tolist()], params)
    # A short document groups by exact key only: its other keys would only bring candidates
    # that cannot verify.
    rows = rows[prints.token_count[rows] >= req.settings.collapse_min_tokens]
    terms = probe_keys_many(prints.simhash[rows], prints.minhash[rows], params, schemes)
    if not any(terms) and not any(keys):
        return False
    seen = groups.shown + [key(h) for h in groups.hits]
    size = window.limits.cap(req.settings.collapse_probe_size)
    return probe.probe_body(req.body, terms, keys, seen, size)


def fill_body(req: SearchRequest, window: Window, page: list[int]) -> dict[str, Any] | None:
    """The user's request for the page's representatives read from doc values, by id: same
    ``_score``, ``sort``, ``_source`` filtering, highlighting and fields as a full read."""
    keys = [key(window.hits[w]) for w in page if SLIM_KEY in window.hits[w]]
    if not keys:
        return None
    body = dict(req.body)
    if req.source.send is not None:
        body["_source"] = req.source.send
    for name in (*FIRST_ONLY, "from", "search_after"):
        body.pop(name, None)
    body["size"] = len(keys)
    body["track_total_hits"] = False
    these = {"bool": {"should": probe.exclude_seen(keys), "minimum_should_match": 1}}
    body["query"] = {"bool": {"must": [user_query(req.body)], "filter": [these]}}
    return body


def fill(window: Window, page: list[int], results: list[SubResult]) -> tuple[Window, bool]:
    """The window with full hits in place of the page's doc-value representatives, and whether
    one could not be fetched (gone since, or the fill failed: shown without ``_source``)."""
    if not any(SLIM_KEY in window.hits[w] for w in page):
        return window, False
    full: dict[DocKey, Hit] = {}
    for result in results:
        if result.ok and result.body is not None:
            full.update((key(h), h) for h in result.body.get("hits", {}).get("hits", []))
    hits, missing = list(window.hits), False
    for w in page:
        if SLIM_KEY not in hits[w]:
            continue
        got = full.get(key(hits[w]))
        if got is None:
            hits[w].pop(SLIM_KEY)
            missing = True
        else:
            hits[w] = got
    return replace(window, groups=replace(window.groups, hits=hits)), missing


def _may_verify(simhash: np.ndarray, keys: np.ndarray, reps: Prints, t: Thresholds) -> np.ndarray:
    """(n,) bool: within ``far_distance`` bits of a representative (a superset of the near
    ones), or sharing its exact key."""
    near = popcount64(simhash[:, None] ^ reps.simhash[None, :]) <= t.far_distance
    rep_keys = reps.key[reps.key >= 0]
    if len(keys) * len(rep_keys) <= 1 << 16:  # a page's worth: a table beats isin's sort
        return near.any(axis=1) | (keys[:, None] == rep_keys[None, :]).any(axis=1)
    return near.any(axis=1) | np.isin(keys, rep_keys)


def verify(req: SearchRequest, window: Window, page: list[int], results: list[SubResult]) -> Beyond:
    """Verify the probe's candidates; credit each to the best-ranked representative whose group
    takes it (of the whole window: ones below the page's last cannot change where a candidate
    goes; their members in the window corroborate a marginal verdict)."""
    t0 = time.perf_counter_ns()
    degraded: list[str] = []
    truncated = False
    cands: dict[DocKey, Hit] = {}
    for result in results:
        if not result.ok or result.body is None:
            degraded.append("probe failed")
            continue
        fetched = result.body.get("hits", {}).get("hits", [])
        total, exact = total_of(result.body)
        if (
            result.body.get("timed_out")
            or not exact
            or (total is not None and total > len(fetched))
        ):
            truncated = True
        for h in fetched:
            cands.setdefault(key(h), h)
    hits = list(cands.values())
    found: dict[int, list[dict[str, Any]]] = {}
    if hits and page:
        groups, t, n = window.groups, req.thresholds, window.groups.n_prior
        reps = groups.grouping.representatives
        reps = reps[reps <= page[-1] + n]
        rep_prints = groups.decoded.prints.take(reps)
        version = groups.version
        if not all(SLIM_KEY in h for h in hits):
            # Only candidates within far_distance of a representative, or sharing an exact key
            # with one, can verify: decode the MinHash of those alone.
            simhash, keys = simhash_and_keys(hits)
            maybe = _may_verify(simhash, keys, rep_prints, t).tolist()
            hits_in = [h for h, m in zip(hits, maybe, strict=True) if m]
        else:  # read from doc values: all decode in one call
            hits_in = hits
        if hits_in:
            got = decode(hits_in, t.min_tokens, version)
            # The representatives' members in the window corroborate marginal candidates.
            owner = groups.grouping.rep
            rows = np.flatnonzero(np.isin(owner, reps) & (owner != np.arange(len(owner))))
            members = groups.decoded.prints.take(rows)
            at = np.searchsorted(reps, owner[rows])
            best, ham, sim = (a.tolist() for a in assign(got.prints, rep_prints, t, members, at))
            on_page = {w + n for w in page}
            rep_rows = reps.tolist()
            explain = groups if req.ctl.explain else None
            for c, b in enumerate(best):
                if b < 0 or rep_rows[b] not in on_page:
                    continue
                found.setdefault(rep_rows[b] - n, []).append(
                    entry(hits_in[c], ham[c], sim[c], explain, rep_rows[b], got, c, "probe")
                )
    out = {w: Found(tuple(e)) for w, e in found.items()}
    ns = time.perf_counter_ns() - t0
    return Beyond(out, len(hits), truncated, tuple(degraded), ns)


async def _probe(
    executor: Executor, budget: Budget, sub: SubSearch, riders: list[SubSearch]
) -> list[SubResult]:
    """The probe within what is left of the budget (Elasticsearch's ``timeout`` too), with the
    ``riders`` (the fill) in its ``_msearch``; TimeoutError past the budget."""
    if budget.ms is not None:
        sub.body["timeout"] = f"{max(int(budget.left() * 1000), 1)}ms"
    # In this task (asyncio.timeout, not wait_for's extra task): the probe leaves at once.
    async with asyncio.timeout(max(budget.left(), 0.001)):
        return await executor.run_probes([sub], riders)


async def probe_and_fill(
    req: SearchRequest,
    window: Window,
    schemes: frozenset[str],
    executor: Executor,
    budget: Budget,
) -> tuple[Window, Beyond]:
    """The page's probe and fill, sent together; the window filled and what the probe found."""
    page = window.groups.representatives[req.start : req.end]
    body = probe_body(req, window, page, schemes)
    wanted = fill_body(req, window, page)
    fills = [] if wanted is None else [req.own(wanted)]
    reading = None
    if isinstance(body, dict):
        reading = reads.prepare(req, body, slim.probe_body, req.internal)
    late = f"time_budget: the probe took longer than {budget.ms} ms"
    probed, filled = await _send(executor, budget, reading.sub if reading else None, fills)
    window, missing = fill(window, page, filled)
    degraded = ["fill failed: a representative could not be fetched"] if missing else []
    if probed is None:
        degraded.append(late)
    elif reading is not None and not reads.take(req, "probe", reading, probed):
        # Refused from doc values (an older index): once more, in full.
        assert isinstance(body, dict)
        reading = reads.prepare(req, body, slim.probe_body, req.internal)
        try:
            probed = await _probe(executor, budget, reading.sub, [])
            reads.take(req, "probe", reading, probed)
        except TimeoutError:
            probed = None
            degraded.append(late)
    b = verify(req, window, page, probed or [])
    degraded += b.degraded
    return window, Beyond(b.found, b.probed, b.truncated or body is True, tuple(degraded), b.ns)


async def _send(
    executor: Executor, budget: Budget, probe: SubSearch | None, fills: list[SubSearch]
) -> tuple[list[SubResult] | None, list[SubResult]]:
    """The probe's answers (None: given up past the budget) and the fill's: in one
    ``_msearch`` when the request allows, else side by side; the fill is never given up."""
    if probe is None:
        return [], await executor.run(fills)
    if not fills:
        try:
            return await _probe(executor, budget, probe, []), []
        except TimeoutError:
            return None, []
    if executor.may_share:
        try:
            answers = await _probe(executor, budget, probe, fills)
            return answers[:1], answers[1:]
        except TimeoutError:
            return None, await executor.run(fills)
    probed, filled = await asyncio.gather(
        _probe(executor, budget, probe, []), executor.run(fills), return_exceptions=True
    )
    if isinstance(filled, BaseException):
        raise filled
    if isinstance(probed, BaseException) and not isinstance(probed, TimeoutError):
        raise probed
    return (None if isinstance(probed, BaseException) else probed), filled
