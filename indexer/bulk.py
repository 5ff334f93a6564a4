"""The bulk path: pre-serialised NDJSON bodies to Elasticsearch's ``_bulk``, a few in flight.

Workers serialise each ``_source``; here only the action line is added and the bytes of a
chunk are joined and posted as they are (no per-document dicts, no re-serialisation), with
``filter_path`` so the answer carries just each item's status and error. Up to
``concurrency`` requests are in flight (threads), so preparing the next chunk overlaps the
previous request and Elasticsearch's write threads can work on two requests at once.

Items refused with 429 (queue full) or 5xx (node trouble) are retried with exponential
backoff, whole requests refused with such a status too (the semantics of the official
``streaming_bulk`` helper with ``retry_on_status``); what still fails, or fails for good
(mapping errors, 400s), comes back as a per-item failure with Elasticsearch's reason.
Connection failures are retried by the client and otherwise raised. Every item sent
yields exactly one :class:`ItemResult`, in input order, so callers can keep
``read == indexed + rejected``.

:func:`send_lines` is the batch form used by ``indexer ingest``: it takes ready NDJSON lines
(action + ``_source``, built by the workers) in batches of parallel lists and yields one
:class:`ChunkResult` per request, so the main process does no per-document work when a
chunk is accepted whole (Elasticsearch's ``errors: false``).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Protocol

from elasticsearch import ApiError, Elasticsearch
from pydantic import BaseModel, Field

from indexer.lines import LineBatch, action_line

__all__ = [
    "BulkConfig",
    "ChunkResult",
    "ItemResult",
    "LineBatch",
    "Outgoing",
    "action_line",
    "send",
    "send_lines",
]

RETRY_STATUSES = (429, 500, 502, 503, 504)
_FILTER = "errors,items.*.status,items.*.error"


class BulkConfig(BaseModel):
    """Chunking, concurrency and retry policy of the bulk path."""

    chunk_size: int = Field(500, ge=1, description="documents per bulk request")
    max_chunk_bytes: int = Field(20 * 1024 * 1024, ge=1024, description="bytes per bulk request")
    concurrency: int = Field(2, ge=1, description="bulk requests in flight")
    max_retries: int = Field(8, ge=0, description="retries of an item refused with 429/5xx")
    initial_backoff: float = Field(0.5, gt=0, description="seconds before the first retry")
    max_backoff: float = Field(30.0, gt=0, description="longest wait between retries")


class Outgoing(Protocol):
    """One document to index: its input sequence number, id and serialized ``_source``."""

    seq: int
    id: str
    body: bytes


@dataclass(slots=True)
class ItemResult:
    """What Elasticsearch finally said about one document."""

    seq: int
    id: str
    ok: bool
    status: int
    error: str | None = None


def _reason(info: dict[str, Any]) -> str:
    error = info.get("error")
    if isinstance(error, dict):
        reason = f"{error.get('type', 'error')}: {error.get('reason', '')}"
        cause = error.get("caused_by")
        if isinstance(cause, dict):
            reason += f" (caused by {cause.get('type')}: {cause.get('reason')})"
        return reason
    return str(error)


_Line = tuple[int, str, bytes]  # seq, id, action line + source line


@dataclass(slots=True)
class ChunkResult:
    """What Elasticsearch said about one chunk: its documents, and those that failed."""

    seqs: list[int]  # every document of the chunk, in input order
    failed: list[ItemResult]  # the ones not indexed (empty when the chunk went in whole)


_ALL_OK: list[tuple[int, dict[str, Any]]] = []  # _post's answer when every item went in


def _post(es: Elasticsearch, index: str, body: bytes, n: int) -> list[tuple[int, dict[str, Any]]]:
    """One ``_bulk`` request: (status, item info) per line, in order ([] when all went in)."""
    try:
        # the NDJSON bytes go as they are (the client's annotation names only its own shapes)
        resp = es.bulk(index=index, body=body, filter_path=_FILTER)  # type: ignore[arg-type]
    except ApiError as exc:  # the whole request refused: every item fails with its status
        info = {"error": str(exc)}
        return [(int(exc.status_code or 0), info)] * n
    if resp.body.get("errors") is False and len(resp.body.get("items") or ()) == n:
        return _ALL_OK
    items = resp.body.get("items") or []
    if len(items) != n:
        info = {"error": f"bulk answer has {len(items)} items for {n} sent"}
        return [(0, info)] * n
    out = []
    for item in items:
        info = next(iter(item.values()))
        out.append((int(info.get("status", 0) or 0), info))
    return out


def _send_chunk(es: Elasticsearch, index: str, batch: LineBatch, cfg: BulkConfig) -> ChunkResult:
    """Send one chunk, retrying 429/5xx items with backoff; the items that failed for good."""
    failed: list[ItemResult] = []
    body, n = b"".join(batch.lines), len(batch)
    todo: list[_Line] | None = None  # per-item lines, built only when some item did not go in
    for attempt in range(cfg.max_retries + 1):
        if attempt:
            time.sleep(min(cfg.max_backoff, cfg.initial_backoff * 2 ** (attempt - 1)))
        answer = _post(es, index, body, n)
        if answer is _ALL_OK:
            break
        if todo is None:
            todo = list(zip(batch.seqs, batch.ids, batch.lines, strict=True))
        retry: list[_Line] = []
        for line, (status, info) in zip(todo, answer, strict=True):
            seq, doc_id, _ = line
            if "error" not in info and 200 <= status < 300:
                continue
            if status in RETRY_STATUSES and attempt < cfg.max_retries:
                retry.append(line)
            else:
                failed.append(ItemResult(seq, doc_id, False, status, _reason(info)))
        if not retry:
            break
        todo = retry
        body, n = b"".join(line for _, _, line in todo), len(todo)
    failed.sort(key=lambda r: r.seq)
    return ChunkResult(batch.seqs, failed)


def _line_chunks(batches: Iterable[LineBatch], size: int, max_bytes: int) -> Iterator[LineBatch]:
    """Re-cut batches into chunks of at most ``size`` documents and ``max_bytes`` bytes."""
    seqs: list[int] = []
    ids: list[str] = []
    lines: list[bytes] = []
    nbytes = 0
    for batch in batches:
        i, n = 0, len(batch)
        while i < n:
            # as many lines as fit (whole slices; a line alone may exceed max_bytes)
            j = min(n, i + size - len(seqs))
            sizes = list(accumulate(map(len, batch.lines[i:j]), initial=nbytes))
            fit = bisect_right(sizes, max_bytes) - 1  # lines of [i, j) that fit
            if fit == 0 and not seqs:
                fit = 1
            j = i + fit
            seqs += batch.seqs[i:j]
            ids += batch.ids[i:j]
            lines += batch.lines[i:j]
            nbytes = sizes[fit]
            i = j
            if len(seqs) >= size or i < n:
                yield LineBatch(seqs, ids, lines)
                seqs, ids, lines, nbytes = [], [], [], 0
    if seqs:
        yield LineBatch(seqs, ids, lines)


def _as_batches(docs: Iterable[Outgoing], size: int) -> Iterator[LineBatch]:
    batch = LineBatch([], [], [])
    for doc in docs:
        batch.seqs.append(doc.seq)
        batch.ids.append(doc.id)
        batch.lines.append(action_line(doc.id, doc.body))
        if len(batch) >= size:
            yield batch
            batch = LineBatch([], [], [])
    if len(batch):
        yield batch


def send_lines(
    es: Elasticsearch, index: str, batches: Iterable[LineBatch], config: BulkConfig | None = None
) -> Iterator[ChunkResult]:
    """Index ready NDJSON lines, re-cut into chunks; one :class:`ChunkResult` per chunk, in order.

    Op ``index``: stable ids overwrite, never duplicate.
    """
    cfg = config or BulkConfig()
    window: deque[Future[ChunkResult]] = deque()
    chunks = _line_chunks(batches, cfg.chunk_size, cfg.max_chunk_bytes)
    with ThreadPoolExecutor(cfg.concurrency, thread_name_prefix="bulk") as pool:
        try:
            chunk = next(chunks, None)
            while chunk is not None:
                window.append(pool.submit(_send_chunk, es, index, chunk, cfg))
                # the next chunk is read while the requests are in flight (its producer, the
                # workers, need not wait for a request to end before handing it over)
                chunk = next(chunks, None)
                while len(window) >= cfg.concurrency or (window and window[0].done()):
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        finally:
            for f in window:
                f.cancel()


def send(
    es: Elasticsearch, index: str, docs: Iterable[Outgoing], config: BulkConfig | None = None
) -> Iterator[ItemResult]:
    """Index ``docs`` (op ``index``: stable ids overwrite, never duplicate); one result each."""
    cfg = config or BulkConfig()
    ids: dict[int, str] = {}

    def tracked() -> Iterator[LineBatch]:
        for batch in _as_batches(docs, cfg.chunk_size):
            ids.update(zip(batch.seqs, batch.ids, strict=True))
            yield batch

    for chunk in send_lines(es, index, tracked(), cfg):
        failed = {r.seq: r for r in chunk.failed}
        for seq in chunk.seqs:
            doc_id = ids.pop(seq)
            yield failed.get(seq) or ItemResult(seq, doc_id, True, 200)
