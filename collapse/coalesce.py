"""Searches of concurrent requests, sent together: one ``_msearch`` instead of one search each.

Elasticsearch's cost per HTTP request is several times its cost per search (docs/proxy.md,
"Searches of concurrent requests travel together"), and a collapsed search sends two: its
window and its probe. Under load, searches wait while
``max_inflight`` batches of their lane are in flight and then travel together (up to
``max_batch`` to an ``_msearch``); a search that finds fewer batches in flight leaves at once,
so a lone request never waits. A lane is a set of searches that may share a request: the
same headers (credentials, media type, trace ids) and the same kind (the proxy's own searches;
windows, see :meth:`collapse.executor.Executor.run`). How a batch travels, and what each search
gets back, is the caller's ``send``: every search keeps its own answer.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

__all__ = ["Coalescer", "Send"]

if TYPE_CHECKING:
    from collapse.executor import SubResult, SubSearch

Send = Callable[[list["SubSearch"]], Awaitable[list["SubResult"]]]


@dataclass(eq=False)
class _Pending:
    sub: SubSearch
    future: asyncio.Future[SubResult]


@dataclass
class _Lane:
    """The waiting searches and batches in flight of one set of headers."""

    queue: list[_Pending] = field(default_factory=list)
    inflight: int = 0


class Coalescer:
    """One per process, like the upstream client."""

    def __init__(self, max_inflight: int = 2, max_batch: int = 16) -> None:
        if max_inflight < 1 or max_batch < 1:
            raise ValueError("max_inflight and max_batch must be at least 1")
        self.max_inflight = max_inflight
        self.max_batch = max_batch
        self._lanes: dict[Hashable, _Lane] = defaultdict(_Lane)
        self._tasks: set[asyncio.Task[None]] = set()
        self.batches = 0  # _msearch or _search requests sent
        self.searches = 0  # searches they carried

    async def run(self, key: Hashable, subs: list[SubSearch], send: Send) -> list[SubResult]:
        """Answers in the order of ``subs``, each sent alone or with other requests' searches
        of the lane ``key``; ``send`` sends one batch (any caller's ``send`` of a lane will do)."""
        if not subs:
            return []
        lane = self._lanes[key]
        if not lane.queue and lane.inflight < self.max_inflight:
            # Nothing waits and there is room: leave at once, from this task (no hand-over).
            lane.inflight += 1
            self.batches += 1
            self.searches += len(subs)
            try:
                return await send(subs)
            finally:
                lane.inflight -= 1
                self._pump(key, send)
        loop = asyncio.get_running_loop()
        pending = [_Pending(sub, loop.create_future()) for sub in subs]
        lane.queue.extend(pending)
        self._pump(key, send)
        try:
            return list(await asyncio.gather(*(p.future for p in pending)))
        except asyncio.CancelledError:
            # Given up (the time budget): what has not left yet never will.
            lane.queue[:] = [p for p in lane.queue if p not in pending]
            for p in pending:
                p.future.cancel()
            raise

    def _pump(self, key: Hashable, send: Send) -> None:
        lane = self._lanes[key]
        while lane.queue and lane.inflight < self.max_inflight:
            batch, lane.queue[:] = lane.queue[: self.max_batch], lane.queue[self.max_batch :]
            lane.inflight += 1
            task = asyncio.get_running_loop().create_task(self._send(key, batch, send))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if not lane.queue and not lane.inflight:
            del self._lanes[key]

    async def _send(self, key: Hashable, batch: list[_Pending], send: Send) -> None:
        self.batches += 1
        self.searches += len(batch)
        try:
            results = await send([p.sub for p in batch])
        except Exception as exc:  # every waiter sees what its own request would have raised
            for p in batch:
                if not p.future.done():
                    p.future.set_exception(exc)
        else:
            for p, result in zip(batch, results, strict=True):
                if not p.future.done():
                    p.future.set_result(result)
        finally:
            self._lanes[key].inflight -= 1
            self._pump(key, send)
