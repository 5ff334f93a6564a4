"""The steps of the collapsed search (``collapse.search``) one by one, as pure functions on small
inputs: no network. The real-node tests (test_proxy_search, test_proxy_paging,
test_slim_refills, test_expander_consistency...) pin the whole search end to end."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import numpy as np
import pytest

import collapse.search.grouped as grouped
import collapse.search.reads as reads
from collapse import paging, slim
from collapse.errors import Malformed
from collapse.executor import SubResult, SubSearch
from collapse.params import CollapseParams
from collapse.rounds import Rounds
from collapse.search.beyond import Beyond, fill, fill_body, probe_body, verify
from collapse.search.fetches import Limits, check_body, prefix_body, prior_body, window_body
from collapse.search.members import Found
from collapse.search.render import Outcome, render
from collapse.search.request import SearchRequest, parse
from collapse.search.window import Window, refill_step, total_of
from collapse.settings import Settings
from indexer.hits import SLIM_KEY
from tests.proxy_support import fingerprints, text, variants

SETTINGS = Settings()


def _req(body: dict[str, Any] | None = None, query: dict[str, str] | None = None) -> SearchRequest:
    ctl = CollapseParams.from_query({}, SETTINGS)
    return parse(SETTINGS, ctl, "docs", dict(body or {}), dict(query or {}))


def _hits(n_stories: int, copies: int, seed: int = 3) -> list[dict[str, Any]]:
    """Ranked hits: each story followed by its copies, fingerprints in ``_source``."""
    rng = random.Random(seed)
    texts = [t for s in range(n_stories) for t in variants(text(rng, 200, f"s{s}"), copies, rng)]
    return [
        {"_index": "docs", "_id": f"d{i}", "_score": 10.0 - i / 100, "_source": {"collapse_fp": fp}}
        for i, fp in enumerate(fingerprints(texts))
    ]


def _window(req: SearchRequest, hits: list[dict[str, Any]], complete: bool = True) -> Window:
    first = SubResult(200, {"took": 3, "hits": {"total": {"value": len(hits)}, "hits": hits}})
    groups = grouped.start(hits, [], None, req.thresholds)
    return Window(first, groups, Limits(req, None), complete, 3, None, ())


# -- the request ------------------------------------------------------------------------------


def test_parse_reads_q_from_size_and_leaves_the_rest() -> None:
    query = {"q": "flood", "df": "body", "from": "10", "size": "5", "routing": "r1"}
    req = parse(SETTINGS, CollapseParams.from_query({}, SETTINGS), "docs", {}, query)
    assert req.body["query"] == {"query_string": {"query": "flood", "default_field": "body"}}
    assert (req.start, req.size, req.end) == (10, 5, 15)
    assert req.header == {"routing": "r1"} and query == {"routing": "r1"}
    assert req.cursor is None and not req.rebuild and req.pit is None and req.slim


@pytest.mark.parametrize("query", [{"from": "-1"}, {"size": "x"}])
def test_parse_refuses_what_elasticsearch_refuses(query: dict[str, str]) -> None:
    with pytest.raises(Malformed):
        _req(query=query)


def test_parse_splits_our_cursor_and_caps_it() -> None:
    reps = [("docs", f"d{i}") for i in range(300)]
    req = _req({"search_after": [1.5, paging.encode_cursor(reps)], "sort": ["n"]})
    assert req.body["search_after"] == [1.5]
    assert req.cursor == tuple(reps[-SETTINGS.collapse_cursor_reps :])
    assert not req.rebuild
    plain = _req({"search_after": [1.5], "sort": ["n"]})
    assert plain.cursor is None and plain.rebuild


def test_internal_searches_carry_the_point_in_time() -> None:
    req = _req({"pit": {"id": "abc"}, "rescore": {}}, {"preference": "p"})
    sub = req.internal({"size": 1})
    assert sub.index is None and sub.body["pit"] == {"id": "abc"} and not sub.primary
    assert sub.header == {"preference": "p"} and not req.slim  # rescore: refills in full


# -- the window's fetches ---------------------------------------------------------------------


def test_window_bodies_first_fetch_and_refills() -> None:
    req = _req({"query": {"match_all": {}}, "aggs": {"a": {}}})
    first = window_body(req, 30)
    assert (first["from"], first["size"], first["aggs"]) == (0, 30, {"a": {}})
    refill = window_body(req, 45, [{"_id": "x"}] * 30)
    assert (refill["from"], refill["size"], refill["track_total_hits"]) == (30, 45, False)
    assert "aggs" not in refill
    after = _req({"search_after": [3], "sort": ["n"]})
    refill = window_body(after, 10, [{"sort": [7]}])
    assert refill["search_after"] == [7] and "from" not in refill


def test_limits_size_every_fetch_within_a_refusal() -> None:
    req = _req({"pit": {"id": "p"}}, {"size": "10"})  # a point in time: nothing remembered
    limits = Limits(req, None)
    assert (limits.max_window, limits.target, limits.cap(10_000)) == (1000, 30, 10_000)
    refusal = SubResult(
        400, {"error": {"reason": "from + size must be less than or equal to: [20]"}}
    )
    small = limits.learnt(refusal)
    assert small is not None and (small.max_window, small.target, small.cap(500)) == (20, 20, 20)
    assert small.learnt(refusal) is None  # no news
    assert prefix_body(req, small)["size"] == 20


def test_check_and_prior_bodies() -> None:
    req = _req({"search_after": [1, paging.encode_cursor([("docs", "a")])]}, {"from": "0"})
    assert check_body(_req(query={"from": "990", "size": "20"}))["from"] == 1010
    assert prior_body(req, Limits(req, None))["size"] == 1


def test_refill_step_and_total() -> None:
    assert refill_step(30, 0, 10) == 30
    assert refill_step(30, 5, 10) == 45  # 75 needed at 6 hits a group, +25%
    assert refill_step(100, 99, 100) == 50  # at least half again
    assert total_of({"hits": {"total": 7}}) == (7, True)
    assert total_of({"hits": {"total": {"value": 10000, "relation": "gte"}}}) == (10000, False)
    assert total_of({}) == (None, False)


# -- the groups -------------------------------------------------------------------------------


def test_a_refill_groups_like_the_whole_window() -> None:
    req = _req()
    hits = _hits(4, 5)
    whole = grouped.start(hits, [], None, req.thresholds)
    held = grouped.start(hits[:7], [], None, req.thresholds)
    parts = grouped.extend(held, hits[7:], [], req.thresholds)
    assert whole.representatives == parts.representatives == [0, 5, 10, 15]
    assert np.array_equal(whole.grouping.rep, parts.grouping.rep)


def test_earlier_pages_rank_before_the_window() -> None:
    req = _req()
    hits = _hits(2, 3)
    g = grouped.start(hits[1:], hits[:1], None, req.thresholds)  # a rebuilt prefix
    assert g.n_prior == 1 and g.shown == [("docs", "d0")]
    assert g.representatives == [2]  # d1, d2 fold into the earlier page's d0


# -- doc values or full hits ------------------------------------------------------------------


def test_doc_value_reads_stand_for_full_ones_or_are_refused() -> None:
    req = _req()
    fp = fingerprints([text(random.Random(1), 120)])[0]
    encoded = "ZDA="  # base64 of "d0"
    reading = reads.prepare(req, {"size": 1}, slim.refill_body, req.own, allowed=req.slim)
    assert reading.doc_values and reading.sub.body["stored_fields"] == "_none_"
    hit = {"_index": "docs", "_score": 1.0, "fields": {slim.PACKED_FIELD: [fp["packed"]]}}
    hit["fields"][slim.ID_FIELD] = [encoded]
    answer = SubResult(200, {"hits": {"hits": [hit]}})
    assert reads.take(req, "refill", reading, [answer])
    assert answer.body is not None and answer.body["hits"]["hits"][0]["_id"] == "d0"
    req = _req(query={}, body={})
    index = "refused-unit-test"
    refusing = parse(SETTINGS, req.ctl, index, {}, {})
    broken = SubResult(200, {"hits": {"hits": [{"_index": index, "fields": {}}]}})
    assert not reads.take(
        refusing, "refill", reads.prepare(refusing, {}, slim.refill_body, refusing.own), [broken]
    )
    assert not reads.prepare(refusing, {}, slim.refill_body, refusing.own).doc_values


# -- beyond the window, and the answer --------------------------------------------------------


def test_no_probe_when_the_window_holds_everything_or_for_knn() -> None:
    req = _req()
    assert probe_body(req, _window(req, _hits(2, 2)), [0, 2], frozenset({"bands"})) is False
    knn = _req({"knn": {"field": "v", "query_vector": [1], "k": 3}})
    window = _window(knn, _hits(2, 2), complete=False)
    assert probe_body(knn, window, [0, 2], frozenset({"bands"})) is True


def test_probe_finds_and_credits_copies_beyond_the_window() -> None:
    req = _req()
    hits = _hits(2, 4)
    window = _window(req, [hits[0], hits[4]], complete=False)
    body = probe_body(req, window, [0, 1], frozenset({"bands"}))
    assert isinstance(body, dict) and body["size"] == SETTINGS.collapse_probe_size
    answer = SubResult(200, {"hits": {"total": {"value": 6}, "hits": hits[1:4] + hits[5:]}})
    beyond = verify(req, window, [0, 1], [answer])
    assert beyond.probed == 6 and not beyond.truncated
    assert {w: f.count for w, f in beyond.found.items()} == {0: 3, 1: 3}
    assert verify(req, window, [0, 1], [SubResult(500, None)]).degraded == ("probe failed",)


def test_the_fill_puts_full_hits_in_place_of_doc_value_ones() -> None:
    req = _req({"query": {"match": {"body": "x"}}, "from": 0})
    hits = _hits(2, 1)
    slim_hits = [{"_index": "docs", "_id": h["_id"], SLIM_KEY: "x"} for h in hits]
    window = _window(req, hits)
    window = Window(
        window.first,
        grouped.Grouped(slim_hits, 0, window.groups.decoded, window.groups.grouping, [], 0),
        window.limits,
        True,
        3,
        None,
        (),
    )
    body = fill_body(req, window, [0, 1])
    assert body is not None and body["size"] == 2 and "from" not in body
    filled, missing = fill(window, [0, 1], [SubResult(200, {"hits": {"hits": hits[:1]}})])
    assert filled.hits[0] is hits[0] and SLIM_KEY not in filled.hits[1] and missing


def test_render_folds_members_behind_their_representative() -> None:
    req = _req(query={"size": "1"})
    hits = _hits(2, 3)
    window = _window(req, hits)
    extra = {"_id": "p", "_index": "docs", "_score": 0.1, "hamming": 3, "similarity": 0.9}
    done = Outcome(req, window, Beyond({0: Found((extra,))}))
    assert done.members(0) == (done.members(0)[0], 3) and done.page == [0]
    out = render(done)
    (rep,) = out["hits"]["hits"]
    assert (rep["_id"] == "d0" and "_source" not in rep) or "collapse_fp" not in rep["_source"]
    assert rep["_collapse"]["folded"] == 3
    assert [m["_id"] for m in rep["_collapse"]["members"]] == ["d1", "d2", "p"]
    assert out["collapse"]["groups"] == 1 and out["collapse"]["folded_relation"] == "eq"


# -- searches of one _msearch in lockstep ------------------------------------------------------


def test_rounds_send_what_searches_wait_for_together() -> None:
    batches: list[list[str]] = []

    async def send(subs: list[SubSearch]) -> list[SubResult]:
        batches.append([str(s.body["n"]) for s in subs])
        await asyncio.sleep(0)
        return [SubResult(200, {"n": s.body["n"]}) for s in subs]

    async def search(rounds: Rounds, name: str, steps: int) -> list[Any]:
        got = []
        for i in range(steps):
            (answer,) = await rounds.send([SubSearch(None, {"n": f"{name}{i}"})])
            assert answer.body is not None
            got.append(answer.body["n"])
        return got

    async def main() -> list[list[Any]]:
        rounds = Rounds(send)
        return await rounds.each([search(rounds, "a", 2), search(rounds, "b", 1)])

    assert asyncio.run(main()) == [["a0", "a1"], ["b0"]]
    assert batches == [["a0", "b0"], ["a1"]]
