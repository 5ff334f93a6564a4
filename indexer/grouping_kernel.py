"""The grouping rule's compiled pass (numba): each hit's best-ranked representative in one
loop over its pairs, instead of some fifty small numpy operations.

It computes what :mod:`indexer.grouping` computes, pair for pair and bit for bit (that module
stays the readable reference, runs where numba is missing, and ``tests/test_grouping_kernel.py``
compares the two): a pair verifies when its exact keys are equal, or when both are long enough,
within ``max_distance`` bits (``far_distance`` when short), at least the threshold of their
shorter side's length (and their distance) similar, and their number sketches agree (the cells of
:mod:`indexer.fingerprints.numbers`, the writing cell, the name cells of
:mod:`indexer.fingerprints.names`). Every threshold and table comes from
those modules as an argument (:func:`first_verified`), so that the definitions live in one
place. One call per window, refill or probe: the literal reading of the rule (each hit against
the representatives ranked above it, in rank order, the first that verifies takes it), which
the numpy path reaches by its own strategies. Signatures are declared (every value dtype of a
MinHash sketch; read-only arrays accepted), so no request compiles: loaded from numba's cache
(``cache=True``, beside this file) or compiled once when the module is imported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types

__all__ = ["first_verified"]


def _signature(sketch: types.Integer) -> Any:
    def ro(dtype: types.Type, ndim: int = 1) -> types.Array:
        return types.Array(dtype, ndim, "C", readonly=True)

    side = (
        ro(types.uint64),  # simhash
        ro(sketch, 2),  # minhash
        ro(types.int64),  # key codes
        ro(types.int64),  # token counts
        ro(types.boolean),  # present
        ro(types.uint32, 2),  # number sketches
    )
    out = (types.Array(types.int64, 1, "C"), types.Array(types.int64, 1, "C"))
    return types.void(
        *side,
        *side,
        types.boolean,  # window: the second side is the first
        types.int64,  # start
        types.int64,  # members_end
        *out,  # rep, ham
        types.Array(types.float64, 1, "C"),  # sim
        types.int64,  # max_distance
        types.int64,  # min_long
        types.int64,  # close_distance
        types.int64,  # far_distance
        types.int64,  # far_below: the shorter side's tokens under which far_distance holds
        ro(types.float64, 2),  # thresholds by closeness, then the shorter side's tokens
        ro(types.float64, 2),  # below these (as the thresholds) a verdict is marginal
        types.int64,  # vouched_below
        types.int64,  # vouched_from
        types.int64,  # vouchers
        ro(types.float64),  # similarity by equal values
        ro(types.int64),  # the sketch's cells: see first_verified
    )


_SIGNATURES = [_signature(t) for t in (types.uint8, types.uint16, types.uint32)]


@njit(cache=True, nogil=True, inline="always")
def _agree(  # pragma: no cover - compiled
    na: np.ndarray,
    i: int,
    nb: np.ndarray,
    j: int,
    sketch_cells: int,
    names_at: int,
    writing: int,
    parts: int,
    per_part: int,
    name_bit: int,
    source_bit: int,
    word_mask: int,
    last_bit: int,
) -> bool:
    """:func:`indexer.fingerprints.numbers.agree` of rows ``na[i]`` and ``nb[j]``."""
    for c in range(sketch_cells):
        d = na[i, c] ^ nb[j, c]
        if d != 0 and d < 256:
            return False
    wa, wb = na[i, writing], nb[j, writing]
    if wa != wb and wa != 0 and wb != 0:
        return False
    for p in range(parts):
        lo = names_at + p * per_part
        nx = 0
        ny = 0
        shared = 0
        sx = 0  # a credit's source words (flagged by source_bit); its name's: the others
        sy = 0
        sources = 0  # shared source words
        names = 0  # shared name words
        lasts = 0  # names with a last word (marked by last_bit)
        seen = False  # either one's last word among the other's words
        firsts = False  # either one's first word among the other's words
        for u in range(per_part):
            x = na[i, lo + u]
            if x > 0:
                nx += 1
                if x & source_bit:
                    sx += 1
                if x & last_bit:
                    lasts += 1
                for v in range(per_part):
                    y = nb[j, lo + v]
                    if (x & word_mask) == (y & word_mask):
                        shared += 1
                        if u == 0 or v == 0:
                            firsts = True
                        if x & y & source_bit:
                            sources += 1
                        elif not (x | y) & source_bit:
                            names += 1
                        if (x | y) & last_bit:
                            seen = True
            if nb[j, lo + u] > 0:
                ny += 1
                if nb[j, lo + u] & source_bit:
                    sy += 1
                if nb[j, lo + u] & last_bit:
                    lasts += 1
        if nx > 0 and ny > 0:
            half = 2 * shared <= min(nx, ny)  # at most half of the smaller one's words shared
            fa = (na[i, lo] & name_bit) != 0  # the subjects are names
            fb = (nb[j, lo] & name_bit) != 0
            if p == 0 and (
                shared == 0
                or (fa and fb and (half or not firsts))
                or ((fa or fb) and not firsts and shared <= 1)
            ):  # subjects (the last: a name against a longer subject)
                return False
            if p == 1 and (
                half
                or (sx > 0 and sy > 0 and 2 * sources <= min(sx, sy))
                or (nx > sx and ny > sy and 2 * names <= min(nx - sx, ny - sy))
                or (lasts == 2 and not seen)
            ):
                return False  # the credits, their sources, their names or their last words
            if p == 2 and shared == 0:  # the title's parts the texts mention
                return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _popcount(x: np.uint64) -> np.int64:  # pragma: no cover - compiled
    """Set bits of ``x``: the same bits as :mod:`indexer.fingerprints.bits`."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _corroborated(  # pragma: no cover - compiled
    s: np.ndarray,
    mh: np.ndarray,
    k: np.ndarray,
    t: np.ndarray,
    p: np.ndarray,
    i: int,
    r: int,
    end: int,
    rep: np.ndarray,
    max_distance: int,
    min_long: int,
    close_distance: int,
    far_distance: int,
    far_below: int,
    thresholds: np.ndarray,
    similarity: np.ndarray,
) -> bool:
    """Whether the group of representative ``r`` (``r`` and the rows before ``i`` and ``end``
    whose ``rep`` is ``r``) takes row ``i`` of one window on a marginal verdict: its
    similarities to them (the sketches' where both are long enough and near, as in
    :func:`first_verified`, else 1.0 for an equal exact key, else 0.0) minus their thresholds
    average at least 0. (The pair is read as in :func:`first_verified`'s loop, which keeps
    its own copy: a helper shared by both made that loop 15-20 % slower.)"""
    last = thresholds.shape[1] - 1
    m = mh.shape[1]
    total = 0.0
    for x in range(r, min(i, end)):
        if rep[x] != r:
            continue
        both = p[i] & p[x]
        h = _popcount(s[i] ^ s[x])
        far = (h > max_distance) & (h <= far_distance) & (min(t[i], t[x]) < far_below)
        near = both & (t[i] >= min_long) & (t[x] >= min_long) & ((h <= max_distance) | far)
        same = both & (t[i] > 0) & (t[x] > 0) & (k[i] >= 0) & (k[i] == k[x])
        v = 1.0 if same else 0.0
        if near:
            equal = 0
            for c in range(m):
                if mh[i, c] == mh[x, c]:
                    equal += 1
            v = similarity[equal]
        row = 2 if far else (1 if h <= close_distance else 0)
        total += v - thresholds[row, min(max(min(t[i], t[x]), 0), last)]
    return total >= 0.0


@njit(_SIGNATURES, cache=True, nogil=True)
def first_verified(  # pragma: no cover - compiled
    sa: np.ndarray,
    ma: np.ndarray,
    ka: np.ndarray,
    ta: np.ndarray,
    pa: np.ndarray,
    na: np.ndarray,
    sb: np.ndarray,
    mb: np.ndarray,
    kb: np.ndarray,
    tb: np.ndarray,
    pb: np.ndarray,
    nb: np.ndarray,
    window: bool,
    start: int,
    members_end: int,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    max_distance: int,
    min_long: int,
    close_distance: int,
    far_distance: int,
    far_below: int,
    thresholds: np.ndarray,
    unsure: np.ndarray,
    vouched_below: int,
    vouched_from: int,
    vouchers: int,
    similarity: np.ndarray,
    cells: np.ndarray,
) -> None:
    """Side a's rows from ``start`` on each take the first row of side b they verify against:
    ``rep``, ``ham``, ``sim`` set for those rows (left as they are for the others).

    ``window``: b is a (one window in rank order); a row then only meets earlier rows that are
    representatives (``rep[j] == j``, rows before ``start`` as settled, later ones as they
    join; a row whose ``rep`` is set to another, e.g. -1, never is one), and stops being one
    when it joins. Else every row of b is a candidate, in order. ``thresholds[c, t]``: the
    similarity a pair needs whose shorter side has ``t`` tokens (clipped to the table), ``c``
    2 where the pair is more than ``max_distance`` bits apart and at most ``far_distance``, its
    shorter side under ``far_below`` tokens, else 1 where it is within ``close_distance``
    bits, else 0; a pair is compared by MinHash within ``max_distance`` bits, or in that far
    band; ``unsure[c, t]``: below it a
    verified pair's verdict is marginal, and (``window`` only) the group's members before
    ``members_end`` must corroborate it (:func:`_corroborated`); and (``window`` only) a row
    with fewer than ``vouched_below`` tokens, or ``vouched_from`` or more, must agree with the
    first ``vouchers`` of those members (:func:`_agree`); ``similarity[e]``: of two sketches
    with ``e`` equal values.
    ``cells``: the number sketch's cells (those whose XOR must not be in 1..255), the first
    name cell, the writing cell, the name parts, cells per part, the bit marking a subject that
    is a name (on its first cell), the bit marking a credit's source word, the mask of a cell's
    word hash and the bit marking a credit's name's last word.
    """
    sketch_cells, names_at, writing = cells[0], cells[1], cells[2]
    parts, per_part, name_bit = cells[3], cells[4], cells[5]
    source_bit, word_mask, last_bit = cells[6], cells[7], cells[8]
    isrep = np.empty(len(sb), np.bool_)
    for j in range(len(sb)):
        isrep[j] = rep[j] == j if window else True
    # (window) each group's first members that vouch, in rank order, and how many so far
    vouch = np.empty((len(sb) if window else 0, vouchers), np.int64)
    vouched = np.zeros(len(sb) if window else 0, np.int64)
    for x in range(min(start, members_end) if window else 0):
        r = rep[x]
        if r != x and r >= 0 and vouched[r] < vouchers:
            vouch[r, vouched[r]] = x
            vouched[r] += 1
    last = thresholds.shape[1] - 1
    m = ma.shape[1]
    for i in range(start, len(sa)):
        for j in range(i if window else len(sb)):
            if not isrep[j]:
                continue
            h = _popcount(sa[i] ^ sb[j])
            far = (h > max_distance) & (h <= far_distance) & (min(ta[i], tb[j]) < far_below)
            row = 2 if far else (1 if h <= close_distance else 0)
            col = min(max(min(ta[i], tb[j]), 0), last)
            both = pa[i] & pb[j]
            same = both & (ta[i] > 0) & (tb[j] > 0) & (ka[i] >= 0) & (ka[i] == kb[j])
            near = both & (ta[i] >= min_long) & (tb[j] >= min_long) & ((h <= max_distance) | far)
            s = 1.0 if same else 0.0
            ok = same
            if near:
                equal = 0
                for c in range(m):
                    if ma[i, c] == mb[j, c]:
                        equal += 1
                s = similarity[equal]
                if not ok and s >= thresholds[row, col]:
                    ok = _agree(
                        na,
                        i,
                        nb,
                        j,
                        sketch_cells,
                        names_at,
                        writing,
                        parts,
                        per_part,
                        name_bit,
                        source_bit,
                        word_mask,
                        last_bit,
                    )
            if ok and window and not same and s < unsure[row, col]:
                ok = _corroborated(
                    sa,
                    ma,
                    ka,
                    ta,
                    pa,
                    i,
                    j,
                    members_end,
                    rep,
                    max_distance,
                    min_long,
                    close_distance,
                    far_distance,
                    far_below,
                    thresholds,
                    similarity,
                )
            if ok and window and (ta[i] < vouched_below or ta[i] >= vouched_from):
                for q in range(vouched[j]):  # the group's first members vouch for the row
                    if not _agree(
                        na,
                        i,
                        na,
                        vouch[j, q],
                        sketch_cells,
                        names_at,
                        writing,
                        parts,
                        per_part,
                        name_bit,
                        source_bit,
                        word_mask,
                        last_bit,
                    ):
                        ok = False
                        break
            if ok:
                rep[i] = j
                ham[i] = h
                sim[i] = s
                if window:
                    isrep[i] = False
                    if i < members_end and vouched[j] < vouchers:
                        vouch[j, vouched[j]] = i
                        vouched[j] += 1
                break
