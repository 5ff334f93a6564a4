"""The probe beyond the window: near-duplicate candidates of representatives, within the query.

ONE search per page, for all its representatives together: ``bool`` with the user's query as
``must`` (evaluated once, and ``_score`` stays the user's), the user's ``post_filter`` as a
filter, and a filter that is a ``should`` of one ``terms`` per probe-key field (the keys of
every representative) plus their exact keys (``minimum_should_match: 1``), excluding the hits
already seen (per index: ``_index`` term + ``ids``). The searches of all pages of a request go
in ONE ``_msearch``. Candidates come back in the user's order with ``collapse_fp`` only and are
verified by the same rule as the window (``indexer.grouping``). One search per representative
would evaluate the user's query once per representative: ten times the Elasticsearch work for
the same candidates.

Probe keys (:func:`indexer.hits.probe_keys`), of the scheme each searched index records
(``indexer init --probe``): MinHash band keys ``collapse_fp.band`` (a copy of MinHash
similarity J shares one with probability 1 − (1 − J⁴)¹⁶), or the four 16-bit SimHash blocks
``collapse_fp.block_i`` (every copy within 3 bits shares one, further ones only by chance).
Keys of a scheme an index does not map match nothing there. An equal exact key is always a
candidate. At most ``probe_size`` candidates per page are fetched (in the user's order: copies
rank near their original); beyond that ``folded`` is a lower bound.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from collapse.paging import DocKey
from indexer.candidates import candidates_query
from indexer.hits import VERIFY_SOURCE

__all__ = ["PROBE_SOURCE", "exclude_seen", "probe_body", "probe_can_match"]


#: Fields the probe reads back from each candidate: what verification needs (no probe keys).
PROBE_SOURCE = VERIFY_SOURCE


def probe_can_match(body: dict[str, Any]) -> bool:
    """Whether a filtered copy of the request's ``query`` selects what the request matches.

    Not when the hits come from somewhere else: a top-level ``knn`` without a ``query`` (its
    matches are the k nearest, which no filter reproduces; with a ``query`` the probe finds the
    query's share) or a ``retriever``. The probe would then count documents the request does
    not match.
    """
    if "retriever" in body:
        return False
    return not ("knn" in body and not body.get("query"))


def exclude_seen(seen: list[DocKey]) -> list[dict[str, Any]]:
    """``must_not`` clauses excluding exactly these documents (ids are per index)."""
    by_index: dict[str, list[str]] = defaultdict(list)
    for index, doc_id in seen:
        by_index[index].append(doc_id)
    return [
        {"bool": {"filter": [{"term": {"_index": index}}, {"ids": {"values": ids}}]}}
        for index, ids in by_index.items()
    ]


def probe_body(
    body: dict[str, Any],
    rep_terms: list[list[tuple[str, str]]],
    exact_keys: list[str],
    seen: list[DocKey],
    size: int,
) -> dict[str, Any]:
    """The probe search of one page: candidates of all its representatives, best ranked first
    under the user's query or sort."""
    query = candidates_query(body, rep_terms, exact_keys)
    if seen:
        query["bool"]["must_not"] = exclude_seen(seen)
    out: dict[str, Any] = {
        "query": query,
        "size": size,
        "_source": PROBE_SOURCE,
        "track_total_hits": size + 1,  # enough to tell whether every candidate was fetched
    }
    if "sort" in body:
        out["sort"] = body["sort"]
        out["track_scores"] = True
    return out
