"""A page of 100-149 words and a copy whose MinHash estimate fell just under the threshold fold
when their SimHash are close (the relief of ``indexer.grouping.Thresholds``), through the proxy
on a real node; the same pair with the relief turned off, or told apart by the verdict, shows
that the relief decided."""

from __future__ import annotations

import numpy as np
from elasticsearch import Elasticsearch

from indexer.fingerprints import fingerprint_arrays
from indexer.grouping import CLOSE_BELOW, CLOSE_FROM, DEFAULT_THRESHOLDS, Prints, Thresholds, verify
from tests.proxy_support import index_texts
from tests.test_marginal_verdicts import OTHER, WORDS
from tests.test_proxy_search import folded_groups

PAGE_WORDS = WORDS[:125]
PAGE = " ".join(PAGE_WORDS)
#: The proxy's thresholds with the relief at its documented values, and turned off.
ON = Thresholds(24, 0.45, 9, close_distance=16, close_relief=0.06)
OFF = Thresholds(24, 0.45, 9, close_distance=-1)


def _edited(every: int, start: int) -> str:
    words = list(PAGE_WORDS)
    for k, at in enumerate(range(start, len(words), every)):
        words[at] = f"{OTHER[k % len(OTHER)]}q"
    return " ".join(words)


def _under_the_threshold_copy() -> tuple[str, int, float]:
    """The first copy (every n-th word replaced, from some word on) that verifies against the
    page only by the relief: within close_distance bits, less similar than the length needs
    without it; with its distance and similarity."""
    copies = [_edited(every, start) for every in range(4, 16) for start in range(every)]
    f = fingerprint_arrays([PAGE, *copies])
    p = Prints(f.simhash, f.minhash, np.arange(len(f)), f.token_count, f.present, f.numbers)
    rows = np.arange(1, len(f))
    page = np.zeros(len(rows), dtype=np.int64)
    ok, ham, sim = verify(p, rows, p, page, ON)
    plain, _, _ = verify(p, rows, p, page, OFF)
    relief = ok & ~plain & (ham <= ON.close_distance)
    k = int(np.flatnonzero(relief)[0])
    return copies[k], int(ham[k]), float(sim[k])


COPY, DISTANCE, SIMILARITY = _under_the_threshold_copy()


def test_the_copy_sits_where_the_test_needs_it() -> None:
    assert ON == DEFAULT_THRESHOLDS  # what the proxy collapses with
    f = fingerprint_arrays([PAGE, COPY])
    assert CLOSE_FROM <= min(f.token_count) < CLOSE_BELOW
    needed = float(DEFAULT_THRESHOLDS.similarity_for(np.array([min(f.token_count)]))[0])
    assert needed - DEFAULT_THRESHOLDS.close_relief <= SIMILARITY < needed
    assert DEFAULT_THRESHOLDS.close_distance >= DISTANCE


def test_a_copy_under_the_threshold_with_a_close_simhash_folds_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    index_texts(es, index_name, {"page": PAGE, "copy": COPY, "other": " ".join(WORDS[125:])})
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {"page": ["copy"], "other": []}
