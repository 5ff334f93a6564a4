"""The ingest worker pool: closed mid-run (Elasticsearch failed) with no thread traceback,
its workers' deaths reported, their CPU counted, the collector left as found."""

from __future__ import annotations

import gc
import operator
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.prepare import PrepareConfig
from indexer.workers import Pool, Task


def _slow(items: list[str]) -> int:
    time.sleep(0.02)
    return len(items)


def _tasks() -> Iterator[Task]:
    """Tasks that take the feeder thread a while to pickle, and the workers a while to run."""
    for _ in range(100):
        yield None, _slow, ([str(j) for j in range(200_000)],)


def test_closing_while_the_feeder_sends_raises_nothing_in_its_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raised: list[BaseException | None] = []

    def hook(args: Any) -> None:
        raised.append(args.exc_value)

    monkeypatch.setattr(threading, "excepthook", hook)
    for _ in range(10):  # a race: before the fix, about 4 closes in 10 raised a TypeError
        pool = Pool(2)
        pool.configure(PrepareConfig())
        results = pool.imap(_tasks())
        assert [next(results) for _ in range(3)] == [200_000] * 3
        pool.close()  # as ingest does when a bulk request fails: tasks still queued
    assert raised == []


def test_a_pool_leaves_the_collector_as_it_found_it() -> None:
    """While a pool runs, what the process held before it is out of the cyclic collector's
    passes (here and in the workers); after it, an application's own frozen objects are
    still frozen and nothing else is."""
    was_frozen = gc.get_freeze_count() > 0  # an in-process proxy app of another test
    gc.unfreeze()
    try:
        pool = Pool(1)
        assert gc.get_freeze_count() > 0
        pool.configure(PrepareConfig())
        pool.close()
        assert gc.get_freeze_count() == 0

        gc.freeze()  # the application's own
        pool = Pool(1)
        pool.configure(PrepareConfig())
        pool.close()
        assert gc.get_freeze_count() > 0  # theirs (less any freed meanwhile)
    finally:
        gc.unfreeze()
        if was_frozen:
            gc.freeze()


@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_either_start_runs_the_tasks_in_order_and_reports_a_dead_worker(start: str) -> None:
    """Under the fork start the workers are forked by one process of the pool's (which loads
    the kernels once); under forkserver (a process with threads) each is the server's."""
    pool = Pool(2, start)
    pool.configure(PrepareConfig(max_doc_bytes=99))
    try:
        tasks = [(None, operator.add, (i, 1)) for i in range(9)] + [(1, operator.neg, (4,))]
        assert list(pool.imap(iter(tasks))) == [*range(1, 10), -4]
        with pytest.raises(RuntimeError, match=r"worker process 1 died \(exit code 3\)"):
            list(pool.imap(iter([(0, operator.add, (1, 1)), (1, os._exit, (3,))])))
    finally:
        pool.close()


_COMMAND_POOL = """
import os, resource, sys, time
from indexer import workers
from indexer.workers import Pool
from indexer.prepare import PrepareConfig

def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return os.getppid()

early = sys.argv[1] == "early"
if early:
    workers.start_early()
    parent = workers._early.pid
pool = Pool(2)
pool.configure(PrepareConfig())
try:
    parents = set(pool.imap(iter([(w, spin, (0.3,)) for w in (0, 1)])))
finally:
    pool.close()
assert len(parents) == 1 and os.getpid() not in parents, parents
assert not early or parents == {parent}, (parents, parent)
try:
    os.waitpid(-1, os.WNOHANG)
    print("a child left")
except ChildProcessError:
    pass
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(kids.ru_utime + kids.ru_stime)
"""


@pytest.mark.parametrize("early", ["early", "with the pool"])
def test_a_commands_workers_are_forked_by_one_parent_and_counted(early: str) -> None:
    """As a command starts its pool (a process of its own, one thread; ``python -m indexer
    ingest`` starts the workers' parent early): both workers are children of one other
    process, nothing is left running once the pool is closed, and the command's CPU (what
    the benchmarks read) includes the workers'."""
    out = subprocess.run(
        [sys.executable, "-c", _COMMAND_POOL, early],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert float(out.stdout) >= 0.55


@pytest.mark.parametrize("pool", ["Pool(0)", "Pool(1, 'forkserver')"])
def test_an_early_parent_that_no_pool_takes_is_ended(pool: str) -> None:
    """``ingest --workers 0`` fingerprints in its own process, and a forkserver pool starts
    each worker itself: the workers' parent started early is ended and reaped, not left
    behind."""
    code = (
        "import os\n"
        "from indexer import workers\n"
        "from indexer.workers import Pool\n"
        "workers.start_early()\n"
        "pid = workers._early.pid\n"
        f"pool = {pool}\n"
        "try:\n"
        "    os.waitpid(pid, os.WNOHANG)\n"
        "    print('it is left')\n"
        "except ChildProcessError:\n"
        "    print('ended')\n"
        "pool.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.split() == ["ended"]
