"""Refills and probes from doc values: hits read without loading ``_id`` or ``_source``.

A refill fetches hundreds of hits, nearly all of them copies that will only be counted. Loading a
hit's stored fields (``_id``, ``_source``) is most of what Elasticsearch spends on it. So a
refill asks for two binary doc values only: ``collapse_fp.packed`` (every fingerprint value in
one record, ``indexer.fingerprints.packed``) and ``collapse_fp.id`` (the document's own ``_id``,
base64: docs/CONTRACTS.md), which the proxy decodes in one call (what each costs:
docs/proxy.md, "Refills and probes from doc values"). The representatives among those hits
that reach the page are then fetched in full, by id, with the user's own request (the *fill*,
sent alongside the probe: no extra round trip). Copies only ever show as ``_id``, ``_index``
and ``_score`` in ``_collapse.members``, which doc values give. The probe's candidates are read
the same way (:func:`probe_body`); a probe refused (below) is sent again in full.

When: the request has nothing whose answer could differ between a hit of a refill and the same
hit fetched again by id (no ``rescore``, ``knn``, ``retriever``, native ``collapse``..., only the
body keys of :data:`_ALLOWED`) and no URL parameter that changes what a hit carries. A slim
read that comes back with a failed shard, or with a hit lacking ``id`` or ``packed`` (an index
created before them, not backfilled; a document written with an Elasticsearch-generated id or
by another writer) is fetched again in full, and its index expression is not tried slim again
for :data:`RETRY_SECONDS`.
"""

from __future__ import annotations

import binascii
import time
from typing import Any

from indexer.engine import padded_base64
from indexer.fingerprints.record import decode_id
from indexer.hits import FINGERPRINT_FIELD, SLIM_KEY

__all__ = [
    "DECORATION",
    "ID_FIELD",
    "PACKED_FIELD",
    "RETRY_SECONDS",
    "SLIM_FIELDS",
    "VERSION_FIELD",
    "Hit",
    "eligible",
    "hits_of",
    "probe_body",
    "refill_body",
    "refuse",
    "refused",
    "total_body",
]

Hit = dict[str, Any]

#: The document's own ``_id``, base64 of its UTF-8 bytes, with binary doc values.
ID_FIELD = f"{FINGERPRINT_FIELD}.id"
#: Every fingerprint value, packed (``indexer.fingerprints.packed``), with binary doc values.
PACKED_FIELD = f"{FINGERPRINT_FIELD}.packed"
#: Only read to tell a fingerprinted hit without ``packed`` (refused) from a hit without any
#: fingerprint (a singleton) where no ``id`` is read (``collapse_total``).
VERSION_FIELD = f"{FINGERPRINT_FIELD}.version"
#: What a slim refill or probe reads from doc values.
SLIM_FIELDS = [PACKED_FIELD, ID_FIELD]

#: Body keys a slim refill copies: what selects and orders the hits.
_KEPT = (
    "query",
    "post_filter",
    "sort",
    "track_scores",
    "min_score",
    "timeout",
    "terminate_after",
    "indices_boost",
    "runtime_mappings",
    "pit",
)
#: Body keys allowed in a request whose refills may be slim: the kept ones, what only decorates
#: a hit (the fill brings it), and what only the first fetch sends.
#: Body keys that only decorate hits or add parts to the answer, not which hits match.
DECORATION = frozenset(
    {
        "_source",
        "highlight",
        "fields",
        "docvalue_fields",
        "stored_fields",
        "script_fields",
        "explain",
        "version",
        "seq_no_primary_term",
        "aggs",
        "aggregations",
        "suggest",
        "profile",
    }
)
_ALLOWED = frozenset(
    {
        *_KEPT,
        *DECORATION,
        "stats",
        "track_total_hits",
        "from",
        "size",
        "search_after",
    }
)
#: URL parameters that would override what a slim refill asks for.
_URL_CONFLICTS = frozenset(
    {"stored_fields", "docvalue_fields", "explain", "version", "seq_no_primary_term"}
)

#: How long an index expression whose slim refill failed is fetched in full only.
RETRY_SECONDS = 300.0
_refused: dict[str, float] = {}


def eligible(body: dict[str, Any], query: dict[str, str]) -> bool:
    """Whether this request's refills may be slim (see the module docstring)."""
    return body.keys() <= _ALLOWED and not (query.keys() & _URL_CONFLICTS)


def refused(index: str | None) -> bool:
    """Whether a slim refill on this index expression failed lately."""
    until = _refused.get(index or "")
    return until is not None and time.monotonic() < until


def refuse(index: str | None) -> None:
    """Fetch this index expression's refills in full for a while."""
    if len(_refused) > 1000:
        _refused.clear()
    _refused[index or ""] = time.monotonic() + RETRY_SECONDS


def _read_from_doc_values(body: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """``body`` reading ``fields`` from doc values and no stored field (no ``_id``/``_source``)."""
    body = {k: v for k, v in body.items() if k != "_source"}
    body["stored_fields"] = "_none_"
    body["docvalue_fields"] = fields
    return body


def refill_body(full: dict[str, Any]) -> dict[str, Any]:
    """The slim form of a refill's body (``full``: the body of the same refill in full)."""
    kept = (*_KEPT, "from", "size", "search_after", "track_total_hits")
    return _read_from_doc_values({k: full[k] for k in kept if k in full}, SLIM_FIELDS)


def probe_body(full: dict[str, Any]) -> dict[str, Any]:
    """The doc-value form of a probe's body (its candidates are only counted and listed)."""
    return _read_from_doc_values(full, SLIM_FIELDS)


def total_body(full: dict[str, Any]) -> dict[str, Any]:
    """The doc-value form of ``collapse_total``'s search: fingerprints only, no identity."""
    return _read_from_doc_values(full, [PACKED_FIELD, VERSION_FIELD])


def hits_of(answer: dict[str, Any], identified: bool = True) -> list[Hit] | None:
    """The hits of a doc-value read, each with ``_index``, ``_id``, ``_score`` (``sort``) and
    its packed fingerprint under :data:`~indexer.hits.SLIM_KEY` ("" for a hit without
    fingerprint); None when the answer cannot stand for a full read (a failed shard; a hit
    without a readable ``id``, or fingerprinted but without ``packed``: written before it or
    by another writer). Not ``identified`` (``collapse_total``): no ``id`` is read, and
    ``_id`` is None."""
    shards = answer.get("_shards")
    if isinstance(shards, dict) and shards.get("failed"):
        return None
    out: list[Hit] = []
    append = out.append  # a refill reads hundreds: kept tight
    for h in answer.get("hits", {}).get("hits", []):
        fields = h.get("fields") or {}
        packed = fields.get(PACKED_FIELD)
        doc_id = None
        if identified:
            ids = fields.get(ID_FIELD)
            if not ids or not packed:
                return None
            value = ids[0]
            try:
                if type(value) is not str or len(value) % 4:  # OpenSearch: no padding
                    value = padded_base64(value)
                doc_id = decode_id(value)
            except (binascii.Error, UnicodeDecodeError, TypeError, ValueError):
                return None
        elif not packed and fields.get(VERSION_FIELD):
            return None
        if "sort" in h:
            hit: Hit = {
                "_index": h.get("_index"),
                "_id": doc_id,
                "_score": h.get("_score"),
                "sort": h["sort"],
                SLIM_KEY: packed[0] if packed else "",
            }
        else:
            hit = {
                "_index": h.get("_index"),
                "_id": doc_id,
                "_score": h.get("_score"),
                SLIM_KEY: packed[0] if packed else "",
            }
        append(hit)
    return out
