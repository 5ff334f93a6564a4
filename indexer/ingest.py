"""The ingestion pipeline behind ``indexer ingest``: read, learn boilerplate, prepare, bulk.

    inputs --read--> raw items --workers: parse/extract/fingerprint--> Ready | Reject
           --streaming_bulk--> indexed | rejected  (+ checkpoint, progress, summary)

Workers run in a process pool and batches stay in input order; at most a few batches per
worker are in flight, so memory stays bounded whatever the input size.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict, Field

from indexer.boilerplate import BoilerplateConfig, HostModel, Learner, merge_models
from indexer.boilerplate_store import DEFAULT_STORE, load_models, model_version, save_models
from indexer.bulk import BulkConfig, send_lines
from indexer.checkpoint import Checkpoint, SeqWatermark, held
from indexer.documents import NO_TEXT_REASON, TextFields, string_fields
from indexer.lines import LineBatch
from indexer.mapping import ensure_index, text_fields_for, with_url_field
from indexer.prepare import (
    PrepareConfig,
    Prepared,
)
from indexer.rejects import Reject, RejectsFile
from indexer.sample import DEFAULT_HOST_PAGES, DEFAULT_SAMPLE, WindowSplit
from indexer.sources import RawBatch, RawItem, Row, describe_inputs, read_rows, take
from indexer.workers import (
    Done,
    Pool,
    Task,
    work_ahead,
    work_finish,
    work_learn,
    work_prepare,
    work_sample,
    work_unmodelled,
)

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
    #: the url field the user named without text fields (None: the one ``text_fields`` has,
    #: else the one the index records, else ``url``)
    url_field: str | None = None
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
    pool: Pool,
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
    (:func:`work_ahead`). Once the models are known, the batches so fingerprinted whose hosts
    got none are yielded at once (without their rejects, which keep their place in input
    order: :attr:`_Sample.ahead`), so that Elasticsearch indexes them while the workers
    finish the sample with the models; ``sending`` is called with each batch at or after
    ``start`` before its lines are yielded (to find the documents that Elasticsearch refuses).

    Returns the per-host models (:func:`_models_for`), how many of them came from the store,
    the sample's batches held by the workers (worker, key) featurised and waiting for those
    models (:func:`work_finish`), the batches fingerprinted ahead, and the input left.
    """
    learner = Learner(opts.boilerplate_config)
    window = WindowSplit(
        opts.boilerplate_host_pages, opts.prepare.max_doc_bytes, opts.prepare.text_fields
    )
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

    def tasks() -> Iterator[Task]:
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
                yield worker, work_sample, (split.learn, start, key)
            final = split.final.since(start)
            if len(final):
                sending(final)
                kinds.append(_FINAL)
                yield None, work_unmodelled, (final,)
        sampled = len(held)
        rest = chain(chain.from_iterable(b.rows() for b in later), rows)
        while pool.workers and len(ahead) < _AHEAD and not (decided and decided.done()):
            if (batch := take(rest, opts.batch_size)) is None:
                return
            if batch.seqs[-1] >= start:
                ahead.append(batch.since(start))
                kinds.append(_AHEAD_TASK)
                yield None, work_ahead, (ahead[-1],)

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
    from; no inputs: of the index's own documents) and store them (replacing stored ones), so
    that ingesters started afterwards, in parallel, all use them, and ``backfill`` too.
    Creates the index as ``ingest`` would (which records its text fields)."""
    started = time.perf_counter()
    read = 0
    pool = Pool(opts.workers)  # its workers load their kernels meanwhile
    try:
        fields = _index_fields(es, opts)
        config = opts.prepare.model_copy(update={"text_fields": fields})
        pool.configure(config)
        learner = Learner(opts.boilerplate_config)
        if opts.inputs:
            rows = read_rows(opts.inputs)
        else:  # the index's own documents (imported here: ``ingest`` never needs it)
            from indexer.backfill import documents_as_rows

            rows = documents_as_rows(es, opts.index, opts.boilerplate_sample)
        window = WindowSplit(opts.boilerplate_host_pages, config.max_doc_bytes, fields)

        def tasks() -> Iterator[Task]:
            nonlocal read
            left = opts.boilerplate_sample
            while left > 0 and (batch := take(rows, min(opts.batch_size, left))) is not None:
                left -= len(batch)
                read += len(batch)
                sample = window.split(batch).learn  # the pages ``ingest`` would learn from
                if len(sample):
                    yield None, work_learn, (sample,)

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
    pool = Pool(opts.workers)  # forked first: its workers load their kernels meanwhile
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

    def tasks(sample: _Sample) -> Iterator[Task | Done]:
        for worker, key in sample.held:
            yield worker, work_finish, (key, pool.ref)
        for raw, sent in sample.ahead:  # fingerprinted without models: sent already, or redone
            if sent is None:
                inflight.add(raw)
                yield None, work_prepare, (raw, pool.ref)
            elif sent:
                yield Done(Prepared(LineBatch([], [], []), sent))  # its rejects, in their place
        while (batch := take(sample.rest, opts.batch_size)) is not None:
            if batch.seqs[-1] < start:
                continue
            batch = batch.since(start)
            inflight.add(batch)
            yield None, work_prepare, (batch, pool.ref)

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
    given = opts.text_fields
    if given is None and opts.url_field is not None:
        given = with_url_field(es, opts.index, opts.url_field)
    ensure_index(es, opts.index, opts.prepare.params, given)
    return text_fields_for(es, opts.index, given)


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
