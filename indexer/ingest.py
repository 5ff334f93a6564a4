"""The ingestion pipeline behind ``indexer ingest``: read, learn boilerplate, prepare, bulk.

    inputs --read--> raw items --workers: parse/extract/fingerprint--> Ready | Reject
           --streaming_bulk--> indexed | rejected  (+ checkpoint, progress, summary)

Workers run in a process pool and batches stay in input order; at most a few batches per
worker are in flight, so memory stays bounded whatever the input size.
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing as mp
import os
import pickle
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict, Field

from indexer.boilerplate import BoilerplateConfig, HostModel, Learner, PageSets, merge_models
from indexer.boilerplate_store import DEFAULT_STORE, load_models, model_version, save_models
from indexer.bulk import BulkConfig, send_lines
from indexer.checkpoint import Checkpoint, SeqWatermark, held
from indexer.documents import NO_TEXT_REASON, TextFields, string_fields
from indexer.fingerprints.compute import enable_arrow, enable_kernel
from indexer.fingerprints.numbers import warm_kernel as warm_number_kernel
from indexer.lines import LineBatch
from indexer.mapping import ensure_index, text_fields_for
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
from indexer.rejects import Reject, RejectsFile
from indexer.sample import DEFAULT_HOST_PAGES, DEFAULT_SAMPLE, WindowSplit
from indexer.sources import RawBatch, RawItem, Row, describe_inputs, read_rows, take

__all__ = [
    "DEFAULT_BOILERPLATE_SAMPLE",
    "IngestOptions",
    "LearnSummary",
    "Summary",
    "ingest",
    "learn",
]

#: Pages read by the learning pass (:mod:`indexer.sample`).
DEFAULT_BOILERPLATE_SAMPLE = DEFAULT_SAMPLE


class IngestOptions(BaseModel):
    """Everything ``ingest`` needs to know (the CLI fills it from its flags)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str
    inputs: list[str]
    rejects_path: Path
    state_path: Path
    resume: bool = False
    #: the text fields the user named (None: those the index records, else the defaults)
    text_fields: TextFields | None = None
    prepare: PrepareConfig = PrepareConfig()
    bulk: BulkConfig = BulkConfig()
    boilerplate: bool = True
    boilerplate_config: BoilerplateConfig = BoilerplateConfig()
    boilerplate_sample: int = Field(
        DEFAULT_BOILERPLATE_SAMPLE, ge=0, description="pages read to learn host models"
    )
    boilerplate_host_pages: int = Field(
        DEFAULT_HOST_PAGES, ge=1, description="of them, pages of one host learnt from, at most"
    )
    boilerplate_store: str = DEFAULT_STORE
    #: learn every host's model from this run's sample and replace the stored one (False: a
    #: host with a stored model uses it; the others' models are learnt and stored if still none)
    relearn: bool = False
    workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=0)
    batch_size: int = Field(256, ge=1)
    progress: bool = False


class Summary(BaseModel):
    """The end-of-run figures: ``read == indexed + rejected`` always holds."""

    read: int = 0
    indexed: int = 0
    rejected: int = 0
    skipped: int = 0  # settled by an earlier, interrupted run (--resume)
    seconds: float = 0.0
    boilerplate_hosts: int = 0
    boilerplate_stored: int = 0  # of those, models another run stored (not learnt here)
    text_fields: list[str] = []  # the fields fingerprinted
    no_text: int = 0  # rejected for lack of text in those fields
    #: the fields that documents rejected for lack of text have most often
    fields_seen: list[str] = []

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0


# --- worker processes -------------------------------------------------------------------------

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


def _work_prepare(batch: RawBatch, ref: str | None = None) -> Prepared:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return prepare_lines(batch.items(), _config, _models)


def _work_sample(batch: RawBatch, start: int, key: int) -> list[tuple[str, int, PageSets]]:
    """Featurise a batch of the learning sample, keep it here (under ``key``) for
    :func:`_work_finish`, and return what it teaches the learner (per host, aggregated)."""
    assert _config is not None
    learn, featured = sample_batch(batch.items(), _config, start)
    if featured.out:
        _held[key] = featured
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn:
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def _work_unmodelled(batch: RawBatch) -> Prepared:
    """A batch of pages without a host: fingerprinted now, no model can apply to them."""
    assert _config is not None
    return prepare_lines(batch.items(), _config, {})


def _work_ahead(batch: RawBatch) -> tuple[Prepared, set[str]]:
    """A batch after the learning sample, fingerprinted as if no host had a model, with its
    documents' hosts: the main process keeps it if the models settled hold none of them."""
    assert _config is not None
    return prepare_unmodelled(batch.items(), _config)


def _work_learn(batch: RawBatch) -> list[tuple[str, int, PageSets]]:
    """What a batch teaches the learner (per host, aggregated); nothing is kept."""
    assert _config is not None
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn_batch(batch.items(), _config):
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def _work_finish(key: int, ref: str | None = None) -> Prepared:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return finish_lines(_held.pop(key), _config, _models)


def _serve(conn: Connection) -> None:
    """A worker process: load the kernels, then run each task received on ``conn`` (the first
    one :func:`_init_worker`, from :meth:`_Pool.configure`) and send back its result."""
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
    """The workers' parent under the fork start: load the kernels once, fork one worker per
    pipe in ``conns`` (each inherits them loaded), then reap each, sending its exit code on
    ``status``: so the workers' CPU counts to the command's own process when it joins this
    one. A SIGTERM is passed on to the workers alive; a Ctrl-C reaches them directly.

    ``mine`` and ``theirs`` are the main process's ends of the same pipes: closed here, so
    that each end sees the other's close."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process reports a Ctrl-C
    for conn in (*mine, theirs):
        conn.close()
    _load_kernels()
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
        worker = live.pop(pid)
        with contextlib.suppress(OSError):  # the main process gone: nobody to tell
            status.send((worker, os.waitstatus_to_exitcode(code)))


def _forked_worker(conns: list[Connection], worker: int, status: Connection) -> NoReturn:
    """A worker forked by :func:`_zygote`: serve its own pipe, then end (never returns)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for other, conn in enumerate(conns):
            if other != worker:
                conn.close()
        status.close()
        _serve(conns[worker])
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


def _send_tasks(conn: Connection, outbox: queue.SimpleQueue[Any]) -> None:
    """A pool thread: write the tasks put in ``outbox`` to one worker's pipe, until None."""
    while (task := outbox.get()) is not None:
        # a dead worker or a closed pool: the reading side (``_Pool._recv``) reports it
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


class _WorkerError(RuntimeError):
    """A task failed in a worker process (the message carries the worker's traceback)."""


_Task = tuple[int | None, Callable[..., Any], tuple[Any, ...]]  # (worker or None, fn, args)


@dataclass(slots=True)
class _Done:
    """A result known already: :meth:`_Pool.imap` yields it in its place among the tasks'."""

    value: Any


def _failure(exc: BaseException) -> BaseException:
    """The exception to raise in the main process: the worker's own when it pickles (the
    worker's traceback added as a note), else a _WorkerError carrying both as text."""
    text = traceback.format_exc()
    try:
        exc.add_note(f"raised in a worker process:\n{text}")
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return _WorkerError(f"{exc!r} in a worker process:\n{text}")


class _Pool:
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
    Under the fork start one process (:func:`_zygote`) loads the kernels and forks the
    workers from itself, so the kernels are loaded once whatever the number of workers.
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
            # one process loads the kernels and forks the workers (one load, not one each)
            pipes = [ctx.Pipe() for _ in range(workers)]
            self._conns = [mine for mine, _ in pipes]
            self._status, status = ctx.Pipe(duplex=False)
            theirs = [conn for _, conn in pipes]
            zygote = ctx.Process(
                target=_zygote, args=(theirs, self._conns, status, self._status), daemon=True
            )
            zygote.start()
            for conn in (*theirs, status):
                conn.close()
            self._procs.append(zygote)
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
                raise _WorkerError(f"worker process {worker} died (exit code {code})") from got
            ok, value = got
            if not ok:
                raise value
            if not self._unread[worker]:
                return value
            self._unread[worker] -= 1  # configure()'s answer, not a task's

    def imap(self, tasks: Iterator[_Task | _Done]) -> Iterator[Any]:
        """Results of ``fn(*args)`` for each ``(worker, fn, args)``, in order (a
        :class:`_Done` stands for its own result).

        ``worker`` None: the next worker in turn; else that worker (index modulo workers).
        """
        if not self.workers:
            for task in tasks:
                yield task.value if isinstance(task, _Done) else task[1](*task[2])
            return
        window: deque[int | _Done] = deque()
        for task in tasks:
            if isinstance(task, _Done):
                window.append(task)
            else:
                worker, fn, args = task
                if worker is None:
                    worker = self._next
                    self._next = (self._next + 1) % self.workers
                worker %= self.workers
                self._outboxes[worker].put((fn, args))
                window.append(worker)
            while window and (len(window) >= 3 * self.workers or isinstance(window[0], _Done)):
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

    def _result(self, slot: int | _Done) -> Any:
        return slot.value if isinstance(slot, _Done) else self._recv(slot)

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


#: Batches fingerprinted ahead (no host model) while the models are decided, at most.
_AHEAD = 64


@dataclass(slots=True)
class _Sample:
    """What the learning pass leaves for the ingestion (see :func:`_learn`)."""

    models: dict[str, HostModel]
    stored: int  # models that came from the store
    held: list[tuple[int, int]]  # (worker, key) of the sample's batches awaiting the models
    #: batches after the sample fingerprinted ahead without models, in input order: each with
    #: its rejects when it was sent already (its hosts got no model), else None (to redo)
    ahead: list[tuple[RawBatch, list[Reject] | None]]
    #: the input from there on: the window's pages left for later first, then the rest
    rest: Iterator[Row]


# What each task of the learning pass is, in the order given (results come in that order).
_LEARN, _FINAL, _AHEAD_TASK = "learn", "final", "ahead"


def _learn(
    es: Elasticsearch,
    opts: IngestOptions,
    pool: _Pool,
    rows: Iterator[Row],
    start: int,
    sending: Callable[[RawBatch], None],
) -> Generator[Prepared, None, _Sample]:
    """The learning pass over the first ``boilerplate_sample`` items (the window), split by
    :class:`~indexer.sample.WindowSplit`: its learning sample parsed and featurised once, its
    pages without a host fingerprinted and yielded at once, its pages of hosts with enough
    pages in the sample left for after it.

    While the models are decided (a thread: the learner's counts, the model store's
    requests), the workers fingerprint the next batches as if no host had a model
    (:func:`_work_ahead`). Once the models are known, the batches so fingerprinted whose hosts
    got none are yielded at once (without their rejects, which keep their place in input
    order: :attr:`_Sample.ahead`), so that Elasticsearch indexes them while the workers
    finish the sample with the models; ``sending`` is called with each batch at or after
    ``start`` before its lines are yielded (to find the documents that Elasticsearch refuses).

    Returns the per-host models (:func:`_models_for`), how many of them came from the store,
    the sample's batches held by the workers (worker, key) featurised and waiting for those
    models (:func:`_work_finish`), the batches fingerprinted ahead, and the input left.
    """
    learner = Learner(opts.boilerplate_config)
    window = WindowSplit(opts.boilerplate_host_pages, opts.prepare.max_doc_bytes)
    held: list[tuple[int, int]] = []
    raws: list[RawBatch] = []
    later: list[RawBatch] = []  # the window's pages left for after the sample
    ahead: list[RawBatch] = []
    kinds: deque[str] = deque()  # of the tasks given, those whose results are still to come
    sampled: int | None = None  # the sample's task count, once all are given
    learnt = 0
    decided: Future[tuple[dict[str, HostModel], int]] | None = None
    models: dict[str, HostModel] | None = None
    stored = 0
    done: list[tuple[Prepared, set[str]]] = []  # results of the batches fingerprinted ahead
    kept: list[tuple[RawBatch, list[Reject] | None]] = []  # of them, those looked at
    rest: Iterator[Row] = rows

    def tasks() -> Iterator[_Task]:
        nonlocal sampled, rest
        left = opts.boilerplate_sample
        while left > 0 and (batch := take(rows, min(opts.batch_size, left))) is not None:
            left -= len(batch)
            split = window.split(batch)
            if len(split.later):
                later.append(split.later)
            if len(split.learn):
                key = len(held)
                worker = key % max(pool.workers, 1)
                if split.learn.seqs[-1] >= start:
                    held.append((worker, key))
                    raws.append(split.learn.since(start))
                else:
                    held.append((-1, key))  # settled by the earlier run: learnt from only
                kinds.append(_LEARN)
                yield worker, _work_sample, (split.learn, start, key)
            final = split.final.since(start)
            if len(final):
                sending(final)
                kinds.append(_FINAL)
                yield None, _work_unmodelled, (final,)
        sampled = len(held)
        rest = chain(chain.from_iterable(b.rows() for b in later), rows)
        while pool.workers and len(ahead) < _AHEAD and not (decided and decided.done()):
            if (batch := take(rest, opts.batch_size)) is None:
                return
            if batch.seqs[-1] >= start:
                ahead.append(batch.since(start))
                kinds.append(_AHEAD_TASK)
                yield None, _work_ahead, (ahead[-1],)

    def release(models: Mapping[str, HostModel]) -> Iterator[Prepared]:
        """The batches fingerprinted ahead not looked at yet: those whose hosts got no model
        sent (their lines now, their rejects later), the others marked to redo."""
        while len(kept) < len(done):
            raw = ahead[len(kept)]
            prepared, hosts = done[len(kept)]
            if hosts.isdisjoint(models):
                kept.append((raw, prepared.rejects))
                sending(raw)
                yield Prepared(prepared.lines, [])
            else:
                kept.append((raw, None))

    with ThreadPoolExecutor(1, thread_name_prefix="models") as thread:
        for result in pool.imap(tasks()):
            kind = kinds.popleft()
            if kind == _LEARN:
                learnt += 1
                for host, pages, sets in result:
                    learner.add_many(host, pages, sets)
            elif kind == _FINAL:
                yield result
            else:
                done.append(result)
            if decided is None and sampled is not None and learnt >= sampled:  # all learnt
                decided = thread.submit(_models_for, es, opts, learner)
            if models is None and decided is not None and decided.done():
                models, stored = decided.result()
                for raw in raws:
                    sending(raw)
            if models is not None:
                yield from release(models)
        if models is None:
            if decided is None:
                decided = thread.submit(_models_for, es, opts, learner)
            models, stored = decided.result()
            for raw in raws:
                sending(raw)
        yield from release(models)
    return _Sample(models, stored, [(w, k) for w, k in held if w >= 0], kept, rest)


def _models_for(
    es: Elasticsearch, opts: IngestOptions, learner: Learner
) -> tuple[dict[str, HostModel], int]:
    """The model of every host seen (those that have one), and how many came from the store.

    By default a host's stored model wins, so that every ingester of an index fingerprints
    a host alike: a host without one gets the model learnt here, stored unless another
    ingester stored one first (then that one). ``relearn``: the models learnt here replace
    the stored ones (hosts seen with too few pages keep theirs).
    """
    version = opts.prepare.params.version
    store = opts.boilerplate_store
    hosts = learner.hosts()
    if not hosts:
        return {}, 0
    learned = learner.models()
    if opts.relearn:
        if learned:
            save_models(es, opts.index, version, learned.values(), store)
        kept = load_models(es, opts.index, version, hosts - set(learned), store)
        return merge_models(kept.values(), learned.values()), len(kept)
    stored = load_models(es, opts.index, version, hosts, store)
    new = [m for host, m in learned.items() if host not in stored]
    if not new:
        return stored, len(stored)
    save_models(es, opts.index, version, new, store, replace=False)
    # re-read: where another ingester stored its model first, that one is every ingester's
    first = load_models(es, opts.index, version, [m.host for m in new], store)
    theirs = sum(model_version(first[m.host]) != model_version(m) for m in new if m.host in first)
    return merge_models(stored.values(), new, first.values()), len(stored) + theirs


class LearnSummary(BaseModel):
    """What ``learn`` did: documents read, hosts seen, and the model stored per host."""

    read: int
    hosts: int
    models: dict[str, str]  # host -> model version
    pages: dict[str, int]  # host -> pages learnt from
    version: str  # the fingerprint version the models are stored under
    text_fields: list[str]
    seconds: float


def learn(es: Elasticsearch, opts: IngestOptions) -> LearnSummary:
    """``indexer learn``: learn the host models of ``opts.index`` from the learning sample of
    the first ``boilerplate_sample`` documents of the inputs (the pages ``ingest`` would learn
    from) and store them (replacing stored ones), so that ingesters started afterwards, in
    parallel, all use them. Creates the index as ``ingest`` would (which records its text
    fields)."""
    started = time.perf_counter()
    read = 0
    pool = _Pool(opts.workers)  # its workers load their kernels meanwhile
    try:
        fields = _index_fields(es, opts)
        config = opts.prepare.model_copy(update={"text_fields": fields})
        pool.configure(config)
        learner = Learner(opts.boilerplate_config)
        rows = read_rows(opts.inputs)
        window = WindowSplit(opts.boilerplate_host_pages, config.max_doc_bytes)

        def tasks() -> Iterator[_Task]:
            nonlocal read
            left = opts.boilerplate_sample
            while left > 0 and (batch := take(rows, min(opts.batch_size, left))) is not None:
                left -= len(batch)
                read += len(batch)
                sample = window.split(batch).learn  # the pages ``ingest`` would learn from
                if len(sample):
                    yield None, _work_learn, (sample,)

        for learnt in pool.imap(tasks()):
            for host, pages, sets in learnt:
                learner.add_many(host, pages, sets)
    finally:
        pool.close()
    models = learner.models()
    if models:
        save_models(es, opts.index, config.params.version, models.values(), opts.boilerplate_store)
    return LearnSummary(
        read=read,
        hosts=len(learner.hosts()),
        models={host: model_version(m) for host, m in sorted(models.items())},
        pages={host: m.pages for host, m in sorted(models.items())},
        version=config.params.version,
        text_fields=list(fields.names),
        seconds=time.perf_counter() - started,
    )


class _Inflight:
    """The raw batches sent and not yet settled, to find a document refused by Elasticsearch."""

    def __init__(self) -> None:
        self._batches: deque[RawBatch] = deque()

    def add(self, batch: RawBatch) -> None:
        if len(batch):
            self._batches.append(batch)

    def drop_below(self, watermark: int) -> None:
        while self._batches and self._batches[0].seqs[-1] < watermark:
            self._batches.popleft()

    def find(self, seq: int) -> RawItem | None:
        for batch in self._batches:
            item = batch.find(seq)
            if item is not None:
                return item
        return None


def ingest(es: Elasticsearch, opts: IngestOptions) -> Summary:
    """Run one ingestion; raises ResumeMismatch, StateInUse (another run holds the state
    file), MappingConflict, or transport errors."""
    with held(opts.state_path):
        return _ingest(es, opts)


def _ingest(es: Elasticsearch, opts: IngestOptions) -> Summary:
    started = time.perf_counter()
    specs = describe_inputs(opts.inputs)
    state = Checkpoint.load(opts.state_path) if opts.resume else None
    if state is not None:
        state.check_resumable(opts.index, specs)
    else:
        state = Checkpoint(index=opts.index, inputs=specs)
    start = state.done
    pool = _Pool(opts.workers)  # forked first: its workers load their kernels meanwhile
    _no_huge_pages()  # in this process only: the workers have forked
    try:
        fields = _index_fields(es, opts)
    except BaseException:
        pool.close()
        raise
    opts = opts.model_copy(
        update={"prepare": opts.prepare.model_copy(update={"text_fields": fields})}
    )
    pool.configure(opts.prepare)
    inflight = _Inflight()
    rows = read_rows(opts.inputs)
    summary = Summary(skipped=start, text_fields=list(fields.names))
    without_text: list[Any] = []  # a sample of the documents rejected for lack of text
    try:
        rejects = RejectsFile(opts.rejects_path, append=opts.resume)
    except BaseException:
        pool.close()
        raise
    watermark = SeqWatermark(start)
    bar = _progress(opts.progress)

    def tasks(sample: _Sample) -> Iterator[_Task | _Done]:
        for worker, key in sample.held:
            yield worker, _work_finish, (key, pool.ref)
        for raw, sent in sample.ahead:  # fingerprinted without models: sent already, or redone
            if sent is None:
                inflight.add(raw)
                yield None, _work_prepare, (raw, pool.ref)
            elif sent:
                yield _Done(Prepared(LineBatch([], [], []), sent))  # its rejects, in their place
        while (batch := take(sample.rest, opts.batch_size)) is not None:
            if batch.seqs[-1] < start:
                continue
            batch = batch.since(start)
            inflight.add(batch)
            yield None, _work_prepare, (batch, pool.ref)

    def prepared() -> Iterator[Prepared]:
        """Every batch's outcome: those fingerprinted ahead whose hosts got no model first
        (as soon as the models are decided), then the others in input order."""
        sample = _Sample({}, 0, [], [], rows)
        if opts.boilerplate:
            sample = yield from _learn(es, opts, pool, rows, start, inflight.add)
        pool.set_models(sample.models)
        summary.boilerplate_hosts = len(sample.models)
        summary.boilerplate_stored = sample.stored
        yield from pool.imap(tasks(sample))

    def batches() -> Iterator[LineBatch]:
        for outcome in prepared():
            summary.read += len(outcome.lines) + len(outcome.rejects)
            for out in outcome.rejects:
                rejects.write(out)
                watermark.settle(out.seq)
                if out.reason.startswith(NO_TEXT_REASON):
                    summary.no_text += 1
                    if len(without_text) < _FIELDS_SAMPLE and out.original is not None:
                        without_text.append(_loads_or_none(out.original))
            if outcome.rejects:
                summary.rejected += len(outcome.rejects)
                bar.update(len(outcome.rejects))
            if len(outcome.lines):
                yield outcome.lines

    last_save = time.monotonic()
    try:
        for chunk in send_lines(es, opts.index, batches(), opts.bulk):
            for result in chunk.failed:
                item = inflight.find(result.seq)
                reason = f"rejected by Elasticsearch ({result.status}): {result.error}"
                data = item.data if item is not None else None
                source, line = (item.source, item.line) if item is not None else ("?", None)
                rejects.write(Reject.of(result.seq, source, line, reason, data, id=result.id))
            summary.rejected += len(chunk.failed)
            summary.indexed += len(chunk.seqs) - len(chunk.failed)
            watermark.settle_many(chunk.seqs)
            bar.update(len(chunk.seqs))
            if time.monotonic() - last_save > 0.5:
                inflight.drop_below(watermark.value)
                rejects.flush()
                state.done = watermark.value
                state.save(opts.state_path)
                last_save = time.monotonic()
        state.done = watermark.value
        state.finished = True
    finally:
        bar.close()
        pool.close()
        rejects.close()
        state.done = watermark.value
        if state.finished:  # nothing left to resume: no state file stays behind
            opts.state_path.unlink(missing_ok=True)
        else:
            state.save(opts.state_path)
    summary.fields_seen = string_fields(without_text)
    summary.seconds = time.perf_counter() - started
    return summary


def _no_huge_pages() -> None:
    """Stop numpy asking the kernel for transparent huge pages for this process's large arrays.

    Where the kernel compacts memory to find them (THP ``defrag`` set to ``madvise``, a
    common default) the first touch of such an array costs system time: the learner's counts
    of a 10,000-page sample took 0.2-0.5 cpu-s instead of 0.05 (docs/indexer.md).
    """
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]

    switch = getattr(multiarray, "_set_madvise_hugepage", None)  # numpy's own, since 1.20
    if switch is not None:
        switch(False)


def _index_fields(es: Elasticsearch, opts: IngestOptions) -> TextFields:
    """Create the index if missing (or check its mapping); the text fields it records."""
    ensure_index(es, opts.index, opts.prepare.params, opts.text_fields)
    return text_fields_for(es, opts.index, opts.text_fields)


class _NoProgress:
    """The progress bar's calls, doing nothing (tqdm is imported only when a bar is shown)."""

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(show: bool) -> Any:
    if not show:
        return _NoProgress()
    from tqdm import tqdm

    return tqdm(unit="doc", smoothing=0.1, dynamic_ncols=True)


#: Documents rejected for lack of text whose fields are counted for the hint.
_FIELDS_SAMPLE = 200


def _loads_or_none(original: str) -> Any:
    try:
        return json.loads(original)
    except ValueError:
        return None
