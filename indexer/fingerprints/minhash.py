"""MinHash sketches (one-permutation hashing with optimal densification) and similarity.

A sketch has ``size`` values (a power of two). Each shingle hash ``x`` (MinHash family, see
``features``) falls in bin ``x >> (64 - log2(size))``; a bin keeps the minimum of the
remaining bits among its shingles, and the stored value is ``bits`` (8, 16 or 32) bits of that
minimum. An empty bin borrows the value of the first non-empty bin in a fixed pseudo-random
order of bins specific to it (Shrivastava 2017, "optimal densification"), so that
``P[values agree] = Jaccard`` for every bin, like ``size`` independent permutations, at the
cost of one hash and one sort per document. Stored values are b-bit: unrelated values agree
with probability ``2**-bits``, which :func:`similarity` subtracts out.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pairwise_similarity", "similarity", "sketch_segments", "value_dtype"]

_REM_BITS = 40  # bits of the within-bin remainder kept for ordering (ties: ~2**-40 per pair)
_DENSIFY_SEED = 0x64656E73  # b"dens"
_probe_cache: dict[int, np.ndarray] = {}


def value_dtype(bits: int) -> type[np.unsignedinteger]:
    """Numpy dtype of one stored sketch value."""
    return np.uint8 if bits == 8 else np.uint16 if bits == 16 else np.uint32


def _probe_order(size: int) -> np.ndarray:
    """(size, size) table: row i is the fixed order in which empty bin i looks for a donor."""
    table = _probe_cache.get(size)
    if table is None:
        rng = np.random.Generator(np.random.PCG64(_DENSIFY_SEED + size))
        table = np.argsort(rng.random((size, size)), axis=1)
        _probe_cache[size] = table
    return table


def sketch_segments(h: np.ndarray, counts: np.ndarray, size: int, bits: int) -> np.ndarray:
    """Sketch every document from its concatenated shingle hashes: an (n_docs, size) array.

    Documents without shingles get an all-zero sketch (they group with nothing anyway).
    """
    counts = np.asarray(counts, dtype=np.int64)
    ndocs = len(counts)
    r = size.bit_length() - 1
    if ndocs * size >= 1 << (64 - _REM_BITS):
        raise ValueError("too many documents in one sketch call; split the batch")
    doc = np.repeat(np.arange(ndocs, dtype=np.uint64), counts)
    group = doc * np.uint64(size) + (h >> np.uint64(64 - r))
    rem = (h << np.uint64(r)) >> np.uint64(64 - _REM_BITS)
    keys = np.sort((group << np.uint64(_REM_BITS)) | rem)
    groups = keys >> np.uint64(_REM_BITS)
    # the first key of each group (sorted) holds the bin's minimum
    first = np.empty(len(keys), dtype=bool)
    first[:1] = True
    np.not_equal(groups[1:], groups[:-1], out=first[1:])
    at = np.flatnonzero(first)
    bins = groups[at].astype(np.intp)
    vtype = value_dtype(bits)
    flat_filled = np.zeros(ndocs * size, dtype=bool)
    flat_filled[bins] = True
    by_bin = np.zeros(ndocs * size, dtype=vtype)
    by_bin[bins] = keys[at]  # the low ``bits`` bits (unsigned casts truncate)
    values = by_bin.reshape(ndocs, size)
    filled = flat_filled.reshape(ndocs, size)
    # densification: an empty bin of a document with shingles takes the value of the first
    # filled bin in its probe order. Probe column by column for the bins still unresolved
    # (most resolve in the first few), rather than gathering all ``size`` probes per bin.
    empty = ~filled
    empty[counts == 0] = False  # no shingles: stays all zero
    dd, ii = np.nonzero(empty)
    if len(dd):
        order = _probe_order(size)
        flat = filled.ravel()
        donor = np.empty(len(dd), dtype=np.intp)
        pending = np.arange(len(dd))
        base, rows = dd * size, ii
        for j in range(size):
            cand = order[rows, j]
            ok = flat[base + cand]
            donor[pending[ok]] = cand[ok]
            if ok.all():
                break
            keep = ~ok
            pending, base, rows = pending[keep], base[keep], rows[keep]
        values[dd, ii] = values[dd, donor]
    return values


def similarity(a: np.ndarray, b: np.ndarray, bits: int | None = None) -> np.ndarray | float:
    """Estimated Jaccard between sketches (broadcasts over leading axes).

    The fraction of equal values, corrected for chance agreement of ``bits``-bit values
    (default: the width of ``a``'s dtype, so pass ``bits`` when values sit in a wider
    array) and clipped to [0, 1].
    """
    a, b = np.asarray(a), np.asarray(b)
    chance = 2.0 ** -(bits or a.dtype.itemsize * 8)
    size = max(a.shape[-1], b.shape[-1])  # a sketch broadcasts only against its own length
    agree = np.add.reduce(a == b, axis=-1, dtype=np.int64) / size
    # clip by hand: np.clip costs more than the rest on a page's few pairs
    est = np.minimum(np.maximum((agree - chance) / (1.0 - chance), 0.0), 1.0)
    return float(est) if np.ndim(est) == 0 else est


def pairwise_similarity(m: np.ndarray, bits: int | None = None) -> np.ndarray:
    """(n, n) estimated Jaccard between every pair of rows of an (n, size) sketch array."""
    m = np.asarray(m)
    return np.asarray(similarity(m[:, None, :], m[None, :, :], bits))
