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

#: Fields the probe reads back from each candidate: what verification needs (not the blocks).
PROBE_SOURCE = [
    f"{FINGERPRINT_FIELD}.{name}"
    for name in ("version", "simhash", "minhash", "exact_key", "token_count")
]


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


def min_shared_blocks(blocks: int, max_distance: int, setting: int) -> int:
    """How many blocks a probe candidate must share with a representative.

    Pigeonhole: two SimHash within d bits differ in at most d of the B blocks, so they share at
    least B − d. ``setting`` (``collapse_probe_min_blocks``, default 1) is capped at B − d when
    ``max_distance`` < B so that every copy within ``max_distance`` stays a candidate; beyond the
    guarantee (the default 18 bits, eight 8-bit blocks) it is taken as is. Requiring 2 blocks
    keeps 78% of the true pairs (vs 95% for 1) and was measured 3x slower in Elasticsearch
    (a ``minimum_should_match`` of per-representative ``term`` clauses instead of one ``terms``
    per block field): docs/proxy.md.
    """
    if blocks <= 0 or setting <= 1:
        return 1
    if max_distance < blocks:
        return max(1, min(setting, blocks - max_distance))
    return min(setting, blocks)


def _block_clauses(rep_terms: list[list[tuple[str, str]]], min_blocks: int) -> list[dict[str, Any]]:
    """``should`` clauses matching documents that share ``min_blocks`` blocks with one rep."""
    if min_blocks <= 1:
        by_field: dict[str, set[str]] = defaultdict(set)
        for terms in rep_terms:
            for field, value in terms:
                by_field[field].add(value)
        return [{"terms": {field: sorted(values)}} for field, values in sorted(by_field.items())]
    out = []
    for terms in rep_terms:
        if len(terms) < min_blocks:
            continue
        should = [{"term": {field: value}} for field, value in terms]
        out.append({"bool": {"should": should, "minimum_should_match": min_blocks}})
    return out


def candidates_query(
    body: dict[str, Any],
    terms: list[tuple[str, str]] | list[list[tuple[str, str]]],
    exact_keys: list[str],
    min_blocks: int = 1,
) -> dict[str, Any]:
    """The user's query restricted to documents sharing ``min_blocks`` SimHash blocks with one
    representative (``terms``: one list of (field, value) per representative, or one flat
    list for a single document) or an exact key with one."""
    rep_terms: list[list[tuple[str, str]]] = (
        [terms] if terms and isinstance(terms[0], tuple) else terms  # type: ignore[list-item]
    )
    should = _block_clauses(rep_terms, min_blocks)
    keys = sorted({k for k in exact_keys if k})
    if keys:
        should.append({"terms": {f"{FINGERPRINT_FIELD}.exact_key": keys}})
    filters: list[dict[str, Any]] = [{"bool": {"should": should, "minimum_should_match": 1}}]
    post_filter = body.get("post_filter")
    if isinstance(post_filter, dict) and post_filter:
        filters.append(post_filter)
    return {"bool": {"must": [user_query(body)], "filter": filters}}


def shared_blocks_query(
    body: dict[str, Any],
    rep_terms: list[list[tuple[str, str]]],
    exact_keys: list[str],
    min_blocks: int = 1,
) -> dict[str, Any]:
    """The user's query (and ``post_filter``) as a filter, candidates scored by how many of
    their SimHash blocks some representative has at the same position (an equal exact key
    scores as all of them): the best-scored are the likeliest copies.

    A document has one value per block field, so its score is the number of its blocks found
    among the representatives' (one constant-score ``terms`` per field); ``min_blocks`` is then
    a plain ``minimum_should_match`` — a superset of "shares ``min_blocks`` with one
    representative", so nothing the per-representative form finds is lost.
    """
    by_field: dict[str, set[str]] = defaultdict(set)
    for terms in rep_terms:
        for name, value in terms:
            by_field[name].add(value)
    blocks: list[dict[str, Any]] = [
        {"constant_score": {"filter": {"terms": {name: sorted(values)}}, "boost": 1.0}}
        for name, values in sorted(by_field.items())
    ]
    should: list[dict[str, Any]] = []
    if blocks:
        msm = max(1, min(min_blocks, len(blocks)))
        should.append({"bool": {"should": blocks, "minimum_should_match": msm}})
    keys = sorted({k for k in exact_keys if k})
    if keys:
        clause = {"terms": {f"{FINGERPRINT_FIELD}.exact_key": keys}}
        should.append({"constant_score": {"filter": clause, "boost": float(max(len(blocks), 1))}})
    filters: list[dict[str, Any]] = [user_query(body)]
    post_filter = body.get("post_filter")
    if isinstance(post_filter, dict) and post_filter:
        filters.append(post_filter)
    return {"bool": {"filter": filters, "should": should, "minimum_should_match": 1}}


def probe_body(
    body: dict[str, Any],
    rep_terms: list[list[tuple[str, str]]],
    exact_keys: list[str],
    seen: list[DocKey],
    size: int,
    min_blocks: int = 1,
    order: str = "query",
) -> dict[str, Any]:
    """The probe search of one page: candidates of all its representatives.

    ``order``: ``blocks`` fetches the candidates sharing most blocks first (see
    :func:`shared_blocks_query`); ``query`` the best ranked under the user's query or sort.
    """
    if order == "blocks":
        query = shared_blocks_query(body, rep_terms, exact_keys, min_blocks)
    else:
        query = candidates_query(body, rep_terms, exact_keys, min_blocks)
    if seen:
        query["bool"]["must_not"] = exclude_seen(seen)
    out: dict[str, Any] = {
        "query": query,
        "size": size,
        "_source": PROBE_SOURCE,
        "track_total_hits": size + 1,  # enough to tell whether every candidate was fetched
    }
    if order != "blocks" and "sort" in body:
        out["sort"] = body["sort"]
        out["track_scores"] = True
    return out
