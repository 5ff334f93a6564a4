"""Vectorised bit arithmetic on 64-bit fingerprints (query time) and the ES long mapping.

Elasticsearch has no unsigned 64-bit ``long``; a fingerprint ``u`` in [0, 2**64) is stored
as the signed two's-complement value ``s = u - 2**64 if u >= 2**63 else u``, i.e. the same
64 bits read as int64 (numpy: ``u.view(np.int64)``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["hamming", "pairwise_hamming", "popcount64", "to_signed", "to_unsigned"]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


def popcount64(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each uint64 element (any shape), as uint8."""
    x = np.asarray(x, dtype=np.uint64)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x)
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return ((x * _H01) >> np.uint64(56)).astype(np.uint8)


def hamming(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Hamming distance between fingerprints; broadcasts like ``a ^ b``."""
    return popcount64(
        np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    )


def pairwise_hamming(x: np.ndarray) -> np.ndarray:
    """(n, n) Hamming distances between all fingerprints of an (n,) uint64 array."""
    x = np.asarray(x, dtype=np.uint64)
    return hamming(x[:, None], x[None, :])


def to_signed(u: int) -> int:
    """Unsigned 64-bit fingerprint -> signed value stored in an Elasticsearch ``long``."""
    if not 0 <= u < 1 << 64:
        raise ValueError(f"not an unsigned 64-bit value: {u}")
    return u - (1 << 64) if u >= 1 << 63 else u


def to_unsigned(s: int) -> int:
    """Signed Elasticsearch ``long`` -> unsigned 64-bit fingerprint (inverse of to_signed)."""
    if not -(1 << 63) <= s < 1 << 63:
        raise ValueError(f"not a signed 64-bit value: {s}")
    return s + (1 << 64) if s < 0 else s
