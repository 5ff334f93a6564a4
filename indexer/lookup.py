""" "Content seen?": the stored near-duplicates of a text, one code path for the CLI and the proxy.

``indexer lookup`` (sync client) and ``POST /{index}/_collapse/lookup`` (the proxy's async
upstream) do the same steps, all here and free of I/O: the text and host of a document
(:func:`text_and_host`); the text's fingerprint as ingestion stores it, with the host's
boilerplate model left out (:func:`lookup_record`, the model read from the store by each
caller); the candidates' search (:func:`search_body`); their verification by the grouping rule
at one set of defaults (:data:`indexer.grouping.DEFAULT_THRESHOLDS`; :func:`matches`). The
same rule's verdict on two texts, with the condition that decided it, is :func:`verdict`
(``indexer fingerprint --compare``).

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
from indexer.documents import TextFields, document_text
from indexer.fingerprints import FingerprintRecord
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import WRITING_CELL, agree
from indexer.fingerprints.writing import writings_agree
from indexer.grouping import DEFAULT_THRESHOLDS, Prints, Thresholds, verify
from indexer.hits import DEFAULT_PROBE, FINGERPRINT_FIELD, decode, key_code, probe_keys
from indexer.prepare import PrepareConfig

__all__ = [
    "LookupMatch",
    "LookupResult",
    "Verdict",
    "lookup_record",
    "matches",
    "prints_of",
    "search_body",
    "text_and_host",
    "verdict",
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
    """A document's text (the fields its index records) and the host of its URL (the url
    field it records), whose boilerplate model applies (raises ``DocumentError`` when it has
    no text)."""
    return document_text(doc, fields), fields.host_of(doc)


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


def prints_of(records: list[FingerprintRecord]) -> Prints:
    """The grouping rule's input for fingerprint records of one version, in order."""
    bits = records[0].params.minhash_bits if records else 8
    return Prints(
        np.array([r.simhash for r in records], dtype=np.uint64),
        np.array([r.minhash for r in records], dtype=value_dtype(bits)),
        np.array([key_code(r.exact_key) for r in records], dtype=np.int64),
        np.array([r.token_count for r in records], dtype=np.int64),
        np.ones(len(records), dtype=bool),
        np.array([r.numbers for r in records], dtype=np.uint32).reshape(len(records), -1),
    )


class Verdict(BaseModel):
    """Whether two texts are near-duplicates by the grouping rule, and the condition that
    decided it (``reason``): what the proxy does with them as two hits of one window."""

    near_duplicate: bool
    reason: str
    similarity_needed: float | None = None
    numbers_agree: bool


def verdict(
    a: FingerprintRecord, b: FingerprintRecord, t: Thresholds = DEFAULT_THRESHOLDS
) -> Verdict:
    """The rule of :mod:`indexer.grouping` on one pair (the same :func:`verify` call), its
    conditions read in the rule's order to say which one decided."""
    p = prints_of([a, b])
    zero, one = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
    ok, ham, sim = verify(p, zero, p, one, t)
    numbers = bool(agree(p.numbers[:1], p.numbers[1:])[0])
    shorter = min(a.token_count, b.token_count)
    long_enough = shorter >= max(t.min_tokens, 1)
    needed = round(float(t.similarity_for(np.array([shorter]), ham)[0]), 4)
    if a.exact_key == b.exact_key and shorter > 0:
        reason = "equal exact keys (the same normalised text)"
    elif not long_enough:
        reason = f"{shorter} words of content, below min_tokens {t.min_tokens}: exact key only"
    elif not t.near(ham, np.array([shorter]))[0]:
        reason = f"SimHash {int(ham[0])} bits apart, more than max_distance {t.max_distance}"
    elif float(sim[0]) < needed and int(ham[0]) > t.max_distance:
        reason = (
            f"SimHash {int(ham[0])} bits apart, more than max_distance {t.max_distance}, and "
            f"MinHash similarity {float(sim[0]):.4f} below the {needed} a short pair needs there"
        )
    elif float(sim[0]) < needed:
        reason = (
            f"MinHash similarity {float(sim[0]):.4f} below the {needed} "
            "this length and distance need"
        )
    elif not writings_agree(p.numbers[:1, WRITING_CELL], p.numbers[1:, WRITING_CELL])[0]:
        reason = "one is written in Simplified, the other in Traditional Chinese: a translation"
    elif not numbers:
        reason = "their numbers conflict (a number or name differs in the same context)"
    else:
        reason = "SimHash and MinHash within the thresholds, numbers agree"
    return Verdict(
        near_duplicate=bool(ok[0]),
        reason=reason,
        similarity_needed=needed if long_enough else None,
        numbers_agree=numbers,
    )


def matches(
    record: FingerprintRecord, hits: list[dict[str, Any]], t: Thresholds = DEFAULT_THRESHOLDS
) -> LookupResult:
    """Verify candidate hits against ``record`` with the grouping rule; closest first."""
    query = prints_of([record])
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
