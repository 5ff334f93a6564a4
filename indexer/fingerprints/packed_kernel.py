"""The packed values' compiled decode (numba): a batch's records and cells in one pass over
their bytes, instead of a dozen numpy operations on views of them.

It reads what :func:`indexer.fingerprints.packed.unpack_many` reads, field for field (that
module's numpy path stays the reference, runs where numba is missing, and
``tests/test_packed.py`` compares the two): each record's tag, SimHash, token count, the exact
key's first 60 bits (its code), the MinHash values, and the cells its map says are stored (3
little-endian bytes each, in map order). The layout comes from that module as an argument
(:func:`read`), so that it is defined in one place. Signatures are declared (every MinHash
value type), so no request compiles: loaded from numba's cache (``cache=True``, beside this
file) or compiled once when the module is imported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types

__all__ = ["read"]


def _signature(sketch: types.Integer) -> Any:
    def ro(dtype: types.Type) -> types.Array:
        return types.Array(dtype, 1, "C", readonly=True)

    return types.boolean(
        ro(types.uint8),  # the fixed parts, one after the other
        ro(types.uint8),  # the cells, one after the other
        ro(types.int64),  # each value's length in characters
        ro(types.int64),  # the layout: see read
        ro(types.uint8),  # the version's tag
        types.Array(types.uint64, 1, "C"),  # simhash
        types.Array(types.int64, 1, "C"),  # token count
        types.Array(sketch, 2, "C"),  # minhash
        types.Array(types.uint32, 2, "C"),  # cells
        types.Array(types.boolean, 1, "C"),  # present
        types.Array(types.int64, 1, "C"),  # key codes
    )


_SIGNATURES = [_signature(t) for t in (types.uint8, types.uint16, types.uint32)]


@njit(_SIGNATURES, cache=True, nogil=True)
def read(  # pragma: no cover - compiled
    fixed: np.ndarray,
    raw: np.ndarray,
    lengths: np.ndarray,
    layout: np.ndarray,
    tag: np.ndarray,
    simhash: np.ndarray,
    token_count: np.ndarray,
    minhash: np.ndarray,
    cells: np.ndarray,
    present: np.ndarray,
    codes: np.ndarray,
) -> bool:
    """Fill the outputs (zero on entry) from n values' decoded fixed parts and cells; False,
    with the outputs unspecified, when a value's length is not what its map says, a map holds
    a cell beyond the last, or the cells are not all used.

    ``layout``: the fixed part's bytes, the MinHash values' offset, the map's offset, the map's
    bytes, the cells, a fixed part's characters, a cell's characters, a MinHash value's bytes.
    Rows whose tag is not ``tag`` are not present: their outputs stay zero (code -1)."""
    itemsize, sketch_at, map_at, map_bytes = layout[0], layout[1], layout[2], layout[3]
    n_cells, width, cell_chars, value_bytes = layout[4], layout[5], layout[6], layout[7]
    n = len(lengths)
    m = minhash.shape[1]
    for i in range(n):  # every length as its map tells, no cell beyond the last
        at = i * itemsize + map_at
        stored = 0
        for b in range(map_bytes):
            byte = fixed[at + b]
            for k in range(8):
                if (byte >> k) & 1:
                    if b * 8 + k >= n_cells:
                        return False
                    stored += 1
        if stored * cell_chars + width != lengths[i]:
            return False
    pos = 0
    for i in range(n):
        base = i * itemsize
        ok = True
        for k in range(4):
            if fixed[base + k] != tag[k]:
                ok = False
        present[i] = ok
        at = base + map_at
        if not ok:  # its cells are skipped
            for b in range(map_bytes):
                byte = fixed[at + b]
                for k in range(8):
                    pos += 3 * ((byte >> k) & 1)
            codes[i] = -1
            continue
        s = np.uint64(0)
        for k in range(8):
            s |= np.uint64(fixed[base + 4 + k]) << np.uint64(8 * k)
        simhash[i] = s
        t = np.int64(0)
        for k in range(4):
            t |= np.int64(fixed[base + 12 + k]) << (8 * k)
        token_count[i] = t
        head = np.uint64(0)
        for k in range(8):  # the exact key's first 8 bytes, big-endian: its code
            head = (head << np.uint64(8)) | np.uint64(fixed[base + 16 + k])
        codes[i] = np.int64(head >> np.uint64(4))
        for j in range(m):
            v = np.int64(0)
            for k in range(value_bytes):
                v |= np.int64(fixed[base + sketch_at + j * value_bytes + k]) << (8 * k)
            minhash[i, j] = v
        for b in range(map_bytes):
            byte = fixed[at + b]
            for k in range(8):
                if (byte >> k) & 1:
                    c = np.uint32(raw[pos]) | (np.uint32(raw[pos + 1]) << np.uint32(8))
                    cells[i, b * 8 + k] = c | (np.uint32(raw[pos + 2]) << np.uint32(16))
                    pos += 3
    return pos == len(raw)
