"""The searches of one user's ``_msearch`` in lockstep: what they send at the same time travels
as one ``_msearch``.

Each search of an ``_msearch`` runs as its own coroutine (``collapse.search``). The sub-searches
they send wait here until every search still running waits too (or nothing else is in flight),
then leave together: an ``_msearch`` of n searches costs the round trips of one. Only
:class:`~collapse.executor.Executor` uses this.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collapse.executor import SubResult, SubSearch

__all__ = ["Rounds"]

T = TypeVar("T")
Send = Callable[[list["SubSearch"]], Awaitable[list["SubResult"]]]
#: Which search of :meth:`Rounds.each` the running task works for.
_search: contextvars.ContextVar[object] = contextvars.ContextVar("lockstep_search")


@dataclass(eq=False)
class _Waiting:
    """Sub-searches of one search, waiting for their round or in flight with it."""

    who: object
    subs: list[SubSearch]
    future: asyncio.Future[list[SubResult]]
    batch: _Batch | None = None


@dataclass(eq=False)
class _Batch:
    """One round in flight."""

    members: list[_Waiting]
    task: asyncio.Task[None] | None = None


class Rounds:
    """One per request (an ``_msearch``): its searches' sub-searches, batched by round."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._live = 0
        self._waiting: list[_Waiting] = []
        self._inflight = 0
        self._due = False

    async def each(self, jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
        """Run the searches ``jobs`` concurrently, in lockstep."""
        self._live += len(jobs)

        async def one(job: Coroutine[Any, Any, T]) -> T:
            _search.set(object())
            try:
                return await job
            finally:
                self._live -= 1
                self._schedule()

        return list(await asyncio.gather(*(one(job) for job in jobs)))

    async def send(self, subs: list[SubSearch]) -> list[SubResult]:
        """Answers to ``subs``, sent with the other searches' of this round."""
        me = _search.get(None)
        if me is None:  # not one of the searches: alone
            return await self._send(subs)
        waiting = _Waiting(me, subs, asyncio.get_running_loop().create_future())
        self._waiting.append(waiting)
        self._schedule()
        try:
            return await waiting.future
        except asyncio.CancelledError:  # given up (the time budget)
            if waiting in self._waiting:
                self._waiting.remove(waiting)
                self._schedule()
            elif (
                (batch := waiting.batch) is not None
                and batch.task is not None
                and all(w.future.done() for w in batch.members)
            ):
                batch.task.cancel()  # nobody waits for that round any more
            raise

    def _schedule(self) -> None:
        """Look after the tasks ready now have run: they may send in this round too."""
        if not self._due:
            self._due = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._due = False
        if not self._waiting or self._inflight:
            return
        if len({w.who for w in self._waiting}) < self._live:
            return  # a search is still working: its sub-searches join this round
        batch = _Batch(self._waiting)
        self._waiting = []
        self._inflight += 1
        batch.task = asyncio.get_running_loop().create_task(self._run(batch.members))
        for w in batch.members:
            w.batch = batch

    async def _run(self, batch: list[_Waiting]) -> None:
        subs = [s for w in batch for s in w.subs]
        try:
            results = await self._send(subs)
        except BaseException as exc:
            for w in batch:
                if not w.future.done():
                    if isinstance(exc, asyncio.CancelledError):
                        w.future.cancel()
                    else:
                        w.future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        else:
            at = 0
            for w in batch:
                if not w.future.done():
                    w.future.set_result(results[at : at + len(w.subs)])
                at += len(w.subs)
        finally:
            self._inflight -= 1
            self._schedule()
