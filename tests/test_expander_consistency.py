"""One group, one answer: the expander lists exactly what the search folded behind a
representative, on the real node.

The corpus (ranked by ``n``) holds the groups where finding candidates another way than the
search did gives another answer: a copy close to two representatives (it belongs to the
better-ranked one), inside the window, beyond it and with the better one on an earlier page;
members that share no MinHash band with their representative, inside the window (found by the
all-pairs comparison) and beyond it; a story whose copies are spread over the window and
beyond. Each search is compared in several forms: pages by ``from``, a page by ``search_after``,
ranked by score, a small window.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from indexer.grouping import Thresholds, matched_band, verified_pairs
from indexer.hits import decode
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

THRESHOLDS = Thresholds(24, 0.45, 10)
QUERY = {"match": {"body": "earthquake"}}
SORTED: dict[str, Any] = {"query": QUERY, "sort": [{"n": "asc"}]}
#: Where the window of page 1 (30 hits) ends: hits ranked from here on are found by the probe.
BEYOND = 200


def _relations(texts: list[str]) -> tuple[set[tuple[int, int]], Callable[[int, int], bool]]:
    """Which pairs of ``texts`` verify (i < j), and whether two share a MinHash band."""
    fps = fingerprints(texts)
    prints = decode([{"_source": {"collapse_fp": fp}} for fp in fps], THRESHOLDS.min_tokens).prints
    i, j, _, _ = verified_pairs(prints, prints, THRESHOLDS)
    pairs = {(int(a), int(b)) for a, b in zip(i, j, strict=True) if a < b}

    def band(a: int, b: int) -> bool:
        return matched_band(prints.minhash[a], prints.minhash[b]) is not None

    return pairs, band


def _two_representatives(rng: random.Random, a_band: bool = False) -> list[str]:
    """[a, b, c]: c verifies against a (sharing a band with it only if ``a_band``) and against
    b (sharing one); a and b do not verify. c's four quarters: a keeps the first three, b the
    last three."""
    for _ in range(200):
        quarters = [text(rng, 60, "earthquake") for _ in range(4)]
        a = " ".join([*quarters[:3], text(rng, 60, "earthquake")])
        b = " ".join([text(rng, 60, "earthquake"), *quarters[1:]])
        c = " ".join(quarters)
        pairs, band = _relations([a, b, c])
        if pairs == {(0, 2), (1, 2)} and band(0, 2) == a_band and band(1, 2):
            return [a, b, c]
    raise AssertionError("no text close to two representatives found")


def _no_shared_band(rng: random.Random) -> list[str]:
    """[a, copy]: they verify but share no MinHash band (the probe cannot find one from the
    other)."""
    for _ in range(200):
        base = text(rng, 240, "earthquake")
        words = base.split()
        for _ in range(len(words) // 8):
            words[rng.randrange(len(words))] = text(rng, 1)
        copy = " ".join(words)
        pairs, band = _relations([base, copy])
        if pairs == {(0, 1)} and not band(0, 1):
            return [base, copy]
    raise AssertionError("no copy without a shared band found")


def _corpus(es: Elasticsearch, index: str) -> dict[str, int]:
    """Index the corpus; returns the rank (``n``) of each named document."""
    rng = random.Random(21)
    placed: dict[str, tuple[int, str]] = {}
    a1, b1, c1 = _two_representatives(rng)  # all in the window
    placed.update(a1=(0, a1), b1=(1, b1), c1=(2, c1))
    a2, b2, c2 = _two_representatives(rng)  # the shared copy beyond the window
    placed.update(a2=(3, a2), b2=(4, b2), c2=(BEYOND, c2))
    d, d_copy = _no_shared_band(rng)
    placed.update(d=(5, d), d_copy=(6, d_copy))
    e, e_copy = _no_shared_band(rng)
    placed.update(e=(7, e), e_copy=(BEYOND + 1, e_copy))
    story = variants(text(rng, 300, "earthquake"), 16, rng)
    placed["w0"] = (8, story[0])
    for k, copy in enumerate(story[1:], start=1):  # 4 in the window, 11 beyond
        placed[f"w{k}"] = (20 + k if k <= 4 else BEYOND + 10 + k, copy)
    # A representative of page 1 and one of page 2 share a copy ranked beyond page 2's window.
    a3, b3, c3 = _two_representatives(rng, a_band=True)
    placed.update(a3=(9, a3), b3=(15, b3), c3=(BEYOND + 40, c3))
    used = {n for n, _ in placed.values()}
    fillers = [n for n in range(BEYOND + 60) if n not in used]
    for n in fillers:
        placed[f"u{n}"] = (n, text(rng, 150, "earthquake"))
    names = list(placed)
    texts = [placed[name][1] for name in names]
    docs = [
        {"_id": name, "n": placed[name][0], "body": body, "collapse_fp": fp}
        for name, body, fp in zip(names, texts, fingerprints(texts), strict=True)
    ]
    create_index(es, index)
    index_docs(es, index, docs)
    return {name: placed[name][0] for name in names}


def _post(url: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(url, json=body, params=params, timeout=60)
    assert answer.status_code == 200, answer.text
    out: dict[str, Any] = answer.json()
    return out


def _expanded(
    proxy_url: str, index: str, rep: str, body: dict[str, Any], controls: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every member the expander lists for ``rep``, page by page (7 a page), each page's
    ``hits.total`` checked against the first."""
    url = f"{proxy_url}/{index}/_collapse/{rep}"
    members: list[dict[str, Any]] = []
    total = None
    while True:
        page = _post(url, body, {**controls, "from": len(members), "size": 7})
        assert page["collapse"]["representative"] is True
        assert total is None or page["hits"]["total"] == total
        total = page["hits"]["total"]
        members += page["hits"]["hits"]
        if len(page["hits"]["hits"]) < 7:
            assert len(members) == total["value"]
            return members


def _check(
    proxy_url: str, index: str, body: dict[str, Any], controls: dict[str, Any] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Search, then expand every representative of the page with the same body and controls:
    the members and their count are the search's. Returns each representative's members."""
    controls = {"collapse_explain": "true", **(controls or {})}
    out = _post(f"{proxy_url}/{index}/_search", body, {**controls, "collapse_members": 1000})
    relation = out["collapse"]["folded_relation"]
    got: dict[str, list[dict[str, Any]]] = {}
    for hit in out["hits"]["hits"]:
        folded, listed = hit["_collapse"]["folded"], hit["_collapse"]["members"]
        assert len(listed) == folded
        members = _expanded(proxy_url, index, hit["_id"], body, controls)
        assert len(members) == folded, (hit["_id"], folded, [m["_id"] for m in members])
        assert [m["_id"] for m in members] == [m["_id"] for m in listed], hit["_id"]
        for member, entry in zip(members, listed, strict=True):
            assert member["_collapse"] == {
                k: v for k, v in entry.items() if k not in ("_id", "_index", "_score")
            }
            if "sort" not in body:  # sorted, a hit has no score (the probe's track them)
                assert member["_score"] == entry["_score"]
        first = _post(f"{proxy_url}/{index}/_collapse/{hit['_id']}", body, controls)
        assert first["hits"]["total"] == {"value": folded, "relation": relation}
        got[hit["_id"]] = members
    return got


def _ids(members: list[dict[str, Any]]) -> list[str]:
    return [m["_id"] for m in members]


def test_every_representative_expands_to_what_the_search_folded(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    rank = _corpus(es, index_name)
    page1 = _check(proxy_url, index_name, {**SORTED, "size": 10})
    assert list(page1)[:7] == ["a1", "b1", "a2", "b2", "d", "e", "w0"]
    found = {m["_id"]: m["_collapse"] for ms in page1.values() for m in ms}
    # A copy close to two representatives belongs to the better-ranked one, in the window ...
    assert "c1" in _ids(page1["a1"]) and "c1" not in _ids(page1["b1"])
    assert found["c1"]["found"] == "window" and found["c1"]["band"] is None
    # ... and beyond it, where the probe found it through the other one's band.
    assert "c2" in _ids(page1["a2"]) and "c2" not in _ids(page1["b2"])
    assert found["c2"]["found"] == "probe" and found["c2"]["band"] is None
    # The window finds a copy without a shared band; beyond it, nothing looks it up.
    assert _ids(page1["d"]) == ["d_copy"] and found["d_copy"]["band"] is None
    assert "e_copy" not in found
    story = sorted((k for k in rank if k.startswith("w") and k != "w0"), key=rank.__getitem__)
    assert _ids(page1["w0"]) == story
    assert {found[k]["found"] for k in story} == {"window", "probe"}

    page2 = _check(proxy_url, index_name, {**SORTED, "from": 10, "size": 10})
    assert "b3" in page2 and "c3" not in _ids(page2["b3"])  # a3, on page 1, has it
    assert "c3" in _ids(page1["a3"])

    # The same page reached by search_after (its cursor carries page 1's representatives).
    first = _post(f"{proxy_url}/{index_name}/_search", {**SORTED, "size": 10}, {})
    after = {**SORTED, "size": 10, "search_after": first["hits"]["hits"][-1]["sort"]}
    by_cursor = _check(proxy_url, index_name, after)
    assert "b3" in by_cursor and "c3" not in _ids(by_cursor["b3"])

    # Ranked by score, and with a window too small for most groups: the same agreement.
    _check(proxy_url, index_name, {"query": QUERY, "size": 10})
    small = _check(proxy_url, index_name, {**SORTED, "size": 10}, {"collapse_window": "12"})
    assert "c2" in _ids(small["a2"])


def test_a_document_that_is_no_representative_folds_nothing(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    _corpus(es, index_name)
    url = f"{proxy_url}/{index_name}/_collapse"
    body = {**SORTED, "size": 10}
    for doc_id in ("c1", "b3", f"u{BEYOND + 50}"):  # a member; page 2's; far down the ranking
        out = _post(f"{url}/{doc_id}", body, {})
        assert out["hits"]["total"] == {"value": 0, "relation": "eq"}, doc_id
        assert out["hits"]["hits"] == [] and out["collapse"]["representative"] is False
    missing = httpx.post(f"{url}/nope", json=body, timeout=30)
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "resource_not_found_exception"
    assert _post(f"{url}/b3", {**body, "from": 10}, {})["collapse"]["representative"] is True
    # A search by query string (q=, from/size) is expanded with the same q; its from/size go
    # in the body, since the expander's query string pages the members.
    q = {"q": "body:earthquake"}
    found = _post(f"{proxy_url}/{index_name}/_search", {}, {**q, "from": 2, "size": 5})
    assert any(hit["_collapse"]["folded"] for hit in found["hits"]["hits"])
    for hit in found["hits"]["hits"]:
        expanded = _post(f"{url}/{hit['_id']}", {"from": 2, "size": 5}, {**q, "size": 100})
        assert expanded["hits"]["total"]["value"] == hit["_collapse"]["folded"]
        assert len(expanded["hits"]["hits"]) == hit["_collapse"]["folded"]
