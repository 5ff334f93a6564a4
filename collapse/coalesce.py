"""Probes of concurrent requests, sent together: one ``_msearch`` instead of one search each.

Elasticsearch's cost per HTTP request is several times its cost per search here (measured in
``docs/proxy.md``: 512 searches/s one request each, 1,046 four to an ``_msearch``), and a
collapsed search sends two: its window and its probe. Under load, probes wait while
``max_inflight`` batches are in flight and then travel together (up to ``max_batch`` to an
``_msearch``); a probe that finds fewer batches in flight leaves at once, so a lone request
never waits. Only searches with identical internal headers (credentials, media type, trace
ids) share a batch, and each keeps its own answer: an error in one is that one's. The
window, which carries the user's query string and headers and whose answer headers go back to
the user, always travels alone.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

from collapse.executor import Executor, SubResult, SubSearch

Key = tuple[tuple[str, str], ...]


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
        self._lanes: dict[Key, _Lane] = defaultdict(_Lane)
        self._tasks: set[asyncio.Task[None]] = set()
        self.batches = 0  # _msearch or _search requests sent
        self.searches = 0  # searches they carried

    async def run(self, subs: list[SubSearch], executor: Executor) -> list[SubResult]:
        """Answers in the order of ``subs``, each sent alone or with other requests' searches."""
        if not subs:
            return []
        loop = asyncio.get_running_loop()
        key = executor.coalesce_key
        pending = [_Pending(sub, loop.create_future()) for sub in subs]
        lane = self._lanes[key]
        lane.queue.extend(pending)
        self._pump(key, executor)
        try:
            return list(await asyncio.gather(*(p.future for p in pending)))
        except asyncio.CancelledError:
            # Given up (the time budget): what has not left yet never will.
            lane.queue[:] = [p for p in lane.queue if p not in pending]
            for p in pending:
                p.future.cancel()
            raise

    def _pump(self, key: Key, executor: Executor) -> None:
        lane = self._lanes[key]
        while lane.queue and lane.inflight < self.max_inflight:
            batch, lane.queue[:] = lane.queue[: self.max_batch], lane.queue[self.max_batch :]
            lane.inflight += 1
            task = asyncio.get_running_loop().create_task(self._send(key, batch, executor))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if not lane.queue and not lane.inflight:
            del self._lanes[key]

    async def _send(self, key: Key, batch: list[_Pending], executor: Executor) -> None:
        self.batches += 1
        self.searches += len(batch)
        try:
            results = await executor.run([p.sub for p in batch])
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
            self._pump(key, executor)
