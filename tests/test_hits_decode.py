"""``indexer.hits.decode`` of any mix of hits: read in full, from doc values, of another
version, without fingerprint or with a broken one, decodes each hit as it would alone under the
version the batch decodes."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import FingerprintParams, fingerprint_arrays, pack_many
from indexer.hits import (
    DEFAULT_VERSION,
    FINGERPRINT_FIELD,
    SLIM_KEY,
    decode,
    exact_keys_of,
    probe_keys,
    probe_keys_many,
)
from tests.test_ingest import prose

MIN_TOKENS = FingerprintParams().min_tokens
PROBES_BOTH = frozenset({"bands", "blocks"})
MAIN = FingerprintParams()
OTHER = FingerprintParams(minhash_size=64, minhash_bits=16)
TEXTS = ["one", prose(1, 30), prose(2, 200), prose(3, 600)]


def _packed(p: FingerprintParams) -> tuple[list[str], list[str]]:
    arrays = fingerprint_arrays(TEXTS, p)
    packed = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    return packed, arrays.exact_keys


PACKED, KEYS = _packed(MAIN)
OTHER_PACKED, _ = _packed(OTHER)


def _full(p: FingerprintParams, packed: str, key: str) -> dict[str, Any]:
    fp = {"version": p.version, "packed": packed, "exact_key": key}
    return {"_index": "i", "_id": "x", "_source": {"title": "t", FINGERPRINT_FIELD: fp}}


#: Every kind of hit a window or a probe may hold.
KINDS: list[dict[str, Any]] = [
    *(_full(MAIN, v, k) for v, k in zip(PACKED, KEYS, strict=True)),
    *({"_index": "i", "_id": "s", SLIM_KEY: v} for v in PACKED),
    _full(OTHER, OTHER_PACKED[2], KEYS[2]),
    {"_index": "i", "_id": "s", SLIM_KEY: ""},  # read from doc values, no fingerprint
    {"_index": "i", "_id": "s", SLIM_KEY: PACKED[1][:-4]},  # a wrong length
    {"_index": "i", "_id": "n", "_source": {"title": "no fingerprint"}},
    {"_index": "i", "_id": "n", "_source": {FINGERPRINT_FIELD: "not an object"}},
    {"_index": "i", "_id": "n", "_source": ["not", "an", "object"]},
    {"_index": "i", "_id": "n"},
    {"_index": "i", "_id": "v", "_source": {FINGERPRINT_FIELD: {"packed": PACKED[0]}}},
]


def _version_of(hits: list[dict[str, Any]]) -> str | None:
    """The version the docstring of ``decode`` promises, hit by hit."""
    versions: Counter[str | None] = Counter()
    slim = False
    for hit in hits:
        if SLIM_KEY in hit:
            slim = True
            continue
        source = hit.get("_source")
        fp = source.get(FINGERPRINT_FIELD) if isinstance(source, dict) else None
        if isinstance(fp, dict):
            versions[fp.get("version")] += 1
    version = versions.most_common(1)[0][0] if versions else None
    return DEFAULT_VERSION if version is None and slim else version


def _alone(hit: dict[str, Any], version: str) -> tuple[Any, ...]:
    p = decode([hit], MIN_TOKENS, version).prints
    return tuple(a[0].tolist() for a in (p.simhash, p.key, p.token_count, p.present, p.numbers))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(range(len(KINDS))), max_size=12), st.booleans())
def test_a_batch_decodes_each_hit_as_alone(picks: list[int], forced: bool) -> None:
    hits = [KINDS[i] for i in picks]
    version = MAIN.version if forced else None
    got = decode(hits, MIN_TOKENS, version)
    expected = version or _version_of(hits)
    assert (got.params.version if got.params else None) == expected
    p = got.prints
    assert len(p.present) == len(hits)
    if expected is None:
        assert not p.present.any()
        return
    for row, hit in enumerate(hits):
        one = tuple(
            a[row].tolist() for a in (p.simhash, p.key, p.token_count, p.present, p.numbers)
        )
        assert one == _alone(hit, expected)
        if p.present[row]:
            alone = decode([hit], MIN_TOKENS, expected).prints.minhash[0]
            assert np.array_equal(p.minhash[row], alone)


def test_doc_value_hits_give_the_stored_exact_keys() -> None:
    hits = [{"_index": "i", "_id": "s", SLIM_KEY: v} for v in PACKED] + [KINDS[len(PACKED)]]
    assert exact_keys_of(hits, MAIN) == [*KEYS, KEYS[0]]
    got = decode(hits, MIN_TOKENS)
    assert got.params == MAIN and got.prints.present.all()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(TEXTS))), max_size=6),
    st.sampled_from([frozenset(), frozenset({"bands"}), frozenset({"blocks"}), PROBES_BOTH]),
    st.sampled_from([MAIN, OTHER, FingerprintParams(minhash_size=32, minhash_bits=32, blocks=8)]),
)
def test_probe_keys_of_many_are_each_ones(
    rows: list[int], probes: frozenset[str], p: FingerprintParams
) -> None:
    arrays = fingerprint_arrays([TEXTS[i] for i in rows], p)
    many = probe_keys_many(arrays.simhash, arrays.minhash, p, probes)
    assert many == [
        probe_keys(int(s), m, p, probes)
        for s, m in zip(arrays.simhash, arrays.minhash, strict=True)
    ]
