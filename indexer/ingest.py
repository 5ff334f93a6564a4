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
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.pool import AsyncResult
from pathlib import Path

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict, Field

from indexer.boilerplate import BoilerplateConfig, HostModel, Learner, merge_models
from indexer.boilerplate_store import DEFAULT_STORE, load_models, save_models
from indexer.bulk import BulkConfig, send
from indexer.checkpoint import Checkpoint, SeqWatermark
from indexer.mapping import ensure_index
from indexer.prepare import PrepareConfig, Ready, learn_batch, prepare_batch
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


def _init_worker(config: PrepareConfig, models: Mapping[str, HostModel]) -> None:
    global _config, _models
    _config, _models = config, models


def _work_prepare(items: list[RawItem]) -> list[Ready | Reject]:
    assert _config is not None
    return prepare_batch(items, _config, _models)


def _work_learn(items: list[RawItem]) -> list[tuple[str, object, object]]:
    assert _config is not None
    return learn_batch(items, _config)  # type: ignore[return-value]


class _Pool:
    """A process pool (or, with 0 workers, the calling process) mapping batches in order."""

    def __init__(
        self, workers: int, config: PrepareConfig, models: Mapping[str, HostModel]
    ) -> None:
        self.workers = workers
        if workers:
            ctx = mp.get_context(
                "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
            )
            self.pool = ctx.Pool(workers, initializer=_init_worker, initargs=(config, dict(models)))
        else:
            _init_worker(config, models)

    def imap(
        self, fn: Callable[[list[RawItem]], list], batches: Iterator[list[RawItem]]
    ) -> Iterator[list]:  # type: ignore[type-arg]
        if not self.workers:
            yield from map(fn, batches)
            return
        window: deque[AsyncResult[list]] = deque()  # type: ignore[type-arg]
        for batch in batches:
            window.append(self.pool.apply_async(fn, (batch,)))
            if len(window) >= 3 * self.workers:
                yield window.popleft().get()
        while window:
            yield window.popleft().get()

    def close(self) -> None:
        if self.workers:
            self.pool.terminate()
            self.pool.join()


def _batches(items: Iterator[RawItem], size: int) -> Iterator[list[RawItem]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def _learn(es: Elasticsearch, opts: IngestOptions) -> dict[str, HostModel]:
    """First pass over a sample: per-host furniture, merged over stored models and saved."""
    learner = Learner(opts.boilerplate_config)
    sample = itertools.islice(read_items(opts.inputs), opts.boilerplate_sample)
    pool = _Pool(opts.workers, opts.prepare, {})
    try:
        for result in pool.imap(_work_learn, _batches(sample, opts.batch_size)):
            for host, sim, mh in result:
                learner.add(host, sim, mh)  # type: ignore[arg-type]
    finally:
        pool.close()
    learned = learner.models()
    version = opts.prepare.params.version
    if learned:
        save_models(es, opts.index, version, learned.values(), opts.boilerplate_store)
    hosts = set(learner._sim) - set(learned)
    stored = load_models(es, opts.index, version, hosts, opts.boilerplate_store) if hosts else {}
    return merge_models(stored.values(), learned.values())


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
    models = _learn(es, opts) if opts.boilerplate else {}
    summary = Summary(skipped=start, boilerplate_hosts=len(models))
    rejects = RejectsFile(opts.rejects_path, append=opts.resume)
    watermark = SeqWatermark(start)
    inflight: dict[int, RawItem] = {}
    pool = _Pool(opts.workers, opts.prepare, models)

    from tqdm import tqdm

    bar = tqdm(unit="doc", disable=not opts.progress, smoothing=0.1, dynamic_ncols=True)

    def settle(seq: int) -> None:
        inflight.pop(seq, None)
        watermark.settle(seq)

    def fresh_items() -> Iterator[RawItem]:
        for item in read_items(opts.inputs):
            if item.seq >= start:
                inflight[item.seq] = item
                yield item

    def readies() -> Iterator[Ready]:
        for outcomes in pool.imap(_work_prepare, _batches(fresh_items(), opts.batch_size)):
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
