"""Property tests: block pigeonhole guarantee, batch == single, stability across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import (
    FingerprintParams,
    fingerprint,
    fingerprint_batch,
    split,
    split_many,
)
from indexer.fingerprints.bits import hamming

U64 = st.integers(min_value=0, max_value=(1 << 64) - 1)
WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "Delta", "épée", "straße", "42", "x_y", "ñ"]),
    max_size=80,
).map(" ".join)
TEXTS = st.one_of(WORDS, st.text(max_size=300))
PARAMS = st.builds(
    FingerprintParams,
    shingle=st.integers(1, 6),
    hash=st.sampled_from(["blake2b", "md5", "xxh3"]),
    weights=st.sampled_from(["count", "presence"]),
    blocks=st.sampled_from([1, 2, 4, 8, 16]),
    minhash_size=st.sampled_from([8, 64]),
    minhash_bits=st.sampled_from([8, 16, 32]),
    minhash_shingle=st.integers(1, 5),
)


@given(
    x=U64,
    n_blocks=st.sampled_from([1, 2, 4, 8, 16]),
    positions=st.lists(st.integers(0, 63), unique=True, max_size=15),
)
def test_flip_up_to_b_minus_1_bits_keeps_a_block(
    x: int, n_blocks: int, positions: list[int]
) -> None:
    positions = positions[: n_blocks - 1]
    y = x
    for pos in positions:
        y ^= 1 << pos
    assert int(hamming(x, y)) == len(positions)
    assert any(a == b for a, b in zip(split(x, n_blocks), split(y, n_blocks), strict=True))
    arr = split_many(np.array([x, y], dtype=np.uint64), n_blocks)
    assert (arr[0] == arr[1]).any()


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXTS, max_size=8), params=PARAMS)
def test_batch_equals_single(texts: list[str], params: FingerprintParams) -> None:
    assert fingerprint_batch(texts, params) == [fingerprint(t, params) for t in texts]


def _run_in_subprocess(texts: list[str], params: FingerprintParams, seed: str) -> list[dict]:
    code = (
        "import json, sys\n"
        "from indexer.fingerprints import FingerprintParams, fingerprint_batch\n"
        "texts, p = json.load(sys.stdin)\n"
        "recs = fingerprint_batch(texts, FingerprintParams(**p))\n"
        "print(json.dumps([r.to_es() for r in recs]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([texts, params.model_dump()]),
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


def test_fingerprints_identical_across_processes() -> None:
    texts = ["The same words, in another process.", "", "ünïcode wörds " * 30, "a b c " * 40]
    for params in (
        FingerprintParams(),
        FingerprintParams(shingle=1, hash="md5", weights="presence"),
    ):
        here = [r.to_es() for r in fingerprint_batch(texts, params)]
        assert _run_in_subprocess(texts, params, "1") == here
        assert _run_in_subprocess(texts, params, "12345") == here
