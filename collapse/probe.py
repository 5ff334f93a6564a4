"""The probe beyond the window: near-duplicate candidates of representatives, within the query.

ONE search per page, for all its representatives together: ``bool`` with the user's query as
``must`` (evaluated once, and ``_score`` stays the user's), the user's ``post_filter`` as a
filter, and a filter that is a ``should`` of ``terms`` on each SimHash block field (the blocks of
every representative) plus their exact keys (``minimum_should_match: 1``), excluding the hits
already seen (per index: ``_index`` term + ``ids``). The searches of all pages of a request go
in ONE ``_msearch``. Candidates come back in the user's order with ``collapse_fp`` only and are
verified by the same rule as the window (``collapse.grouping``). One search per representative
would evaluate the user's query once per representative: ten times the Elasticsearch work for
the same candidates.

What it finds: every copy within B−1 bits (one of B blocks is then identical: 7 bits for eight
8-bit blocks) or with an equal exact key. Copies further apart are found only when they happen
to share a block — approximate, measured in ``docs/proxy.md``. At most ``probe_size``
candidates per page are fetched (in the user's order: copies rank near their original);
beyond that ``folded`` is a lower bound.
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
    body: dict[str, Any], terms: list[tuple[str, str]], exact_keys: list[str]
) -> dict[str, Any]:
    """The user's query restricted to documents sharing a block or an exact key."""
    by_field: dict[str, set[str]] = defaultdict(set)
    for field, value in terms:
        by_field[field].add(value)
    by_field[f"{FINGERPRINT_FIELD}.exact_key"].update(k for k in exact_keys if k)
    should: list[dict[str, Any]] = [
        {"terms": {field: sorted(values)}} for field, values in sorted(by_field.items()) if values
    ]
    filters: list[dict[str, Any]] = [{"bool": {"should": should, "minimum_should_match": 1}}]
    post_filter = body.get("post_filter")
    if isinstance(post_filter, dict) and post_filter:
        filters.append(post_filter)
    return {"bool": {"must": [user_query(body)], "filter": filters}}


def probe_body(
    body: dict[str, Any],
    terms: list[tuple[str, str]],
    exact_keys: list[str],
    seen: list[DocKey],
    size: int,
) -> dict[str, Any]:
    """The probe search of one page: candidates of all its representatives."""
    query = candidates_query(body, terms, exact_keys)
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
