"""The ingestion pipeline behind ``indexer ingest``: read, learn boilerplate, prepare, bulk.

    inputs --read--> raw items --workers: parse/extract/fingerprint--> Ready | Reject
           --streaming_bulk--> indexed | rejected  (+ checkpoint, progress, summary)

Workers run in a process pool and batches stay in input order; at most a few batches per
worker are in flight, so memory stays bounded whatever the input size.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.pool import AsyncResult
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict, Field

from indexer.boilerplate import BoilerplateConfig, HostModel, Learner, merge_models
from indexer.boilerplate_store import DEFAULT_STORE, load_models, save_models
from indexer.bulk import BulkConfig, send
from indexer.checkpoint import Checkpoint, SeqWatermark
from indexer.mapping import ensure_index
from indexer.prepare import (
    Featured,
    PrepareConfig,
    Ready,
    finish_batch,
    prepare_batch,
    sample_batch,
)
from indexer.rejects import Reject, RejectsFile
from indexer.sources import RawItem, describe_inputs, read_items

__all__ = ["DEFAULT_BOILERPLATE_SAMPLE", "IngestOptions", "Summary", "ingest"]

#: Pages read by the learning pass: enough for every host with a real share of the input
#: (a host needs ``min_pages`` of them), small next to a bulk load (measured in docs/indexer.md).
DEFAULT_BOILERPLATE_SAMPLE = 10_000


class IngestOptions(BaseModel):
    """Everything ``ingest`` needs to know (the CLI fills it from its flags)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str
    inputs: list[str]
    rejects_path: Path
    state_path: Path
    resume: bool = False
    prepare: PrepareConfig = PrepareConfig()
    bulk: BulkConfig = BulkConfig()
    boilerplate: bool = True
    boilerplate_config: BoilerplateConfig = BoilerplateConfig()
    boilerplate_sample: int = Field(
        DEFAULT_BOILERPLATE_SAMPLE, ge=0, description="pages read to learn host models"
    )
    boilerplate_store: str = DEFAULT_STORE
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

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0


# --- worker processes -------------------------------------------------------------------------

_config: PrepareConfig | None = None
_models: Mapping[str, HostModel] = {}
_models_ref: str | None = None  # the models file loaded into ``_models`` (None: no models)


def _init_worker(config: PrepareConfig, models: Mapping[str, HostModel]) -> None:
    global _config, _models, _models_ref
    _config, _models, _models_ref = config, models, None


def _use_models(ref: str | None) -> None:
    """Load the host models written by the main process (once per worker and models file)."""
    global _models, _models_ref
    if ref != _models_ref:
        with open(ref, "rb") as f:  # type: ignore[arg-type]  # ref is None only with no models
            _models = pickle.load(f)
        _models_ref = ref


def _work_prepare(items: list[RawItem], ref: str | None = None) -> list[Ready | Reject]:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return prepare_batch(items, _config, _models)


def _work_sample(items: list[RawItem], start: int) -> tuple[list[tuple[str, Any, Any]], Featured]:
    assert _config is not None
    return sample_batch(items, _config, start)


def _work_finish(batch: Featured, ref: str | None = None) -> list[Ready | Reject]:
    assert _config is not None
    if ref is not None:
        _use_models(ref)
    return finish_batch(batch, _config, _models)


class _Pool:
    """A process pool (or, with 0 workers, the calling process) mapping tasks in order.

    One pool serves the learning sample and the ingestion: host models learnt meanwhile are
    handed to the workers through a file (:meth:`set_models`), loaded once per worker.
    """

    def __init__(self, workers: int, config: PrepareConfig) -> None:
        self.workers = workers
        self.ref: str | None = None
        self._dir: str | None = None
        if workers:
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
            self.pool = mp.get_context(method).Pool(
                workers, initializer=_init_worker, initargs=(config, {})
            )
        else:
            _init_worker(config, {})

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

    def imap(self, tasks: Iterator[tuple[Callable[..., Any], tuple[Any, ...]]]) -> Iterator[Any]:
        """Results of ``fn(*args)`` for each task, in order, a few tasks per worker in flight."""
        if not self.workers:
            for fn, args in tasks:
                yield fn(*args)
            return
        window: deque[AsyncResult[Any]] = deque()
        for fn, args in tasks:
            window.append(self.pool.apply_async(fn, args))
            if len(window) >= 3 * self.workers:
                yield window.popleft().get()
        while window:
            yield window.popleft().get()

    def close(self) -> None:
        if self.workers:
            self.pool.terminate()
            self.pool.join()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


def _batches(items: Iterator[RawItem], size: int) -> Iterator[list[RawItem]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def _learn(
    es: Elasticsearch,
    opts: IngestOptions,
    pool: _Pool,
    items: Iterator[RawItem],
    start: int,
) -> tuple[dict[str, HostModel], list[Featured]]:
    """The learning sample (the first ``boilerplate_sample`` items), parsed and featurised once.

    Returns the per-host models (learnt from the sample, merged over stored ones for hosts
    seen without enough pages, and saved) and the sample's batches at or after ``start``,
    featurised and waiting for those models (:func:`finish_batch`).
    """
    learner = Learner(opts.boilerplate_config)
    sample = itertools.islice(items, opts.boilerplate_sample)
    pending: list[Featured] = []
    tasks = ((_work_sample, (b, start)) for b in _batches(sample, opts.batch_size))
    for learn, featured in pool.imap(tasks):
        for host, sim, mh in learn:
            learner.add(host, sim, mh)
        if featured.out:
            pending.append(featured)
    learned = learner.models()
    version = opts.prepare.params.version
    if learned:
        save_models(es, opts.index, version, learned.values(), opts.boilerplate_store)
    hosts = set(learner._sim) - set(learned)
    stored = load_models(es, opts.index, version, hosts, opts.boilerplate_store) if hosts else {}
    return merge_models(stored.values(), learned.values()), pending


def ingest(es: Elasticsearch, opts: IngestOptions) -> Summary:
    """Run one ingestion; raises ResumeMismatch, MappingConflict, or transport errors."""
    started = time.perf_counter()
    specs = describe_inputs(opts.inputs)
    state = Checkpoint.load(opts.state_path) if opts.resume else None
    if state is not None:
        state.check_resumable(opts.index, specs)
    else:
        state = Checkpoint(index=opts.index, inputs=specs)
    start = state.done
    ensure_index(es, opts.index, opts.prepare.params)
    inflight: dict[int, RawItem] = {}

    def fresh(items: Iterator[RawItem]) -> Iterator[RawItem]:
        for item in items:
            if item.seq >= start:
                inflight[item.seq] = item
            yield item

    items = fresh(read_items(opts.inputs))
    pool = _Pool(opts.workers, opts.prepare)
    try:
        models, pending = _learn(es, opts, pool, items, start) if opts.boilerplate else ({}, [])
    except BaseException:
        pool.close()
        raise
    pool.set_models(models)
    summary = Summary(skipped=start, boilerplate_hosts=len(models))
    rejects = RejectsFile(opts.rejects_path, append=opts.resume)
    watermark = SeqWatermark(start)

    from tqdm import tqdm

    bar = tqdm(unit="doc", disable=not opts.progress, smoothing=0.1, dynamic_ncols=True)

    def settle(seq: int) -> None:
        inflight.pop(seq, None)
        watermark.settle(seq)

    def tasks() -> Iterator[tuple[Callable[..., Any], tuple[Any, ...]]]:
        while pending:  # the learning sample: parsed and featurised already
            yield _work_finish, (pending.pop(0), pool.ref)
        rest = (item for item in items if item.seq >= start)
        for batch in _batches(rest, opts.batch_size):
            yield _work_prepare, (batch, pool.ref)

    def readies() -> Iterator[Ready]:
        for outcomes in pool.imap(tasks()):
            summary.read += len(outcomes)
            refused = 0
            for out in outcomes:
                if isinstance(out, Reject):
                    rejects.write(out)
                    refused += 1
                    settle(out.seq)
                else:
                    yield out
            if refused:
                summary.rejected += refused
                bar.update(refused)

    last_save = time.monotonic()
    shown = 0  # results not yet shown on the bar (updated per chunk, not per document)
    try:
        for result in send(es, opts.index, readies(), opts.bulk):
            if result.ok:
                summary.indexed += 1
            else:
                item = inflight.get(result.seq)
                reason = f"rejected by Elasticsearch ({result.status}): {result.error}"
                data = item.data if item is not None else None
                source, line = (item.source, item.line) if item is not None else ("?", None)
                rejects.write(Reject.of(result.seq, source, line, reason, data, id=result.id))
                summary.rejected += 1
            settle(result.seq)
            shown += 1
            if shown >= 256:
                bar.update(shown)
                shown = 0
            if time.monotonic() - last_save > 0.5:
                rejects.flush()
                state.done = watermark.value
                state.save(opts.state_path)
                last_save = time.monotonic()
        state.done = watermark.value
        state.finished = True
    finally:
        bar.update(shown)
        bar.close()
        pool.close()
        rejects.close()
        state.done = watermark.value
        state.save(opts.state_path)
    summary.seconds = time.perf_counter() - started
    return summary
