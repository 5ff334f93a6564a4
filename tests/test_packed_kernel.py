"""The packed values' compiled decode (``indexer.fingerprints.packed_kernel``) gives what the
numpy path of ``indexer.fingerprints.packed`` gives, array for array and type for type: for
any records of every layout, for rows of another version among them, and (by declining, so
that numpy decides) for values that are not records at all."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import FingerprintParams
from indexer.fingerprints import packed as P
from indexer.fingerprints.packed import Unpacked, pack_many, unpack_many
from tests.test_packed import IDS, PARAMS, arrays_of, bad_values, batches

FIELDS = ("simhash", "token_count", "exact_key", "minhash", "numbers", "present")


def _numpy(values: Sequence[object], p: FingerprintParams) -> Unpacked:
    before = P._compiled
    P._compiled = None
    try:
        return unpack_many(values, p)
    finally:
        P._compiled = before


def _compiled(values: Sequence[object], p: FingerprintParams) -> Unpacked | None:
    """The compiled pass's own answer (None: it declined)."""
    before = P._compiled
    try:
        assert P.use_compiled()
        return P._unpack_compiled(values, P._reading(p))
    finally:
        P._compiled = before


def _same(a: Unpacked, b: Unpacked) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y), name
    assert a.key_codes().tolist() == b.key_codes().tolist()
    assert a.exact_key_hexes() == b.exact_key_hexes()


@settings(max_examples=150, deadline=None)
@given(batches())
def test_any_records_decode_as_the_numpy_path(
    batch: tuple[FingerprintParams, tuple, list[str]],
) -> None:
    p, (simhash, counts, sketch, numbers), keys = batch
    values = pack_many(p, simhash, counts, keys, sketch, numbers)
    got = _compiled(values, p)
    if not values:
        assert got is None  # nothing to decode: numpy's empty arrays
        return
    assert got is not None
    _same(_numpy(values, p), got)


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_rows_of_another_version_are_not_present(p: FingerprintParams) -> None:
    """A record of another version (same length, another tag) among ours: decoded by the
    pass as not present, its cells skipped, the rows after it intact."""
    arrays = arrays_of(p)
    values = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    foreign = bad_values(p)[0]
    mixed = [values[0], foreign, *values[1:], foreign]
    got = _compiled(mixed, p)
    assert got is not None
    assert got.present.tolist() == [True, False, *[True] * (len(values) - 1), False]
    _same(_numpy(mixed, p), got)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_values_that_are_not_records_decode_as_the_numpy_path(data: st.DataObject) -> None:
    """Any mix of good values and values that are not records: with the pass loaded,
    ``unpack_many`` answers what numpy answers (the pass takes what it can read, declines
    the rest)."""
    p = data.draw(st.sampled_from(PARAMS))
    arrays = arrays_of(p)
    good = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    bad = bad_values(p)
    picks = data.draw(st.lists(st.integers(0, len(good) + len(bad) - 1), max_size=20))
    values = [good[i] if i < len(good) else bad[i - len(good)] for i in picks]
    before = P._compiled
    try:
        assert P.use_compiled()
        with_pass = unpack_many(values, p)
    finally:
        P._compiled = before
    _same(_numpy(values, p), with_pass)
