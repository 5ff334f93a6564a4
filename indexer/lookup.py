""" "Content seen?": the stored near-duplicates of a text, one code path for the CLI and the proxy.

``indexer lookup`` (sync client) and ``POST /{index}/_collapse/lookup`` (the proxy's async
upstream) do the same steps, all here and free of I/O: the text and host of a document
(:func:`text_and_host`); the text's fingerprint as ingestion stores it, with the host's
boilerplate model left out (:func:`lookup_record`, the model read from the store by each
caller); the candidates' search (:func:`search_body`); their verification by the grouping rule
at one set of defaults (:data:`indexer.grouping.DEFAULT_THRESHOLDS`; :func:`matches`).

Candidates share a probe key of the index's scheme (MinHash band or SimHash block,
:mod:`indexer.hits`) or the exact key with the text (:func:`indexer.candidates.candidates_query`:
terms lookups, no scan). Like the proxy's probe, the key lookup is approximate; an equal exact
key always finds its copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from indexer.boilerplate import HostModel, fingerprint_excluding
from indexer.candidates import candidates_query
from indexer.documents import TextFields, document_text, host_of
from indexer.fingerprints import FingerprintRecord
from indexer.fingerprints.minhash import value_dtype
from indexer.grouping import DEFAULT_THRESHOLDS, Prints, Thresholds, verify
from indexer.hits import DEFAULT_PROBE, FINGERPRINT_FIELD, decode, key_code, probe_keys
from indexer.prepare import PrepareConfig

__all__ = [
    "LookupMatch",
    "LookupResult",
    "lookup_record",
    "matches",
    "search_body",
    "text_and_host",
]


class LookupMatch(BaseModel):
    """One stored near-duplicate."""

    id: str
    index: str
    hamming: int
    similarity: float
    exact: bool
    title: str | None = None
    url: str | None = None


class LookupResult(BaseModel):
    """The text's fingerprint summary and its stored near-duplicates, closest first."""

    simhash: str
    token_count: int
    version: str
    candidates: int
    matches: list[LookupMatch]


def text_and_host(doc: Mapping[str, Any], fields: TextFields) -> tuple[str, str | None]:
    """A document's text (the fields its index records) and the host of its ``url``, whose
    boilerplate model applies (raises ``DocumentError`` when it has no text)."""
    return document_text(doc, fields), host_of(doc.get("url"))


def lookup_record(
    text: str, model: HostModel | None, config: PrepareConfig | None = None
) -> FingerprintRecord:
    """The text's fingerprint as ingestion stores it: the host's boilerplate (``model``, None
    without a host or a stored model) left out, with ingestion's parameters."""
    config = config or PrepareConfig()
    arrays, _ = fingerprint_excluding(
        [text], config.params, [model], config.max_removed, config.min_remaining
    )
    return arrays.record(0)


def search_body(
    record: FingerprintRecord,
    size: int = 100,
    probes: frozenset[str] = frozenset({DEFAULT_PROBE}),
) -> dict[str, Any]:
    """The ``_search`` body fetching the candidates of ``record``: its keys of the schemes
    ``probes`` (those of the indices searched) and its exact key."""
    sketch = np.array(record.minhash, dtype=value_dtype(record.params.minhash_bits))
    terms = probe_keys(record.simhash, sketch, record.params, probes)
    return {
        "query": candidates_query({}, terms if not record.short else [], [record.exact_key]),
        "size": size,
        "_source": [FINGERPRINT_FIELD, "title", "url"],
    }


def matches(
    record: FingerprintRecord, hits: list[dict[str, Any]], t: Thresholds = DEFAULT_THRESHOLDS
) -> LookupResult:
    """Verify candidate hits against ``record`` with the grouping rule; closest first."""
    query = Prints(
        np.array([record.simhash], dtype=np.uint64),
        np.array([record.minhash], dtype=value_dtype(record.params.minhash_bits)),
        np.array([key_code(record.exact_key)], dtype=np.int64),
        np.array([record.token_count], dtype=np.int64),
        np.ones(1, dtype=bool),
        np.array([record.numbers], dtype=np.uint32),
    )
    found: list[LookupMatch] = []
    if hits:
        cand = decode(hits, t.min_tokens, version=record.version).prints
        i = np.arange(len(hits))
        ok, ham, sim = verify(cand, i, query, np.zeros(len(hits), dtype=np.int64), t)
        for k in np.flatnonzero(ok):
            src = hits[k].get("_source", {})
            found.append(
                LookupMatch(
                    id=hits[k]["_id"],
                    index=hits[k]["_index"],
                    hamming=int(ham[k]),
                    similarity=round(float(sim[k]), 4),
                    exact=src.get(FINGERPRINT_FIELD, {}).get("exact_key") == record.exact_key,
                    title=src.get("title") if isinstance(src.get("title"), str) else None,
                    url=src.get("url") if isinstance(src.get("url"), str) else None,
                )
            )
    found.sort(key=lambda m: (m.hamming, -m.similarity))
    return LookupResult(
        simhash=record.simhash_hex,
        token_count=record.token_count,
        version=record.version,
        candidates=len(hits),
        matches=found,
    )
