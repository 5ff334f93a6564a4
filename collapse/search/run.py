"""One collapsed search, read top to bottom: window, probe and fill beyond it, answer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from collapse.credentials import client_credentials
from collapse.executor import Executor, SubResult
from collapse.index_fields import IndexFields
from collapse.search.beyond import probe_and_fill
from collapse.search.budget import Budget
from collapse.search.render import Outcome
from collapse.search.request import SearchRequest
from collapse.search.window import fetch_window

__all__ = ["collapse_all", "collapsed"]


async def collapsed(
    req: SearchRequest,
    executor: Executor,
    budget: Budget,
    schemes: Awaitable[frozenset[str]],
) -> Outcome | SubResult:
    """The search that ran, or Elasticsearch's failed answer to pass on as it is.

    ``schemes``: the probe schemes the searched indices record, read while the window is
    fetched (no round trip of their own before the probe)."""
    window = await fetch_window(req, executor.run, budget)
    if isinstance(window, SubResult):
        return window
    window, beyond = await probe_and_fill(req, window, await schemes, executor, budget)
    return Outcome(req, window, beyond)


async def collapse_all(
    reqs: list[SearchRequest],
    executor: Executor,
    budget_ms: float | None,
    index_fields: IndexFields,
) -> list[Outcome | SubResult]:
    """Every search of a request, concurrently (one budget from now); the probe schemes of each
    index expression are read once."""
    budget = Budget(budget_ms)
    credentials = client_credentials(executor.json_headers)
    reading: dict[str | None, asyncio.Future[frozenset[str]]] = {}
    for index in dict.fromkeys(r.index for r in reqs):
        known = index_fields.cached_probes(index)
        if known is None:
            reading[index] = asyncio.ensure_future(index_fields.probes(index, credentials))
        else:  # as a future already done: no task to schedule and run
            reading[index] = asyncio.get_running_loop().create_future()
            reading[index].set_result(known)
    try:
        return await executor.together(
            [collapsed(r, executor, budget, reading[r.index]) for r in reqs]
        )
    finally:
        for task in reading.values():
            task.cancel()  # a window that failed: the read is not waited for
