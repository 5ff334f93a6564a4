"""MinHash band keys: the index key the proxy probes for near-duplicate candidates.

The first ``band_count(params)`` groups of ``BAND_ROWS`` consecutive sketch values (band ``b``
= values ``[4b, 4b+4)``) are each stored as one integer, ``collapse_fp.band`` (multi-valued,
mapped ``integer``): a hash of the band number and those values (their little-endian bytes,
exactly as in the stored ``minhash``, read as 32-bit words), in ``[KEY_LOW, 2**31)`` so that
every key has ten decimal digits (:func:`band_keys`). The band number keeps equal values in
different bands apart. Elasticsearch indexes integers as points, cheaper per document than
a keyword term each.

The hash: ``h = (b + 1) * G``, then for each word ``w``: ``h = (h ^ w) * M`` (mod 2**64),
``h ^= h >> 31``, ``key = KEY_LOW + (h >> 33) % KEY_SPAN``. Two different bands or values give
one key by chance about once in 2**30: that only adds a candidate.

What a band finds: every sketch value of a pair with Jaccard ``J`` agrees with probability
``J``, so all 4 values of a band agree with ``J**4`` and the pair shares at least one of 16
bands with probability ``1 - (1 - J**4)**16``: 0.49 at J = 0.45, 0.64 at 0.5, 0.98 at 0.7.
Unrelated b-bit values also agree by chance with probability ``2**-bits`` per value (a
whole 8-bit band about 2**-32: negligible). A shared band only makes a candidate; the
MinHash similarity decides.

Bands are derived from the stored sketch alone (:func:`band_keys` of the unpacked
``minhash``), so an index can get them without the documents' text (``indexer backfill``).
Documents without tokens (all-zero sketch) get no bands.
"""

from __future__ import annotations

import numpy as np

from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.params import FingerprintParams

__all__ = [
    "BAND_ROWS",
    "KEY_LOW",
    "KEY_SPAN",
    "MAX_BANDS",
    "band_array",
    "band_count",
    "band_digits",
    "band_keys",
    "packed_band_keys",
]

BAND_ROWS = 4
MAX_BANDS = 16
#: Keys lie in ``[KEY_LOW, KEY_LOW + KEY_SPAN)`` = ``[10**9, 2**31)``: ten digits, a Java int.
KEY_LOW = 10**9
KEY_SPAN = 2**31 - KEY_LOW

_G = np.uint64(0x9E3779B97F4A7C15)
_M = np.uint64(0xBF58476D1CE4E5B9)
_TENS = 10 ** np.arange(9, -1, -1, dtype=np.int64)


def band_count(params: FingerprintParams) -> int:
    """Bands stored per document: ``min(MAX_BANDS, minhash_size // BAND_ROWS)``."""
    return min(MAX_BANDS, params.minhash_size // BAND_ROWS)


def _bands_for(size: int) -> int:
    return min(MAX_BANDS, size // BAND_ROWS)


def band_array(minhash: np.ndarray, bits: int) -> np.ndarray:
    """(n, bands) int64: the band key of every band of every sketch row (``(n, size)`` values
    of ``bits`` bits); the hash of the module docstring, over all rows at once."""
    m = np.asarray(minhash)
    if m.ndim != 2:
        raise ValueError(f"minhash must be (n, size), got shape {m.shape}")
    n, size = m.shape
    nb = _bands_for(size)
    if n == 0 or nb == 0:
        return np.zeros((n, nb), dtype=np.int64)
    le = np.dtype(value_dtype(bits)).newbyteorder("<")
    raw = np.ascontiguousarray(m[:, : nb * BAND_ROWS], dtype=le).view("<u4").reshape(n, nb, -1)
    h = np.repeat((np.arange(1, nb + 1, dtype=np.uint64) * _G)[None, :], n, axis=0)
    for k in range(raw.shape[2]):
        h ^= raw[:, :, k]
        h *= _M
    h ^= h >> np.uint64(31)
    return (h >> np.uint64(33)).astype(np.int64) % KEY_SPAN + KEY_LOW


def band_digits(minhash: np.ndarray, bits: int) -> np.ndarray:
    """(n, bands, 10) uint8: the ASCII decimal digits of every band key."""
    keys = band_array(minhash, bits)
    return (keys[:, :, None] // _TENS % 10 + ord("0")).astype(np.uint8)


def band_keys(minhash: np.ndarray, bits: int) -> list[list[int]]:
    """Band keys of each sketch row: ``(n, size)`` values of ``bits`` bits -> n lists of int.

    Every row gets its keys, also an all-zero sketch: leaving out empty documents is the
    caller's business (see ``FingerprintRecord.to_es``).
    """
    return [list(row) for row in band_array(minhash, bits).tolist()]


def packed_band_keys(packed: bytes, bits: int) -> list[int]:
    """Band keys of ONE sketch given as its little-endian packed bytes (as in ``minhash``):
    ``band_keys(values[None, :], bits)[0]``."""
    values = np.frombuffer(packed, dtype=np.dtype(value_dtype(bits)).newbyteorder("<"))
    return list(band_array(values[None, :], bits)[0].tolist())
