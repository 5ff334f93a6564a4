"""The probe beyond the window: near-duplicate candidates of representatives, within the query.

For each representative: ``bool`` with the user's query as ``must`` (so ``_score`` is the
user's own), the user's ``post_filter`` as a filter, and a filter that is a ``should`` of
``term`` on each of its SimHash block fields plus its exact key (``minimum_should_match: 1``),
excluding the hits already seen (per index: ``_index`` term + ``ids``). All representatives of a
page go to Elasticsearch in ONE ``_msearch``; the candidates come back with ``collapse_fp`` only
and are verified by the same rule as the window (``collapse.grouping``).

What it finds: every copy within B−1 bits (one of B blocks is then identical: 7 bits for eight
8-bit blocks) or with an equal exact key. Copies further apart are found only when they happen
to share a block — approximate, measured in ``docs/proxy.md``. At most ``probe_size``
candidates per representative are fetched; beyond that ``folded`` is a lower bound.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from collapse.fingerprints import FINGERPRINT_FIELD

DocKey = tuple[str, str]

#: Fields the probe reads back from each candidate.
PROBE_SOURCE = [FINGERPRINT_FIELD]


def user_query(body: dict[str, Any]) -> dict[str, Any]:
    """The request's query (``match_all`` when it has none)."""
    query = body.get("query")
    return query if isinstance(query, dict) and query else {"match_all": {}}


def exclude_seen(seen: list[DocKey]) -> list[dict[str, Any]]:
    """``must_not`` clauses excluding exactly these documents (ids are per index)."""
    by_index: dict[str, list[str]] = defaultdict(list)
    for index, doc_id in seen:
        by_index[index].append(doc_id)
    return [
        {"bool": {"filter": [{"term": {"_index": index}}, {"ids": {"values": ids}}]}}
        for index, ids in by_index.items()
    ]


def candidates_query(
    body: dict[str, Any], terms: list[tuple[str, str]], exact_key: str | None
) -> dict[str, Any]:
    """The user's query restricted to documents sharing a block or the exact key."""
    should: list[dict[str, Any]] = [{"term": {field: value}} for field, value in terms]
    if exact_key:
        should.append({"term": {f"{FINGERPRINT_FIELD}.exact_key": exact_key}})
    filters: list[dict[str, Any]] = [{"bool": {"should": should, "minimum_should_match": 1}}]
    post_filter = body.get("post_filter")
    if isinstance(post_filter, dict) and post_filter:
        filters.append(post_filter)
    return {"bool": {"must": [user_query(body)], "filter": filters}}


def probe_body(
    body: dict[str, Any],
    terms: list[tuple[str, str]],
    exact_key: str | None,
    seen: list[DocKey],
    size: int,
) -> dict[str, Any]:
    """One search of the probe ``_msearch``: candidates of one representative."""
    query = candidates_query(body, terms, exact_key)
    if seen:
        query["bool"]["must_not"] = exclude_seen(seen)
    out: dict[str, Any] = {
        "query": query,
        "size": size,
        "_source": PROBE_SOURCE,
        "track_total_hits": True,
    }
    if "sort" in body:
        out["sort"] = body["sort"]
        out["track_scores"] = True
    return out
