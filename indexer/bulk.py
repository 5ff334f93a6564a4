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
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from elasticsearch import ApiError, Elasticsearch
from pydantic import BaseModel, Field

__all__ = ["BulkConfig", "ItemResult", "Outgoing", "send"]

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


def _post(es: Elasticsearch, index: str, todo: list[_Line]) -> list[tuple[int, dict[str, Any]]]:
    """One ``_bulk`` request: (status, item info) per line, in order."""
    body = b"".join(line for _, _, line in todo)
    try:
        resp = es.bulk(index=index, body=body, filter_path=_FILTER)
    except ApiError as exc:  # the whole request refused: every item fails with its status
        info = {"error": str(exc)}
        return [(int(exc.status_code or 0), info)] * len(todo)
    items = resp.body.get("items") or []
    if len(items) != len(todo):
        info = {"error": f"bulk answer has {len(items)} items for {len(todo)} sent"}
        return [(0, info)] * len(todo)
    out = []
    for item in items:
        info = next(iter(item.values()))
        out.append((int(info.get("status", 0) or 0), info))
    return out


def _send_chunk(
    es: Elasticsearch, index: str, chunk: list[_Line], cfg: BulkConfig
) -> list[ItemResult]:
    """Send one chunk, retrying 429/5xx items with backoff; one result per line, in order."""
    results: dict[int, ItemResult] = {}
    todo = chunk
    for attempt in range(cfg.max_retries + 1):
        if attempt:
            time.sleep(min(cfg.max_backoff, cfg.initial_backoff * 2 ** (attempt - 1)))
        retry: list[_Line] = []
        for line, (status, info) in zip(todo, _post(es, index, todo), strict=True):
            seq, doc_id, _ = line
            if "error" not in info and 200 <= status < 300:
                results[seq] = ItemResult(seq, doc_id, True, status)
            elif status in RETRY_STATUSES and attempt < cfg.max_retries:
                retry.append(line)
            else:
                results[seq] = ItemResult(seq, doc_id, False, status, _reason(info))
        if not retry:
            break
        todo = retry
    return [results[seq] for seq, _, _ in chunk]


def _chunks(docs: Iterable[Outgoing], size: int, max_bytes: int) -> Iterator[list[_Line]]:
    chunk: list[_Line] = []
    nbytes = 0
    for doc in docs:
        line = b'{"index":{"_id":' + orjson.dumps(doc.id) + b"}}\n" + doc.body + b"\n"
        if chunk and (len(chunk) >= size or nbytes + len(line) > max_bytes):
            yield chunk
            chunk, nbytes = [], 0
        chunk.append((doc.seq, doc.id, line))
        nbytes += len(line)
    if chunk:
        yield chunk


def send(
    es: Elasticsearch, index: str, docs: Iterable[Outgoing], config: BulkConfig | None = None
) -> Iterator[ItemResult]:
    """Index ``docs`` (op ``index``: stable ids overwrite, never duplicate); one result each."""
    cfg = config or BulkConfig()
    window: deque[Future[list[ItemResult]]] = deque()
    with ThreadPoolExecutor(cfg.concurrency, thread_name_prefix="bulk") as pool:
        try:
            for chunk in _chunks(docs, cfg.chunk_size, cfg.max_chunk_bytes):
                window.append(pool.submit(_send_chunk, es, index, chunk, cfg))
                while len(window) >= cfg.concurrency or (window and window[0].done()):
                    yield from window.popleft().result()
            while window:
                yield from window.popleft().result()
        finally:
            for f in window:
                f.cancel()
