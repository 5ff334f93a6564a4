"""The bulk path: documents to Elasticsearch through the official ``streaming_bulk`` helper.

Items refused with 429 (queue full) or 5xx (node trouble) are retried with exponential
backoff by the helper, whole requests too; what still fails, or fails for good (mapping
errors, 400s), comes back as a per-item failure with Elasticsearch's reason. Every item
sent yields exactly one :class:`ItemResult`, so callers can keep ``read == indexed + rejected``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from elasticsearch import Elasticsearch, helpers
from pydantic import BaseModel, Field

__all__ = ["BulkConfig", "ItemResult", "Outgoing", "send"]

RETRY_STATUSES = (429, 500, 502, 503, 504)


class BulkConfig(BaseModel):
    """Chunking and retry policy of the bulk path."""

    chunk_size: int = Field(500, ge=1, description="documents per bulk request")
    max_chunk_bytes: int = Field(20 * 1024 * 1024, ge=1024, description="bytes per bulk request")
    max_retries: int = Field(8, ge=0, description="retries of an item refused with 429/5xx")
    initial_backoff: float = Field(0.5, gt=0, description="seconds before the first retry")
    max_backoff: float = Field(30.0, gt=0, description="longest wait between retries")


class Outgoing(Protocol):
    """One document to index: its input sequence number, id and serialized ``_source``."""

    seq: int
    id: str
    body: bytes


class ItemResult(BaseModel):
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


def send(
    es: Elasticsearch, index: str, docs: Iterable[Outgoing], config: BulkConfig | None = None
) -> Iterator[ItemResult]:
    """Index ``docs`` (op ``index``: stable ids overwrite, never duplicate); one result each."""
    cfg = config or BulkConfig()
    pending: dict[str, deque[int]] = defaultdict(deque)

    def actions() -> Iterator[Outgoing]:
        for doc in docs:
            pending[doc.id].append(doc.seq)
            yield doc

    def expand(doc: Outgoing) -> tuple[dict[str, Any], bytes]:
        return {"index": {"_index": index, "_id": doc.id}}, doc.body

    for ok, item in helpers.streaming_bulk(
        es,
        actions(),
        chunk_size=cfg.chunk_size,
        max_chunk_bytes=cfg.max_chunk_bytes,
        expand_action_callback=expand,  # type: ignore[arg-type]
        raise_on_error=False,
        raise_on_exception=False,
        max_retries=cfg.max_retries,
        initial_backoff=cfg.initial_backoff,
        max_backoff=cfg.max_backoff,
        retry_on_status=RETRY_STATUSES,
    ):
        info = next(iter(item.values()))
        doc_id = str(info.get("_id"))
        seqs = pending[doc_id]
        seq = seqs.popleft()
        if not seqs:
            del pending[doc_id]
        yield ItemResult(
            seq=seq,
            id=doc_id,
            ok=ok,
            status=int(info.get("status", 0) or 0),
            error=None if ok else _reason(info),
        )
