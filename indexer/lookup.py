""" "Content seen?": the stored near-duplicates of a text, found through the probe keys.

The candidates are the documents sharing a MinHash band (``collapse_fp.band``) or the exact
key with the text (``collapse.probe.candidates_query``: terms lookups, no scan), verified by the
proxy's own rule (``indexer.grouping.verify``). Like the proxy's probe, the band lookup is
approximate: a copy of MinHash similarity J is a candidate with probability 1 − (1 − J⁴)¹⁶
(0.98 at J = 0.7); an equal exact key always is. The SimHash blocks are looked up too, for
stored documents indexed before bands (every copy within 7 bits shares one of eight blocks):
they are indexed only in indices created before the blocks were left unindexed; in the
others the block fields are not mapped, so those terms match nothing there, without error.

Pure request/response functions, so the CLI (sync client) and the proxy route (its async
upstream) share them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel

from indexer.candidates import candidates_query
from indexer.fingerprints import FingerprintRecord
from indexer.fingerprints.minhash import value_dtype
from indexer.grouping import Prints, Thresholds, verify
from indexer.hits import FINGERPRINT_FIELD, block_terms, decode, key_code, probe_keys

__all__ = ["LookupMatch", "LookupResult", "matches", "search_body"]


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


def search_body(record: FingerprintRecord, size: int = 100) -> dict[str, Any]:
    """The ``_search`` body fetching the candidates of ``record`` (block terms + exact key)."""
    # Bands and blocks both: the stored documents may predate bands (indexed without them).
    stored = {"_source": {FINGERPRINT_FIELD: record.to_es()}}
    terms = probe_keys(stored, record.params.blocks) + block_terms(stored, record.params.blocks)
    return {
        "query": candidates_query({}, terms if not record.short else [], [record.exact_key]),
        "size": size,
        "_source": [FINGERPRINT_FIELD, "title", "url"],
    }


def matches(record: FingerprintRecord, hits: list[dict[str, Any]], t: Thresholds) -> LookupResult:
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
