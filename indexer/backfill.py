"""Backfill: add fingerprints to an existing index's documents, without reindexing from source.

Scans, under a point in time with ``search_after``, the documents whose ``collapse_fp.version``
is not the current one (missing, or an older algorithm), fingerprints their text fields (minus
their host's stored boilerplate) and writes ``collapse_fp`` back with bulk partial updates
guarded by ``if_seq_no``/``if_primary_term``: a document changed meanwhile is left alone (409)
and picked up by the next run. Resumable by construction: a run after an interruption finds
only the documents still lacking the current version.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from elasticsearch import Elasticsearch, helpers
from pydantic import BaseModel

from indexer.boilerplate import fingerprint_excluding
from indexer.boilerplate_store import DEFAULT_STORE, load_models
from indexer.documents import DEFAULT_TEXT_FIELDS, DocumentError, document_text, host_of
from indexer.fingerprints import FingerprintParams
from indexer.mapping import FINGERPRINT_FIELD, ensure_index

__all__ = ["BackfillSummary", "backfill", "stale_query"]


class BackfillSummary(BaseModel):
    """Scanned = updated + no_text + conflicts + failed."""

    scanned: int = 0
    updated: int = 0
    no_text: int = 0
    conflicts: int = 0
    failed: int = 0
    seconds: float = 0.0


def stale_query(version: str) -> dict[str, Any]:
    """Documents without a fingerprint of ``version``."""
    return {"bool": {"must_not": [{"term": {f"{FINGERPRINT_FIELD}.version": version}}]}}


def _pages(
    es: Elasticsearch, index: str, query: dict[str, Any], size: int, fields: list[str]
) -> Iterator[list[dict[str, Any]]]:
    pit = es.open_point_in_time(index=index, keep_alive="5m").body["id"]
    try:
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": size,
                "query": query,
                "pit": {"id": pit, "keep_alive": "5m"},
                "sort": [{"_shard_doc": "asc"}],
                "_source": fields,
                "seq_no_primary_term": True,
            }
            if after is not None:
                body["search_after"] = after
            answer = es.search(**body).body
            pit = answer.get("pit_id", pit)
            hits = answer["hits"]["hits"]
            if not hits:
                return
            yield hits
            after = hits[-1]["sort"]
    finally:
        es.options(ignore_status=404).close_point_in_time(id=pit)


def backfill(
    es: Elasticsearch,
    index: str,
    params: FingerprintParams | None = None,
    *,
    fields: tuple[str, ...] = DEFAULT_TEXT_FIELDS,
    page_size: int = 500,
    store: str = DEFAULT_STORE,
) -> BackfillSummary:
    """Fingerprint every document of ``index`` lacking the current version (see module doc)."""
    p = params or FingerprintParams()
    started = time.perf_counter()
    ensure_index(es, index, p)
    summary = BackfillSummary()
    models: dict[str, Any] = {}
    for hits in _pages(es, index, stale_query(p.version), page_size, [*fields, "url"]):
        summary.scanned += len(hits)
        good: list[tuple[dict[str, Any], str, str | None]] = []
        for hit in hits:
            source = hit.get("_source", {})
            try:
                good.append((hit, document_text(source, fields), host_of(source.get("url"))))
            except DocumentError:
                summary.no_text += 1
        hosts = {h for _, _, h in good if h and h not in models}
        if hosts:
            models.update({h: None for h in hosts})
            models.update(load_models(es, index, p.version, hosts, store))
        if not good:
            continue
        arrays, _ = fingerprint_excluding(
            [t for _, t, _ in good], p, [models.get(h) if h else None for _, _, h in good]
        )
        actions = [
            {
                "_op_type": "update",
                "_index": hit["_index"],
                "_id": hit["_id"],
                "if_seq_no": hit["_seq_no"],
                "if_primary_term": hit["_primary_term"],
                "doc": {FINGERPRINT_FIELD: arrays.record(i).to_es()},
            }
            for i, (hit, _, _) in enumerate(good)
        ]
        for ok, item in helpers.streaming_bulk(
            es,
            actions,
            raise_on_error=False,
            raise_on_exception=False,
            max_retries=8,
            initial_backoff=0.5,
            max_backoff=30,
            retry_on_status=(429, 500, 502, 503, 504),
        ):
            status = next(iter(item.values())).get("status", 0)
            if ok:
                summary.updated += 1
            elif status == 409:
                summary.conflicts += 1
            else:
                summary.failed += 1
    summary.seconds = time.perf_counter() - started
    return summary
