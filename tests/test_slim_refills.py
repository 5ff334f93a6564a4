"""Refills and probes read from doc values (collapse.slim): the same answer as read in full."""

from __future__ import annotations

import base64
import copy
import random
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse import metrics, slim
from collapse.paging import decode_cursor
from indexer.fingerprints import encode_id
from indexer.hits import FINGERPRINT_FIELD
from tests.proxy_support import PARAMS, fingerprints, index_docs, text, variants

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

#: Page 1 of 10 groups: the first window (30 hits) holds one story's copies only, so the page
#: is filled by a refill, and most of its representatives come from there.
QUERY = {
    "query": {"match": {"body": "storm"}},
    "sort": [{"n": "asc"}],
    "size": 10,
    "_source": ["n"],
    "highlight": {"fields": {"body": {}}},
    "track_scores": True,
}


def corpus() -> list[dict[str, Any]]:
    """Story A in 40 copies (n 0-39), 5 unrelated, story B in 20 copies (n 45-64), 125
    unrelated, 10 more copies of B (n 190-199: beyond the window, found by the probe)."""
    rng = random.Random(5)
    texts = variants(text(rng, 250, "storm"), 40, rng)
    texts += [text(rng, 200, "storm") for _ in range(5)]
    story_b = variants(text(rng, 250, "storm"), 30, rng)
    texts += story_b[:20]
    texts += [text(rng, 200, "storm") for _ in range(125)]
    texts += story_b[20:]
    fps = fingerprints(texts)
    return [
        {"_id": f"doc/{n} é", "n": n, "body": t, FINGERPRINT_FIELD: fp}
        for n, (t, fp) in enumerate(zip(texts, fps, strict=True))
    ]


def with_ids(docs: list[dict[str, Any]], keep: float = 1.0) -> list[dict[str, Any]]:
    """The documents with ``collapse_fp.id`` as the writers store it (a share ``1 - keep``
    without, as written with an Elasticsearch-generated id)."""
    rng = random.Random(9)
    out = copy.deepcopy(docs)
    for doc in out:
        keep_id = rng.random() < keep
        doc[FINGERPRINT_FIELD]["id"] = encode_id(doc["_id"]) if keep_id else None
    return out


def create(es: Elasticsearch, name: str, *, doc_values: bool) -> None:
    """One shard (scores equal across the indices compared); ``doc_values``: the mapping
    ``indexer init`` creates now (``packed`` and ``id`` in doc values), else an older one."""
    from indexer.mapping import index_mappings

    mappings = index_mappings(PARAMS)
    fp = mappings["properties"][FINGERPRINT_FIELD]["properties"]
    for field in ("packed", "id"):
        if doc_values:
            fp[field] = {"type": "binary", "doc_values": True}
        else:
            fp.pop(field, None)
    mappings["properties"].update({"body": {"type": "text"}, "n": {"type": "integer"}})
    es.indices.create(
        index=name, mappings=mappings, settings={"number_of_shards": 1, "number_of_replicas": 0}
    )


@pytest.fixture
def twin(es: Elasticsearch, index_name: str) -> Any:
    """Build an index pair with the same documents; deleted afterwards."""
    made: list[str] = []

    def build(suffix: str, docs: list[dict[str, Any]], *, doc_values: bool) -> str:
        name = f"{index_name}-{suffix}"
        create(es, name, doc_values=doc_values)
        index_docs(es, name, docs)
        made.append(name)
        return name

    yield build
    for name in made:
        es.options(ignore_status=404).indices.delete(index=name)


def refills(read: str, search: str = "refill") -> float:
    return metrics.HIT_READS.labels(search, read)._value.get()


def upstream(endpoint: str) -> float:
    """Requests the proxy sent to Elasticsearch's ``endpoint`` (answered 200)."""
    return metrics.UPSTREAM_REQUESTS.labels(endpoint=endpoint, status="200")._value.get()


def search(proxy_url: str, index: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(
        f"{proxy_url}/{index}/_search", json=body, params={"collapse_members": 50}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without what differs between two runs or two index names (the cursor in
    ``sort`` names the representatives shown by index and id: their ids are kept)."""
    out = copy.deepcopy(answer)
    out.pop("took")
    out["collapse"].pop("took_ms")
    for hit in out["hits"]["hits"]:
        hit.pop("_index")
        *values, cursor = hit["sort"]
        if str(cursor).startswith("collapse:"):  # a search_after page's cursor
            hit["sort"] = [*values, [doc_id for _, doc_id in decode_cursor(cursor)]]
        for member in hit["_collapse"]["members"]:
            member.pop("_index")
    return out


def test_refills_from_doc_values_answer_as_full_refills(
    es: Elasticsearch, twin: Any, proxy_url: str
) -> None:
    docs = with_ids(corpus())
    fast = twin("dv", docs, doc_values=True)
    full = twin("full", docs, doc_values=False)

    before = refills("doc_values"), refills("refused"), refills("full")
    probes = refills("doc_values", "probe"), refills("full", "probe")
    sent = upstream("_search"), upstream("_msearch")
    got = search(proxy_url, fast, QUERY)
    # Window and refills one _search each; the probe and the fill of the representatives
    # read from doc values travel together, as one _msearch.
    assert upstream("_msearch") == sent[1] + 1
    assert refills("doc_values") > before[0]
    assert upstream("_search") == sent[0] + 1 + refills("doc_values") - before[0]
    assert refills("refused") == before[1] and refills("full") == before[2]
    # The probe (B's copies beyond the window) read its candidates from doc values too.
    assert refills("doc_values", "probe") == probes[0] + 1
    want = search(proxy_url, full, QUERY)
    assert refills("refused") > before[1] and refills("full") > before[2]
    # The refill there was refused first: the probe read in full at once.
    assert refills("full", "probe") == probes[1] + 1

    assert comparable(got) == comparable(want)
    hits = got["hits"]["hits"]
    assert len(hits) == 10 and got["collapse"]["window"] > 30
    # The page's representatives beyond the first window came back whole: the user's _source
    # filtering, highlighting, sort values and score, and no trace of the doc-value read.
    beyond = [h for h in hits if h["_source"]["n"] >= 30]
    assert len(beyond) == 9
    for hit in beyond:
        assert set(hit) >= {"_id", "_score", "_source", "highlight", "sort", "_collapse"}
        assert hit["_source"] == {"n": hit["sort"][0]}
        assert "_collapse_fp" not in hit
    story_a, story_b = hits[0], next(h for h in hits if h["_source"]["n"] == 45)
    # B's copies beyond the window were found by the probe, through bands of B's hit read from
    # doc values (derived from its sketch, as the indexer derives the stored ones).
    assert got["collapse"]["window"] < 200
    assert story_a["_collapse"]["folded"] == 39 and story_b["_collapse"]["folded"] == 29
    members = {m["_id"] for m in story_b["_collapse"]["members"]}
    assert members == {f"doc/{n} é" for n in [*range(46, 65), *range(190, 200)]}


def test_collapse_total_from_doc_values_counts_as_in_full(
    es: Elasticsearch, twin: Any, proxy_url: str
) -> None:
    docs = with_ids(corpus())
    fast = twin("dv", docs, doc_values=True)
    full = twin("full", docs, doc_values=False)

    def total(index: str) -> dict[str, Any]:
        answer = httpx.post(
            f"{proxy_url}/{index}/_search",
            json={"query": QUERY["query"], "size": 10},
            params={"collapse_total": "true"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["collapse"]

    read = refills("doc_values", "total"), refills("refused", "total")
    got = total(fast)
    assert refills("doc_values", "total") == read[0] + 1
    want = total(full)  # refused from doc values, then read in full
    assert refills("refused", "total") == read[1] + 1
    # A, B and the 130 unrelated documents (some of which may fold by chance, the same way).
    assert got["total_groups"] == want["total_groups"] >= 100
    assert got["total_groups_relation"] == want["total_groups_relation"] == "eq"
    assert not got["degraded"] and not want["degraded"]


def test_documents_without_their_id_in_doc_values_are_fetched_in_full(
    es: Elasticsearch, twin: Any, proxy_url: str
) -> None:
    docs = corpus()
    partly = twin("partly", with_ids(docs, keep=0.7), doc_values=True)
    full = twin("full", with_ids(docs), doc_values=False)

    refused = refills("refused")
    got = search(proxy_url, partly, QUERY)
    assert refills("refused") == refused + 1
    # Remembered: the next search of that index reads its refills in full at once.
    again = search(proxy_url, partly, QUERY)
    assert refills("refused") == refused + 1
    want = comparable(search(proxy_url, full, QUERY))
    assert comparable(got) == want and comparable(again) == want


@pytest.mark.parametrize(
    ("body", "query", "allowed"),
    [
        (QUERY, {}, True),
        ({**QUERY, "rescore": {"query": {"rescore_query": {"match_all": {}}}}}, {}, False),
        ({**QUERY, "collapse": {"field": "collapse_fp.exact_key"}}, {}, False),
        ({"knn": {"field": "v", "query_vector": [1.0], "k": 5}}, {}, False),
        (QUERY, {"stored_fields": "n"}, False),
        (QUERY, {"preference": "_local"}, True),
    ],
)
def test_only_requests_whose_refills_read_alike_go_slim(
    body: dict[str, Any], query: dict[str, str], allowed: bool
) -> None:
    assert slim.eligible(body, query) is allowed


ID = f"{FINGERPRINT_FIELD}.id"


def test_a_slim_answer_that_cannot_stand_for_a_full_one_is_refused() -> None:
    packed = {f"{FINGERPRINT_FIELD}.packed": ["AAAA"]}
    hit = {
        "_index": "i",
        "_score": 1.0,
        "fields": {f"{FINGERPRINT_FIELD}.id": [base64.b64encode(b"a/b").decode()], **packed},
    }
    ok = {"_shards": {"failed": 0}, "hits": {"hits": [hit]}}
    read = {"_index": "i", "_id": "a/b", "_score": 1.0, "_collapse_fp": "AAAA"}
    assert slim.hits_of(ok) == [read]
    assert slim.hits_of({"_shards": {"failed": 1}, "hits": {"hits": [hit]}}) is None
    assert slim.hits_of({"hits": {"hits": [{**hit, "fields": {}}]}}) is None
    bad = {**hit, "fields": {f"{FINGERPRINT_FIELD}.id": ["not base64!"], **packed}}
    assert slim.hits_of({"hits": {"hits": [bad]}}) is None
    # Written before ``packed`` (or by another writer): read in full.
    unpacked = {**hit, "fields": {f"{FINGERPRINT_FIELD}.id": hit["fields"][ID]}}
    assert slim.hits_of({"hits": {"hits": [unpacked]}}) is None
    # collapse_total reads no id: a hit without any fingerprint is a singleton, a fingerprinted
    # one without ``packed`` refuses the read.
    bare = {"_index": "i", "_score": 1.0}
    assert slim.hits_of({"hits": {"hits": [bare]}}, identified=False) == [
        {"_index": "i", "_id": None, "_score": 1.0, "_collapse_fp": ""}
    ]
    versioned = {**bare, "fields": {f"{FINGERPRINT_FIELD}.version": ["v"]}}
    assert slim.hits_of({"hits": {"hits": [versioned]}}, identified=False) is None


def test_a_fill_failing_inside_the_probe_msearch_is_sent_again_alone(
    es: Elasticsearch, twin: Any, proxy_url: str
) -> None:
    """The fill rides in the probe's ``_msearch``; failing there, it is sent once more on its
    own (its own status and error, not the ``_msearch`` item's). Still failing, the page's
    representatives from doc values are shown without ``_source`` and the answer says why;
    the probe that travelled with it still counts the copies beyond the window."""
    docs = with_ids(corpus())
    for doc in docs:
        doc["note"] = "storm note"
    # Story B's first copy (n 45, a page representative read by a refill from doc values)
    # cannot be highlighted: the fill, which highlights as the user asked, fails as a whole.
    next(doc for doc in docs if doc["n"] == 45)["note"] = "storm " * 60
    name = twin("fill", docs, doc_values=True)
    es.indices.put_settings(index=name, settings={"index.highlight.max_analyzed_offset": 100})
    body = {**QUERY, "highlight": {"require_field_match": False, "fields": {"note": {}}}}

    def sent(endpoint: str, status: str) -> float:
        return metrics.UPSTREAM_REQUESTS.labels(endpoint=endpoint, status=status)._value.get()

    before = sent("_msearch", "200"), sent("_search", "400")
    got = search(proxy_url, name, body)
    assert sent("_msearch", "200") == before[0] + 1  # the probe with the fill
    assert sent("_search", "400") == before[1] + 1  # the fill alone, refused again

    info = got["collapse"]
    assert info["degraded"] is True
    assert "fill failed" in info["reason"]
    hits = got["hits"]["hits"]
    assert len(hits) == 10
    story_a = hits[0]
    assert story_a["_source"] == {"n": 0} and "highlight" in story_a  # from the first window
    beyond = [h for h in hits if h["sort"][0] >= 30]
    assert len(beyond) == 9
    for hit in beyond:
        assert "_source" not in hit and "_collapse_fp" not in hit
    story_b = next(h for h in hits if h["sort"][0] == 45)
    assert story_b["_collapse"]["folded"] == 29  # 19 in the window, 10 found by the probe
