"""MinHash band keys: the index key the proxy probes for near-duplicate candidates.

The first ``band_count(params)`` groups of ``BAND_ROWS`` consecutive sketch values (band ``b``
= values ``[4b, 4b+4)``) are each stored as one keyword, ``collapse_fp.band`` (multi-valued):
the band number as two hex digits, then the lowercase hex of those values packed
little-endian exactly as in the stored ``minhash`` (8-bit values: 8 hex digits per band,
16-bit: 16, 32-bit: 32). Values ``[0x9d, 0x03, 0xff, 0x10]`` in band 2, 8 bits:
``"029d03ff10"``. The band number keeps equal values in different bands apart.

What a band finds: every sketch value of a pair with Jaccard ``J`` agrees with probability
``J``, so all 4 values of a band agree with ``J**4`` and the pair shares at least one of 16
bands with probability ``1 - (1 - J**4)**16``: 0.49 at J = 0.45, 0.64 at 0.5, 0.98 at 0.7.
Unrelated b-bit values also agree by chance with probability ``2**-bits`` per value (a
whole 8-bit band about 2**-32: negligible). A shared band only makes a candidate; the
MinHash similarity decides.

Bands are derived from the stored sketch alone (:func:`band_keys` of the unpacked
``minhash``), so they do not change the fingerprint version, and an index can get them
without the documents' text (``indexer backfill``). Documents without tokens (all-zero
sketch) get no bands.
"""

from __future__ import annotations

import numpy as np

from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.params import FingerprintParams

__all__ = ["BAND_ROWS", "MAX_BANDS", "band_chars", "band_count", "band_keys", "packed_band_keys"]

BAND_ROWS = 4
MAX_BANDS = 16

_HEX = np.frombuffer(b"".join(f"{v:02x}".encode("ascii") for v in range(256)), np.uint8).reshape(
    256, 2
)
_PREFIX = [f"{b:02x}" for b in range(MAX_BANDS)]


def band_count(params: FingerprintParams) -> int:
    """Bands stored per document: ``min(MAX_BANDS, minhash_size // BAND_ROWS)``."""
    return min(MAX_BANDS, params.minhash_size // BAND_ROWS)


def _bands_for(size: int) -> int:
    return min(MAX_BANDS, size // BAND_ROWS)


def band_chars(minhash: np.ndarray, bits: int) -> np.ndarray:
    """(n, bands, L) uint8: the ASCII of every band key (L = 2 + 2 * BAND_ROWS * bits / 8).

    One little-endian packing of the sketch values used, one table gather for the hex
    digits, the band numbers prepended; no Python loop over values or documents.
    """
    m = np.asarray(minhash)
    if m.ndim != 2:
        raise ValueError(f"minhash must be (n, size), got shape {m.shape}")
    n, size = m.shape
    nb = _bands_for(size)
    le = np.dtype(value_dtype(bits)).newbyteorder("<")
    raw = np.ascontiguousarray(m[:, : nb * BAND_ROWS], dtype=le).view(np.uint8)
    band_bytes = BAND_ROWS * le.itemsize
    digits = _HEX[raw.reshape(n, nb, band_bytes)].reshape(n, nb, 2 * band_bytes)
    prefix = np.broadcast_to(_HEX[np.arange(nb)], (n, nb, 2))
    return np.concatenate([prefix, digits], axis=2)


def band_keys(minhash: np.ndarray, bits: int) -> list[list[str]]:
    """Band keys of each sketch row: ``(n, size)`` values of ``bits`` bits -> n lists of str.

    Band ``b`` = ``f"{b:02x}"`` + hex of the little-endian bytes of values ``[4b, 4b+4)``.
    Every row gets its keys, also an all-zero sketch: leaving out empty documents is the
    caller's business (see ``FingerprintRecord.to_es``).
    """
    chars = band_chars(minhash, bits)
    n, nb, width = chars.shape
    if n == 0 or nb == 0:
        return [[] for _ in range(n)]
    text = chars.tobytes().decode("ascii")
    flat = [text[i : i + width] for i in range(0, len(text), width)]
    return [flat[i : i + nb] for i in range(0, len(flat), nb)]


def packed_band_keys(packed: bytes, bits: int) -> list[str]:
    """Band keys of ONE sketch given as its little-endian packed bytes (as in ``minhash``).

    ``band_keys(values[None, :], bits)[0]`` for a single record: one ``hex()`` of the
    packed buffer, then slices (cheaper than the array path for one row).
    """
    size = len(packed) * 8 // bits
    width = 2 * BAND_ROWS * bits // 8
    h = packed[: _bands_for(size) * width // 2].hex()
    return [_PREFIX[b] + h[b * width : (b + 1) * width] for b in range(_bands_for(size))]
