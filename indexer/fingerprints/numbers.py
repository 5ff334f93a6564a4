"""The number sketch: what a document's numbers say, so that copies with other numbers stay apart.

Two texts that differ only in a version, a year, a price or a model code are near-duplicates to
SimHash and MinHash, yet different documents to a reader. This module summarises, per
document, *which number stands where*, in a fixed-size sketch compared at verification
(``collapse.grouping``).

Definitions, on the text's word bytes (:func:`indexer.text.word_bytes`: NFKC, case-folded,
every non-word character a space), cut into *runs*: maximal runs of ASCII word bytes
(``[0-9a-z_]``) or of non-ASCII bytes, so that a script change ends a run (``版本2`` is
``版本`` then ``2``):

* a *number* is a maximal sequence of ASCII runs holding a digit, each at most 3 non-word
  characters after the one before (``2.1``, ``$1,299.99``, ``2026-12-01``, ``10 / 20``,
  ``128gb``, ``sm-g991b`` → ``g991b``); its *value* is its runs in order, separators not
  counted (``2.1`` = ``2-1`` ≠ ``21``);
* its *context* is the run right before it and the run right after it (none at the start or
  end of the text); of a non-ASCII run only the 6 bytes next to the number (2 CJK or 3
  Cyrillic characters); runs are hashed on their first 32 bytes.

A document's *pairs* are its distinct (context, value). The sketch has :data:`CELLS` cells:
each context falls in one cell of each of :data:`ROWS` rows (:data:`BUCKETS` a row); a cell
holds two sums over the pairs whose context falls in it: 16 bits of the context hashes and 8
bits of the pair hashes (row-specific bits of each). Stored as one ``uint32`` per cell,
``context_sum << 8 | value_sum``, and packed as 3 little-endian bytes per cell.

**Conflict** (:func:`conflicts`): some cell of the two documents has equal context sums and
different value sums, i.e. the cell holds the same contexts in both (each with as many values)
but other values there. Guarantees, both up to hash coincidences:

* a value changed at a context that both documents have once, with the same contexts in its
  cell of at least one row, always conflicts (missed when 8 value bits agree: 2**-8 a row);
* numbers whose context is in one document only never conflict (they change the cell's
  context sum: the cell is not compared), however many: a "printed on <date>" line, a
  byline's date, a page counter in a template, "in 2 days" beside "in two days". A cell
  whose context sums agree by chance (2**-16 a cell that differs) may conflict.

Not promised: a changed number whose cells all also hold contexts of one document only (a
frame's numbers next to it in every row) is not seen; a value changed into one its context
already has, or a context's values changed while their count changed too, is not seen.
Order of the documents never matters. Documents without numbers have an all-zero sketch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexer.text import word_bytes

__all__ = [
    "BUCKETS",
    "CELLS",
    "ROWS",
    "cells_from_bytes",
    "cells_to_bytes",
    "conflicts",
    "number_sketches",
    "sketches_of_words",
]

#: Rows of the sketch: a context falls in one cell of each (independent hashes).
ROWS = 2
#: Cells per row.
BUCKETS = 16
#: Cells in all (one ``uint32`` each, 3 bytes packed).
CELLS = ROWS * BUCKETS

_MAX_GAP = 3  # non-word characters allowed between the runs of one number
_SIDE = 6  # bytes of a non-ASCII context run kept next to the number
_MAX_RUN = 32  # bytes of a run hashed (those next to the number for a context)
# byte classes of word bytes: 0 space, 1 ASCII word byte, 2 non-ASCII, 3 document separator
_SPACE, _ASCII, _OTHER, _SEP = 0, 1, 2, 3
_CLASSES = bytes(
    _ASCII if (48 <= c <= 57 or 97 <= c <= 122 or c == 95) else _OTHER if c >= 128 else _SPACE
    for c in range(256)
).replace(b"\0", bytes([_SEP]), 1)
_DIGITS = bytes(1 if 48 <= c <= 57 else 0 for c in range(256))
_U64 = np.uint64
_P = _U64(0x100000001B3)  # odd multiplier of the run hash
_POW = np.cumprod(np.r_[_U64(1), np.full(_MAX_RUN - 1, _P, dtype=np.uint64)], dtype=np.uint64)
_Q = _U64(0x9E3779B97F4A7C15)
_EMPTY = _U64(0x5EED)  # hash of "no run"


def _fmix(x: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser (wrapping uint64 arithmetic)."""
    x = x ^ (x >> _U64(33))
    x = x * _U64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> _U64(33))
    x = x * _U64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> _U64(33))


def _range_hashes(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Hash of the bytes ``a[lo:hi]`` of each range (non-empty, at most ``_MAX_RUN`` long)."""
    if not len(lo):
        return np.zeros(0, dtype=np.uint64)
    lengths = hi - lo
    first = np.cumsum(lengths) - lengths
    seg = np.repeat(np.arange(len(lo)), lengths)
    pos = np.arange(int(lengths.sum())) - first[seg]
    terms = a[lo[seg] + pos].astype(np.uint64) * _POW[pos]
    with np.errstate(over="ignore"):
        return _fmix(np.add.reduceat(terms, first) + lengths.astype(np.uint64))


def number_sketches(texts: Sequence[str]) -> np.ndarray:
    """(n, :data:`CELLS`) uint32: the number sketch of each text (module docstring)."""
    return sketches_of_words([word_bytes(t) for t in texts])


def sketches_of_words(words: Sequence[bytes]) -> np.ndarray:
    """:func:`number_sketches` of texts given as their :func:`~indexer.text.word_bytes`."""
    n = len(words)
    out = np.zeros((n, CELLS), dtype=np.uint32)
    buf = b"\0".join(words)
    digits = np.flatnonzero(np.frombuffer(buf.translate(_DIGITS), dtype=np.bool_))
    if not len(digits):
        return out
    cls = np.frombuffer(buf.translate(_CLASSES), dtype=np.uint8)
    a = np.frombuffer(buf, dtype=np.uint8)
    # runs of one class: run r is bounds[r]:bounds[r + 1], of class kind[r]
    bounds = np.r_[0, np.flatnonzero(cls[1:] != cls[:-1]) + 1, len(a)]
    kind = np.r_[cls[bounds[:-1]], _SEP, _SEP]  # two separators past the end
    runs = np.unique(np.searchsorted(bounds, digits, side="right") - 1)  # numeric, ascending
    # a number: numeric runs each at most _MAX_GAP spaces after the one before
    gap = runs[:-1] + 1  # the run after each numeric run
    joined = np.r_[
        False,
        (runs[1:] == gap + 1)
        & (kind[gap] == _SPACE)
        & (bounds[runs[1:]] - bounds[gap] <= _MAX_GAP),
    ]
    heads = np.flatnonzero(~joined)  # each number's first run, as an index into runs
    first, last = runs[heads], runs[np.r_[heads[1:], len(runs)] - 1]
    number = np.cumsum(~joined) - 1  # the number each numeric run belongs to
    # values: hash of each numeric run, combined in order within its number
    lo = bounds[runs]
    h = _range_hashes(a, lo, np.minimum(bounds[runs + 1], lo + _MAX_RUN))
    offset = (np.arange(len(runs)) - heads[number]).astype(np.uint64)
    with np.errstate(over="ignore"):
        value = np.add.reduceat(_fmix(h + offset * _Q), heads)
    # contexts: the word run right before and right after (across spaces, not documents)
    before = np.where(kind[first - 1] == _SPACE, first - 2, first - 1)
    before[first == 0] = -1
    has_b = (before >= 0) & (kind[before] != _SEP) & (kind[before] != _SPACE)
    after = np.where(kind[last + 1] == _SPACE, last + 2, last + 1)
    has_a = (kind[after] != _SEP) & (kind[after] != _SPACE)
    b, c = before[has_b], after[has_a]
    b_hi, c_lo = bounds[b + 1], bounds[c]
    b_lo = np.maximum(bounds[b], b_hi - np.where(kind[b] == _OTHER, _SIDE, _MAX_RUN))
    c_hi = np.minimum(bounds[c + 1], c_lo + np.where(kind[c] == _OTHER, _SIDE, _MAX_RUN))
    hb = np.full(len(first), _EMPTY, dtype=np.uint64)
    ha = np.full(len(first), _EMPTY, dtype=np.uint64)
    hb[has_b] = _range_hashes(a, b_lo, b_hi)
    ha[has_a] = _range_hashes(a, c_lo, c_hi)
    ends = np.cumsum([len(w) + 1 for w in words])
    nd = np.searchsorted(ends, bounds[first], side="right")  # the document of each number
    with np.errstate(over="ignore"):
        ctx = _fmix(hb * _Q + _fmix(ha))
        pair = _fmix(ctx ^ _fmix(value + _Q))
    # distinct (context, value) pairs per document
    order = np.lexsort((pair, nd))
    nd, ctx, pair = nd[order], ctx[order], pair[order]
    keep = np.r_[True, (nd[1:] != nd[:-1]) | (pair[1:] != pair[:-1])]
    nd, ctx, pair = nd[keep], ctx[keep], pair[keep]
    for r in range(ROWS):
        # row r: its bucket, context sum and value sum from bits of its own
        shift = _U64(8 * r)
        bucket = ((ctx >> shift) % _U64(BUCKETS)).astype(np.int64)
        cell = nd * CELLS + r * BUCKETS + bucket
        csum = np.bincount(
            cell, ((ctx >> _U64(32 + 16 * r)) & _U64(0xFFFF)).astype(np.float64), n * CELLS
        )
        vsum = np.bincount(cell, ((pair >> shift) & _U64(0xFF)).astype(np.float64), n * CELLS)
        cols = slice(r * BUCKETS, (r + 1) * BUCKETS)
        cells = (csum.astype(np.int64) % 65536) << 8 | (vsum.astype(np.int64) % 256)
        out[:, cols] = cells.reshape(n, CELLS)[:, cols]
    return out


def conflicts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) bool: whether the number sketches of k pairs of documents (``a``, ``b``: (k,
    :data:`CELLS`)) conflict: some cell has equal context sums and different value sums."""
    d = np.bitwise_xor(a, b)
    return ((d != 0) & (d < 256)).any(axis=-1)


def cells_to_bytes(cells: np.ndarray) -> np.ndarray:
    """(n, CELLS) sketches -> (n, CELLS, 3) uint8: each cell's 3 little-endian bytes (the
    stored form: ``collapse_fp.numbers`` and the packed record)."""
    return np.ascontiguousarray(cells, dtype="<u4").view(np.uint8).reshape(-1, CELLS, 4)[:, :, :3]


def cells_from_bytes(raw: np.ndarray) -> np.ndarray:
    """Inverse of :func:`cells_to_bytes`: (n, CELLS, 3) uint8 -> (n, CELLS) uint32."""
    r = np.asarray(raw, dtype=np.uint32)
    return r[:, :, 0] | r[:, :, 1] << 8 | r[:, :, 2] << 16
