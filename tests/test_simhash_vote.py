"""The SimHash vote against a literal reference: per document, per feature, per bit, a count.

The fast vote (byte histograms halved into bit counts, in blocks of documents) must give the
same bit counts and the same fingerprints as the textbook loop, for both weightings, empty
documents, ties, repeated features, and inputs that span several blocks.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import simhash
from indexer.fingerprints.simhash import simhash_segments

U64 = st.integers(min_value=0, max_value=(1 << 64) - 1)
# a small pool as well as any value, so documents repeat features and votes can tie
FEATURE = st.one_of(U64, st.sampled_from([0, 1, (1 << 64) - 1, 0x8000000000000000, 0xF0F0F0F0]))
DOCS = st.lists(st.lists(FEATURE, max_size=40), max_size=30)


def reference_ones(docs: list[list[int]]) -> list[list[int]]:
    """Per document, per bit (column 0 = bit 63), how many features have that bit set."""
    return [[sum((x >> (63 - c)) & 1 for x in doc) for c in range(64)] for doc in docs]


def reference_simhash(doc: list[int], presence: bool) -> int:
    """Charikar's SimHash as written: each feature adds +1 or -1 to each bit's total."""
    features = list(dict.fromkeys(doc)) if presence else doc
    total = [0] * 64
    for x in features:
        for i in range(64):
            total[i] += 1 if (x >> i) & 1 else -1
    return sum(1 << i for i in range(64) if total[i] > 0)


def concatenated(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    h = np.array([x for doc in docs for x in doc], dtype=np.uint64)
    return h, np.array([len(doc) for doc in docs], dtype=np.int64)


@settings(max_examples=200, deadline=None)
@given(docs=DOCS, presence=st.booleans())
def test_vote_equals_the_literal_reference(docs: list[list[int]], presence: bool) -> None:
    h, counts = concatenated(docs)
    got = simhash_segments(h, counts, presence=presence)
    assert got.dtype == np.uint64 and got.shape == (len(docs),)
    assert [int(v) for v in got] == [reference_simhash(doc, presence) for doc in docs]
    if len(h):
        assert simhash._ones_per_bit(h, counts).tolist() == reference_ones(docs)


@settings(max_examples=100, deadline=None)
@given(
    docs=DOCS,
    presence=st.booleans(),
    block_docs=st.integers(1, 5),
    block_features=st.integers(1, 50),
)
def test_blocks_do_not_change_the_vote(
    docs: list[list[int]], presence: bool, block_docs: int, block_features: int
) -> None:
    """Small blocks, so that random inputs cross block edges (and documents longer than a
    block go alone): the same values as the literal reference."""
    h, counts = concatenated(docs)
    with (
        mock.patch.object(simhash, "_BLOCK_DOCS", block_docs),
        mock.patch.object(simhash, "_BLOCK_FEATURES", block_features),
    ):
        got = simhash_segments(h, counts, presence=presence)
        ones = simhash._ones_per_bit(h, counts).tolist() if len(h) else []
    assert [int(v) for v in got] == [reference_simhash(doc, presence) for doc in docs]
    if len(h):
        assert ones == reference_ones(docs)


def test_many_documents_and_a_long_one_at_the_real_block_sizes() -> None:
    """More documents than one block, and one document longer than a block of features,
    against the unpacked bits summed per document (the vote with no histogram at all)."""
    rng = np.random.default_rng(18)
    counts = rng.integers(0, 300, 700)
    counts[[0, 5, 699]] = 0
    counts[350] = simhash._BLOCK_FEATURES + 1000
    h = rng.integers(0, 1 << 64, int(counts.sum()), dtype=np.uint64, endpoint=False)
    bits = simhash.hash_bits(h).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    want = np.array([bits[s : s + c].sum(axis=0) for s, c in zip(starts, counts, strict=True)])
    assert np.array_equal(simhash._ones_per_bit(h, counts), want)
    expect = np.packbits(2 * want > counts[:, None], axis=1).view(">u8").ravel()
    assert np.array_equal(simhash_segments(h, counts), expect.astype(np.uint64))


def test_ties_and_empty_documents_give_zero() -> None:
    one, other = 0x00000000FFFFFFFF, 0xFFFFFFFF00000000  # every bit: one vote each way
    h, counts = concatenated([[], [one, other], [one], []])
    assert simhash_segments(h, counts).tolist() == [0, 0, one, 0]
    assert simhash_segments(np.zeros(0, dtype=np.uint64), [0, 0]).tolist() == [0, 0]
