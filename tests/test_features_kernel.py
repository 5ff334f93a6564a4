"""The compiled SimHash and MinHash (``indexer.fingerprints.features_kernel``) give what the
numpy definitions give (``document_features``, ``simhash_segments``, ``sketch_segments``):
for any token hashes, documents of any length (empty, shorter than a shingle, long enough to
overflow a byte counter), short and long documents' word rules, every shingle length, sketch
size and value width; and ``fingerprint_arrays`` and the host-model path
(``indexer.boilerplate``: shingles, features chosen around a host's template) are the same
with the kernels on or off."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.boilerplate import (
    BoilerplateConfig,
    Learner,
    doc_shingle_sets,
    features,
    fingerprint_excluding,
)
from indexer.fingerprints import compute, features_kernel
from indexer.fingerprints.compute import document_features, fingerprint_arrays
from indexer.fingerprints.features import Segments, shingle_hashes
from indexer.fingerprints.minhash import sketch_segments
from indexer.fingerprints.params import FingerprintParams
from indexer.fingerprints.simhash import simhash_segments

U64 = st.integers(0, 2**64 - 1)
# a few values repeated (shingles and bins that tie), or any 64-bit value
HASH = st.one_of(st.sampled_from([0, 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15]), U64)
LENGTH = st.one_of(st.integers(0, 6), st.integers(0, 80), st.just(600))


@st.composite
def batches(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    lengths = np.array(draw(st.lists(LENGTH, min_size=0, max_size=8)), dtype=np.int64)
    total = int(lengths.sum())
    pool = draw(st.lists(HASH, min_size=1, max_size=40))
    pick = draw(st.lists(st.integers(0, len(pool) - 1), min_size=total, max_size=total))
    sim = np.array([pool[i] for i in pick], dtype=np.uint64)
    other = draw(st.randoms(use_true_random=False))
    mins = np.array([other.getrandbits(64) for _ in range(total)], dtype=np.uint64)
    sample = np.array([other.getrandbits(64) for _ in range(total)], dtype=np.uint64)
    if draw(st.booleans()):  # the MinHash family repeating with the SimHash one
        mins = sim.copy()
    units = np.array([draw(st.integers(0, 90)) for _ in lengths], dtype=np.int64)
    return sim, mins, sample, lengths, units


PARAMS = st.builds(
    FingerprintParams,
    shingle=st.integers(1, 6),
    minhash_shingle=st.integers(1, 6),
    minhash_size=st.sampled_from([8, 16, 128]),
    minhash_bits=st.sampled_from([8, 16, 32]),
)


@settings(max_examples=300, deadline=None)
@given(batches(), PARAMS)
def test_kernel_equals_the_numpy_definitions(
    batch: tuple[np.ndarray, ...], p: FingerprintParams
) -> None:
    sim, mins, sample, lengths, units = batch
    sh, scounts, mh, mcounts = document_features(sim, mins, sample, lengths, units, p)
    want_simhash = simhash_segments(sh, scounts)
    want_sketch = sketch_segments(mh, mcounts, p.minhash_size, p.minhash_bits)
    simhash, sketch = features_kernel.fingerprints(
        sim, mins, sample, lengths, units, p.shingle, p.minhash_shingle, p.minhash_size,
        p.minhash_bits,
    )  # fmt: skip
    assert simhash.dtype == want_simhash.dtype and sketch.dtype == want_sketch.dtype
    assert np.array_equal(simhash, want_simhash)
    assert np.array_equal(sketch, want_sketch)


TEXTS = st.lists(
    st.lists(
        st.sampled_from(["alpha", "beta", "gamma", "2026", "中文字", "x", "\n"]), max_size=90
    ).map(" ".join),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(TEXTS, st.sampled_from(["count", "presence"]))
def test_fingerprint_arrays_same_with_the_kernel(texts: list[str], weights: str) -> None:
    p = FingerprintParams(weights=weights)  # presence weights: the numpy path either way
    saved = compute._features
    compute._features = None
    try:
        want = fingerprint_arrays(texts, p)
        assert compute.enable_kernel()
        compute._features = features_kernel
        got = fingerprint_arrays(texts, p)
    finally:
        compute._features = saved
    assert np.array_equal(got.simhash, want.simhash)
    assert np.array_equal(got.minhash, want.minhash)
    assert got.exact_keys == want.exact_keys
    assert np.array_equal(got.token_count, want.token_count)
    assert np.array_equal(got.numbers, want.numbers)


@settings(max_examples=200, deadline=None)
@given(batches(), st.integers(1, 6))
def test_shingles_equal_shingle_hashes(batch: tuple[np.ndarray, ...], k: int) -> None:
    sim, _, _, lengths, _ = batch
    want, want_counts = shingle_hashes(sim, Segments(lengths), k)
    got, counts = features_kernel.shingles(sim, lengths, k)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(counts, want_counts)


@settings(max_examples=200, deadline=None)
@given(batches(), PARAMS, st.randoms(use_true_random=False))
def test_segment_fingerprints_equal_the_numpy_definitions(
    batch: tuple[np.ndarray, ...], p: FingerprintParams, rng: random.Random
) -> None:
    sim, mins, sample, lengths, units = batch
    sh, scounts, mh, mcounts = document_features(sim, mins, sample, lengths, units, p)
    if rng.random() < 0.5:  # features chosen apart from the tokens (the host-model path)
        keep = np.array([rng.random() < 0.7 for _ in range(len(sh))], dtype=bool)
        doc = np.repeat(np.arange(len(scounts)), scounts)
        sh, scounts = sh[keep], np.bincount(doc[keep], minlength=len(scounts))
    simhash, sketch = features_kernel.segment_fingerprints(
        sh, scounts, mh, mcounts, p.minhash_size, p.minhash_bits
    )
    want_sketch = sketch_segments(mh, mcounts, p.minhash_size, p.minhash_bits)
    assert np.array_equal(simhash, simhash_segments(sh, scounts))
    assert sketch.dtype == want_sketch.dtype and np.array_equal(sketch, want_sketch)


def _host_pages(host: int, seed: int, own: list[int]) -> list[str]:
    """Pages of one host (its header and footer on each) with ``own[i]`` words of page i's
    own: short pages are fingerprinted from what is left, long ones keep their own shingles."""
    frame = random.Random(host)
    words = [f"w{i}" for i in range(400)] + ["2026", "中文字", "x"]
    head = "site | home | news 2026\n" + " ".join(frame.choice(words) for _ in range(60))
    foot = "printed 1 march 2026\n" + " ".join(frame.choice(words) for _ in range(30))
    rng = random.Random(seed)
    return [f"{head}\n{' '.join(rng.choice(words) for _ in range(n))}\n{foot}" for n in own]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(st.sampled_from([0, 3, 15, 40, 60, 120]), min_size=1, max_size=8),
    st.sampled_from(["count", "presence"]),
)
def test_host_model_path_same_with_the_kernel(seed: int, own: list[int], weights: str) -> None:
    p = FingerprintParams(weights=weights)
    learn = _host_pages(seed, seed, [40] * 12)
    learner = Learner(BoilerplateConfig(min_pages=5, min_docs=2))
    for sets in doc_shingle_sets(learn, p):
        learner.add("h.example", sets)
    model = learner.models().get("h.example")
    texts = [*_host_pages(seed, seed + 1, own), "", "one line without a model"]
    models = [model] * (len(texts) - 2) + [None, None]
    saved = compute._features
    compute._features = None
    try:
        want, want_removed = fingerprint_excluding(texts, p, models)
        feats = features(texts, p)
        assert compute.enable_kernel()
        compute._features = features_kernel
        got, removed = fingerprint_excluding(texts, p, models)
        got_feats = features(texts, p)
    finally:
        compute._features = saved
    assert np.array_equal(got_feats.sh, feats.sh) and np.array_equal(got_feats.mh, feats.mh)
    assert np.array_equal(got_feats.scounts, feats.scounts)
    assert np.array_equal(got_feats.mcounts, feats.mcounts)
    assert np.array_equal(removed, want_removed)
    assert np.array_equal(got.simhash, want.simhash)
    assert np.array_equal(got.minhash, want.minhash)
    assert np.array_equal(got.token_count, want.token_count)
    assert np.array_equal(got.numbers, want.numbers)
    assert got.exact_keys == want.exact_keys
