"""SimHash and MinHash of a batch from its token hashes in one compiled pass per document.

What :func:`indexer.fingerprints.compute.document_features` (shingles, short documents'
words), :func:`~indexer.fingerprints.simhash.simhash_segments` (count weights) and
:func:`~indexer.fingerprints.minhash.sketch_segments` compute, bit for bit, without the
feature arrays between them: each document's features are chained from its tokens and voted
and binned as they are made. Those numpy functions stay the definitions (and the path for
presence weights and for processes without numba); ``tests/test_features_kernel.py`` compares
the two. The host-model path (``indexer.boilerplate``) takes its steps apart: the k-shingles
alone (:func:`shingles`, as ``shingle_hashes``) and the votes and bins of the features it has
chosen (:func:`segment_fingerprints`); the learning sample's distinct shingles per document
(:func:`distinct`, ``boilerplate._sorted_unique_per_doc`` unsorted). Integer arithmetic only
(no matrix product, no BLAS). Compiled on first use or loaded from numba's cache
(``cache=True``, beside this file); :func:`warm` does it ahead.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from indexer.fingerprints.features import ALL_WORDS, NO_WORDS, PHI
from indexer.fingerprints.minhash import _REM_BITS, _probe_order, value_dtype

__all__ = ["distinct", "fingerprints", "segment_fingerprints", "shingles", "warm"]

_EMPTY_BIN = np.uint64(1 << 63)  # above every 40-bit remainder: a bin without a feature


@njit(cache=True, inline="always")
def _fmix(x: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


@njit(cache=True, inline="always")
def _features(
    tok: np.ndarray,
    s: int,
    n: int,
    k: int,
    phi: np.uint64,
    words: np.ndarray,
    nw: int,
    out: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Write the document's features into ``out``: its k-shingle hashes (one of all its
    tokens when fewer than ``k``), then, for ``k`` > 1, the tokens at ``words[:nw]``
    (features module docstring). Returns their number."""
    if n == 0:
        m = 0
    else:
        span = min(k, n)
        m = n - span + 1
        for i in range(m):
            out[i] = tok[s + i]
        for j in range(1, span):  # one chain step for every window at once
            for i in range(m):
                x = out[i] * phi + tok[s + i + j]
                x ^= x >> np.uint64(33)
                x *= np.uint64(0xFF51AFD7ED558CCD)
                x ^= x >> np.uint64(33)
                x *= np.uint64(0xC4CEB9FE1A85EC53)
                out[i] = x ^ (x >> np.uint64(33))
    if k > 1:
        for i in range(nw):
            out[m + i] = tok[words[i]]
        m += nw
    return m


@njit(cache=True, inline="always")
def _add_bytes(v: np.uint64, ones: np.ndarray, j: int) -> None:  # pragma: no cover - compiled
    """Add the byte counters of ``v`` (byte ``i``: bit ``8 i + j``) into ``ones``."""
    for i in range(8):
        ones[8 * i + j] += np.int64((v >> np.uint64(8 * i)) & np.uint64(0xFF))


@njit(cache=True)
def _ones(feats: np.ndarray, a: int, m: int, ones: np.ndarray) -> None:  # pragma: no cover
    """``ones[b]``: the features among ``feats[a:a + m]`` with bit ``b`` set. Eight counters of
    a byte per bit, in eight words held in registers (``c_j`` counts bits ``j``, ``j + 8``...),
    added into ``ones`` every 255 features, before a byte can overflow."""
    low = np.uint64(0x0101010101010101)
    ones[:] = 0
    for lo in range(a, a + m, 255):
        c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = np.uint64(0)
        for i in range(lo, min(lo + 255, a + m)):
            h = feats[i]
            c0 += h & low
            c1 += (h >> np.uint64(1)) & low
            c2 += (h >> np.uint64(2)) & low
            c3 += (h >> np.uint64(3)) & low
            c4 += (h >> np.uint64(4)) & low
            c5 += (h >> np.uint64(5)) & low
            c6 += (h >> np.uint64(6)) & low
            c7 += (h >> np.uint64(7)) & low
        _add_bytes(c0, ones, 0)
        _add_bytes(c1, ones, 1)
        _add_bytes(c2, ones, 2)
        _add_bytes(c3, ones, 3)
        _add_bytes(c4, ones, 4)
        _add_bytes(c5, ones, 5)
        _add_bytes(c6, ones, 6)
        _add_bytes(c7, ones, 7)


@njit(cache=True, inline="always")
def _bin(h: np.uint64, mins: np.ndarray, r: int, rem_bits: int) -> None:  # pragma: no cover
    """Keep in ``h``'s bin (its top ``r`` bits) the least of its next ``rem_bits`` bits."""
    b = h >> np.uint64(64 - r)
    rem = (h << np.uint64(r)) >> np.uint64(64 - rem_bits)
    if rem < mins[b]:
        mins[b] = rem


@njit(cache=True, inline="always")
def _majority(feats: np.ndarray, a: int, m: int, ones: np.ndarray) -> np.uint64:  # pragma: no cover
    """SimHash (count weights) of the features ``feats[a:a + m]``: a bit set where the
    features with it set are more than half."""
    _ones(feats, a, m, ones)
    out = np.uint64(0)
    for b in range(64):
        if 2 * ones[b] > m:
            out |= np.uint64(1) << np.uint64(b)
    return out


@njit(cache=True, inline="always")
def _sketch(
    feats: np.ndarray,
    a: int,
    m: int,
    own: np.ndarray,
    row: np.ndarray,
    r: int,
    rem_bits: int,
    probe: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """MinHash row of the features ``feats[a:a + m]``: binned, empty bins densified (all zero
    without features)."""
    size = len(row)
    if m == 0:
        row[:] = 0
        return
    own[:] = _EMPTY_BIN
    for i in range(a, a + m):
        _bin(feats[i], own, r, rem_bits)
    for b in range(size):
        v = own[b]
        if v == _EMPTY_BIN:  # the first filled bin in this bin's probe order
            for j in range(size):
                c = probe[b, j]
                if own[c] != _EMPTY_BIN:
                    v = own[c]
                    break
        row[b] = v


@njit(cache=True, nogil=True)
def _fingerprints(
    sim_tok: np.ndarray,
    min_tok: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
    k_sim: int,
    k_min: int,
    r: int,
    rem_bits: int,
    probe: np.ndarray,
    phi: np.uint64,
    all_words: int,
    no_words: int,
    simhash: np.ndarray,
    mins: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Fill ``simhash`` (n,) and ``mins`` (n, size): each bin's least remainder after
    densification (``mins`` all zero for a document without features)."""
    size = mins.shape[1]
    ones = np.zeros(64, dtype=np.int64)
    own = np.empty(size, dtype=np.uint64)
    longest = 0
    for d in range(len(lengths)):
        longest = max(longest, lengths[d])
    feats = np.empty(2 * longest + 1, dtype=np.uint64)
    words = np.empty(longest + 1, dtype=np.int64)
    scale = float(1 << 53)
    s = 0
    for d in range(len(lengths)):
        n = lengths[d]
        # the short documents' sampled words (with_words: the same tokens for both families)
        share = (no_words - float(units[d])) / (no_words - all_words)
        share = min(max(share, 0.0), 1.0)
        nw = 0
        if share > 0:
            limit = share * scale
            for i in range(s, s + n):
                if float(sample[i] >> np.uint64(11)) < limit:
                    words[nw] = i
                    nw += 1
        # SimHash: each feature's set bits counted, a bit set where they are the majority
        m = _features(sim_tok, s, n, k_sim, phi, words, nw, feats)
        simhash[d] = _majority(feats, 0, m, ones)
        # MinHash: the features of its own family binned, empty bins densified
        m = _features(min_tok, s, n, k_min, phi, words, nw, feats)
        _sketch(feats, 0, m, own, mins[d], r, rem_bits, probe)
        s += n


def fingerprints(
    sim_tok: np.ndarray,
    min_tok: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
    shingle: int,
    minhash_shingle: int,
    size: int,
    bits: int,
) -> tuple[np.ndarray, np.ndarray]:
    """SimHash (count weights) and MinHash sketch of each document from its concatenated
    token hashes (``lengths[d]`` per document), as ``document_features`` then
    ``simhash_segments`` and ``sketch_segments`` give them: (n,) uint64 and (n, ``size``)
    values of ``bits`` bits."""
    n = len(lengths)
    if n * size >= 1 << (64 - _REM_BITS):
        raise ValueError("too many documents in one sketch call; split the batch")
    simhash = np.empty(n, dtype=np.uint64)
    mins = np.empty((n, size), dtype=np.uint64)
    u64 = np.uint64
    _fingerprints(
        np.ascontiguousarray(sim_tok, dtype=u64),
        np.ascontiguousarray(min_tok, dtype=u64),
        np.ascontiguousarray(sample, dtype=u64),
        np.ascontiguousarray(lengths, dtype=np.int64),
        np.ascontiguousarray(units, dtype=np.int64),
        shingle,
        minhash_shingle,
        size.bit_length() - 1,
        _REM_BITS,
        np.ascontiguousarray(_probe_order(size), dtype=np.int16),
        PHI,
        ALL_WORDS,
        NO_WORDS,
        simhash,
        mins,
    )
    return simhash, mins.astype(value_dtype(bits))  # the low ``bits`` bits (unsigned casts)


@njit(cache=True, nogil=True)
def _segments(
    sh: np.ndarray,
    scounts: np.ndarray,
    mh: np.ndarray,
    mcounts: np.ndarray,
    r: int,
    rem_bits: int,
    probe: np.ndarray,
    simhash: np.ndarray,
    mins: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``_fingerprints`` of features already made: each document's ``scounts[d]`` SimHash
    features of ``sh`` and ``mcounts[d]`` MinHash features of ``mh``."""
    ones = np.zeros(64, dtype=np.int64)
    own = np.empty(mins.shape[1], dtype=np.uint64)
    a = b = 0
    for d in range(len(scounts)):
        simhash[d] = _majority(sh, a, scounts[d], ones)
        a += scounts[d]
        _sketch(mh, b, mcounts[d], own, mins[d], r, rem_bits, probe)
        b += mcounts[d]


def segment_fingerprints(
    sh: np.ndarray,
    scounts: np.ndarray,
    mh: np.ndarray,
    mcounts: np.ndarray,
    size: int,
    bits: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``simhash_segments(sh, scounts)`` (count weights) and ``sketch_segments(mh, mcounts,
    size, bits)``: the same values."""
    n = len(scounts)
    if n * size >= 1 << (64 - _REM_BITS):
        raise ValueError("too many documents in one sketch call; split the batch")
    simhash = np.empty(n, dtype=np.uint64)
    mins = np.empty((n, size), dtype=np.uint64)
    _segments(
        np.ascontiguousarray(sh, dtype=np.uint64),
        np.ascontiguousarray(scounts, dtype=np.int64),
        np.ascontiguousarray(mh, dtype=np.uint64),
        np.ascontiguousarray(mcounts, dtype=np.int64),
        size.bit_length() - 1,
        _REM_BITS,
        np.ascontiguousarray(_probe_order(size), dtype=np.int16),
        simhash,
        mins,
    )
    return simhash, mins.astype(value_dtype(bits))


@njit(cache=True, nogil=True)
def _shingles(
    tok: np.ndarray, lengths: np.ndarray, k: int, phi: np.uint64, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    """Each document's k-shingle hashes into ``out`` (one of all its tokens when it has fewer
    than ``k``, none when it has none), one document after the other."""
    words = np.empty(0, dtype=np.int64)
    s = o = 0
    for d in range(len(lengths)):
        n = lengths[d]
        o += _features(tok, s, n, k, phi, words, 0, out[o:])
        s += n


def shingles(tok: np.ndarray, lengths: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``shingle_hashes(tok, Segments(lengths), k)``: every document's k-shingle hashes
    (concatenated) and their number per document."""
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    counts = np.where(lengths >= k, lengths - k + 1, np.minimum(lengths, 1))
    if k == 1:
        return tok, counts
    out = np.empty(int(counts.sum()), dtype=np.uint64)
    _shingles(np.ascontiguousarray(tok, dtype=np.uint64), lengths, k, PHI, out)
    return out, counts


@njit(cache=True, nogil=True)
def _distinct(
    h: np.ndarray, counts: np.ndarray, out: np.ndarray, kept: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Each document's distinct values of ``h`` (``counts`` per document) into ``out``, in
    the order first seen, and their number per document into ``kept``; returns the total.
    One open-addressing table for the batch (a slot belongs to the document that stamped
    it last), so nothing is cleared between documents and nothing is sorted."""
    most = 0
    for c in counts:
        most = max(most, c)
    size = 1
    while size < 2 * most:
        size <<= 1
    keys = np.empty(size, dtype=np.uint64)
    stamp = np.zeros(size, dtype=np.int64)
    s = o = 0
    for d in range(len(counts)):
        c = counts[d]
        m = 1
        while m < 2 * c:
            m <<= 1
        mask = np.uint64(m - 1)
        tag = d + 1
        first = o
        for i in range(s, s + c):
            x = h[i]
            j = int(x & mask)
            while True:
                if stamp[j] != tag:
                    stamp[j] = tag
                    keys[j] = x
                    out[o] = x
                    o += 1
                    break
                if keys[j] == x:
                    break
                j = int((np.uint64(j) + np.uint64(1)) & mask)
        kept[d] = o - first
        s += c
    return o


def distinct(h: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per document (``counts`` values of ``h`` each), its distinct values in the order first
    seen (concatenated), and their number per document: ``np.unique`` of each document's
    segment, but unsorted."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    out = np.empty(int(counts.sum()), dtype=np.uint64)
    kept = np.empty(len(counts), dtype=np.int64)
    n = _distinct(np.ascontiguousarray(h, dtype=np.uint64), counts, out, kept)
    return out[:n], kept


def warm() -> None:
    """Compile (or load from the cache) the kernel for the argument types it is called with."""
    tok = np.array([1, 2, 3], dtype=np.uint64)
    lengths = np.array([3, 0], dtype=np.int64)
    fingerprints(tok, tok, tok, lengths, np.array([3, 0]), 4, 4, 8, 8)
    sh, counts = shingles(tok, lengths, 4)
    segment_fingerprints(sh, counts, sh, counts, 8, 8)
    distinct(sh, counts)
