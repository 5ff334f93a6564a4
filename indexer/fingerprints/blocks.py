"""Split a 64-bit SimHash into B equal blocks, the keys Elasticsearch matches exactly.

Block ``i`` is bits ``[i*w, (i+1)*w)`` of the fingerprint (``w = 64 // B``; block 0 holds the
least significant bits) and is stored as ``w // 4`` lowercase hex digits.

Guarantee (pigeonhole): if two fingerprints differ in at most ``B - 1`` bits, the differing
bits touch at most ``B - 1`` blocks, so at least one block is identical. Four 16-bit blocks
cover Hamming distance 3, eight 8-bit blocks cover 7.

Not promised: a shared block says nothing about the distance (two unrelated fingerprints
share a given 16-bit block with probability 2⁻¹⁶, some one of four about 6e-5 of the time),
and pairs further apart than ``B - 1`` bits may share none. A shared block only makes a
*candidate*; verification decides.
"""

from __future__ import annotations

import numpy as np

__all__ = ["block_hex", "split", "split_many"]


def _width(n_blocks: int) -> int:
    if n_blocks not in (1, 2, 4, 8, 16):
        raise ValueError(f"blocks={n_blocks} must be 1, 2, 4, 8 or 16")
    return 64 // n_blocks


def split(simhash: int, n_blocks: int) -> list[int]:
    """Blocks of one fingerprint, block 0 = least significant bits."""
    w = _width(n_blocks)
    mask = (1 << w) - 1
    return [(simhash >> (w * i)) & mask for i in range(n_blocks)]


def split_many(simhashes: np.ndarray, n_blocks: int) -> np.ndarray:
    """Blocks of many fingerprints: (n,) uint64 -> (n, B) uint64."""
    w = _width(n_blocks)
    x = np.asarray(simhashes, dtype=np.uint64)
    shifts = np.arange(n_blocks, dtype=np.uint64) * np.uint64(w)
    mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    return (x[..., None] >> shifts) & mask


def block_hex(value: int, n_blocks: int) -> str:
    """One block as lowercase hex, zero-padded to the block width (8-bit -> 2 digits)."""
    return format(value, f"0{_width(n_blocks) // 4}x")
