"""Tokenisation of a batch as compiled kernels (numba): the ``indexer ingest`` workers' path.

The same tokens as :func:`indexer.text.word_bytes` (its docstring is the definition; the
Python and numpy paths stay as the reference the tests compare against), found in one pass
over the batch's UTF-8 bytes instead of tens of numpy and ``bytes`` passes:

* :func:`scan` reads each text's code points (ASCII by :data:`indexer.text`'s byte table,
  the others by their kind in :func:`indexer.text.kind_table`) and writes every token's
  bytes followed by one space, so that a text's tokens are also its exact key's input (its
  tokens space-joined), with each token's line (the line breaks before it in its text);
* :class:`Vocabulary` gives each distinct token a process-local id through an open-addressing
  hash table whose keys are the tokens' bytes (compared byte for byte, so ids never merge two
  tokens); only tokens new to the process become Python ``bytes``, to compute the named
  hashes, weights and samples exactly as :mod:`indexer.fingerprints.features` defines them.

Kernels are compiled on first use and cached on disk (``cache=True``); :func:`warm` loads
them, so that ``indexer ingest`` can pay for it once in the main process before forking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import pairwise

import numba
import numpy as np

from indexer.fingerprints.features import TokenTables
from indexer.text import ascii_word_bytes, fold, kind_table, learn_kinds, with_url_tokens

__all__ = ["Batch", "Vocabulary", "scan", "tokenise_folded", "warm"]

# kinds of a code point, as in indexer.text (word, mark, dense, separator; not yet known)
_WORD, _MARK, _DENSE, _SEPARATOR, _UNKNOWN = 0, 1, 2, 3, 255
_LINE_BREAK, _SPACE = 10, 32
_VOCAB_LIMIT = 4_000_000  # distinct tokens kept before the vocabulary starts afresh


@numba.njit(cache=True, nogil=True)
def _emit_word_end(out: np.ndarray, off: np.ndarray, at: int, ntok: int) -> tuple[int, int]:
    out[at] = _SPACE
    at += 1
    ntok += 1
    off[ntok] = at
    return at, ntok


@numba.njit(cache=True, nogil=True)
def _copy(out: np.ndarray, at: int, data: np.ndarray, a: int, b: int) -> int:
    """``data[a:b]`` written to ``out`` from ``at``; returns the position after it."""
    for q in range(a, b):
        out[at] = data[q]
        at += 1
    return at


@numba.njit(cache=True, nogil=True)
def _emit_token(
    out: np.ndarray,
    off: np.ndarray,
    line_no: np.ndarray,
    at: int,
    ntok: int,
    line: int,
    data: np.ndarray,
    a: int,
    b: int,
) -> tuple[int, int]:
    """A whole token of ``data[a:b]`` on ``line`` (a dense run's unigram or the end of a
    bigram): its line, its bytes and its end."""
    line_no[ntok] = line
    return _emit_word_end(out, off, _copy(out, at, data, a, b), ntok)


@numba.njit(cache=True, nogil=True)
def _is_space(c: int) -> bool:
    """``\\s`` of Python's ``re`` for an ASCII byte (``\\x1c``-``\\x1f`` included)."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


@numba.njit(cache=True, nogil=True)
def _is_letter(c: int) -> bool:
    return 97 <= c <= 122 or 65 <= c <= 90


@numba.njit(cache=True, nogil=True)
def _is_scheme(c: int) -> bool:
    """A byte of a URL scheme after its first letter: ``[a-z0-9+.-]``, either case."""
    return 97 <= c <= 122 or 65 <= c <= 90 or 48 <= c <= 57 or c == 43 or c == 45 or c == 46


@numba.njit(cache=True, nogil=True)
def _find_sep(data: np.ndarray, a: int, end: int) -> int:
    """The first ``://`` in ``data[a:end]`` (its position), or -1."""
    k = a
    while k + 2 < end:
        if data[k] == 58 and data[k + 1] == 47 and data[k + 2] == 47:
            return k
        k += 1
    return -1


@numba.njit(cache=True, nogil=True)
def _next_url(data: np.ndarray, last: int, end: int) -> tuple[int, int]:
    """The next URL from ``last`` on in an ASCII text ending at ``end``, as
    :func:`indexer.text.sub_urls` and its pattern find it: (start, end), or (-1, -1).

    Each ``://`` from ``last`` on delimits a word (whitespace to whitespace); in it the
    pattern ``[a-z][a-z0-9+.-]*://\\S+`` (any case) matches at its leftmost start, which is
    the first letter of the scheme bytes before one of the word's ``://`` that has a byte
    after it, and runs to the word's end.
    """
    q = _find_sep(data, last, end)
    while q >= 0:
        start = last
        k = q - 1
        while k >= last:
            if _is_space(data[k]):
                start = k + 1
                break
            k -= 1
        e = q + 3
        while e < end and not _is_space(data[e]):
            e += 1
        r = q
        while r >= 0:
            if r + 3 < e:
                s0 = r
                while s0 > start and _is_scheme(data[s0 - 1]):
                    s0 -= 1
                for p in range(s0, r):
                    if _is_letter(data[p]):
                        return p, e
            r = _find_sep(data, r + 3, e)
        last = e
        q = _find_sep(data, last, end)
    return -1, -1


@numba.njit(cache=True, nogil=True)
def scan(
    data: np.ndarray,
    ends: np.ndarray,
    ascii_text: np.ndarray,
    kinds: np.ndarray,
    ascii_out: np.ndarray,
    out: np.ndarray,
    off: np.ndarray,
    line_no: np.ndarray,
    counts: np.ndarray,
    unknown: np.ndarray,
) -> tuple[int, int]:
    """Tokenise the texts whose UTF-8 bytes are ``data`` (text ``t`` ends at ``ends[t]``):
    :func:`indexer.text.word_bytes` of :func:`~indexer.text.fold`-ed texts, whose URLs are
    found here where ``ascii_text[t]`` (an ASCII text) and are already tokens otherwise
    (:func:`~indexer.text.with_url_tokens`).

    Writes token ``j``'s bytes to ``out[off[j] : off[j + 1] - 1]`` (a space after each),
    its line to ``line_no[j]``, each text's token count to ``counts``; returns the number of
    tokens and of code points whose kind is not yet known (recorded in ``unknown`` while it
    has room): when that is not 0 the output is to be discarded, the kinds learnt and the
    scan run again. ``out`` holds at least 3 bytes per byte of ``data``, ``off`` two more
    entries than ``data`` has bytes (its last one is written over freely).
    """
    ntok = 0
    at = 0
    nunknown = 0
    off[0] = 0
    start = 0
    for t in range(len(ends)):
        end = ends[t]
        first = ntok
        line = 0
        in_word = False
        dense_n = 0  # characters of the current dense run so far
        prev_a = 0  # the bytes of the run's last character: data[prev_a:prev_b]
        prev_b = 0
        url_a, url_b = -1, -1  # the next URL's bytes (data[url_a:url_b])
        if ascii_text[t]:
            url_a, url_b = _next_url(data, start, end)
        i = start
        scratch = len(off) - 1  # a slot no token's offset takes
        while i < end:
            if dense_n == 0 and data[i] < 0x80 and ascii_out[data[i]] != _LINE_BREAK and i != url_a:
                # ASCII outside a dense run, up to a line break, a URL or another byte: a
                # separator ends a word, the others are written; stores made whatever the byte
                # and kept or not by how far ``at`` and ``ntok`` move (no branch per byte:
                # words start and end too often to predict)
                lim = url_a if url_a >= 0 else end
                inside = np.int64(in_word)
                while i < lim:
                    b0 = data[i]
                    if b0 >= 0x80:
                        break
                    o = ascii_out[b0]
                    if o == _LINE_BREAK:
                        break
                    sep = np.int64(o == _SPACE)
                    ended = sep & inside
                    out[at] = o  # a separator's is the space that ends a word
                    at += int((1 - sep) | ended)
                    line_no[ntok] = line
                    off[ntok + 1 if ended else scratch] = at
                    ntok += int(ended)
                    inside = 1 - sep
                    i += 1
                in_word = inside == 1
                continue
            if i == url_a:  # one token: the URL's letters and digits, lower-cased
                if in_word:
                    at, ntok = _emit_word_end(out, off, at, ntok)
                    in_word = False
                line_no[ntok] = line
                for q in range(url_a, url_b):
                    c = data[q]
                    if c != 95 and ascii_out[c] != _SPACE and c != _LINE_BREAK:
                        out[at] = ascii_out[c]
                        at += 1
                at, ntok = _emit_word_end(out, off, at, ntok)
                i = url_b
                url_a, url_b = _next_url(data, url_b, end)
                continue
            b0 = data[i]
            if b0 < 0x80:
                o = ascii_out[b0]
                if o == _SPACE:  # a separator: ends a word, not a dense run
                    if in_word:
                        at, ntok = _emit_word_end(out, off, at, ntok)
                        in_word = False
                    i += 1
                    continue
                if o == _LINE_BREAK:  # ends a word and a dense run
                    if in_word:
                        at, ntok = _emit_word_end(out, off, at, ntok)
                        in_word = False
                    if dense_n == 1:  # a run of one character: its unigram
                        at, ntok = _emit_token(
                            out, off, line_no, at, ntok, line, data, prev_a, prev_b
                        )
                    dense_n = 0
                    line += 1
                    i += 1
                    continue
                if dense_n == 1:
                    at, ntok = _emit_token(out, off, line_no, at, ntok, line, data, prev_a, prev_b)
                dense_n = 0
                if not in_word:
                    in_word = True
                    line_no[ntok] = line
                out[at] = o
                at += 1
                i += 1
                continue
            if b0 < 0xE0:
                n = 2
                cp = (np.int64(b0) & 0x1F) << 6 | (np.int64(data[i + 1]) & 0x3F)
            elif b0 < 0xF0:
                n = 3
                cp = (
                    (np.int64(b0) & 0x0F) << 12
                    | (np.int64(data[i + 1]) & 0x3F) << 6
                    | (np.int64(data[i + 2]) & 0x3F)
                )
            else:
                n = 4
                cp = (
                    (np.int64(b0) & 0x07) << 18
                    | (np.int64(data[i + 1]) & 0x3F) << 12
                    | (np.int64(data[i + 2]) & 0x3F) << 6
                    | (np.int64(data[i + 3]) & 0x3F)
                )
            k = kinds[cp]
            if k == _UNKNOWN:
                if nunknown < len(unknown):
                    unknown[nunknown] = cp
                nunknown += 1
                k = _SEPARATOR
            if k == _SEPARATOR:
                if in_word:
                    at, ntok = _emit_word_end(out, off, at, ntok)
                    in_word = False
                i += n
                continue
            if k == _DENSE:
                if in_word:
                    at, ntok = _emit_word_end(out, off, at, ntok)
                    in_word = False
                if dense_n:  # the bigram of the previous character and this one
                    at = _copy(out, at, data, prev_a, prev_b)
                    at, ntok = _emit_token(out, off, line_no, at, ntok, line, data, i, i + n)
                dense_n += 1
                prev_a = i
                prev_b = i + n
                i += n
                continue
            # a word character or a mark outside the dense scripts
            if dense_n == 1:
                at, ntok = _emit_token(out, off, line_no, at, ntok, line, data, prev_a, prev_b)
            dense_n = 0
            if not in_word:
                in_word = True
                line_no[ntok] = line
            at = _copy(out, at, data, i, i + n)
            i += n
        if in_word:
            at, ntok = _emit_word_end(out, off, at, ntok)
        if dense_n == 1:
            at, ntok = _emit_token(out, off, line_no, at, ntok, line, data, prev_a, prev_b)
        counts[t] = ntok - first
        start = end
    return ntok, nunknown


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_S33 = np.uint64(33)


@numba.njit(cache=True, nogil=True)
def _bytes_hash(buf: np.ndarray, a: int, b: int) -> np.uint64:
    """FNV-1a of ``buf[a:b]`` with a final mix (the table's slots take its low bits)."""
    h = _FNV_OFFSET
    for q in range(a, b):
        h = (h ^ np.uint64(buf[q])) * _FNV_PRIME
    return _mix(h)


@numba.njit(cache=True, nogil=True)
def _packed(buf: np.ndarray, a: int, b: int) -> np.uint64:
    """A token of at most 8 bytes as one integer (little-endian; never 0, and one-to-one,
    since no token holds a zero byte)."""
    key = np.uint64(0)
    for q in range(b - a):
        key |= np.uint64(buf[a + q]) << np.uint64(8 * q)
    return key


@numba.njit(cache=True, nogil=True)
def _mix(h: np.uint64) -> np.uint64:
    h ^= h >> _S33
    h *= _MIX
    h ^= h >> _S33
    return h


@numba.njit(cache=True, nogil=True)
def _add(
    buf: np.ndarray, a: int, size: int, arena: np.ndarray, starts: np.ndarray, n: int, used: int
) -> int:
    """Append token ``n``'s bytes to the arena; returns the arena bytes used."""
    for q in range(size):
        arena[used + q] = buf[a + q]
    used += size
    starts[n + 1] = used
    return used


@numba.njit(cache=True, nogil=True)
def _lookup(
    buf: np.ndarray,
    off: np.ndarray,
    ntok: int,
    short: np.ndarray,
    slots: np.ndarray,
    hashes: np.ndarray,
    arena: np.ndarray,
    starts: np.ndarray,
    state: np.ndarray,
    ids: np.ndarray,
) -> None:
    """Each token's id (``buf[off[j] : off[j + 1] - 1]``) into ``ids``; tokens not yet known
    get the next ids, in order (their bytes appended to ``arena``). Tokens of up to 8 bytes
    are keyed by their bytes packed in one integer (``short``: key and id per slot, key 0
    empty), longer ones by a hash whose hits are compared byte for byte with the arena
    (``slots``: an id per slot, -1 empty). ``state``: the ids and arena bytes used (updated);
    capacities are the caller's."""
    smask = len(short) // 2 - 1
    lmask = len(slots) - 1
    n = state[0]
    used = state[1]
    for j in range(ntok):
        a = off[j]
        b = off[j + 1] - 1
        size = b - a
        if size <= 8:
            key = _packed(buf, a, b)
            s = np.int64(_mix(key) & np.uint64(smask))
            while True:
                got = short[2 * s]
                if got == key:
                    ids[j] = np.int64(short[2 * s + 1])
                    break
                if got == 0:
                    short[2 * s] = key
                    short[2 * s + 1] = np.uint64(n)
                    used = _add(buf, a, size, arena, starts, n, used)
                    ids[j] = n
                    n += 1
                    break
                s = (s + 1) & smask
            continue
        h = _bytes_hash(buf, a, b)
        s = np.int64(h & np.uint64(lmask))
        while True:
            got = slots[s]
            if got < 0:
                slots[s] = n
                hashes[n] = h
                used = _add(buf, a, size, arena, starts, n, used)
                ids[j] = n
                n += 1
                break
            if hashes[got] == h and starts[got + 1] - starts[got] == size:
                base = starts[got]
                same = True
                for q in range(size):
                    if arena[base + q] != buf[a + q]:
                        same = False
                        break
                if same:
                    ids[j] = got
                    break
            s = (s + 1) & lmask
    state[0] = n
    state[1] = used


@numba.njit(cache=True, nogil=True)
def _rehash(
    short: np.ndarray,
    slots: np.ndarray,
    hashes: np.ndarray,
    arena: np.ndarray,
    starts: np.ndarray,
    n: int,
) -> None:
    """Place ids ``0..n-1`` in empty tables (``short`` all 0, ``slots`` all -1)."""
    smask = len(short) // 2 - 1
    lmask = len(slots) - 1
    for i in range(n):
        a = starts[i]
        b = starts[i + 1]
        if b - a <= 8:
            key = _packed(arena, a, b)
            s = np.int64(_mix(key) & np.uint64(smask))
            while short[2 * s] != 0:
                s = (s + 1) & smask
            short[2 * s] = key
            short[2 * s + 1] = np.uint64(i)
        else:
            s = np.int64(hashes[i] & np.uint64(lmask))
            while slots[s] >= 0:
                s = (s + 1) & lmask
            slots[s] = i


# BLAKE2b (RFC 7693), unkeyed, 8-byte digest: the "blake2b" token hash of new tokens read
# straight from the vocabulary's arena (hashlib's per-token call is most of its cost there)
_B2_IV = np.array(
    [0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
     0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179],
    dtype=np.uint64,
)  # fmt: skip
_B2_SIGMA = np.array(
    [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
     [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
     [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
     [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
     [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
     [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
     [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
     [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
     [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
     [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
     [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
     [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3]],
    dtype=np.int64,
)  # fmt: skip


@numba.njit(cache=True, inline="always")
def _rotr(x: np.uint64, n: int) -> np.uint64:
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


@numba.njit(cache=True, inline="always")
def _b2_mix(
    a: np.uint64, b: np.uint64, c: np.uint64, d: np.uint64, x: np.uint64, y: np.uint64
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """BLAKE2b's G."""
    a = a + b + x
    d = _rotr(d ^ a, 32)
    c = c + d
    b = _rotr(b ^ c, 24)
    a = a + b + y
    d = _rotr(d ^ a, 16)
    c = c + d
    b = _rotr(b ^ c, 63)
    return a, b, c, d


@numba.njit(cache=True, nogil=True)
def _b2_compress(
    h: np.ndarray, m: np.ndarray, t: np.uint64, last: bool, iv: np.ndarray, sigma: np.ndarray
) -> None:  # pragma: no cover - compiled
    """BLAKE2b's F: the state ``h`` after the block ``m`` (16 words), ``t`` bytes hashed."""
    v0, v1, v2, v3, v4, v5, v6, v7 = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    v8, v9, v10, v11 = iv[0], iv[1], iv[2], iv[3]
    v12 = iv[4] ^ t
    v13 = iv[5]
    v14 = ~iv[6] if last else iv[6]
    v15 = iv[7]
    for r in range(12):
        s = sigma[r]
        v0, v4, v8, v12 = _b2_mix(v0, v4, v8, v12, m[s[0]], m[s[1]])
        v1, v5, v9, v13 = _b2_mix(v1, v5, v9, v13, m[s[2]], m[s[3]])
        v2, v6, v10, v14 = _b2_mix(v2, v6, v10, v14, m[s[4]], m[s[5]])
        v3, v7, v11, v15 = _b2_mix(v3, v7, v11, v15, m[s[6]], m[s[7]])
        v0, v5, v10, v15 = _b2_mix(v0, v5, v10, v15, m[s[8]], m[s[9]])
        v1, v6, v11, v12 = _b2_mix(v1, v6, v11, v12, m[s[10]], m[s[11]])
        v2, v7, v8, v13 = _b2_mix(v2, v7, v8, v13, m[s[12]], m[s[13]])
        v3, v4, v9, v14 = _b2_mix(v3, v4, v9, v14, m[s[14]], m[s[15]])
    h[0] ^= v0 ^ v8
    h[1] ^= v1 ^ v9
    h[2] ^= v2 ^ v10
    h[3] ^= v3 ^ v11
    h[4] ^= v4 ^ v12
    h[5] ^= v5 ^ v13
    h[6] ^= v6 ^ v14
    h[7] ^= v7 ^ v15


@numba.njit(cache=True, nogil=True)
def _blake2b_8(
    arena: np.ndarray,
    starts: np.ndarray,
    lo: int,
    hi: int,
    iv: np.ndarray,
    sigma: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[j - lo]``: the 8-byte BLAKE2b digest of token ``j`` (``arena[starts[j] :
    starts[j + 1]]``) read big-endian, for ``lo <= j < hi``."""
    h = np.empty(8, np.uint64)
    m = np.empty(16, np.uint64)
    for j in range(lo, hi):
        pos = starts[j]
        end = starts[j + 1]
        for i in range(8):
            h[i] = iv[i]
        h[0] ^= np.uint64(0x01010008)  # digest length 8, no key, fanout and depth 1
        t = np.uint64(0)
        while end - pos > 128:  # every block but the last
            for i in range(16):
                w = np.uint64(0)
                for q in range(8):
                    w |= np.uint64(arena[pos + 8 * i + q]) << np.uint64(8 * q)
                m[i] = w
            t += np.uint64(128)
            _b2_compress(h, m, t, False, iv, sigma)
            pos += 128
        m[:] = 0  # the last block (empty for an empty token), zero-padded
        for q in range(end - pos):
            m[q >> 3] |= np.uint64(arena[pos + q]) << np.uint64(8 * (q & 7))
        t += np.uint64(end - pos)
        _b2_compress(h, m, t, True, iv, sigma)
        x = h[0]  # the digest is its little-endian bytes; read big-endian
        r = np.uint64(0)
        for q in range(8):
            r = (r << np.uint64(8)) | ((x >> np.uint64(8 * q)) & np.uint64(0xFF))
        out[j - lo] = r


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` copied into a buffer of at least ``size`` entries (doubling)."""
    out = np.empty(max(size, 2 * len(a)), dtype=a.dtype)
    out[: len(a)] = a
    return out


class Vocabulary:
    """Process-local memo: token bytes -> id (a hash table in arrays), and per name the
    values (:class:`~indexer.fingerprints.features.TokenTables`) by id.

    Pure cache: results never depend on its contents.
    """

    def __init__(self, size: int = 1 << 16) -> None:
        """``size``: the hash tables' first number of slots (a power of 2; they grow)."""
        self.short = np.zeros(2 * size, dtype=np.uint64)
        self.slots = np.full(size, -1, dtype=np.int32)
        self.hashes = np.empty(size // 2, dtype=np.uint64)
        self.starts = np.zeros(size // 2 + 1, dtype=np.int64)
        self.arena = np.empty(4 * size, dtype=np.uint8)
        self.state = np.zeros(2, dtype=np.int64)  # ids, arena bytes used
        self.tables = TokenTables()
        self._made: tuple[int, int, list[bytes]] = (0, 0, [])  # tokens(lo, hi), last asked

    def __len__(self) -> int:
        return int(self.state[0])

    def ids(self, buf: np.ndarray, off: np.ndarray, ntok: int) -> np.ndarray:
        """Ids of the tokens :func:`scan` wrote (new tokens get the next ids, in order)."""
        n, used = int(self.state[0]), int(self.state[1])
        if len(self.hashes) < n + ntok:
            self.hashes = _grown(self.hashes, n + ntok)
            self.starts = _grown(self.starts, n + ntok + 1)
        need = used + int(off[ntok])
        if len(self.arena) < need:
            self.arena = _grown(self.arena, need)
        if len(self.slots) < 2 * (n + ntok):  # both tables at most half full
            size = len(self.slots)
            while size < 2 * (n + ntok):
                size *= 2
            self.short = np.zeros(2 * size, dtype=np.uint64)
            self.slots = np.full(size, -1, dtype=np.int32)
            _rehash(self.short, self.slots, self.hashes, self.arena, self.starts, n)
        ids = np.empty(ntok, dtype=np.int64)
        _lookup(
            buf,
            off,
            ntok,
            self.short,
            self.slots,
            self.hashes,
            self.arena,
            self.starts,
            self.state,
            ids,
        )
        return ids

    def tokens(self, lo: int, hi: int) -> list[bytes]:
        """The tokens of ids ``lo..hi-1`` as ``bytes`` (the last range asked for is kept: the
        tables ask for a batch's new tokens one after the other)."""
        if self._made[0] == lo and self._made[1] == hi:
            return self._made[2]
        base = int(self.starts[lo])
        raw = self.arena[base : self.starts[hi]].tobytes()
        bounds = (self.starts[lo : hi + 1] - base).tolist()
        made = [raw[a:b] for a, b in pairwise(bounds)]
        self._made = (lo, hi, made)
        return made

    def table(self, name: str) -> np.ndarray:
        """Values of ``name`` for every known id (the new ones computed now)."""
        compute = self._blake2b if name == "blake2b" else None
        return self.tables.values(name, len(self), self.tokens, compute)

    def _blake2b(self, lo: int, hi: int) -> np.ndarray:
        """The "blake2b" token hash of ids ``lo..hi-1`` (as ``features`` defines it)."""
        out = np.empty(hi - lo, dtype=np.uint64)
        _blake2b_8(self.arena, self.starts, lo, hi, _B2_IV, _B2_SIGMA, out)
        return out


_vocab = Vocabulary()
_ASCII_OUT = np.frombuffer(ascii_word_bytes()[:128], dtype=np.uint8)
_UNKNOWN_ROOM = 4096


class Batch:
    """A batch of texts as :func:`scan` leaves it: token bytes (a space after each), their
    bounds, lines and counts per text."""

    __slots__ = ("counts", "line_no", "ntok", "off", "out")

    def __init__(self, data: bytes, ends: np.ndarray, ascii_text: np.ndarray) -> None:
        size = len(data)
        src = np.frombuffer(data, dtype=np.uint8)
        self.out = np.empty(3 * size + 1, dtype=np.uint8)
        self.off = np.empty(size + 3, dtype=np.int64)  # the last: scan's scratch slot
        self.line_no = np.empty(size + 1, dtype=np.int32)
        self.counts = np.empty(len(ends), dtype=np.int64)
        unknown = np.empty(_UNKNOWN_ROOM, dtype=np.int64)
        kinds = kind_table()
        while True:
            ntok, missing = scan(
                src,
                ends,
                ascii_text,
                kinds,
                _ASCII_OUT,
                self.out,
                self.off,
                self.line_no,
                self.counts,
                unknown,
            )
            if not missing:
                break
            kinds = learn_kinds(np.unique(unknown[: min(missing, _UNKNOWN_ROOM)]).tolist())
        self.ntok = ntok


def tokenise_folded(
    folded: Sequence[str], names: Sequence[str]
) -> tuple[list[np.ndarray], np.ndarray, list[str], np.ndarray]:
    """Per name the token values of :func:`indexer.text.fold`-ed texts (concatenated), the
    token count of each text, each text's exact key (sha256 of its space-joined tokens) and
    each token's line in its text."""
    global _vocab
    ascii_text = np.fromiter(map(str.isascii, folded), np.bool_, count=len(folded))
    pieces = [
        t.encode("ascii") if a else with_url_tokens(t).encode("utf-8", "surrogatepass")
        for t, a in zip(folded, ascii_text.tolist(), strict=True)
    ]
    ends = np.cumsum(np.fromiter(map(len, pieces), np.int64, count=len(pieces)))
    batch = Batch(b"".join(pieces), ends, ascii_text)
    ntok, off = batch.ntok, batch.off
    mv = batch.out.data
    first = np.r_[0, np.cumsum(batch.counts)]
    at = off[first].tolist()
    # a text's tokens end one byte (their last space) before the next text's first
    keys = [
        hashlib.sha256(mv[lo : hi - 1] if hi > lo else b"").hexdigest() for lo, hi in pairwise(at)
    ]
    if len(_vocab) > _VOCAB_LIMIT:
        _vocab = Vocabulary()
    ids = _vocab.ids(batch.out, off, ntok)
    values = [_vocab.table(name)[ids] for name in names]
    return values, batch.counts, keys, batch.line_no[:ntok]


def warm() -> None:
    """Load (or compile) every kernel, on a text of every kind and with the vocabulary's
    tables growing, leaving no token behind."""
    global _vocab
    _vocab = Vocabulary(size=4)
    sample = ["Warm up: ÉTÉ 水字 ก\u0301 x\u0301 http://a.b/c\n2 twelve_bytes", "", "中"]
    tokenise_folded([fold(t) for t in sample], ("weight", "blake2b"))
    _vocab = Vocabulary()
