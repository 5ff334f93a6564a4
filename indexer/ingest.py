"""The ingestion pipeline behind ``indexer ingest``: read, learn boilerplate, prepare, bulk.

    inputs --read--> raw items --workers: parse/extract/fingerprint--> bulk lines | Reject
           --the workers' _bulk requests--> indexed | rejected
           --per task, in input order--> checkpoint, rejects file, progress, summary

Workers run in a process pool and post their own bulk requests (each its own client), so
the documents' bytes go from the main process to a worker and from the worker to
Elasticsearch only; the main process reads the input, hands out tasks and settles their
outcomes in input order. At most a few tasks per worker are in flight, so memory stays
bounded whatever the input size.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing as mp
import os
import pickle
import queue
import shutil
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict, Field

from indexer.boilerplate import BoilerplateConfig, HostModel, Learner, PageSets, merge_models
from indexer.boilerplate_store import DEFAULT_STORE, load_models, model_version, save_models
from indexer.bulk import BulkConfig, ClientSpec, send_batch
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
from indexer.sources import RawBatch, Row, describe_inputs, read_rows, take

__all__ = [
    "DEFAULT_BOILERPLATE_SAMPLE",
    "IngestOptions",
    "LearnSummary",
    "Summary",
    "ingest",
    "learn",
]

#: Pages read by the learning pass: enough for every host with a real share of the input
#: (a host needs ``min_pages`` of them), small next to a bulk load (docs/indexer.md).
DEFAULT_BOILERPLATE_SAMPLE = 10_000


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


@dataclass(slots=True)
class _Target:
    """Where a process posts the bulk requests of what it prepared: a client (``es``, or made
    from ``spec`` in a worker process), the index, the bulk policy, how many requests it
    keeps in flight, and the semaphore that holds all processes' together to
    ``bulk.concurrency`` (None: this process alone posts)."""

    index: str
    bulk: BulkConfig
    inflight: int = 1
    spec: ClientSpec | None = None
    es: Elasticsearch | None = None
    slots: Any = None

    def __getstate__(self) -> tuple[str, BulkConfig, int, ClientSpec | None, Any]:
        # a client does not pickle (a worker makes its own from ``spec``)
        return self.index, self.bulk, self.inflight, self.spec, self.slots

    def __setstate__(self, state: tuple[str, BulkConfig, int, ClientSpec | None, Any]) -> None:
        self.index, self.bulk, self.inflight, self.spec, self.slots = state
        self.es = None


@dataclass(slots=True)
class _Posted:
    """A task's documents settled: all their numbers (ascending), and those not indexed
    (rejects, in input order: the workers' and Elasticsearch's)."""

    seqs: list[int]
    rejects: list[Reject]


_config: PrepareConfig | None = None
_models: Mapping[str, HostModel] = {}
_models_ref: str | None = None  # the models file loaded into ``_models`` (None: no models)
#: learning-sample batches featurised here, awaiting the models (and their raw items)
_held: dict[int, tuple[Featured, RawBatch]] = {}
#: batches after the sample, fingerprinted here without models, awaiting the decision
_ahead: dict[int, tuple[Prepared, RawBatch]] = {}
_target: _Target | None = None
_client: Elasticsearch | None = None
_posting: ThreadPoolExecutor | None = None


def _init_worker(
    config: PrepareConfig, models: Mapping[str, HostModel], target: _Target | None = None
) -> None:
    global _config, _models, _models_ref, _target, _client, _posting
    _config, _models, _models_ref = config, models, None
    _held.clear()
    _ahead.clear()
    _target, _client, _posting = target, None, None
    if target is not None:
        _client = target.es if target.es is not None else target.spec.client()  # type: ignore[union-attr]
        _posting = ThreadPoolExecutor(target.inflight, thread_name_prefix="bulk")
    enable_arrow()  # batch tokenisation in pyarrow's kernels (same tokens, faster)
    enable_kernel()  # or compiled ones (loaded already when forked from the main process)
    warm_number_kernel()  # the number sketch's, likewise


def _stop_posting() -> None:
    """Drop the bulk requests not started (a run that ends early); the current ones finish."""
    global _posting
    if _posting is not None:
        _posting.shutdown(wait=False, cancel_futures=True)
        _posting = None


def _post(prepared: Prepared, raws: list[RawBatch]) -> _Posted:
    """Send a task's lines (a poster thread) and settle its documents: those Elasticsearch
    refused for good become rejects here, where their raw items are."""
    assert _target is not None and _client is not None
    with _target.slots or contextlib.nullcontext():
        chunks = send_batch(_client, _target.index, prepared.lines, _target.bulk)
    failed = [result for chunk in chunks for result in chunk.failed]
    rejects = list(prepared.rejects)
    for result in failed:
        item = next((i for raw in raws if (i := raw.find(result.seq)) is not None), None)
        reason = f"rejected by Elasticsearch ({result.status}): {result.error}"
        data = item.data if item is not None else None
        source, line = (item.source, item.line) if item is not None else ("?", None)
        rejects.append(Reject.of(result.seq, source, line, reason, data, id=result.id))
    if failed and prepared.rejects:
        rejects.sort(key=lambda r: r.seq)
    seqs = prepared.lines.seqs
    if prepared.rejects:
        seqs = sorted([*seqs, *(r.seq for r in prepared.rejects)])
    return _Posted(seqs, rejects)


def _posted(prepared: Prepared, raws: list[RawBatch]) -> Future[_Posted] | _Posted:
    """:func:`_post` in a poster thread (a future), or at once when there is nothing to send."""
    if not len(prepared.lines):
        return _post(prepared, raws)
    assert _posting is not None
    return _posting.submit(_post, prepared, raws)


def _joined(parts: list[Prepared]) -> Prepared:
    if len(parts) == 1:
        return parts[0]
    lines = LineBatch([], [], [])
    rejects: list[Reject] = []
    for part in parts:
        lines.seqs += part.lines.seqs
        lines.ids += part.lines.ids
        lines.lines += part.lines.lines
        rejects += part.rejects
    return Prepared(lines, rejects)


def _use_models(ref: str | None) -> None:
    """Load the host models written by the main process (once per worker and models file)."""
    global _models, _models_ref
    if ref != _models_ref:
        with open(ref, "rb") as f:  # type: ignore[arg-type]  # ref is None only with no models
            _models = pickle.load(f)
        _models_ref = ref


def _work_index(batch: RawBatch, ref: str | None, size: int) -> Future[_Posted] | _Posted:
    """Prepare a task's documents, ``size`` at a time, and post them (one request per
    ``chunk_size`` lines)."""
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    items = batch.items()
    parts = [
        prepare_lines(items[i : i + size], _config, _models) for i in range(0, len(items), size)
    ]
    return _posted(_joined(parts), [batch])


def _work_sample(batch: RawBatch, start: int, key: int) -> list[tuple[str, int, PageSets]]:
    """Featurise a batch of the learning sample, keep it here (under ``key``) for
    :func:`_work_finish`, and return what it teaches the learner (per host, aggregated)."""
    assert _config is not None
    learn, featured = sample_batch(batch.items(), _config, start)
    if featured.out:
        _held[key] = (featured, batch)
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn:
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def _work_ahead(batch: RawBatch, key: int, size: int) -> set[str]:
    """A batch after the learning sample, fingerprinted as if no host had a model and kept
    here (under ``key``); its documents' hosts: the main process has it posted as it is
    (:func:`_work_post_ahead`) if the models settled hold none of them, else redone
    (:func:`_work_redo_ahead`)."""
    assert _config is not None
    items = batch.items()
    parts, hosts = [], set()
    for i in range(0, len(items), size):
        prepared, seen = prepare_unmodelled(items[i : i + size], _config)
        parts.append(prepared)
        hosts |= seen
    _ahead[key] = (_joined(parts), batch)
    return hosts


def _work_post_ahead(key: int) -> Future[_Posted] | _Posted:
    """Post a batch fingerprinted ahead (:func:`_work_ahead`) as it is."""
    prepared, raw = _ahead.pop(key)
    return _posted(prepared, [raw])


def _work_redo_ahead(key: int, ref: str | None, size: int) -> Future[_Posted] | _Posted:
    """Fingerprint a batch held since :func:`_work_ahead` again, with the models, and post it."""
    _, raw = _ahead.pop(key)
    return _work_index(raw, ref, size)


def _work_learn(batch: RawBatch) -> list[tuple[str, int, PageSets]]:
    """What a batch teaches the learner (per host, aggregated); nothing is kept."""
    assert _config is not None
    by_host: dict[str, list[PageSets]] = {}
    for host, sets in learn_batch(batch.items(), _config):
        by_host.setdefault(host, []).append(sets)
    return [(host, len(sets), PageSets.concat(sets)) for host, sets in by_host.items()]


def _work_finish(key: int, ref: str | None = None) -> Future[_Posted] | _Posted:
    """Fingerprint a learning-sample batch held here (:func:`_work_sample`) with the models,
    and post it."""
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    featured, raw = _held.pop(key)
    return _posted(finish_lines(featured, _config, _models), [raw])


def _serve(conn: Connection, config: PrepareConfig, target: _Target | None = None) -> None:
    """A worker process: run each task received on ``conn`` and send back its result.

    A task may answer with a future (its bulk request, in a poster thread): a sender thread
    sends the results back in task order, each once it is known, while the next tasks run.
    """
    _init_worker(config, {}, target)
    results: queue.SimpleQueue[Any] = queue.SimpleQueue()
    sender = threading.Thread(target=_send_results, args=(conn, results), daemon=True)
    sender.start()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            break
        if task is None:
            break
        fn, args = task
        try:
            results.put((True, fn(*args)))
        except BaseException as exc:  # handed to the main process and raised there
            results.put((False, _failure(exc)))
    _stop_posting()
    results.put(None)
    sender.join()


def _send_results(conn: Connection, results: queue.SimpleQueue[Any]) -> None:
    """A worker's thread: send each result put in ``results`` (a future's once it is done)."""
    while (result := results.get()) is not None:
        ok, value = result
        if ok and isinstance(value, Future):
            try:
                result = (True, value.result())
            except BaseException as exc:
                result = (False, _failure(exc))
        try:
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a result that does not pickle: its error instead
            data = pickle.dumps((False, _failure(exc)), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            conn.send_bytes(data)
        except (OSError, ValueError):  # the main process is gone
            return


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
    """

    def __init__(
        self,
        workers: int,
        config: PrepareConfig,
        target: _Target | None = None,
        depth: int = 3,
    ) -> None:
        self.workers = workers
        self.depth = depth  # tasks in flight per worker (with no workers: futures pending)
        self.ref: str | None = None
        self._dir: str | None = None
        self._next = 0
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        if not workers:
            _init_worker(config, {}, target)
            return
        methods = mp.get_all_start_methods()
        # fork is the cheapest start (every module already imported) and safe while this
        # process has a single thread; otherwise forkserver (or spawn).
        method = (
            "fork"
            if "fork" in methods and threading.active_count() == 1
            else "forkserver"
            if "forkserver" in methods
            else "spawn"
        )
        ctx: Any = mp.get_context(method)  # a concrete context (typed as the base class)
        if target is not None:  # kept here: the workers it is handed to open its semaphore
            self._target = target = dataclasses.replace(
                target, slots=ctx.BoundedSemaphore(target.bulk.concurrency)
            )
        enable_kernel()  # loaded (or compiled) once here: forked workers inherit the kernels
        warm_number_kernel()  # the number sketch's, likewise
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs, config, target), daemon=True)
            proc.start()
            theirs.close()
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
            for run, box, name in (
                (_send_tasks, outbox, "tasks"),
                (_read_results, inbox, "results"),
            ):
                thread = threading.Thread(
                    target=run, args=(conn, box), name=f"{name}-{worker}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

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
        got = self._inboxes[worker].get()
        if isinstance(got, BaseException):  # its pipe closed: the worker is gone
            self._procs[worker].join(timeout=1)
            code = self._procs[worker].exitcode
            raise _WorkerError(f"worker process {worker} died (exit code {code})") from got
        ok, value = got
        if not ok:
            raise value
        return value

    def imap(self, tasks: Iterator[_Task]) -> Iterator[Any]:
        """Results of ``fn(*args)`` for each ``(worker, fn, args)``, in order.

        ``worker`` None: the next worker in turn; else that worker (index modulo workers).
        """
        if not self.workers:
            yield from self._imap_here(tasks)
            return
        window: deque[int] = deque()
        for worker, fn, args in tasks:
            if worker is None:
                worker = self._next
                self._next = (self._next + 1) % self.workers
            worker %= self.workers
            self._outboxes[worker].put((fn, args))
            window.append(worker)
            if len(window) >= self.depth * self.workers:
                yield self._recv(window.popleft())
        while window:
            yield self._recv(window.popleft())

    def _imap_here(self, tasks: Iterator[_Task]) -> Iterator[Any]:
        """:meth:`imap` in this process: a task's future (its bulk request) is waited for
        once ``depth`` are pending, so that requests overlap the next tasks here too."""
        window: deque[Any] = deque()
        for _, fn, args in tasks:
            window.append(fn(*args))
            while window and (
                not isinstance(window[0], Future) or window[0].done() or len(window) > self.depth
            ):
                got = window.popleft()
                yield got.result() if isinstance(got, Future) else got
        for got in window:
            yield got.result() if isinstance(got, Future) else got

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
        else:
            _stop_posting()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


#: Documents fingerprinted ahead (no host model) while the models are decided, at most.
_AHEAD = 64 * 256


def _task_size(opts: IngestOptions) -> int:
    """Documents per worker task: a bulk request's worth (``chunk_size``) unless the batches
    are larger (a worker prepares them ``batch_size`` at a time)."""
    return max(opts.batch_size, opts.bulk.chunk_size)


@dataclass(slots=True)
class _Sample:
    """What the learning pass leaves for the ingestion (see :func:`_learn`)."""

    models: dict[str, HostModel]
    stored: int  # models that came from the store
    held: list[tuple[int, int]]  # (worker, key) of the sample's batches awaiting the models
    #: batches after the sample, fingerprinted without models and held by the workers:
    #: (worker, key, their documents' hosts)
    ahead: list[tuple[int, int, set[str]]]


def _learn(
    es: Elasticsearch,
    opts: IngestOptions,
    pool: _Pool,
    rows: Iterator[Row],
    start: int,
) -> _Sample:
    """The learning sample (the first ``boilerplate_sample`` items), parsed and featurised once.

    Returns the per-host models (:func:`_models_for`), how many of them came from the store,
    and the sample's batches held by the workers (worker, key) featurised and waiting for
    those models (:func:`_work_finish`). While the models are decided (a thread: the
    learner's counts, the model store's requests), the workers fingerprint the next batches
    as if no host had a model and keep them (:func:`_work_ahead`); those stand for the
    batches whose hosts got none.
    """
    learner = Learner(opts.boilerplate_config)
    size = _task_size(opts)
    held: list[tuple[int, int]] = []
    ahead: list[tuple[int, int]] = []
    sampled: int | None = None  # the sample's task count, once all are given
    decided: Future[tuple[dict[str, HostModel], int]] | None = None

    def tasks() -> Iterator[_Task]:
        nonlocal sampled
        left = opts.boilerplate_sample
        while left > 0 and (batch := take(rows, min(size, left))) is not None:
            left -= len(batch)
            key = len(held)
            worker = key % max(pool.workers, 1)
            # before the resume point: settled by the earlier run, learnt from only
            held.append((worker if batch.seqs[-1] >= start else -1, key))
            yield worker, _work_sample, (batch, start, key)
        sampled = len(held)
        while pool.workers and len(ahead) * size < _AHEAD and not (decided and decided.done()):
            if (batch := take(rows, size)) is None:
                return
            if batch.seqs[-1] >= start:
                key = len(ahead)
                ahead.append((key % pool.workers, key))
                yield ahead[-1][0], _work_ahead, (batch.since(start), key, opts.batch_size)

    done: list[set[str]] = []
    with ThreadPoolExecutor(1, thread_name_prefix="models") as thread:
        for i, result in enumerate(pool.imap(tasks())):
            if sampled is None or i < sampled:
                for host, pages, sets in result:
                    learner.add_many(host, pages, sets)
            else:
                done.append(result)
            if decided is None and sampled is not None and i + 1 >= sampled:  # all learnt
                decided = thread.submit(_models_for, es, opts, learner)
        if decided is None:
            decided = thread.submit(_models_for, es, opts, learner)
        models, stored = decided.result()
    return _Sample(
        models,
        stored,
        [(w, k) for w, k in held if w >= 0],
        [(w, k, hosts) for (w, k), hosts in zip(ahead, done, strict=True)],
    )


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
    """``indexer learn``: learn the host models of ``opts.index`` from the first
    ``boilerplate_sample`` documents of the inputs and store them (replacing stored ones),
    so that ingesters started afterwards, in parallel, all use them. Creates the index as
    ``ingest`` would (which records its text fields)."""
    started = time.perf_counter()
    ensure_index(es, opts.index, opts.prepare.params, opts.text_fields)
    fields = text_fields_for(es, opts.index, opts.text_fields)
    config = opts.prepare.model_copy(update={"text_fields": fields})
    learner = Learner(opts.boilerplate_config)
    rows = read_rows(opts.inputs)
    pool = _Pool(opts.workers, config)
    read = 0

    def tasks() -> Iterator[_Task]:
        nonlocal read
        left = opts.boilerplate_sample
        while left > 0 and (batch := take(rows, min(opts.batch_size, left))) is not None:
            left -= len(batch)
            read += len(batch)
            yield None, _work_learn, (batch,)

    try:
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
    with ThreadPoolExecutor(1, thread_name_prefix="index") as thread:  # ended before the fork
        index_ready = thread.submit(_index_fields, es, opts)
        if opts.workers:  # meanwhile the compiled kernels, which forked workers inherit
            enable_kernel()
            warm_number_kernel()
        fields = index_ready.result()
    opts = opts.model_copy(
        update={"prepare": opts.prepare.model_copy(update={"text_fields": fields})}
    )
    rows = read_rows(opts.inputs)
    pool = _Pool(opts.workers, opts.prepare, *_posting_of(es, opts))
    _no_huge_pages()  # in this process only: the workers have forked
    try:
        sample = _learn(es, opts, pool, rows, start) if opts.boilerplate else _Sample({}, 0, [], [])
    except BaseException:
        pool.close()
        raise
    models = sample.models
    pool.set_models(models)
    summary = Summary(
        skipped=start,
        boilerplate_hosts=len(models),
        boilerplate_stored=sample.stored,
        text_fields=list(fields.names),
    )
    without_text: list[Any] = []  # a sample of the documents rejected for lack of text
    rejects = RejectsFile(opts.rejects_path, append=opts.resume)
    watermark = SeqWatermark(start)
    bar = _progress(opts.progress)

    size = _task_size(opts)

    def tasks() -> Iterator[_Task]:
        for worker, key in sample.held:  # the learning sample, featurised in the workers
            yield worker, _work_finish, (key, pool.ref)
        for worker, key, hosts in sample.ahead:  # fingerprinted without models: kept if none
            if hosts.isdisjoint(models):
                yield worker, _work_post_ahead, (key,)
            else:
                yield worker, _work_redo_ahead, (key, pool.ref, opts.batch_size)
        while (batch := take(rows, size)) is not None:
            if batch.seqs[-1] >= start:
                yield None, _work_index, (batch.since(start), pool.ref, opts.batch_size)

    def results() -> Iterator[_Posted]:
        todo = tasks()
        # the first task's request alone: the fields new to the index are mapped from it
        # (dynamic mapping) before the workers' requests run side by side
        yield from pool.imap(islice(todo, 1))
        yield from pool.imap(todo)

    last_save = time.monotonic()
    try:
        for posted in results():
            for out in posted.rejects:
                rejects.write(out)
                if out.reason.startswith(NO_TEXT_REASON):
                    summary.no_text += 1
                    if len(without_text) < _FIELDS_SAMPLE and out.original is not None:
                        without_text.append(_loads_or_none(out.original))
            summary.read += len(posted.seqs)
            summary.rejected += len(posted.rejects)
            summary.indexed += len(posted.seqs) - len(posted.rejects)
            watermark.settle_many(posted.seqs)
            bar.update(len(posted.seqs))
            if time.monotonic() - last_save > 0.5:
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


def _posting_of(es: Elasticsearch, opts: IngestOptions) -> tuple[_Target, int]:
    """Where the pool's processes post their bulk requests, and the tasks each keeps in
    flight: ``concurrency`` requests in all, shared among the workers (a semaphore holds
    them to it), or, with no workers, this process posting with ``es`` itself."""
    if not opts.workers:
        return _Target(opts.index, opts.bulk, opts.bulk.concurrency, es=es), opts.bulk.concurrency
    each = -(-opts.bulk.concurrency // opts.workers)
    return _Target(opts.index, opts.bulk, each, spec=ClientSpec.of(es)), 2 + each


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
