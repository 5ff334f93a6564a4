"""The ingest workers: the processes that parse and fingerprint batches for ``indexer
ingest`` and ``indexer learn``, the tasks they run, and the pool that feeds them.

The module imports what a worker needs and nothing of the Elasticsearch client, so that
``python -m indexer ingest`` can fork the workers' parent (:func:`start_early`) before it
imports the rest of itself: the kernels load while the command's other imports run.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import pickle
import queue
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from indexer.boilerplate import HostModel, PageSets
from indexer.fingerprints.compute import enable_arrow, enable_kernel
from indexer.fingerprints.numbers import warm_kernel as warm_number_kernel
from indexer.prepare import (
    Featured,
    PrepareConfig,
    Prepared,
    finish_lines,
    learn_batch,
    prepare_lines,
    prepare_unmodelled,
    sample_batch,
)
from indexer.sources import RawBatch

__all__ = [
    "Done",
    "Pool",
    "Task",
    "WorkerError",
    "end_early",
    "start_early",
    "work_ahead",
    "work_finish",
    "work_learn",
    "work_prepare",
    "work_sample",
    "work_unmodelled",
]

_config: PrepareConfig | None = None
_models: Mapping[str, HostModel] = {}
_models_ref: str | None = None  # the models file loaded into ``_models`` (None: no models)
_held: dict[int, Featured] = {}  # learning-sample batches featurised here, awaiting the models


def _load_kernels() -> None:
    """Compiled tokenisation and number sketch (from numba's cache); without numba, batch
    tokenisation in pyarrow's kernels (same tokens, faster than the definition), which the
    compiled path never uses: importing pyarrow.compute then would only delay the worker."""
    if not enable_kernel():
        enable_arrow()
    warm_number_kernel()


def _init_worker(config: PrepareConfig, models: Mapping[str, HostModel]) -> None:
    global _config, _models, _models_ref
    _config, _models, _models_ref = config, models, None
    _held.clear()
    _load_kernels()  # loaded already in a worker process (:func:`_serve`)


def _use_models(ref: str | None) -> None:
    """Load the host models written by the main process (once per worker and models file)."""
    global _models, _models_ref
    if ref != _models_ref:
        with open(ref, "rb") as f:  # type: ignore[arg-type]  # ref is None only with no models
            _models = pickle.load(f)
        _models_ref = ref


def work_prepare(batch: RawBatch, ref: str | None = None) -> Prepared:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return prepare_lines(batch.items(), _config, _models)


def work_sample(batch: RawBatch, start: int, key: int) -> list[tuple[str, int, PageSets]]:
    """Featurise a batch of the learning sample, keep it here (under ``key``) for
    :func:`work_finish`, and return what it teaches the learner (per host, aggregated)."""
    assert _config is not None
    learn, featured = sample_batch(batch.items(), _config, start)
    if featured.out:
        _held[key] = featured
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn:
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def work_unmodelled(batch: RawBatch) -> Prepared:
    """A batch of pages without a host: fingerprinted now, no model can apply to them."""
    assert _config is not None
    return prepare_lines(batch.items(), _config, {})


def work_ahead(batch: RawBatch) -> tuple[Prepared, set[str]]:
    """A batch after the learning sample, fingerprinted as if no host had a model, with its
    documents' hosts: the main process keeps it if the models settled hold none of them."""
    assert _config is not None
    return prepare_unmodelled(batch.items(), _config)


def work_learn(batch: RawBatch) -> list[tuple[str, int, PageSets]]:
    """What a batch teaches the learner (per host, aggregated); nothing is kept."""
    assert _config is not None
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn_batch(batch.items(), _config):
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def work_finish(key: int, ref: str | None = None) -> Prepared:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return finish_lines(_held.pop(key), _config, _models)


def _serve(conn: Connection) -> None:
    """A worker process: load the kernels, then run each task received on ``conn`` (the first
    one :func:`_init_worker`, from :meth:`Pool.configure`) and send back its result."""
    _load_kernels()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        fn, args = task
        try:
            result: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # handed to the main process and raised there
            result = (False, _failure(exc))
        conn.send(result)


def _zygote(
    conns: list[Connection], mine: list[Connection], status: Connection, theirs: Connection
) -> None:
    """The workers' parent started with the pool (fork start): load the kernels, then fork
    and reap the workers (:func:`_parent_of`). ``mine`` and ``theirs`` are the main process's
    ends of the same pipes: closed here, so that each end sees the other's close."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process reports a Ctrl-C
    for conn in (*mine, theirs):
        conn.close()
    _load_kernels()
    _parent_of(conns, status)


def _parent_of(conns: list[Connection], status: Connection) -> None:
    """Fork one worker per pipe in ``conns`` (each inherits the kernels loaded here), then
    reap each, sending its exit code on ``status``: so the workers' CPU counts to the
    command's own process when it reaps this one. A SIGTERM is passed on to the workers
    alive; a Ctrl-C reaches them directly."""
    gc.freeze()  # the kernels' objects too: out of the workers' collector passes
    live: dict[int, int] = {}  # pid -> worker
    for worker, conn in enumerate(conns):
        pid = os.fork()
        if not pid:
            _forked_worker(conns, worker, status)
        live[pid] = worker
        conn.close()

    def pass_on(signum: int, _: Any) -> None:
        for pid in list(live):
            os.kill(pid, signum)

    signal.signal(signal.SIGTERM, pass_on)
    while live:
        pid, code = os.wait()
        if pid not in live:  # not a worker (none is forked here otherwise)
            continue
        worker = live.pop(pid)
        with contextlib.suppress(OSError):  # the main process gone: nobody to tell
            status.send((worker, os.waitstatus_to_exitcode(code)))


def start_early() -> None:
    """Fork the workers' parent now, before the command imports the rest of itself (the
    Elasticsearch client, the command line): it loads the kernels meanwhile, on the other
    core, and the process's first pool under the fork start takes its workers from it.
    Nothing happens without the fork start, in a process with threads, or when one was
    started already. A command that ends without a pool ends it (:func:`end_early`; else it
    ends once this process has, its control socket closed)."""
    global _early
    if _early is not None or "fork" not in mp.get_all_start_methods():
        return
    if threading.active_count() != 1:
        return
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if not pid:
        mine.close()
        _run_forked(_early_parent, theirs)
    theirs.close()
    _early = _Early(pid, mine)


def _early_parent(control: socket.socket) -> None:
    """:func:`start_early`'s process: the kernels, then the pool's pipes (their file
    descriptors, sent over ``control``) and :func:`_parent_of`; without them, nothing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process reports a Ctrl-C
    _load_kernels()
    _, fds, _, _ = socket.recv_fds(control, 16, _MAX_FDS)
    control.close()
    if not fds:  # the main process ended (or closed the socket) without a pool
        return
    *ends, status = fds
    _parent_of([Connection(fd) for fd in ends], Connection(status, readable=False))


#: Pipes a pool sends to :func:`start_early`'s process at most (its workers, and the status).
_MAX_FDS = 1024


@dataclass(slots=True)
class _Early:
    """A workers' parent started by :func:`start_early`, until a pool takes it."""

    pid: int
    control: socket.socket


_early: _Early | None = None


def _take_early() -> _Early | None:
    """The process :func:`start_early` started, now the caller's to use (None: none)."""
    global _early
    early, _early = _early, None
    return early


def end_early() -> None:
    """No pool will take the process :func:`start_early` started (if any is still waiting for
    one): it ends now, and is reaped."""
    early = _take_early()
    if early is not None:
        _end(early)


def _end(early: _Early) -> None:
    early.control.close()
    child = _Child(early.pid)
    child.terminate()
    child.join()


class _Child:
    """A child forked by this process (:func:`start_early`), as a pool holds its processes:
    ``terminate`` and ``join``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.exitcode: int | None = None

    def terminate(self) -> None:
        if self.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)

    def join(self) -> None:
        if self.exitcode is None:
            with contextlib.suppress(ChildProcessError):
                self.exitcode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])


def _run_forked(target: Callable[..., None], *args: Any) -> NoReturn:
    """Run ``target(*args)`` in a process forked by :func:`os.fork`, then end it (never
    returns): exit code 0, or 1 after an exception (a Ctrl-C quietly)."""
    code = 0
    try:
        target(*args)
    except KeyboardInterrupt:  # the terminal's Ctrl-C: the main process reports the run
        code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _forked_worker(conns: list[Connection], worker: int, status: Connection) -> NoReturn:
    """A worker forked by :func:`_parent_of`: serve its own pipe, then end (never returns)."""

    def serve() -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for other, conn in enumerate(conns):
            if other != worker:
                conn.close()
        status.close()
        _serve(conns[worker])

    _run_forked(serve)


def _send_tasks(conn: Connection, outbox: queue.SimpleQueue[Any]) -> None:
    """A pool thread: write the tasks put in ``outbox`` to one worker's pipe, until None."""
    while (task := outbox.get()) is not None:
        # a dead worker or a closed pool: the reading side (``Pool._recv``) reports it
        with contextlib.suppress(OSError, ValueError):
            conn.send(task)


def _read_results(conn: Connection, inbox: queue.SimpleQueue[Any]) -> None:
    """A pool thread: put each result read from one worker's pipe in ``inbox``; at the
    pipe's end (the worker gone), the error that ended it."""
    while True:
        try:
            got = conn.recv()
        except (EOFError, OSError) as exc:
            inbox.put(exc)
            return
        except BaseException as exc:  # a result that does not unpickle: raised by _recv
            got = (False, exc)
        inbox.put(got)


class WorkerError(RuntimeError):
    """A task failed in a worker process (the message carries the worker's traceback)."""


Task = tuple[int | None, Callable[..., Any], tuple[Any, ...]]  # (worker or None, fn, args)


@dataclass(slots=True)
class Done:
    """A result known already: :meth:`Pool.imap` yields it in its place among the tasks'."""

    value: Any


def _failure(exc: BaseException) -> BaseException:
    """The exception to raise in the main process: the worker's own when it pickles (the
    worker's traceback added as a note), else a WorkerError carrying both as text."""
    text = traceback.format_exc()
    try:
        exc.add_note(f"raised in a worker process:\n{text}")
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return WorkerError(f"{exc!r} in a worker process:\n{text}")


class Pool:
    """Worker processes (or, with 0 workers, the calling process) running tasks in order.

    Each worker has its own pipe; task ``i`` goes to worker ``i % workers`` unless the task
    names its worker, and results are read back in task order, a few tasks per worker in
    flight. Two threads per worker, blocked on its pipe, write its tasks and read its
    results, so that a worker takes its next task and hands over its result as soon as it
    is free, whatever the other workers and the main thread are doing (one shared writer
    and in-order reads held the workers in step: one waiting while the other finished).
    ``multiprocessing.Pool``'s worker handler polls the results pipe and spins while results
    wait to be read (~1 cpu-s per 100k documents here). One pool serves the learning sample
    and the ingestion: host models learnt meanwhile reach the workers through a file
    (:meth:`set_models`), loaded once per worker.

    The workers are started first and load their compiled kernels while the main process
    checks the index; the run's configuration follows (:meth:`configure`), before any task.
    Under the fork start one process, the workers' parent (the one :func:`start_early`
    started, else :func:`_zygote`), loads the kernels and forks the workers from itself, so
    the kernels are loaded once whatever the number of workers.
    """

    def __init__(self, workers: int, start: str | None = None) -> None:
        """``workers`` processes (0: none), started by ``start`` (a multiprocessing start
        method; None: the cheapest safe one)."""
        self.workers = workers
        self.ref: str | None = None
        self._dir: str | None = None
        self._next = 0
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        self._unread: list[int] = [0] * workers  # per worker: results of configure() to skip
        self._froze = False  # whether this pool froze the process's objects (gc.freeze)
        #: the fork start's reports of the workers' exit codes (None: each worker is ours)
        self._status: Connection | None = None
        self._codes: dict[int, int] = {}  # worker -> exit code, as reported
        if not workers:
            end_early()
            return
        methods = mp.get_all_start_methods()
        # fork is the cheapest start (every module already imported) and safe while this
        # process has a single thread; otherwise forkserver (or spawn).
        method = start or (
            "fork"
            if "fork" in methods and threading.active_count() == 1
            else "forkserver"
            if "forkserver" in methods
            else "spawn"
        )
        ctx: Any = mp.get_context(method)  # a concrete context (typed as the base class)
        # What the process holds now (its modules, mostly) outlives the pool: out of the
        # cyclic collector's passes while it runs, here and in the forked workers (unless the
        # process froze objects of its own: those are its to unfreeze).
        self._froze = not gc.get_freeze_count()
        if self._froze:
            gc.freeze()
        if method == "fork":
            # one process loads the kernels and forks the workers (one load, not one each):
            # the one :func:`start_early` started, if any, else one started now
            pipes = [ctx.Pipe() for _ in range(workers)]
            self._conns = [mine for mine, _ in pipes]
            self._status, status = ctx.Pipe(duplex=False)
            theirs = [conn for _, conn in pipes]
            early = _take_early()
            if early is not None and workers < _MAX_FDS:
                fds = [conn.fileno() for conn in (*theirs, status)]
                socket.send_fds(early.control, [b"pipes"], fds)
                early.control.close()
                self._procs.append(_Child(early.pid))
            else:
                if early is not None:  # (a pool of more workers than it takes)
                    _end(early)
                zygote = ctx.Process(
                    target=_zygote, args=(theirs, self._conns, status, self._status), daemon=True
                )
                zygote.start()
                self._procs.append(zygote)
            for conn in (*theirs, status):
                conn.close()
        else:
            end_early()  # each worker is started (and loads its kernels) by itself
        for _ in range(workers if method != "fork" else 0):
            mine, theirs_end = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs_end,), daemon=True)
            proc.start()
            theirs_end.close()
            self._conns.append(mine)
            self._procs.append(proc)
        self._outboxes: list[queue.SimpleQueue[Any]] = []
        self._inboxes: list[queue.SimpleQueue[Any]] = []
        self._threads: list[threading.Thread] = []
        for worker, conn in enumerate(self._conns):
            outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
            inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self._outboxes.append(outbox)
            self._inboxes.append(inbox)
            for target, box, name in (
                (_send_tasks, outbox, "tasks"),
                (_read_results, inbox, "results"),
            ):
                thread = threading.Thread(
                    target=target, args=(conn, box), name=f"{name}-{worker}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def configure(self, config: PrepareConfig) -> None:
        """Give every worker (with no workers: this process) the run's configuration; the
        workers take it before any task sent after it."""
        if not self.workers:
            _init_worker(config, {})
            return
        for worker, outbox in enumerate(self._outboxes):
            outbox.put((_init_worker, (config, {})))
            self._unread[worker] += 1

    def set_models(self, models: Mapping[str, HostModel]) -> None:
        if not self.workers:
            global _models
            _models = dict(models)
            return
        if not models:
            return
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="indexer-models-")
        path = os.path.join(self._dir, f"models-{id(models)}.pickle")
        with open(path, "wb") as f:
            pickle.dump(dict(models), f, protocol=pickle.HIGHEST_PROTOCOL)
        self.ref = path

    def _recv(self, worker: int) -> Any:
        while True:
            got = self._inboxes[worker].get()
            if isinstance(got, BaseException):  # its pipe closed: the worker is gone
                code = self._exit_code(worker)
                raise WorkerError(f"worker process {worker} died (exit code {code})") from got
            ok, value = got
            if not ok:
                raise value
            if not self._unread[worker]:
                return value
            self._unread[worker] -= 1  # configure()'s answer, not a task's

    def imap(self, tasks: Iterator[Task | Done]) -> Iterator[Any]:
        """Results of ``fn(*args)`` for each ``(worker, fn, args)``, in order (a
        :class:`Done` stands for its own result).

        ``worker`` None: the next worker in turn; else that worker (index modulo workers).
        """
        if not self.workers:
            for task in tasks:
                yield task.value if isinstance(task, Done) else task[1](*task[2])
            return
        window: deque[int | Done] = deque()
        for task in tasks:
            if isinstance(task, Done):
                window.append(task)
            else:
                worker, fn, args = task
                if worker is None:
                    worker = self._next
                    self._next = (self._next + 1) % self.workers
                worker %= self.workers
                self._outboxes[worker].put((fn, args))
                window.append(worker)
            while window and (len(window) >= 3 * self.workers or isinstance(window[0], Done)):
                yield self._result(window.popleft())
        while window:
            yield self._result(window.popleft())

    def _exit_code(self, worker: int) -> int | None:
        """A dead worker's exit code (None: not known within a second)."""
        if self._status is None:
            self._procs[worker].join(timeout=1)
            code: int | None = self._procs[worker].exitcode
            return code
        deadline = time.monotonic() + 1
        while worker not in self._codes:
            try:
                if not self._status.poll(max(0.0, deadline - time.monotonic())):
                    break
                got, code = self._status.recv()
            except (EOFError, OSError):
                break
            self._codes[got] = code
        return self._codes.get(worker)

    def _result(self, slot: int | Done) -> Any:
        return slot.value if isinstance(slot, Done) else self._recv(slot)

    def close(self) -> None:
        """Stop the workers; tasks not yet sent are dropped (a run that failed mid-way).

        The pipe threads end before the pipes close: a pipe closed while a thread is inside
        ``Connection.send`` fails there with a ``TypeError`` (its handle gone), a thread
        traceback on the user's terminal."""
        if self.workers:
            for outbox in self._outboxes:
                with contextlib.suppress(queue.Empty):
                    while True:
                        outbox.get_nowait()
                outbox.put(None)
            for proc in self._procs:
                proc.terminate()
            for proc in self._procs:
                proc.join()
            # the workers are gone: a send in progress fails at once (OSError, suppressed)
            # and a read ends (EOF)
            for thread in self._threads:
                thread.join(timeout=5)
            if not any(thread.is_alive() for thread in self._threads):
                for conn in self._conns:
                    conn.close()
            if self._status is not None:
                self._status.close()
            if self._froze:
                gc.unfreeze()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
