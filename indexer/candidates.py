"""The candidate query: documents that share a probe key or the exact key with given ones.

One query, shared by the proxy's probe beyond the window (``collapse.probe``), its expander and
"content seen?" (``indexer.lookup``): the user's query (``match_all`` for a lookup) restricted
by a ``should`` of one ``terms`` per key field (``minimum_should_match: 1``). Terms lookups only,
no scan. A candidate is not a verdict: the grouping rule (``indexer.grouping``) verifies it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from indexer.hits import FINGERPRINT_FIELD

__all__ = ["candidates_query", "user_query"]


def user_query(body: dict[str, Any]) -> dict[str, Any]:
    """The request's query (``match_all`` when it has none)."""
    query = body.get("query")
    return query if isinstance(query, dict) and query else {"match_all": {}}


def candidates_query(
    body: dict[str, Any],
    terms: list[tuple[str, str]] | list[list[tuple[str, str]]],
    exact_keys: list[str],
) -> dict[str, Any]:
    """The user's query restricted to documents sharing a probe key with one representative
    (``terms``: one list of (field, value) per representative, or one flat list for a single
    document: MinHash bands and/or SimHash blocks, :func:`indexer.hits.probe_keys`)
    or an exact key with one."""
    rep_terms = cast(
        list[list[tuple[str, str]]], [terms] if terms and isinstance(terms[0], tuple) else terms
    )
    by_field: dict[str, set[str]] = defaultdict(set)
    for rep in rep_terms:
        for field, value in rep:
            by_field[field].add(value)
    should: list[dict[str, Any]] = [
        {"terms": {field: sorted(values)}} for field, values in sorted(by_field.items())
    ]
    keys = sorted({k for k in exact_keys if k})
    if keys:
        should.append({"terms": {f"{FINGERPRINT_FIELD}.exact_key": keys}})
    filters: list[dict[str, Any]] = [{"bool": {"should": should, "minimum_should_match": 1}}]
    post_filter = body.get("post_filter")
    if isinstance(post_filter, dict) and post_filter:
        filters.append(post_filter)
    return {"bool": {"must": [user_query(body)], "filter": filters}}
