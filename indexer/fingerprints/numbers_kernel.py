"""The number sketch's compiled kernel: :func:`indexer.fingerprints.numbers.sketches_of_bytes`
of a batch's joined bytes in a few passes of numba-compiled loops instead of some twenty numpy
passes and the per-number arrays between them.

It computes what the numpy path of :mod:`indexer.fingerprints.numbers` computes, step for step
and bit for bit (that path stays the readable reference, and ``tests/test_numbers_kernel.py``
compares the two): unit spaces cut, byte classes (common non-ASCII punctuation a space), runs,
numeric runs and numbers, their values and contexts, stamps and frame lines, cells. Every
table and constant comes from that module as an argument (:func:`sketch`), so that the
definitions live in one place. :func:`joined` makes a batch's bytes (``numbers._joined_bytes``):
the URLs of ASCII texts rewritten as ``numbers._urls`` does, every byte translated. Compiled
on first use, or loaded from numba's cache (``cache=True``, beside this file); :func:`warm`
does it ahead (before forking workers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from indexer.fingerprints.tokens_kernel import _is_space, _next_url

__all__ = ["Tables", "joined", "sketch", "warm"]

#: What :func:`sketch` takes from :mod:`indexer.fingerprints.numbers`: byte classes, word
#: bytes, sorted unit keys, the longest unit, sorted month hashes, the constants, and the
#: number words' (word bytes, first two bytes, sorted run hashes, digits, their widths,
#: shortest, longest: see :func:`_number_words`).
Tables = tuple[
    np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray,
    tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int],
]  # fmt: skip

# byte classes, as numbers._CLASSES has them
_SPACE, _ASCII, _OTHER, _SEP, _BREAK = 0, 1, 2, 3, 4


@njit(cache=True, inline="always")
def _fmix(x: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


@njit(cache=True)
def _range_hash(b: np.ndarray, lo: int, hi: int, p: np.uint64) -> np.uint64:  # pragma: no cover
    acc = np.uint64(0)
    mul = np.uint64(1)
    for i in range(lo, hi):
        acc += np.uint64(b[i]) * mul
        mul *= p
    return _fmix(acc + np.uint64(hi - lo))


@njit(cache=True)
def _word_hash(
    b: np.ndarray, lo: int, hi: int, p: np.uint64, q: np.uint64, inner: np.uint64
) -> np.uint64:  # pragma: no cover - compiled
    """numbers._context_hashes for one ASCII range: first and last letter, length, inner letters
    in any order; in order (:func:`_range_hash`) where it holds a digit."""
    for i in range(lo, hi):
        if 48 <= b[i] <= 57:
            return _range_hash(b, lo, hi, p)
    acc = np.uint64(b[lo]) * p + np.uint64(b[hi - 1]) * q + np.uint64(hi - lo)
    for i in range(lo + 1, hi - 1):
        acc += _fmix(np.uint64(b[i]) + inner)
    return _fmix(acc)


@njit(cache=True)
def _member(x: np.uint64, ordered: np.ndarray) -> bool:  # pragma: no cover - compiled
    lo, hi = 0, len(ordered)
    while lo < hi:
        mid = (lo + hi) // 2
        if ordered[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(ordered) and ordered[lo] == x


@njit(cache=True)
def _side(
    b: np.ndarray,
    kind: np.ndarray,
    bounds: np.ndarray,
    at: int,
    step: int,
    k: np.ndarray,
) -> np.uint64:  # pragma: no cover - compiled
    """numbers._side for one run: the hash of the word run nearest ``at``, or ``k[EMPTY]``."""
    p, empty, max_skip, side, max_run = k[0], k[2], int(k[5]), int(k[8]), int(k[9])
    if at < 0:
        return empty
    idx = at
    for _ in range(max_skip):
        if kind[idx] != _SPACE and kind[idx] != _BREAK:
            break
        idx += step
        if idx < 0:
            return empty
    if kind[idx] != _ASCII and kind[idx] != _OTHER:
        return empty
    lo, hi = bounds[idx], bounds[idx + 1]
    width = side if kind[idx] == _OTHER else max_run
    if step < 0:
        if idx > 0 and kind[idx] == _ASCII and kind[idx - 1] == _ASCII:  # ipv4 read whole
            lo = bounds[idx - 1]
        lo = max(lo, hi - width)
    else:
        if kind[idx] == _ASCII and kind[idx + 1] == _ASCII:
            hi = bounds[idx + 2]
        hi = min(hi, lo + width)
    if kind[idx] == _ASCII:
        return _word_hash(b, lo, hi, p, k[1], k[14])
    return _range_hash(b, lo, hi, p)


@njit(cache=True, inline="always")
def _characters(a: np.ndarray, lo: int, hi: int, most: int) -> int:  # pragma: no cover
    """Characters of UTF-8 ``a[lo:hi]`` (numbers._characters), counted up to ``most + 1``."""
    if hi - lo <= most:
        return hi - lo
    count = 0
    for i in range(lo, hi):
        if (a[i] & 0xC0) != 0x80:
            count += 1
            if count > most:
                break
    return count


@njit(cache=True, inline="always")
def _punctuation(a: np.ndarray, i: int, n: int) -> int:  # pragma: no cover - compiled
    """Bytes of common non-ASCII punctuation starting at ``i`` (numbers._punctuation_is_space),
    or 0."""
    ch = a[i]
    if i < n - 1:
        nb = a[i + 1]
        if ch == 0xC2:
            if nb >= 0xA0 and nb <= 0xBF:
                return 2
        elif ((ch == 0xE2 and nb in (0x80, 0x81)) or (ch == 0xE3 and nb == 0x80)) and i + 2 < n:
            return 3
    return 0


@njit(cache=True)
def _number_words(
    a: np.ndarray,
    ends: np.ndarray,
    word: np.ndarray,
    prefix: np.ndarray,
    keys: np.ndarray,
    digits: np.ndarray,
    widths: np.ndarray,
    min_len: int,
    max_len: int,
    p: np.uint64,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """numbers._number_words: each number word as its digits, ``ends`` (the last past the
    bytes' end) moved with them; ``a`` and ``ends`` themselves when the bytes hold none.
    ``word``: per byte 1 for a word byte, 2 for one that may start punctuation, 0 otherwise;
    ``prefix``: per first two bytes (``first << 8 | second``), bit ``length`` set for each
    number word's length; ``keys``: the words' sorted run hashes, ``digits`` and ``widths``
    their digits in that order."""
    n = len(a)
    most = n // (min_len + 1) + 1  # words of min_len bytes and one byte between each two
    lo = np.empty(most, dtype=np.int64)
    hi = np.empty(most, dtype=np.int64)
    which = np.empty(most, dtype=np.int64)
    count = 0
    # the words' bounds, alternately a first byte and the byte past the last: the next slot
    # written at every byte, kept where a word starts or ends (no branch per byte: words end
    # too often to predict)
    edges = np.empty(n + 2, dtype=np.int64)
    found = 0
    inside = np.int64(0)
    space = 0  # end of the punctuation found so far: the bytes before it read as a space
    for i in range(n):
        w = word[a[i]]
        if w == 2:
            skip = _punctuation(a, i, n)
            if skip:
                space = max(space, i + skip)
        now = np.int64(w != 0) & np.int64(i >= space)
        edges[found] = i
        found += int(now ^ inside)
        inside = now
    if inside:
        edges[found] = n
        found += 1
    for e in range(0, found, 2):
        start, stop = edges[e], edges[e + 1]
        length = stop - start
        if length < min_len or length > max_len:
            continue
        # one whose first two bytes and length are a number word's (few are) is hashed
        if not (prefix[np.int64(a[start]) << 8 | np.int64(a[start + 1])] >> length) & 1:
            continue
        h = _range_hash(a, start, stop, p)
        j = np.searchsorted(keys, h)
        if j < len(keys) and keys[j] == h:
            lo[count] = start
            hi[count] = stop
            which[count] = j
            count += 1
    if not count:
        return a, ends
    removed = 0
    for c in range(count):
        removed += hi[c] - lo[c] - widths[which[c]]
    b = np.empty(n - removed, dtype=np.uint8)
    moved = ends.copy()
    at = 0
    o = 0
    c = 0
    removed = 0
    for e in range(len(ends)):
        while c < count and lo[c] < ends[e]:
            b[o : o + lo[c] - at] = a[at : lo[c]]
            o += lo[c] - at
            w = widths[which[c]]
            b[o : o + w] = digits[which[c], :w]
            o += w
            removed += hi[c] - lo[c] - w
            at = hi[c]
            c += 1
        moved[e] = ends[e] - removed
    b[o:] = a[at:]
    return b, moved


@njit(cache=True)
def _on_line(kind: np.ndarray, at: int, step: int, k: np.ndarray) -> bool:  # pragma: no cover
    """Whether the word run :func:`_side` finds from ``at`` is on the same line (no line break
    between)."""
    if at < 0:
        return False
    idx = at
    for _ in range(int(k[5])):
        if kind[idx] == _BREAK:
            return False
        if kind[idx] != _SPACE:
            break
        idx += step
        if idx < 0:
            return False
    return True


@njit(cache=True)
def _worded(b: np.ndarray, lo: int, hi: int, pad: int) -> bool:  # pragma: no cover - compiled
    """numbers._worded: the number ``b[lo:hi]`` is a number word's digits, ``pad`` spaces on
    both sides."""
    if lo < pad or hi + pad > len(b):
        return False
    i = 0
    while i < pad and b[lo - 1 - i] == 32 and b[hi + i] == 32:
        i += 1
    return i == pad


@njit(cache=True)
def _sketch(
    a: np.ndarray,
    ends: np.ndarray,
    sides: np.ndarray,
    use_sides: bool,
    classes: np.ndarray,
    word_byte: np.ndarray,
    unit_keys: np.ndarray,
    unit_max: int,
    months: np.ndarray,
    k: np.ndarray,
    words: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int],
    rows: int,
    buckets: int,
    cells: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """(cells, stamp documents, stamp lines) of the texts' bytes ``a`` joined by ``\\0``: number
    words as digits (``words``: :func:`_number_words`' tables), the spaces before units cut,
    then :func:`_sketch_cut`."""
    word, prefix, keys, digits, widths, min_len, max_len = words
    unit_spaces = np.int64(k[15])
    a, ends = _number_words(a, ends, word, prefix, keys, digits, widths, min_len, max_len, k[0])
    size_a = len(a)
    # a unit of measure one space (or up to k[15]) after a digit joins it: the spaces to cut,
    # from the digits
    cuts = np.empty(size_a + 1, dtype=np.int64)
    any_digit = False
    n_cut = 0
    for i in range(size_a):
        ch = a[i]
        if ch < 48 or ch > 57:
            continue
        any_digit = True
        if i + 2 >= size_a or a[i + 1] != 32:
            continue
        gap = 1
        while gap < unit_spaces and i + 1 + gap < size_a and a[i + 1 + gap] == 32:
            gap += 1
        start = i + 1 + gap  # the word after the spaces
        length = 0
        for j in range(unit_max + 1):
            at = start + j
            byte = a[at] if at < size_a else 0
            if not word_byte[byte]:
                length = j
                break
        if length == 0:
            continue
        key = np.uint64(length) << np.uint64(56)
        for j in range(min(length, unit_max)):
            key |= np.uint64(a[start + j]) << np.uint64(8 * j)
        if _member(key, unit_keys):
            for g in range(gap):
                cuts[n_cut] = i + 1 + g
                n_cut += 1
    if not any_digit:
        none = np.zeros(0, dtype=np.int64)
        return np.zeros((len(ends), cells), dtype=np.uint32), none, none
    shape = (rows, buckets, cells)
    if not n_cut:
        return _sketch_cut(a, ends, sides, use_sides, classes, months, k, shape)
    b = np.empty(size_a - n_cut, dtype=np.uint8)
    shifted = ends.copy()
    lo = 0
    for c in range(n_cut + 1):
        hi = cuts[c] if c < n_cut else size_a
        b[lo - c : hi - c] = a[lo:hi]
        lo = hi + 1
    c = 0
    for e in range(len(ends)):
        while c < n_cut and cuts[c] < ends[e]:
            c += 1
        shifted[e] = ends[e] - c
    return _sketch_cut(b, shifted, sides, use_sides, classes, months, k, shape)


@njit(cache=True)
def _sketch_cut(
    b: np.ndarray,
    ends: np.ndarray,
    sides: np.ndarray,
    use_sides: bool,
    classes: np.ndarray,
    months: np.ndarray,
    k: np.ndarray,
    shape: tuple[int, int, int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """:func:`_sketch` of bytes whose unit spaces are cut (``ends`` moved with them)."""
    p, q, left_salt, right_salt = k[0], k[1], k[3], k[4]
    max_gap, min_line2, nl = int(k[6]), int(k[7]), int(k[10])
    y19, y20 = int(k[11]), int(k[12])
    rows, buckets, cells = shape
    n = len(ends)
    out = np.zeros((n, cells), dtype=np.uint32)
    none = np.zeros(0, dtype=np.int64)
    m = len(b)
    # runs of one class (common non-ASCII punctuation a space); ``tally`` counts digits (low
    # 32 bits) and underscores (high) before each run's start
    bounds = np.empty(m + 2, dtype=np.int64)
    kind = np.empty(m + 2, dtype=np.uint8)
    tally = np.empty(m + 2, dtype=np.int64)
    counts = np.zeros(256, dtype=np.int64)
    counts[48:58] = 1
    counts[95] = 1 << 32
    tallied = np.int64(0)
    force = 0  # bytes still to class as space (punctuation)
    prev = 255
    last_run = -1
    letters = 0  # letters the run starts with, while it holds nothing else (-1 after)
    min_word = int(k[13])
    for i in range(m):
        ch = b[i]
        if ch >= 0xC2:
            force = max(force, _punctuation(b, i, m))
        c = classes[ch]
        if force:
            c = _SPACE
            force -= 1
        # the next run's fields written at every byte and kept where the class changes (no
        # branch: runs change every few bytes, too often to predict); a digit right after a
        # word's letters (koi8) starts a run too
        new = c != prev or (letters >= min_word and 48 <= ch <= 57)
        bounds[last_run + 1] = i
        kind[last_run + 1] = c
        tally[last_run + 1] = tallied
        last_run += int(new)
        prev = c
        tallied += counts[ch]
        if new:
            letters = 0
        if letters >= 0:
            letters = letters + 1 if 97 <= ch <= 122 else -1
    n_runs = last_run + 1
    bounds[n_runs] = m
    tally[n_runs] = tallied
    kind[n_runs] = _SEP
    kind[n_runs + 1] = _SEP
    n_digits = np.empty(n_runs, dtype=np.int64)
    under = np.empty(n_runs, dtype=np.bool_)
    for r in range(n_runs):
        t = tally[r + 1] - tally[r]
        n_digits[r] = t & 0xFFFFFFFF
        under[r] = (t >> 32) > 0
    # numeric runs: holding a digit and no "_"
    # (with "_" only in a short document: an identifier's number, uint64_t)
    numeric = np.zeros(n_runs, dtype=np.bool_)
    n_num = 0
    d = 0
    for r in range(n_runs):
        while d < n and ends[d] <= bounds[r]:
            d += 1
        if n_digits[r] and (not under[r] or (use_sides and d < n and sides[d])):
            numeric[r] = True
            n_num += 1
    if not n_num:
        return out, none, none
    runs = np.empty(n_num, dtype=np.int64)
    j = 0
    for r in range(n_runs):
        if numeric[r]:
            runs[j] = r
            j += 1
    # numbers: numeric runs each at most max_gap spaces after the one before
    first = np.empty(n_num, dtype=np.int64)
    last = np.empty(n_num, dtype=np.int64)
    value = np.empty(n_num, dtype=np.uint64)
    stamp = np.zeros(n_num, dtype=np.bool_)
    doc = np.empty(n_num, dtype=np.int64)
    hb = np.empty(n_num, dtype=np.uint64)
    ha = np.empty(n_num, dtype=np.uint64)
    count = 0
    i = 0
    d = 0
    while i < n_num:
        r0 = runs[i]
        acc = np.uint64(0)
        parts = 0
        digits_only = True
        year = False
        dated = True  # every run a day's, an hour's (2 digits or fewer) or a year
        j = i
        while True:
            r = runs[j]
            lo = bounds[r]
            size = bounds[r + 1] - lo
            h = _range_hash(b, lo, min(bounds[r + 1], lo + int(k[9])), p)
            acc += _fmix(h + np.uint64(parts) * q)
            parts += 1
            if n_digits[r] != size:
                digits_only = False
            elif size == 4:
                lead = int(b[lo]) * 256 + int(b[min(lo + 1, m - 1)])
                if lead in (y19, y20):
                    year = True
                else:
                    dated = False
            elif size > 2:
                dated = False
            if j + 1 >= n_num:
                break
            nxt = runs[j + 1]
            gap = r + 1
            if (
                nxt == gap + 1
                and kind[gap] == _SPACE
                and _characters(b, bounds[gap], bounds[nxt], max_gap) <= max_gap
            ):
                j += 1
            else:
                break
        first[count] = r0
        last[count] = runs[j]
        value[count] = acc
        hb[count] = _side(b, kind, bounds, r0 - 1, -1, k)
        if r0 > 0 and kind[r0 - 1] == _ASCII:  # koi8: koi with the word before the two
            hb[count] = _fmix(hb[count] * q + _side(b, kind, bounds, r0 - 2, -1, k))
        ha[count] = _side(b, kind, bounds, runs[j] + 1, 1, k)
        start = bounds[r0]
        while d < n and ends[d] <= start:
            d += 1
        doc[count] = d
        if digits_only:  # a month's name beside it on its line
            month = (_member(hb[count], months) and _on_line(kind, r0 - 1, -1, k)) or (
                _member(ha[count], months) and _on_line(kind, runs[j] + 1, 1, k)
            )
            stamp[count] = (parts >= 3 and year) or (
                parts <= 2
                and month
                and dated
                and not _worded(b, bounds[r0], bounds[runs[j] + 1], max_gap + 1)
            )
        count += 1
        i = j + 1
    # a stamp on a line with few words, in a document with other lines of words, among its
    # first or last k[16] lines of words: the frame's
    n_stamps = 0
    stamp_doc = np.empty(count, dtype=np.int64)
    stamp_line = np.empty(count, dtype=np.int64)
    edge = int(k[16])
    filled = np.zeros(n_runs + 1, dtype=np.bool_)
    rank = np.zeros(n_runs + 1, dtype=np.int64)
    n_filled = 0
    line_of = np.zeros(n_runs, dtype=np.int64)
    weight = np.zeros(n_runs + 1, dtype=np.int64)
    wordy_lines = 0
    done = -1  # the document whose lines are weighed
    for c in range(count):
        if not stamp[c]:
            continue
        d = doc[c]
        start = ends[d - 1] if d else 0
        if d != done:
            done = d
            lo = np.searchsorted(bounds[: n_runs + 1], start)
            hi = np.searchsorted(bounds[: n_runs + 1], ends[d] - 1)
            line = 0
            weight[0] = 0
            filled[0] = False
            for r in range(lo, hi):
                if kind[r] == _BREAK and r != lo:
                    line += 1
                    weight[line] = 0
                    filled[line] = False
                line_of[r] = line
                if kind[r] == _ASCII or kind[r] == _OTHER:
                    filled[line] = True
                glued = kind[r] == _ASCII and kind[r + 1] == _ASCII  # koi8's koi: no weight
                if (kind[r] == _ASCII or kind[r] == _OTHER) and not numeric[r] and not glued:
                    w = bounds[r + 1] - bounds[r]
                    weight[line] += w if kind[r] == _OTHER else 2 * w
            wordy_lines = 0
            n_filled = 0
            for ln in range(line + 1):
                if weight[ln] > 0:
                    wordy_lines += 1
                rank[ln] = n_filled
                if filled[ln]:
                    n_filled += 1
        at_line = line_of[first[c]]
        frame = (
            weight[at_line] < min_line2
            and wordy_lines > 1
            and (rank[at_line] < edge or rank[at_line] >= n_filled - edge)
        )
        if use_sides and sides[d]:
            frame = False  # a short document's dates are its own
        stamp[c] = frame
        if frame:
            breaks = 0
            for i in range(start, bounds[first[c]]):
                if b[i] == nl:
                    breaks += 1
            stamp_doc[n_stamps] = d
            stamp_line[n_stamps] = breaks
            n_stamps += 1
    # cells: per row, a bucket and a 16-bit context sum from a hash of the context, an 8-bit
    # value sum from a hash of the pair
    number_cells = rows * buckets
    csum = np.zeros((n, number_cells), dtype=np.uint32)
    vsum = np.zeros((n, number_cells), dtype=np.uint32)
    for c in range(count):
        if stamp[c]:
            continue
        d = doc[c]
        ctx = _fmix(hb[c] * q + _fmix(ha[c]))
        vh = _fmix(value[c] + q)
        n_entries = 3 if use_sides and sides[d] else 1
        for e in range(n_entries):
            if e == 0:
                cx = ctx
                pr = _fmix(ctx ^ vh)
            elif e == 1:
                cx = _fmix(hb[c] * q + left_salt)
                pr = _fmix(cx ^ vh)
            else:
                cx = _fmix(_fmix(ha[c]) + right_salt)
                pr = _fmix(cx ^ vh)
            for row in range(rows):
                salt = np.uint64(row) * q
                hc = _fmix(cx + salt)
                hp = _fmix(pr + salt)
                cell = row * buckets + int(hc % np.uint64(buckets))
                csum[d, cell] += np.uint32(hc >> np.uint64(48))
                vsum[d, cell] += np.uint32(hp & np.uint64(0xFF))
    for d in range(n):
        for cell in range(number_cells):
            out[d, cell] = (csum[d, cell] & np.uint32(0xFFFF)) << np.uint32(8) | (
                vsum[d, cell] & np.uint32(0xFF)
            )
    return out, stamp_doc[:n_stamps].copy(), stamp_line[:n_stamps].copy()


def sketch(
    buf: bytes,
    ends: np.ndarray,
    sides: np.ndarray | None,
    tables: Tables,
    shape: tuple[int, int, int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (n, cells) sketches of texts' bytes joined by ``\\0`` (``ends``: each text's end past
    its separator), and the frame's stamps as (documents, lines) in order. ``tables``: byte
    classes, word bytes, sorted unit keys, the longest unit, sorted month hashes, the
    constants, the number words' tables; ``shape``: rows, buckets, cells (see
    :mod:`indexer.fingerprints.numbers`)."""
    classes, word_byte, unit_keys, unit_max, months, k, words = tables
    use = sides is not None
    side = sides if sides is not None else np.zeros(0, dtype=np.bool_)
    return _sketch(
        np.frombuffer(buf, dtype=np.uint8),
        np.ascontiguousarray(ends, dtype=np.int64),
        np.ascontiguousarray(side, dtype=np.bool_),
        use,
        classes,
        word_byte,
        unit_keys,
        unit_max,
        months,
        k,
        words,
        *shape,
    )


@njit(cache=True)
def _is_content(data: np.ndarray, a: int, b: int, min_line: int) -> bool:  # pragma: no cover
    """numbers._content_line of the ASCII line ``data[a:b]``: whether its words with each URL
    a space weigh ``min_line`` (per word, its letters, or 0 if it holds a digit). (The words
    before its first URL, which that function weighs first, are among them.)"""
    total = 0
    letters = 0
    digit = False
    u0, u1 = _next_url(data, a, b)
    i = a
    while i < b:
        if i == u0 or _is_space(data[i]):
            total += 0 if digit else letters
            if total >= min_line:
                return True
            letters, digit = 0, False
            if i == u0:
                i = u1
                u0, u1 = _next_url(data, u1, b)
                continue
        else:
            c = data[i]
            if 48 <= c <= 57:
                digit = True
            elif 97 <= c <= 122 or 65 <= c <= 90:
                letters += 1
        i += 1
    return total + (0 if digit else letters) >= min_line


@njit(cache=True)
def _any_content(data: np.ndarray, a: int, b: int, min_line: int) -> bool:  # pragma: no cover
    """Whether some line of the ASCII text ``data[a:b]`` is one of content (:func:`_is_content`)."""
    lo = a
    while lo <= b:
        hi = lo
        while hi < b and data[hi] != 10:
            hi += 1
        if _is_content(data, lo, hi, min_line):
            return True
        lo = hi + 1
    return False


@njit(cache=True)
def _put(
    out: np.ndarray, o: int, data: np.ndarray, a: int, b: int, table: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Write ``data[a:b]`` translated by ``table`` at ``o``; returns the end."""
    for i in range(a, b):
        out[o] = table[data[i]]
        o += 1
    return o


@njit(cache=True)
def _url_word(out: np.ndarray, o: int) -> int:  # pragma: no cover - compiled
    """Write ``url `` at ``o`` (bytes that the byte table keeps)."""
    out[o], out[o + 1], out[o + 2], out[o + 3] = 117, 114, 108, 32
    return o + 4


@njit(cache=True)
def _ends_line(data: np.ndarray, at: int, b: int) -> bool:  # pragma: no cover - compiled
    """Whether ``data[at:b]`` holds nothing but spaces up to its first line break."""
    while at < b and data[at] != 10:
        if not _is_space(data[at]):
            return False
        at += 1
    return True


@njit(cache=True)
def _url_line(
    data: np.ndarray, a: int, b: int, numbers: bool, table: np.ndarray, out: np.ndarray, o: int
) -> int:  # pragma: no cover - compiled
    """numbers._urls' rewriting of the ASCII line ``data[a:b]`` into ``out`` at ``o``: each
    URL `` url `` or, with ``numbers``, ``numbers._url_numbers``' words (``_url_numbers_open``'
    when nothing but spaces follows it on its line). Returns the end."""
    i = a
    u0, u1 = _next_url(data, a, b)
    while u0 >= 0:
        o = _put(out, o, data, i, u0, table)
        out[o] = 32
        o = _url_word(out, o + 1)
        if numbers:  # its runs of [0-9a-z] holding a digit, each then a space
            runs = 0
            k = u0
            while k < u1:
                c = data[k]
                if 48 <= c <= 57 or 97 <= c <= 122 or 65 <= c <= 90:
                    r = k
                    digit = False
                    while k < u1:
                        c = data[k]
                        if 48 <= c <= 57:
                            digit = True
                        elif not (97 <= c <= 122 or 65 <= c <= 90):
                            break
                        k += 1
                    if digit:
                        o = _put(out, o, data, r, k, table)
                        out[o] = 32
                        o += 1
                        runs += 1
                else:
                    k += 1
            if runs and not _ends_line(data, u1, b):
                o = _url_word(out, o)
        i = u1
        u0, u1 = _next_url(data, u1, b)
    return _put(out, o, data, i, b, table)


@njit(cache=True)
def _joined(
    data: np.ndarray,
    ascii_text: np.ndarray,
    table: np.ndarray,
    min_line: int,
    out: np.ndarray,
    ends: np.ndarray,
    stops: np.ndarray,
    has_url: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Fill ``out`` and ``ends`` (see :func:`joined`; ``stops``: the positions of ``data``'s
    ``\\0`` bytes, one between each two texts; ``has_url``: per text, whether it holds a
    ``://``); returns the bytes written."""
    o = 0
    a = 0
    n = len(data)
    for t in range(len(ascii_text)):
        url = False
        one_line = True
        written = False
        b = stops[t] if t < len(stops) else n
        if ascii_text[t]:  # translated while its line breaks are counted
            breaks = 0
            text = data[a:b]
            into = out[o : o + b - a]
            for i in range(b - a):
                c = text[i]
                into[i] = table[c]
                breaks += c == 10
            written = True
            one_line = breaks == 0
            url = has_url[t]
        if (b == n) != (t == len(ascii_text) - 1):
            return -1
        if not url:
            o = o + b - a if written else _put(out, o, data, a, b, table)
        elif one_line or not _any_content(data, a, b, min_line):
            o = _url_line(data, a, b, True, table, out, o)  # one line, or short lines only
        else:  # line by line: a URL on a line of content with its numbers
            lo = a
            while lo <= b:
                hi = lo
                has = False
                while hi < b:
                    c = data[hi]
                    if c == 10:
                        break
                    if c == 58 and hi + 2 < b and data[hi + 1] == 47 and data[hi + 2] == 47:
                        has = True
                    hi += 1
                if has:
                    content = _is_content(data, lo, hi, min_line)
                    o = _url_line(data, lo, hi, content, table, out, o)
                else:
                    o = _put(out, o, data, lo, hi, table)
                if hi < b:
                    out[o] = table[10]
                    o += 1
                lo = hi + 1
        if b < n:
            out[o] = 0
        o += 1
        ends[t] = o
        a = b + 1
    return o - 1


def joined(
    data: bytes, ascii_text: np.ndarray, table: np.ndarray, min_line: int
) -> tuple[bytes, np.ndarray] | None:
    """``numbers._joined_bytes`` of texts joined by ``\\0`` in ``data``, where the texts
    outside ASCII have their ``numbers._text_of`` already and those in ASCII (``ascii_text``)
    are as written: those holding ``://`` rewritten as ``numbers._urls`` does (``min_line``:
    ``numbers._MIN_LINE``), all bytes then through ``table``. The bytes, and each text's end
    past its separator; None when a text holds a ``\\0`` of its own."""
    a = np.frombuffer(data, dtype=np.uint8)
    stops = np.flatnonzero(a == 0)
    if len(stops) != len(ascii_text) - 1:
        return None  # a text holds a ``\0`` of its own
    colons = np.flatnonzero(a[:-2] == 58)  # each ``://``, found from the colons
    urls = colons[(a[colons + 1] == 47) & (a[colons + 2] == 47)]
    has_url = np.zeros(len(ascii_text), dtype=np.bool_)
    has_url[np.searchsorted(stops, urls)] = True
    # a URL of L bytes (at least 5, one ``://``) becomes at most 1.5 L + 6
    out = np.empty(len(a) + len(a) // 2 + 6 * len(urls) + 16, dtype=np.uint8)
    ends = np.empty(len(ascii_text), dtype=np.int64)
    texts = np.ascontiguousarray(ascii_text, dtype=np.bool_)
    n = _joined(a, texts, table, min_line, out, ends, stops, has_url)
    if n < 0:
        return None
    return out[:n].tobytes(), ends


def warm(
    tables: Tables,
    shape: tuple[int, int, int],
) -> None:
    """Compile (or load from the cache) the kernel for the argument types it is called with."""
    for sides in (None, np.zeros(1, dtype=np.bool_)):
        sketch(b"1 2", np.array([4], dtype=np.int64), sides, tables, shape)
    table = np.frombuffer(bytes(range(256)), dtype=np.uint8)  # read-only, as numbers' table
    joined(b"a http://b/1\nc\0\xc3\xa9", np.array([True, False]), table, 48)
