"""A hit on the thresholds of a representative joins its group only when the group's members
corroborate it (the grouping rule in ``indexer.grouping``), through the proxy on a real node."""

from __future__ import annotations

import numpy as np
from elasticsearch import Elasticsearch

from indexer.fingerprints import fingerprint_arrays
from indexer.grouping import DEFAULT_THRESHOLDS, Prints, _unsure_below, verify
from tests.proxy_support import index_texts
from tests.test_proxy_search import folded_groups

PAGE = (
    "the keyring service keeps secrets for each user session and hands them to programs "
    "that ask through the kernel interface when a login begins the manager creates a fresh ring "
    "links it to the persistent ring of the account and removes both when the last process of "
    "that account exits administrators can inspect every ring with the command line tool list "
    "its keys show their permissions revoke a key that leaked or set a timeout after which the "
    "kernel discards it without asking anyone programs should request a key by description "
    "rather than by serial number because serial numbers change whenever the machine restarts "
    "while descriptions stay the same across boots and across machines that share a home "
    "directory over the network a ring may hold other rings so that a session inherits the "
    "keys of the user without copying them and a revoked key disappears from every ring that "
    "linked it at once quotas limit how many keys and how many bytes one user may hold so that "
    "a runaway program cannot exhaust the memory of the kernel on a shared server"
)
WORDS = PAGE.split()
OTHER = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india")


def _edited(every: int, start: int, salt: str) -> str:
    """The page with every ``every``-th word from ``start`` on replaced by another."""
    words = list(WORDS)
    for k, at in enumerate(range(start, len(words), every)):
        words[at] = f"{OTHER[k % len(OTHER)]}{salt}"
    return " ".join(words)


EDITED = _edited(12, len(WORDS) // 2 + 3, "m")  # its second half edited: a sure copy
SIBLING = _edited(11, 0, "x")  # every eleventh word changed from the start: on the threshold


def test_the_texts_sit_where_the_test_needs_them() -> None:
    """The edited copy verifies surely against the page; the sibling verifies against the
    page only marginally, and not against the edited copy."""
    f = fingerprint_arrays([PAGE, EDITED, SIBLING])
    p = Prints(f.simhash, f.minhash, np.arange(3), f.token_count, f.present, f.numbers)
    ok, _, sim = verify(p, np.array([1, 2, 2]), p, np.array([0, 0, 1]), DEFAULT_THRESHOLDS)
    unsure = _unsure_below(DEFAULT_THRESHOLDS, p.minhash.shape[1])[0, -1]
    assert ok.tolist() == [True, True, False]
    assert sim[0] >= unsure > sim[1] >= DEFAULT_THRESHOLDS.min_similarity


def test_a_hit_on_the_thresholds_joins_only_a_group_that_corroborates_it(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """Ranked after the page and its edited copy, the sibling stays a result of its own; ranked
    before the copy (the page alone to corroborate), it folds behind the page, and the copy
    still does."""
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    index_texts(es, index_name, {"page": PAGE, "edited": EDITED, "sibling": SIBLING})
    assert folded_groups(proxy_url, index_name, body) == {"page": ["edited"], "sibling": []}
    es.indices.delete(index=index_name)
    index_texts(es, index_name, {"page": PAGE, "sibling": SIBLING, "edited": EDITED})
    assert folded_groups(proxy_url, index_name, body) == {"page": ["edited", "sibling"]}
