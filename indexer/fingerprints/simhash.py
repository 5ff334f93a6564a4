"""SimHash-64 (Charikar): weighted per-bit votes of feature hashes, vectorised over documents.

Bit convention: bit ``i`` of a feature hash (``i = 0`` least significant, the hash being the
big-endian reading of its digest) votes on bit ``i`` of the fingerprint, and the fingerprint
is printed as the hex of that integer. With MD5 word hashes this reproduces the textbook
values (``93264c674404019d``); the table's "bit 1" is the top bit of the first digest byte.
A bit is 1 where the weighted vote total is strictly positive; ties give 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hash_bits", "simhash_segments"]


# _BYTE_BITS[v, j] = bit (7 - j) of byte value v: the MSB-first order of np.unpackbits.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int64)
_BYTE_BITS_F = _BYTE_BITS.astype(np.float64)


def hash_bits(h: np.ndarray) -> np.ndarray:
    """Unpack uint64 hashes into an (n, 64) uint8 bit matrix, column 0 = bit 63."""
    return np.unpackbits(h.astype(">u8").view(np.uint8)).reshape(-1, 64)


def _ones_per_bit(h: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(n_docs, 64) number of features with each bit set, column 0 = bit 63.

    Rather than unpacking 64 bits per feature, histogram each of the 8 bytes of every hash
    per document (one ``bincount`` per byte column) and turn byte-value counts into bit
    counts with a small (256, 8) table product: 8 instead of 64 array elements per feature.
    The product runs in float64 (exact for counts below 2**53) to use BLAS.
    """
    ndocs = len(counts)
    base = np.repeat(np.arange(0, ndocs * 256, 256, dtype=np.intp), counts)
    by = h.astype(">u8").view(np.uint8).reshape(-1, 8)  # column 0 = most significant byte
    out = np.empty((ndocs, 64), dtype=np.float64)
    for j in range(8):
        hist = np.bincount(base + by[:, j], minlength=ndocs * 256).reshape(ndocs, 256)
        out[:, 8 * j : 8 * j + 8] = hist @ _BYTE_BITS_F
    return out.astype(np.int64)


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
