"""SimHash-64 (Charikar): weighted per-bit votes of feature hashes, vectorised over documents.

Bit convention: bit ``i`` of a feature hash (``i = 0`` least significant, the hash being the
big-endian reading of its digest) votes on bit ``i`` of the fingerprint, and the fingerprint
is printed as the hex of that integer. With MD5 word hashes this reproduces the textbook
values (``93264c674404019d``); the table's "bit 1" is the top bit of the first digest byte.
A bit is 1 where the weighted vote total is strictly positive; ties give 0.

The vote is integer numpy only (no matrix product): its speed does not depend on the BLAS
build, its core type or its threads, and its counts are exact.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hash_bits", "simhash_segments"]

# One vote step handles at most this many documents and features (more in one call are done
# in blocks), so that a byte column's histograms (documents x 256 x 8 bytes) stay in cache.
_BLOCK_DOCS = 256
_BLOCK_FEATURES = 1 << 16


def hash_bits(h: np.ndarray) -> np.ndarray:
    """Unpack uint64 hashes into an (n, 64) uint8 bit matrix, column 0 = bit 63."""
    return np.unpackbits(h.astype(">u8").view(np.uint8)).reshape(-1, 64)


def _ones_in_block(h: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(n_docs, 64) number of features with each bit set, column 0 = bit 63.

    Per byte column of the hashes, one ``bincount`` gives each document's (256,) histogram
    of byte values: 8 array elements per feature instead of 64 unpacked bits. Bit counts
    come from halving it: values in the top half have the byte's top bit set (their sum is
    that bit's count), and the top half added onto the bottom half is the histogram of the
    remaining 7 bits; seven more halvings give the other bits, MSB first.
    """
    ndocs = len(counts)
    base = np.repeat(np.arange(0, ndocs * 256, 256, dtype=np.intp), counts)
    by = h.astype(">u8").view(np.uint8).reshape(-1, 8)  # column 0 = most significant byte
    out = np.empty((ndocs, 64), dtype=np.int64)
    for j in range(8):
        hist = np.bincount(base + by[:, j], minlength=ndocs * 256).reshape(ndocs, 256)
        for k, half in enumerate((128, 64, 32, 16, 8, 4, 2, 1)):
            top = hist[:, half:]
            out[:, 8 * j + k] = top.sum(axis=1)
            hist = hist[:, :half] + top
    return out


def _ones_per_bit(h: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """:func:`_ones_in_block` over blocks of at most ``_BLOCK_DOCS`` documents and (where
    documents allow) ``_BLOCK_FEATURES`` features."""
    ndocs = len(counts)
    if ndocs <= _BLOCK_DOCS and len(h) <= _BLOCK_FEATURES:
        return _ones_in_block(h, counts)
    ends = np.cumsum(counts)
    out = np.empty((ndocs, 64), dtype=np.int64)
    d0 = f0 = 0
    while d0 < ndocs:
        fits = int(np.searchsorted(ends, f0 + _BLOCK_FEATURES, side="right"))
        d1 = max(d0 + 1, min(ndocs, d0 + _BLOCK_DOCS, fits))  # one long document: alone
        f1 = int(ends[d1 - 1])
        out[d0:d1] = _ones_in_block(h[f0:f1], counts[d0:d1])
        d0, f0 = d1, f1
    return out


def _dedupe(h: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep one copy of each hash per document (presence weights)."""
    doc = np.repeat(np.arange(len(counts)), counts)
    order = np.lexsort((h, doc))
    hs, ds = h[order], doc[order]
    keep = np.ones(len(hs), dtype=bool)
    keep[1:] = (hs[1:] != hs[:-1]) | (ds[1:] != ds[:-1])
    return hs[keep], np.bincount(ds[keep], minlength=len(counts))


def simhash_segments(h: np.ndarray, counts: np.ndarray, presence: bool = False) -> np.ndarray:
    """SimHash of each document from its concatenated feature hashes.

    ``counts[d]`` consecutive entries of ``h`` belong to document ``d``. With count weights
    every occurrence votes once (so a repeated feature weighs its count); with presence
    weights repeats are dropped first. Documents without features get 0.
    """
    counts = np.asarray(counts, dtype=np.int64)
    out = np.zeros(len(counts), dtype=np.uint64)
    if len(h) == 0:
        return out
    if presence:
        h, counts = _dedupe(h, counts)
    positive = 2 * _ones_per_bit(h, counts) > counts[:, None]  # ones - zeros > 0
    return np.packbits(positive, axis=1).view(">u8").ravel().astype(np.uint64)
