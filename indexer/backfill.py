"""Backfill: add fingerprints to an existing index's documents, without reindexing from source.

Two passes, each under a point in time with ``search_after`` (a scroll on OpenSearch: ``_pages``):

1. the documents whose ``collapse_fp.version`` is not the current one (missing, or another
   version), whose ``collapse_fp.fields`` are not the text fields their index records
   (``indexer init --text-field``) or that lack ``collapse_fp.packed`` (the record), or with
   ``every`` all documents (after ``learn`` stored other host models): those
   fields' text (minus their host's stored boilerplate) is fingerprinted and the whole
   ``collapse_fp`` is written back, with ``id`` (the document's ``_id``) and ``fields``
   (and null over the fields earlier generations stored beside ``packed``,
   :data:`~indexer.fingerprints.record.RETIRED_FIELDS`, which a partial update would keep);
2. the documents of the current version without ``collapse_fp.id`` (written with an id
   Elasticsearch generated, which no writer knew beforehand): their ``_id`` is added, so that
   the proxy reads them from doc values too.

Both write with bulk partial updates guarded by ``if_seq_no``/``if_primary_term``: a document
changed meanwhile is left alone (409) and picked up by the next run. Resumable by
construction: a run after an interruption finds only the documents still lacking the current
version or their ``id``. ``id`` is checked in doc values, not in ``_source``.

``verify``: pass 2 reads every document of the current version and also rewrites the values
derived from its ``packed`` record (``simhash``, ``band``, ``exact_key``, ``token_count``) that
disagree with it, an ``id`` that is not its ``_id`` (kept by a reindex that changed ids) and a
``packed`` missing from doc values (written before the field was mapped). It reads the whole
index.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from elasticsearch import Elasticsearch, helpers
from pydantic import BaseModel

from indexer.boilerplate import HostModel, fingerprint_excluding
from indexer.boilerplate_store import DEFAULT_STORE, MODEL_KEY, load_models, model_version
from indexer.documents import (
    DEFAULT_TEXT_FIELDS,
    DocumentError,
    TextFields,
    document_text,
    string_fields,
)
from indexer.engine import OPENSEARCH, padded_base64
from indexer.es import close_point_in_time, engine_of, open_point_in_time
from indexer.fingerprints import FingerprintArrays, FingerprintParams, encode_id, unpack_many
from indexer.fingerprints.record import RETIRED_FIELDS
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index, recorded_fields
from indexer.sources import Row

ID_FIELD = f"{FINGERPRINT_FIELD}.id"
PACKED_FIELD = f"{FINGERPRINT_FIELD}.packed"
#: What ``verify`` checks against a document's ``packed`` record (and rewrites).
DERIVED = ("simhash", "band", "exact_key", "token_count")

__all__ = [
    "BackfillSummary",
    "backfill",
    "current_query",
    "documents_as_rows",
    "stale_query",
    "without_id_query",
]


class BackfillSummary(BaseModel):
    """Scanned = updated + ids_added + corrected + verified + no_text + conflicts + failed.

    ``updated``: fingerprinted from the text; ``ids_added``: ``id`` added (the rest was
    right); ``corrected``: a ``band``, ``id`` or ``packed`` missing or disagreeing with the
    rest was rewritten (with ``verify`` only); ``verified``: checked and right (with
    ``verify`` only); ``failed`` includes current-version documents whose stored values are
    unreadable.
    """

    scanned: int = 0
    updated: int = 0
    ids_added: int = 0
    corrected: int = 0
    verified: int = 0
    no_text: int = 0
    conflicts: int = 0
    failed: int = 0
    seconds: float = 0.0
    text_fields: list[str] = []  # the fields fingerprinted
    fields_seen: list[str] = []  # when most had no text: the fields documents have most often


def stale_query(version: str, fields: TextFields = DEFAULT_TEXT_FIELDS) -> dict[str, Any]:
    """Documents without a fingerprint of ``version`` computed from ``fields`` (a fingerprint
    without ``fields`` was computed from the defaults), or without its ``packed`` record."""
    fp = FINGERPRINT_FIELD
    tag = fields.stored_tag
    same_fields = (
        {"term": {f"{fp}.fields": tag}}
        if tag is not None
        else {"bool": {"must_not": [{"exists": {"field": f"{fp}.fields"}}]}}
    )
    current = [
        {"term": {f"{fp}.version": version}},
        same_fields,
        {"exists": {"field": PACKED_FIELD}},
    ]
    return {"bool": {"must_not": [{"bool": {"filter": current}}]}}


def without_id_query(version: str) -> dict[str, Any]:
    """Documents with a fingerprint of ``version`` but no ``id``: what pass 2 completes."""
    fp = FINGERPRINT_FIELD
    return {
        "bool": {
            "filter": [{"term": {f"{fp}.version": version}}],
            "must_not": [{"exists": {"field": f"{fp}.id"}}],
        }
    }


def current_query(version: str) -> dict[str, Any]:
    """Documents with a fingerprint of ``version``: what pass 2 checks with ``verify``."""
    return {"bool": {"filter": [{"term": {f"{FINGERPRINT_FIELD}.version": version}}]}}


def _pages(
    es: Elasticsearch,
    index: str,
    query: dict[str, Any],
    size: int,
    fields: list[str] | bool | dict[str, list[str]],
    docvalues: list[str] | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Pages of the documents matching ``query``, each once, as they were when the first page
    was read: a point in time sorted by ``_shard_doc`` on Elasticsearch, a scroll on OpenSearch
    (2.x has no ``_shard_doc`` to page a point in time over several shards)."""
    body: dict[str, Any] = {
        "size": size,
        "query": query,
        "_source": fields,
        "seq_no_primary_term": True,
    }
    if docvalues:
        body["docvalue_fields"] = docvalues
    scrolled = engine_of(es) == OPENSEARCH
    pages = _scroll_pages(es, index, body) if scrolled else _pit_pages(es, index, body)
    for hits in pages:
        for hit in hits:  # OpenSearch's binary doc values lack base64 padding
            for name in docvalues or ():
                values = hit.get("fields", {}).get(name)
                if values:
                    hit["fields"][name] = [padded_base64(v) for v in values]
        yield hits


def documents_as_rows(
    es: Elasticsearch, index: str, limit: int, page_size: int = 500
) -> Iterator[Row]:
    """The first ``limit`` documents of ``index`` (in index order, without ``collapse_fp``) as
    the rows :func:`indexer.sources.read_rows` gives for a JSON Lines file: what ``learn``
    reads when it learns from an index's own documents."""
    source = {"excludes": [FINGERPRINT_FIELD]}
    seq = 0
    for hits in _pages(es, index, {"match_all": {}}, min(page_size, max(limit, 1)), source):
        for hit in hits:
            if seq >= limit:
                return
            doc = {"id": hit["_id"], **hit.get("_source", {})}
            yield seq, f"{hit['_index']}/_doc/{hit['_id']}", None, "jsonl", orjson.dumps(doc)
            seq += 1
        if seq >= limit:
            return


def _pit_pages(
    es: Elasticsearch, index: str, body: dict[str, Any]
) -> Iterator[list[dict[str, Any]]]:
    pit = open_point_in_time(es, index, "5m")
    try:
        after: list[Any] | None = None
        while True:
            page = {**body, "pit": {"id": pit, "keep_alive": "5m"}, "sort": [{"_shard_doc": "asc"}]}
            if after is not None:
                page["search_after"] = after
            answer = es.search(**page).body
            pit = answer.get("pit_id", pit)
            hits = answer["hits"]["hits"]
            if not hits:
                return
            yield hits
            after = hits[-1]["sort"]
    finally:
        close_point_in_time(es, pit)


def _scroll_pages(
    es: Elasticsearch, index: str, body: dict[str, Any]
) -> Iterator[list[dict[str, Any]]]:
    answer = es.search(index=index, scroll="5m", sort=["_doc"], **body).body
    scroll_id = answer.get("_scroll_id")
    try:
        while hits := answer["hits"]["hits"]:
            yield hits
            answer = es.scroll(scroll_id=scroll_id, scroll="5m").body
            scroll_id = answer.get("_scroll_id", scroll_id)
    finally:
        if scroll_id:
            es.options(ignore_status=404).clear_scroll(scroll_id=scroll_id)


def backfill(
    es: Elasticsearch,
    index: str,
    params: FingerprintParams | None = None,
    *,
    page_size: int = 500,
    store: str = DEFAULT_STORE,
    verify: bool = False,
    every: bool = False,
) -> BackfillSummary:
    """Fingerprint every document of ``index`` lacking the current version computed from the
    text fields its index records, and add ``id`` to those of the current version lacking it;
    ``verify``: also rewrite the values derived from ``packed`` and ``id`` where stale, and
    ``packed`` where missing from doc values (module doc); ``every``: fingerprint every
    document again (after ``learn`` stored other host models). Indices of a pattern that
    record different fields are each read with their own."""
    p = params or FingerprintParams()
    started = time.perf_counter()
    ensure_index(es, index, p)
    summary = BackfillSummary()
    by_fields: dict[TextFields, list[str]] = {}
    for name, recorded in sorted(recorded_fields(es, index).items()):
        by_fields.setdefault(recorded or DEFAULT_TEXT_FIELDS, []).append(name)
    for fields, names in by_fields.items():
        _refingerprint(es, ",".join(names), p, fields, page_size, store, summary, every)
        summary.text_fields = list(dict.fromkeys([*summary.text_fields, *fields.names]))
    if summary.no_text and 2 * summary.no_text > summary.scanned:
        summary.fields_seen = _fields_seen(es, index, p, by_fields)
    _complete(es, index, p, page_size, summary, verify=verify)
    summary.seconds = time.perf_counter() - started
    return summary


def _fields_seen(
    es: Elasticsearch, index: str, p: FingerprintParams, by_fields: dict[TextFields, list[str]]
) -> list[str]:
    """The fields that documents still lacking a fingerprint have most often (a sample)."""
    fields, names = next(iter(by_fields.items()))
    answer = es.search(index=",".join(names), query=stale_query(p.version, fields), size=200)
    hits = answer.body["hits"]["hits"]
    return string_fields([hit.get("_source") for hit in hits])


def _refingerprint(
    es: Elasticsearch,
    index: str,
    p: FingerprintParams,
    fields: TextFields,
    page_size: int,
    store: str,
    summary: BackfillSummary,
    every: bool = False,
) -> None:
    """Pass 1: documents of another version or text fields (or none; ``every``: all of them)
    fingerprinted from the text of ``fields``."""
    models: dict[str, HostModel | None] = {}
    query = {"match_all": {}} if every else stale_query(p.version, fields)
    tag_field = f"{FINGERPRINT_FIELD}.fields"
    model_field = f"{FINGERPRINT_FIELD}.{MODEL_KEY}"
    retired = [f"{FINGERPRINT_FIELD}.{name}" for name in RETIRED_FIELDS]
    source = [*fields.names, fields.url, tag_field, model_field, *retired]
    for hits in _pages(es, index, query, page_size, source):
        summary.scanned += len(hits)
        good: list[tuple[dict[str, Any], str, str | None]] = []
        for hit in hits:
            source = hit.get("_source", {})
            try:
                good.append((hit, document_text(source, fields), fields.host_of(source)))
            except DocumentError:
                summary.no_text += 1
        hosts = {h for _, _, h in good if h and h not in models}
        if hosts:
            models.update({h: None for h in hosts})
            models.update(load_models(es, index, p.version, hosts, store))
        if not good:
            continue
        used = [models.get(h) if h else None for _, _, h in good]
        arrays, _ = fingerprint_excluding([t for _, t, _ in good], p, used)
        actions = [
            _guarded_update(hit, _tagged(arrays.record(i).to_es(hit["_id"]), hit, fields, used[i]))
            for i, (hit, _, _) in enumerate(good)
        ]
        summary.updated += _send(es, actions, summary)


def _tagged(
    fp: dict[str, Any], hit: dict[str, Any], fields: TextFields, model: HostModel | None
) -> dict[str, Any]:
    """``fp`` with the ``fields`` it was computed from and the version of the host ``model``
    used; null (the defaults, no model) where the document holds another tag, and over the
    retired fields it holds, which a partial update would otherwise keep."""
    tag = fields.stored_tag
    had = hit.get("_source", {}).get(FINGERPRINT_FIELD) or {}
    fp.update({name: None for name in RETIRED_FIELDS if had.get(name) is not None})
    if tag is not None or had.get("fields") is not None:
        fp["fields"] = tag
    if model is not None or had.get(MODEL_KEY) is not None:
        fp[MODEL_KEY] = model_version(model) if model is not None else None
    return fp


def _guarded_update(
    hit: dict[str, Any], fingerprint: dict[str, Any], *, force: bool = False
) -> dict[str, Any]:
    """A bulk partial update of ``collapse_fp``, refused (409) if the document changed.

    ``force``: reindexed even when ``_source`` does not change (``detect_noop: false``), for
    values present in ``_source`` but not indexed."""
    action = {
        "_op_type": "update",
        "_index": hit["_index"],
        "_id": hit["_id"],
        "if_seq_no": hit["_seq_no"],
        "if_primary_term": hit["_primary_term"],
        "doc": {FINGERPRINT_FIELD: fingerprint},
    }
    if force:
        action["detect_noop"] = False
    return action


def _complete(
    es: Elasticsearch,
    index: str,
    p: FingerprintParams,
    page_size: int,
    summary: BackfillSummary,
    *,
    verify: bool = False,
) -> None:
    """Pass 2: ``id`` of current-version documents from their ``_id`` where missing;
    ``verify``: also the values derived from ``packed`` where wrong, and ``packed`` where
    missing from doc values."""
    fp = FINGERPRINT_FIELD
    source: list[str] | bool = (
        [f"{fp}.{name}" for name in (*DERIVED, "packed")] if verify else False
    )
    docvalues = [ID_FIELD, PACKED_FIELD] if verify else [ID_FIELD]
    query = current_query(p.version) if verify else without_id_query(p.version)
    for hits in _pages(es, index, query, page_size, source, docvalues):
        summary.scanned += len(hits)
        with_id: list[dict[str, Any]] = []
        corrected: list[dict[str, Any]] = []
        checked = _checked(hits, p) if verify else [{} for _ in hits]
        for hit, fields in zip(hits, checked, strict=True):
            if fields is None:
                summary.failed += 1  # unreadable stored values: the version says otherwise
                continue
            fields.update(_id_if_missing(hit))
            if not fields:
                summary.verified += 1
            elif set(fields) == {"id"} and not hit.get("fields", {}).get(ID_FIELD):
                with_id.append(_guarded_update(hit, fields, force=True))
            else:
                corrected.append(_guarded_update(hit, fields, force=True))
        if with_id:
            summary.ids_added += _send(es, with_id, summary)
        if corrected:
            summary.corrected += _send(es, corrected, summary)


def _checked(hits: list[dict[str, Any]], p: FingerprintParams) -> list[dict[str, Any] | None]:
    """Per hit, the values to write because they disagree with its stored ``packed`` record
    (:data:`DERIVED`, computed as the writers compute them) or, for ``packed`` itself, are
    missing from doc values ({} when right; None when the record is unreadable)."""
    stored = [hit.get("_source", {}).get(FINGERPRINT_FIELD) or {} for hit in hits]
    got = unpack_many([one.get("packed") for one in stored], p)
    ok = got.present
    keys = got.exact_key_hexes()
    derived = iter(
        FingerprintArrays(
            params=p,
            simhash=got.simhash[ok],
            minhash=got.minhash[ok],
            numbers=got.numbers[ok],
            exact_keys=[k for k, good in zip(keys, ok.tolist(), strict=True) if good],
            token_count=got.token_count[ok],
            present=ok[ok],
        ).to_es_many()
    )
    out: list[dict[str, Any] | None] = []
    for hit, one, good in zip(hits, stored, ok.tolist(), strict=True):
        if not good:
            out.append(None)
            continue
        want = next(derived)
        fields = {name: want.get(name) for name in DERIVED if one.get(name) != want.get(name)}
        if hit.get("fields", {}).get(PACKED_FIELD) != [one["packed"]]:
            fields["packed"] = one["packed"]
        out.append(fields)
    return out


def _id_if_missing(hit: dict[str, Any]) -> dict[str, str]:
    """``{"id": ...}`` unless the hit's doc values already hold its ``_id`` (``{}``).

    Read from doc values, not ``_source``: an ``id`` written before the field was mapped is
    in ``_source`` only (``dynamic: false``), and must be written again to be indexed.
    """
    want = encode_id(hit["_id"])
    return {} if hit.get("fields", {}).get(ID_FIELD) == [want] else {"id": want}


def _send(es: Elasticsearch, actions: Iterable[dict[str, Any]], summary: BackfillSummary) -> int:
    """Send guarded partial updates; count conflicts and failures, return the successes."""
    done = 0
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
            done += 1
        elif status == 409:
            summary.conflicts += 1
        else:
            summary.failed += 1
    return done
