"""The grouping rule, in one place: which ranked hits are near-duplicates of which.

Pure numpy, no I/O. Input: fingerprints of hits in rank order (:class:`Prints`) and
:class:`Thresholds`. A pair *verifies* when

* both have an exact key and the keys are equal (documents below ``min_tokens`` words of
  content group only so), or
* both have ``min_tokens`` words or more, their SimHash differ in at most ``max_distance``
  bits (``far_distance`` for a short pair at least ``far_similarity`` similar), their MinHash
  similarity is at least the pair's threshold — ``min_similarity`` when the shorter has 200
  words or more, less for shorter texts, whose edits cost them more of their shingles, and
  less again from 100 to 149 words where the SimHash are close (:class:`Thresholds`) —
  **and** their numbers do not conflict (:func:`indexer.fingerprints.numbers.conflicts`: a
  context both have holds other numbers —
  a version, a year, a price changed — so the copy is another document, however similar).

A hit joins the group of the best-ranked *representative* that takes it, else it founds a
group. A group takes a hit that verifies against its representative — and, when that verdict is
*marginal* (similarity within one standard error of a MinHash estimate, sqrt(s (1 - s) / m) for
threshold s and m values, above the threshold; not an equal exact key), only if the hit's
similarities to the representative and the members ranked above it exceed their thresholds on
average (0 where the pair is not near: :meth:`Thresholds.near`): a verdict that noise can flip is
corroborated by the group, so a sibling page on the threshold of one copy does not join a group
whose other copies it does not resemble. A short hit (under :data:`VOUCHED_BELOW` words) and a
long one (of :data:`VOUCHED_FROM` words or more, whose names are not read) must also be
*vouched for*: its numbers and names must not conflict with those of the first
:data:`VOUCHERS` members ranked above it in the group. A representative that cannot tell
(a copy in capitals, whose names are not read; a cut that dropped the paragraph holding the
number) takes the original and a near-miss whose name or number changed alike; the original,
once a member, keeps the near-miss out. Every member is thus verified against its own
representative, and groups never grow by chains (A~B, B~C with A and C far apart leaves C out
of A's group). Since a hit's fate depends only on better-ranked hits, grouping is prefix-stable:
extending the window never changes the groups of the hits already seen — what keeps pages
consistent (see ``collapse.paging``). Pairs alone (:func:`verify`, lookups) know no groups.

Candidates: inside a window every pair is compared (all-pairs XOR and popcount, exact at any
distance); MinHash only against representatives (:func:`group`). A shared SimHash block (what
the Elasticsearch probe looks up) is guaranteed only for pairs within B−1 bits; it is a
candidate filter, never a verdict.
Hits without a fingerprint (``present`` False) are singletons.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import cast

import numpy as np

from indexer.fingerprints.bands import BAND_ROWS, MAX_BANDS
from indexer.fingerprints.bits import popcount64
from indexer.fingerprints.features import NO_WORDS, word_share
from indexer.fingerprints.minhash import similarity
from indexer.fingerprints.names import (
    LAST_BIT,
    NAME_BIT,
    NAMED_BELOW,
    PARTS,
    PER_PART,
    SOURCE_BIT,
    WORD_MASK,
)
from indexer.fingerprints.numbers import NAMES_AT, SKETCH_CELLS, WRITING_CELL, agree

#: numpy's per-element bit count (numpy >= 2; None before: :func:`_similarity` falls back).
_BITWISE_COUNT = getattr(np, "bitwise_count", None)

__all__ = [
    "CLOSE_BELOW",
    "CLOSE_FROM",
    "DEFAULT_THRESHOLDS",
    "FULL_WORDS",
    "MID_SHARE",
    "SHORT_SHARE",
    "VOUCHED_BELOW",
    "VOUCHED_FROM",
    "VOUCHERS",
    "Grouping",
    "Prints",
    "Thresholds",
    "assign",
    "group",
    "matched_band",
    "matched_block",
    "use_compiled",
    "verified_pairs",
    "vouched_length",
    "window_pairs",
]

#: Rows per chunk of the all-pairs comparison: bounds memory to chunk x n uint64.
_CHUNK_ROWS = 512


#: A pair of short documents needs this share of ``min_similarity`` (see :class:`Thresholds`).
SHORT_SHARE = 0.8
#: A pair whose shorter side has ``NO_WORDS`` words needs this share of ``min_similarity``...
MID_SHARE = 0.9
#: ... rising to all of it at this many words (see :class:`Thresholds`).
FULL_WORDS = 200
#: From this many words up to ``CLOSE_BELOW``, a pair whose SimHash are close needs less
#: similarity (``Thresholds.close_distance``, ``close_relief``).
CLOSE_FROM = 100
#: ... and from this many words on, not (see :class:`Thresholds`).
CLOSE_BELOW = 150


@dataclass(frozen=True)
class Thresholds:
    """When two fingerprints verify as near-duplicates.

    ``min_similarity`` holds for pairs whose shorter side has at least ``FULL_WORDS`` (200)
    words of content. From ``NO_WORDS`` (50) words up to that, a pair needs less, from
    ``mid_similarity`` (default ``MID_SHARE`` of ``min_similarity``) rising in proportion: a
    text of shingles alone loses more of them to each edit the shorter it is, while unrelated
    texts share almost none at any length. Shorter documents add their words to their shingles
    (:func:`indexer.fingerprints.features.with_words`), so a changed word costs them less
    similarity but unrelated texts share more: up to ``ALL_WORDS`` (20) words a pair needs
    ``short_similarity`` (default ``SHORT_SHARE`` of ``min_similarity``), rising in proportion
    to ``min_similarity`` just below ``NO_WORDS`` (:meth:`similarity_for`). Below
    ``min_tokens`` words: exact key only.

    From ``CLOSE_FROM`` (100) words up to ``CLOSE_BELOW`` (150), a pair whose SimHash differ in
    at most ``close_distance`` bits needs ``close_relief`` less (not below 0): there one standard
    error of the MinHash estimate is about 0.044, so a copy can fall under the threshold by
    chance, and the SimHash, an independent estimate of the same resemblance, corroborates it
    (a negative ``close_distance`` turns this off).

    Below ``CLOSE_FROM`` words, a pair whose SimHash differ in more than ``max_distance`` bits
    but at most ``far_bits`` more (``far_distance``) verifies when its MinHash similarity is at
    least ``far_similarity`` as well as its threshold: a short text's SimHash is a vote over
    few shingles, which a few words said twice (a new headline repeated as the page's heading)
    carry past ``max_distance``, while MinHash still finds most of the text shared
    (``far_bits`` 0 turns this off).
    """

    max_distance: int
    min_similarity: float
    min_tokens: int = 9
    short_similarity: float | None = None
    mid_similarity: float | None = None
    close_distance: int = 16
    close_relief: float = 0.06
    far_bits: int = 4
    far_similarity: float = 0.55

    @property
    def far_distance(self) -> int:
        """The most bits apart a short pair may verify at: ``far_bits`` past ``max_distance``."""
        return self.max_distance + max(self.far_bits, 0)

    def similarity_for(self, tokens: np.ndarray, distance: np.ndarray | None = None) -> np.ndarray:
        """The MinHash similarity pairs need, from their shorter side's token count and (when
        given) their SimHash distance."""
        s = self.min_similarity
        short = s * SHORT_SHARE if self.short_similarity is None else self.short_similarity
        mid = s * MID_SHARE if self.mid_similarity is None else self.mid_similarity
        u = np.asarray(tokens, dtype=np.float64)
        rise = np.clip((u - NO_WORDS) / (FULL_WORDS - NO_WORDS), 0.0, 1.0)
        need = np.where(u < NO_WORDS, s - (s - short) * word_share(u), mid + (s - mid) * rise)
        if distance is None:
            return need
        d = np.asarray(distance)
        close = (d <= self.close_distance) & (u >= CLOSE_FROM)
        need = np.where(close & (u < CLOSE_BELOW), np.maximum(need - self.close_relief, 0.0), need)
        far = self.in_far_band(d, u)
        return np.where(far, np.maximum(need, self.far_similarity), need)

    def in_far_band(self, distance: np.ndarray, shorter: np.ndarray) -> np.ndarray:
        """Whether pairs ``distance`` bits apart, their shorter side ``shorter`` words long, are
        in the far band: beyond ``max_distance`` bits, within ``far_distance``, under
        ``CLOSE_FROM`` words."""
        beyond = (distance > self.max_distance) & (distance <= self.far_distance)
        return beyond & (shorter < CLOSE_FROM)

    def near(self, distance: np.ndarray, shorter: np.ndarray) -> np.ndarray:
        """Whether pairs ``distance`` bits apart, their shorter side ``shorter`` words long, are
        compared by MinHash: within ``max_distance`` bits, or in the far band."""
        return (distance <= self.max_distance) | self.in_far_band(distance, shorter)


#: Hits with fewer words of content than this must be vouched for by their group's members,
VOUCHED_BELOW = NO_WORDS
#: ... and hits with this many or more (long pages, whose names are not read).
VOUCHED_FROM = NAMED_BELOW
#: The members ranked first in a group that vouch (a bound on the work per hit).
VOUCHERS = 8

#: The thresholds the proxy collapses with and lookups verify with, unless configured otherwise
#: (how they were chosen: docs/quality.md).
DEFAULT_THRESHOLDS = Thresholds(max_distance=24, min_similarity=0.45, min_tokens=9)


@dataclass(frozen=True)
class Prints:
    """Fingerprints of n hits in rank order (a hit without one has ``present`` False).

    ``key`` is the exact key as a small integer code (-1 none); equal codes mean equal keys.
    ``numbers``: the number sketches (``indexer.fingerprints.numbers``).
    """

    simhash: np.ndarray  # (n,) uint64
    minhash: np.ndarray  # (n, m) uint16 | uint32
    key: np.ndarray  # (n,) int64
    token_count: np.ndarray  # (n,) int64
    present: np.ndarray  # (n,) bool
    numbers: np.ndarray  # (n, CELLS) uint32

    def __len__(self) -> int:
        return len(self.simhash)

    def take(self, rows: np.ndarray) -> Prints:
        """The fingerprints of some rows, in the given order."""
        return Prints(
            self.simhash[rows],
            self.minhash[rows],
            self.key[rows],
            self.token_count[rows],
            self.present[rows],
            self.numbers[rows],
        )

    @staticmethod
    def concat(parts: list[Prints]) -> Prints:
        return Prints(
            np.concatenate([p.simhash for p in parts]),
            np.concatenate([p.minhash for p in parts]),
            np.concatenate([p.key for p in parts]),
            np.concatenate([p.token_count for p in parts]),
            np.concatenate([p.present for p in parts]),
            np.concatenate([p.numbers for p in parts]),
        )


@dataclass(frozen=True)
class Grouping:
    """Per hit: its representative (itself for representatives), distance and similarity."""

    rep: np.ndarray  # (n,) int64 index of the hit's representative
    hamming: np.ndarray  # (n,) int64 distance to the representative (0 for representatives)
    similarity: np.ndarray  # (n,) float64 similarity to the representative (1.0 for them)

    @property
    def is_rep(self) -> np.ndarray:
        return self.rep == np.arange(len(self.rep))

    @property
    def representatives(self) -> np.ndarray:
        """Indices of the representatives, in rank order."""
        return self.is_rep.nonzero()[0]

    def members(self, rep: int) -> np.ndarray:
        """Indices of the hits folded behind ``rep``, in rank order."""
        found = np.flatnonzero(self.rep == rep)
        return found[found != rep]


def _long(p: Prints, t: Thresholds) -> np.ndarray:
    """Long enough to be compared by SimHash and MinHash (fingerprinted, ``min_tokens``)."""
    return p.present & (p.token_count >= max(t.min_tokens, 1))


def _enough(
    a: Prints, i: np.ndarray, b: Prints, j: np.ndarray, ham: np.ndarray, t: Thresholds
) -> np.ndarray:
    """Each pair's threshold (:meth:`Thresholds.similarity_for` its shorter side and its
    distance ``ham``), looked up in :func:`_thresholds`."""
    return _lookup(_thresholds(t), a, i, b, j, ham, t)


def _lookup(
    table: np.ndarray,
    a: Prints,
    i: np.ndarray,
    b: Prints,
    j: np.ndarray,
    ham: np.ndarray,
    t: Thresholds,
) -> np.ndarray:
    """Each pair's value in a (3, ``FULL_WORDS`` + 1) table: the row by the pair's distance
    (:func:`_row`), the column by its shorter side's token count (below 0 and above
    ``FULL_WORDS`` clipped to the ends)."""
    shorter = np.minimum(a.token_count[i], b.token_count[j])
    return table[_row(ham, shorter, t), np.clip(shorter, 0, FULL_WORDS)]


def _row(ham: np.ndarray, shorter: np.ndarray, t: Thresholds) -> np.ndarray:
    """The row of a pair at distance ``ham``, its shorter side ``shorter`` words long, in
    :func:`_thresholds`: 2 beyond ``max_distance`` bits and within ``far_distance`` under
    ``CLOSE_FROM`` words, else 1 within ``close_distance``, else 0."""
    return np.where(t.in_far_band(ham, shorter), 2, ham <= t.close_distance).astype(np.intp)


@functools.lru_cache(maxsize=64)
def _thresholds(t: Thresholds) -> np.ndarray:
    """(3, ``FULL_WORDS`` + 1): :meth:`Thresholds.similarity_for` 0 .. ``FULL_WORDS`` token
    counts, for pairs beyond ``close_distance`` bits (row 0), within (row 1), and beyond
    ``max_distance`` within ``far_distance`` (row 2: the columns under ``CLOSE_FROM``), computed
    once: the same values, bit for bit, as computed pair by pair (constant from ``FULL_WORDS``
    on, and below 0 as at 0), in one lookup."""
    u = np.arange(FULL_WORDS + 1)
    within = replace(t, far_bits=0)  # rows 0 and 1: no far band
    plain = within.similarity_for(u)
    close = within.similarity_for(u, np.full(len(u), t.close_distance))
    far = np.where(u < CLOSE_FROM, np.maximum(plain, t.far_similarity), plain)
    table = np.stack([plain, close, far])
    table.flags.writeable = False
    return table


def _exact_keys(p: Prints, missing: int) -> np.ndarray:
    """Exact-key codes that may match: fingerprinted, non-empty documents' (``missing`` else:
    give the two sides of a comparison different ones, so that missing never meets missing)."""
    return np.where(p.present & (p.token_count > 0), p.key, missing)


def _second_hash(
    a: Prints, i: np.ndarray, b: Prints, j: np.ndarray, near: np.ndarray, same: np.ndarray
) -> np.ndarray:
    """Similarity of each pair: MinHash where the SimHash is near, 1.0 for an equal exact key
    that is not near, 0.0 otherwise."""
    sim = same.astype(np.float64)
    if np.count_nonzero(near):
        sim[near] = _similarity(a.minhash.take(i[near], axis=0), b.minhash.take(j[near], axis=0))
    return sim


def _similarity(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`~indexer.fingerprints.minhash.similarity` of k pairs of sketches (``x``, ``y``:
    (k, m), one dtype), bit for bit, its equal values counted 8 at a time: the comparison's
    bytes (0 or 1) read as ``uint64`` words and their set bits counted (numpy >= 2)."""
    if not _BITWISE_COUNT or x.shape != y.shape or x.shape[-1] % 8:
        return cast(np.ndarray, similarity(x, y))
    eq = np.equal(x, y)
    if not eq.flags.c_contiguous:
        eq = np.ascontiguousarray(eq)
    counts = np.add.reduce(_BITWISE_COUNT(eq.view(np.uint64)), axis=-1, dtype=np.int64)
    return _similarity_of_counts(x.shape[-1], x.dtype.itemsize).take(counts)


@functools.lru_cache(maxsize=16)
def _similarity_of_counts(m: int, itemsize: int) -> np.ndarray:
    """(m + 1,) float64: the similarity of two m-value sketches with 0 .. m equal values, the
    chance agreement of ``itemsize``-byte values corrected (the same arithmetic, value for
    value, as pair by pair: one lookup instead of five array operations)."""
    chance = 2.0 ** -(itemsize * 8)
    agree = np.arange(m + 1) / m
    table = np.minimum(np.maximum((agree - chance) / (1.0 - chance), 0.0), 1.0)
    table.flags.writeable = False
    return table


def _numbers_agree(
    a: Prints, i: np.ndarray, b: Prints, j: np.ndarray, similar: np.ndarray
) -> np.ndarray:
    """``similar`` (changed in place) less the pairs whose number sketches conflict (compared
    only there)."""
    k = similar.nonzero()[0]
    if len(k):
        similar[k] = agree(a.numbers.take(i[k], axis=0), b.numbers.take(j[k], axis=0))
    return similar


def verify(
    a: Prints, i: np.ndarray, b: Prints, j: np.ndarray, t: Thresholds
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whether pairs (a[i], b[j]) verify; also their Hamming distances and similarities."""
    ham = popcount64(a.simhash[i] ^ b.simhash[j]).astype(np.int64)
    key_a = _exact_keys(a, -1)[i]
    same = (key_a >= 0) & (key_a == _exact_keys(b, -2)[j])
    shorter = np.minimum(a.token_count[i], b.token_count[j])
    near = _long(a, t)[i] & _long(b, t)[j] & t.near(ham, shorter)
    sim = _second_hash(a, i, b, j, near, same)
    similar = near & (sim >= _enough(a, i, b, j, ham, t))
    return same | _numbers_agree(a, i, b, j, similar), ham, sim


@functools.lru_cache(maxsize=64)
def _below_diagonal(n: int) -> np.ndarray:
    """(n, n) bool, True where j < i (read-only: shared between calls)."""
    mask = np.tri(n, n, -1, dtype=bool)
    mask.flags.writeable = False
    return mask


def verified_pairs(
    a: Prints, b: Prints, t: Thresholds, earlier_only: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (a[i], b[j]) that verifies, as (i, j, hamming, similarity) in row-major order
    (by i, then j); ``earlier_only`` (``a`` is ``b``, a window): only pairs with j < i.

    The same test as :func:`verify` over the whole (len(a), len(b)) table at once: for the
    small sets of a first window or a page's probe, a handful of array operations instead of
    building pair lists first. Exact keys are compared pair by pair only when some key is on
    both sides (rarely: a copy byte for byte); else every candidate is a SimHash neighbour."""
    one = b is a
    long_a = _long(a, t)
    near = popcount64(a.simhash[:, None] ^ b.simhash[None, :])
    ham = near
    near = t.near(ham, np.minimum(a.token_count[:, None], b.token_count[None, :]))
    near &= long_a[:, None]
    near &= (long_a if one else _long(b, t))[None, :]
    key_a = _exact_keys(a, -1)
    key_b = key_a if one else _exact_keys(b, -2)  # one side: key_a >= 0 keeps -1 from -1
    key_eq = None
    if (one and not earlier_only) or _keys_shared(key_a, key_b, one):
        key_eq = (key_a[:, None] == key_b[None, :]) & (key_a >= 0)[:, None]
        candidate = near | key_eq
    else:
        candidate = near
    if earlier_only:
        candidate = candidate & _below_diagonal(len(a))
    i, j = candidate.nonzero()
    enough = _enough(a, i, b, j, ham[i, j], t)
    if key_eq is None:  # every candidate is near: all compared by MinHash
        sim = _similarity(a.minhash.take(i, axis=0), b.minhash.take(j, axis=0))
        ok = _numbers_agree(a, i, b, j, sim >= enough)
    else:
        close, same = near[i, j], key_eq[i, j]
        sim = _second_hash(a, i, b, j, close, same)
        ok = same | _numbers_agree(a, i, b, j, close & (sim >= enough))
    i, j = i[ok], j[ok]
    return i, j, ham[i, j].astype(np.int64), sim[ok]


def _keys_shared(key_a: np.ndarray, key_b: np.ndarray, one: bool) -> bool:
    """Whether some exact-key code (:func:`_exact_keys`) may match across the two sides (on
    two rows of one side when ``one``): plain sets, a window's few."""
    a = key_a.tolist()
    if one:
        codes = [k for k in a if k >= 0]
        return len(set(codes)) < len(codes)
    return any(k >= 0 for k in set(a).intersection(key_b.tolist()))


def window_pairs(
    p: Prints, t: Thresholds, start: int = 0, earlier: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs (i, j), j < i, of one window: all pairs near (:meth:`Thresholds.near`) or
    with equal exact keys, by an all-pairs XOR and popcount in row chunks (exact, any distance).

    Only hits ``i >= start`` are paired, with every earlier hit from ``start`` on and with the
    hits ``earlier`` lists (default: all hits before ``start``).
    """
    n = len(p)
    before = np.arange(start) if earlier is None else np.asarray(earlier, dtype=np.int64)
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    for lo in range(start, n, _CHUNK_ROWS):
        hi = min(n, lo + _CHUNK_ROWS)
        rows = np.arange(lo, hi)
        cols = np.concatenate([before, np.arange(start, hi)])
        ii, jj = np.nonzero(_close(p, t, rows, cols) & (cols[None, :] < rows[:, None]))
        out_i.append(rows[ii])
        out_j.append(cols[jj])
    if not out_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_i).astype(np.int64), np.concatenate(out_j).astype(np.int64)


#: Above this many candidate pairs in a window, MinHash is compared against representatives
#: only: a window of copies has few representatives and very many pairs (how these four limits
#: were set: docs/decisions.md, "Grouping strategies by window shape").
_BATCH_PAIRS = 50_000
#: ... or above this many pairs per hit being grouped: a window (or a refill) of copies, where
#: few representatives claim many hits; unrelated windows have a handful of pairs a hit.
_PAIRS_PER_HIT = 24
#: Representatives that claim one by one before the rest of a window is verified at once: a
#: window of copies has a few; a window of many unrelated hits whose chance pairs passed the
#: limits above has hundreds, cheaper verified at once.
_CLAIM_REPS = 32


#: Hits grouped at once (a refill, a deep window) from which representatives take their copies
#: in turn, each compared with the hits still free, instead of all pairs first. After
#: ``_CLAIM_REPS`` representatives the hits still free are grouped by pairs (a window of many
#: unrelated hits).
_IN_TURN_MIN_HITS = 100


def group(p: Prints, t: Thresholds, settled: Grouping | None = None) -> Grouping:
    """Group a window of hits in rank order (the rule in the module docstring).

    ``settled``: the grouping of the window's first hits (before a refill extended it). By
    prefix stability it stays as it is: only the later hits are grouped.

    Once :func:`use_compiled` has loaded it, the compiled pass reads the whole rule literally,
    corroboration and vouching included, at any size. Else the hits are grouped by
    representative alone (:func:`_by_representative`); then the first member that its group
    does not take after all (:func:`_refused`: marginal and not corroborated, or short and not
    vouched for) takes its place by the rule, and the hits after it are grouped again, until
    none is left. The same groups, bit for bit (tested).
    """
    start = 0 if settled is None else len(settled.rep)
    if start > len(p):
        raise ValueError("the settled grouping is longer than the window")
    if _compiled is not None:
        rep, ham, sim = _settled_arrays(len(p), settled)
        if _first_verified(p, p, t, start, rep, ham, sim):  # corroborates as it goes
            return Grouping(rep=rep, hamming=ham, similarity=sim)
    g = _by_representative(p, t, settled)
    while (m := _refused(p, t, g, start)) is not None:
        rep, ham, sim = (
            g.rep[: m + 1].copy(),
            g.hamming[: m + 1].copy(),
            g.similarity[: m + 1].copy(),
        )
        rep[m], ham[m], sim[m] = _place(p, t, g, m)
        g = _by_representative(p, t, Grouping(rep=rep, hamming=ham, similarity=sim))
        start = m + 1
    return g


def _settled_arrays(n: int, settled: Grouping | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per hit of a window of ``n``: representative, distance and similarity, the ``settled``
    grouping's for its hits, each other hit its own representative."""
    rep = np.arange(n, dtype=np.int64)
    ham = np.zeros(n, dtype=np.int64)
    sim = np.ones(n, dtype=np.float64)
    if settled is not None:
        k = len(settled.rep)
        rep[:k], ham[:k], sim[:k] = settled.rep, settled.hamming, settled.similarity
    return rep, ham, sim


def _by_representative(p: Prints, t: Thresholds, settled: Grouping | None = None) -> Grouping:
    """Each hit joins the best-ranked representative it verifies against (the rule without
    corroboration: :func:`group` adds it).

    ``settled``: the grouping of the window's first hits (before a refill extended it). By
    prefix stability it stays as it is: only the later hits are grouped, against its
    representatives and each other, which gives the same groups as grouping the whole window.

    Few hits (a first window): candidate pairs come from the all-pairs test
    (:func:`window_pairs`); few pairs are verified in one vectorised pass, then each hit takes
    the best-ranked representative among the pairs that verify; many (hundreds of copies of
    one text), representative by representative. Many hits (:data:`_IN_TURN_MIN_HITS`): the
    settled representatives take the hits that verify against them, then the first free hit is
    a representative and takes the later free hits that verify against it, and so on — the
    same rule, with no all-pairs table; after :data:`_CLAIM_REPS` representatives the hits
    still free are grouped by pairs. Every way is tested against a literal reading of the rule.
    """
    n = len(p)
    rep, ham, sim = _settled_arrays(n, settled)
    start = 0
    earlier = None
    if settled is not None:
        start = len(settled.rep)
        earlier = settled.representatives  # a later hit can only join a representative
    if n - start < _IN_TURN_MIN_HITS:
        _group_by_pairs(p, t, rep, ham, sim, start, earlier)
        return Grouping(rep=rep, hamming=ham, similarity=sim)
    rest = _claim_in_turn(p, t, rep, ham, sim, start, earlier)
    if len(rest):
        # Free hits after the last representative that took its copies: each can only join a
        # representative among them, so they group as a window of their own.
        sub = Grouping(
            rep=np.arange(len(rest), dtype=np.int64),
            hamming=np.zeros(len(rest), dtype=np.int64),
            similarity=np.ones(len(rest), dtype=np.float64),
        )
        _group_by_pairs(p.take(rest), t, sub.rep, sub.hamming, sub.similarity, 0, None)
        rep[rest], ham[rest], sim[rest] = rest[sub.rep], sub.hamming, sub.similarity
    return Grouping(rep=rep, hamming=ham, similarity=sim)


def _group_by_pairs(
    p: Prints,
    t: Thresholds,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    start: int,
    earlier: np.ndarray | None,
) -> None:
    """Group hits ``start:`` from their candidate pairs (see :func:`group`)."""
    n = len(p)
    if start == 0 and n * (n - 1) // 2 <= min(_BATCH_PAIRS, _PAIRS_PER_HIT * n):
        # A first window too small to ever be claimed by representative: every pair at once.
        _join(rep, ham, sim, *verified_pairs(p, p, t, earlier_only=True), is_rep=[True] * n)
        return
    ci, cj = window_pairs(p, t, start, earlier)
    if not len(ci):
        return
    if len(ci) <= min(_BATCH_PAIRS, _PAIRS_PER_HIT * (n - start)):
        _join_verified_pairs(p, t, ci, cj, rep, ham, sim)
        return
    stop = _claim_by_representative(p, t, ci, cj, rep, ham, sim, _CLAIM_REPS, _BATCH_PAIRS)
    if stop is not None:  # many representatives after all: the rest all at once
        free = rep == np.arange(n)
        rest = (cj >= stop) & free[ci] & free[cj]
        _join_verified_pairs(p, t, ci[rest], cj[rest], rep, ham, sim)


def _close(p: Prints, t: Thresholds, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(len(rows), len(cols)) bool: which pairs are candidates (within the distance or with an
    equal exact key, both fingerprinted)."""
    d = popcount64(p.simhash[rows, None] ^ p.simhash[None, cols])
    keys = (p.key[rows, None] == p.key[None, cols]) & (p.key[rows, None] >= 0)
    near = t.near(d, np.minimum(p.token_count[rows, None], p.token_count[None, cols]))
    return (near | keys) & p.present[rows, None] & p.present[None, cols]


def _claim_in_turn(
    p: Prints,
    t: Thresholds,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    start: int,
    earlier: np.ndarray | None,
) -> np.ndarray:
    """Hits ``start:`` taken by the settled representatives ``earlier``, then by each free hit
    in turn; returns the hits still free (all ranked below the last representative that took
    its turn), in rank order, after :data:`_CLAIM_REPS` new representatives, or as soon as
    they take fewer than two copies each (from the fifth on: unrelated hits)."""
    n = len(p)
    new = np.arange(start, n, dtype=np.int64)
    free = np.ones(n - start, dtype=bool)
    if earlier is not None and len(earlier):
        earlier = np.asarray(earlier, dtype=np.int64)
        pi: list[np.ndarray] = []
        pj: list[np.ndarray] = []
        for lo in range(0, len(new), _CHUNK_ROWS):
            rows = new[lo : lo + _CHUNK_ROWS]
            ii, jj = np.nonzero(_close(p, t, rows, earlier))
            pi.append(rows[ii])
            pj.append(earlier[jj])
        ci, cj = np.concatenate(pi), np.concatenate(pj)
        ok, h, s = verify(p, ci, p, cj, t)
        ci, cj, h, s = ci[ok], cj[ok], h[ok], s[ok]
        if len(ci):  # each hit joins the best-ranked (smallest) representative it verifies
            order = np.lexsort((cj, ci))
            first = order[_firsts(ci[order])]
            got = ci[first]
            rep[got], ham[got], sim[got] = cj[first], h[first], s[first]
            free[got - start] = False
    taken = 0  # hits taken by the new representatives so far
    ahead: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for k in range(_CLAIM_REPS):
        left = np.flatnonzero(free)
        if not len(left) or (k >= 4 and taken < 2 * k):  # few copies: by pairs is cheaper
            break
        r = int(new[left[0]])  # the best-ranked free hit: a representative
        if r not in ahead:
            ahead = _verify_turns(p, t, new[left], _TURNS_AHEAD)
        free[left[0]] = False
        cand, ok, h, s = ahead[r]
        ok = ok & free[cand - start]  # what an earlier representative took is not free
        got = cand[ok]
        rep[got], ham[got], sim[got] = r, h[ok], s[ok]
        free[got - start] = False
        taken += len(got)
    return new[free]


#: Representatives whose candidates are verified in one call, when the rule can tell them
#: before any of them has taken its copies (:func:`_verify_claims`).
_AHEAD = 8
#: Free hits whose candidates are verified in one call by :func:`_claim_in_turn`, whether or
#: not they turn out representatives (the turns stop after four unless they take copies).
_TURNS_AHEAD = 4
#: The verdicts of no pairs (read-only: shared).
_NO_PAIRS = (np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
for _empty in _NO_PAIRS:
    _empty.flags.writeable = False


def _verify_turns(
    p: Prints, t: Thresholds, free: np.ndarray, most: int
) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """For :func:`_claim_in_turn`: for each of the first ``most`` of the ``free`` hits (in rank
    order), its later free hits that are candidates, with the verdict of each pair
    (candidates, verified, distances, similarities), all verified in one call.

    The first is the next representative; the others are representatives when their turn
    comes unless one before them takes them (then their verdicts go unused). Each pair's
    verdict does not depend on the others'; whether a candidate is still free when its
    representative's turn comes is for the caller to check."""
    reps = free[:most]
    close = _close(p, t, free, reps)  # (len(free), len(reps))
    cands = [free[b + 1 :][close[b + 1 :, b]] for b in range(len(reps))]
    ci = np.concatenate(cands)
    cj = np.repeat(reps, [len(c) for c in cands])
    ok, h, s = verify(p, ci, p, cj, t) if len(ci) else _NO_PAIRS
    return _verdicts_per_rep(reps.tolist(), cands, ok, h, s)


def _join_verified_pairs(
    p: Prints,
    t: Thresholds,
    ci: np.ndarray,
    cj: np.ndarray,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
) -> None:
    """Verify every candidate pair at once; each hit joins its best-ranked verified rep."""
    ok, h, s = verify(p, ci, p, cj, t)
    ci, cj, h, s = ci[ok], cj[ok], h[ok], s[ok]
    if not len(ci):
        return
    order = np.lexsort((cj, ci))
    _join(rep, ham, sim, ci[order], cj[order], h[order], s[order])


def _join(
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    ci: np.ndarray,
    cj: np.ndarray,
    h: np.ndarray,
    s: np.ndarray,
    is_rep: list[bool] | None = None,
) -> None:
    """Each hit joins its best-ranked verified representative, from verified pairs (ci, cj)
    sorted by the later hit, then by the earlier: the first pair of a hit whose earlier hit is
    still a representative is the one (earlier hits are settled before it). A few hundred
    pairs at most: plain ints. ``is_rep``: which hits are representatives so far (default:
    read from ``rep``)."""
    if not len(ci):
        return
    if is_rep is None:
        is_rep = (rep == np.arange(len(rep))).tolist()  # settled members are already taken
    joined = -1
    for k, i, j in zip(range(len(ci)), ci.tolist(), cj.tolist(), strict=True):
        if i != joined and is_rep[j]:
            rep[i], ham[i], sim[i] = j, h[k], s[k]
            is_rep[i] = False
            joined = i


def _claim_by_representative(
    p: Prints,
    t: Thresholds,
    ci: np.ndarray,
    cj: np.ndarray,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    max_reps: int | None = None,
    max_rest: int | None = None,
) -> int | None:
    """Representatives in rank order claim the unclaimed later hits that verify against them.

    After ``max_reps`` representatives it stops and returns the next one (None: it finished):
    every hit ranked above that one is settled, and the rest is left to the caller — unless
    more than ``max_rest`` candidate pairs are left among free hits (``collapse_total``'s
    10,000 hits at 24 bits: millions of chance pairs, cheaper claimed than verified at once).
    """
    order = np.lexsort((ci, cj))
    ci, cj = ci[order], cj[order]
    starts = np.flatnonzero(_firsts(cj))
    ends = np.append(starts[1:], len(cj))
    claimed = rep != np.arange(len(rep))  # settled members are already taken
    groups = list(zip(cj[starts].tolist(), starts.tolist(), ends.tolist(), strict=True))
    ahead: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    done = 0
    for g, (j, lo, _) in enumerate(groups):
        if claimed[j]:
            continue  # a member, not a representative: it claims nothing
        if max_reps is not None and done >= max_reps:
            left = np.count_nonzero(~claimed[ci[lo:]] & ~claimed[cj[lo:]])
            if max_rest is None or left <= max_rest:
                return j
            max_reps = None
        done += 1
        if j not in ahead:
            most = _AHEAD if max_reps is None else min(_AHEAD, max_reps - done + 1)
            ahead = _verify_claims(p, t, ci, groups[g:], claimed, most)
        cand, ok, h, s = ahead[j]
        ok = ok & ~claimed[cand]  # what an earlier representative took is not claimed again
        got = cand[ok]
        rep[got], ham[got], sim[got] = j, h[ok], s[ok]
        claimed[got] = True
    return None


def _verify_claims(
    p: Prints,
    t: Thresholds,
    ci: np.ndarray,
    groups: list[tuple[int, int, int]],
    claimed: np.ndarray,
    most: int,
) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """For :func:`_claim_by_representative`: the candidates of the next representatives (the
    first of ``groups``, each group an earlier hit ``j`` and the range of ``ci`` paired with
    it), each with the verdict of its pairs (candidates, verified, distances, similarities),
    all verified in one call.

    A group's hit is a representative unless claimed; one that is no candidate of a group
    before it cannot be claimed by them, so it is taken in as long as that holds, at most
    ``most``: these are the representatives the turns would find one by one, and each pair's
    verdict does not depend on the others'."""
    j0, lo0, hi0 = groups[0]
    first = ci[lo0:hi0]
    cands = [first[~claimed[first]]]
    reps = [j0]
    seen = np.zeros(len(claimed), dtype=bool)
    seen[cands[0]] = True
    for j, lo, hi in groups[1:]:
        if len(reps) >= most or seen[j]:
            break
        if claimed[j]:
            continue  # no representative: its turn is skipped
        c = ci[lo:hi]
        c = c[~claimed[c]]
        seen[c] = True
        cands.append(c)
        reps.append(j)
    all_i = cands[0] if len(cands) == 1 else np.concatenate(cands)
    if not len(all_i):
        return {j: (c, *_NO_PAIRS) for j, c in zip(reps, cands, strict=True)}
    all_j = np.repeat(np.asarray(reps, dtype=np.int64), [len(c) for c in cands])
    ok, h, s = verify(p, all_i, p, all_j, t)
    return _verdicts_per_rep(reps, cands, ok, h, s)


def _verdicts_per_rep(
    reps: list[int], cands: list[np.ndarray], ok: np.ndarray, h: np.ndarray, s: np.ndarray
) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """One verification call's verdicts (pairs in the order of ``cands``, concatenated) cut
    back per representative: candidates, verified, distances, similarities."""
    out: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    lo = 0
    for r, c in zip(reps, cands, strict=True):
        hi = lo + len(c)
        out[r] = (c, ok[lo:hi], h[lo:hi], s[lo:hi])
        lo = hi
    return out


def assign(
    cand: Prints,
    reps: Prints,
    t: Thresholds,
    members: Prints | None = None,
    owner: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For hits ranked below every one of ``reps`` (e.g. found beyond the window): the index of
    the best-ranked representative each joins by the rule (-1 none), with distance and
    similarity. ``members`` (with ``owner``, the index in ``reps`` of each one's representative):
    the groups' members, which corroborate a candidate's marginal verdicts and vouch for a
    short one (module docstring); without them a representative corroborates alone.
    """
    m, k = len(cand), len(reps)
    best = np.full(m, -1, dtype=np.int64)
    ham = np.zeros(m, dtype=np.int64)
    sim = np.zeros(m, dtype=np.float64)
    if not m or not k:
        return best, ham, sim
    if members is not None and owner is not None and len(members) and _compiled is not None:
        # One compiled pass over [reps, members, candidates] read as a window: the candidates
        # never represent (rep -1), and only the members before them corroborate.
        both = Prints.concat([reps, members, cand])
        start = k + len(members)
        rep = np.concatenate([np.arange(k), owner, np.full(m, -1)]).astype(np.int64)
        h = np.zeros(start + m, dtype=np.int64)
        s = np.zeros(start + m, dtype=np.float64)
        if _first_verified(both, both, t, start, rep, h, s, members_end=start):
            return rep[start:], h[start:], s[start:]
    if _compiled is None or not _first_verified(cand, reps, t, 0, best, ham, sim):
        i, j, h, s = verified_pairs(cand, reps, t)
        if len(i):
            first = _firsts(i)
            got = i[first]
            best[got], ham[got], sim[got] = j[first], h[first], s[first]
    if members is None or owner is None or not len(members):
        return best, ham, sim  # a representative alone always corroborates what verifies
    got = np.flatnonzero(best >= 0)
    unsure = got[_marginal(cand, got, reps, best[got], sim[got], ham[got], t)]
    both = Prints.concat([reps, members])  # representatives first: rows 0 .. k-1
    per_rep = np.bincount(owner, minlength=k)
    by_rep = k + np.argsort(owner, kind="stable")  # members' rows, grouped by representative
    firsts = np.cumsum(per_rep) - per_rep  # where each representative's members start
    refused = _unvouched_candidates(cand, got, best[got], both, by_rep, per_rep, firsts)
    if len(unsure):
        # Each marginal candidate against its group (representative, then members), all in
        # one call, summed in that order as the compiled pass sums.
        b = best[unsure]
        sizes = per_rep[b] + 1
        offset = np.repeat(np.arange(len(unsure)), sizes)
        nth = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # 0: rep
        rows = np.where(nth == 0, b[offset], by_rep[np.repeat(firsts[b], sizes) + nth - 1])
        ci = unsure[offset]
        _, h, s = verify(cand, ci, both, rows, t)
        total = np.bincount(offset, s - _enough(cand, ci, both, rows, h, t), len(unsure))
        refused = np.union1d(refused, unsure[total < 0.0])
    if not len(refused):
        return best, ham, sim

    # The few that their group refuses try the later representatives one by one.
    def rows_of(r: int) -> np.ndarray:
        return np.concatenate([[r], k + np.flatnonzero(owner == r)])

    for c in refused.tolist():
        best[c], ham[c], sim[c] = _first_corroborated(
            cand, c, both, np.arange(int(best[c]) + 1, k), rows_of, t
        )
    return best, ham, sim


def _unvouched_candidates(
    cand: Prints,
    got: np.ndarray,
    best: np.ndarray,
    both: Prints,
    by_rep: np.ndarray,
    per_rep: np.ndarray,
    firsts: np.ndarray,
) -> np.ndarray:
    """For :func:`assign`: the candidates ``got`` (joining representatives ``best``) whose
    groups' members do not vouch for them (:func:`_vouched`), all checked at once. ``both``:
    representatives, then members; ``by_rep``: the members' rows in it, grouped by
    representative in rank order, ``per_rep`` of each starting at ``firsts``."""
    short = vouched_length(cand.token_count[got])
    c, b = got[short], best[short]
    count = np.minimum(per_rep[b], VOUCHERS)
    if not count.sum():
        return np.zeros(0, dtype=np.int64)
    offset = np.repeat(np.arange(len(c)), count)
    nth = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    vouchers = by_rep[np.repeat(firsts[b], count) + nth]
    ok = agree(cand.numbers[c[offset]], both.numbers[vouchers])
    return np.unique(c[offset[~ok]])


@functools.lru_cache(maxsize=64)
def _unsure_below(t: Thresholds, values: int) -> np.ndarray:
    """As :func:`_thresholds` (by distance, then by shorter side's token count): the
    similarity below which a verified pair is marginal, its threshold plus one standard error
    of a ``values``-value MinHash estimate there (sqrt(s (1 - s) / values))."""
    th = _thresholds(t)
    table = th + np.sqrt(th * (1.0 - th) / max(values, 1))
    table.flags.writeable = False
    return table


def _marginal(
    a: Prints,
    i: np.ndarray,
    b: Prints,
    j: np.ndarray,
    sim: np.ndarray,
    ham: np.ndarray,
    t: Thresholds,
) -> np.ndarray:
    """(len(i),) bool: which verified pairs (a[i], b[j]) with similarity ``sim`` and distance
    ``ham`` are marginal: less similar than :func:`_unsure_below`, and not an equal exact key
    (a certain copy)."""
    key_a = _exact_keys(a, -1)[i]
    same = (key_a >= 0) & (key_a == _exact_keys(b, -2)[j])
    unsure = _lookup(_unsure_below(t, a.minhash.shape[1]), a, i, b, j, ham, t)
    return (sim < unsure) & ~same


def _corroborates(a: Prints, i: int, b: Prints, rows: np.ndarray, t: Thresholds) -> bool:
    """Whether a group (``rows`` of ``b``: its representative, then its members in rank order)
    corroborates a[i]: its similarities to them (0 where the SimHash is beyond
    not near) exceed their thresholds on average."""
    at = np.full(len(rows), i, dtype=np.int64)
    _, h, s = verify(a, at, b, rows, t)
    total = 0.0
    for margin in (s - _enough(a, at, b, rows, h, t)).tolist():  # in order, as the compiled pass
        total += margin
    return total >= 0.0


def _first_corroborated(
    a: Prints,
    i: int,
    b: Prints,
    reps: np.ndarray,
    rows_of: Callable[[int], np.ndarray],
    t: Thresholds,
) -> tuple[int, int, float]:
    """The first of ``reps`` (rows of ``b`` in rank order) that a[i] verifies against, surely
    or corroborated by its group (``rows_of``: the representative, then its members), and
    whose members vouch for it, with distance and similarity; (-1, 0, 0.0): none."""
    if len(reps):
        at = np.full(len(reps), i, dtype=np.int64)
        ok, h, s = verify(a, at, b, reps, t)
        unsure = _marginal(a, at, b, reps, s, h, t)
        for k in np.flatnonzero(ok).tolist():
            r = int(reps[k])
            rows = rows_of(r)
            if (not unsure[k] or _corroborates(a, i, b, rows, t)) and _vouched(a, i, b, rows[1:]):
                return r, int(h[k]), float(s[k])
    return -1, 0, 0.0


def vouched_length(tokens: np.ndarray) -> np.ndarray:
    """(n,) bool: which of hits with ``tokens`` words of content must be vouched for: those
    under :data:`VOUCHED_BELOW` words and those of :data:`VOUCHED_FROM` or more."""
    return (tokens < VOUCHED_BELOW) | (tokens >= VOUCHED_FROM)


def _vouched(a: Prints, i: int, b: Prints, members: np.ndarray) -> bool:
    """Whether a group's ``members`` (rows of ``b`` in rank order, its representative left
    out) vouch for a[i]: a[i] need not be vouched for (:func:`vouched_length`), or its
    number sketch agrees with those of the first :data:`VOUCHERS` of them."""
    if not vouched_length(a.token_count[i : i + 1])[0] or not len(members):
        return True
    firsts = members[:VOUCHERS]
    return bool(
        agree(np.repeat(a.numbers[i : i + 1], len(firsts), axis=0), b.numbers[firsts]).all()
    )


def _unvouched(p: Prints, rep: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """The ``hits`` (members of a window's groups in ``rep``, ascending) whose group's
    members ranked above them do not vouch for them (:func:`_vouched`), all checked at once."""
    short = hits[vouched_length(p.token_count[hits])]
    if not len(short):
        return short
    members = np.flatnonzero(rep != np.arange(len(rep)))
    order = np.lexsort((members, rep[members]))  # by group, then rank
    members = members[order]
    firsts = np.flatnonzero(_firsts(rep[members]))
    nth = np.arange(len(members)) - np.repeat(firsts, np.diff(np.append(firsts, len(members))))
    place = np.empty(len(rep), dtype=np.int64)
    place[members] = np.arange(len(members))  # each member's place in ``members``
    at = place[short]
    count = np.minimum(nth[at], VOUCHERS)  # members above it in its group, at most VOUCHERS
    offset = np.repeat(np.arange(len(short)), count)
    vouchers = members[
        np.repeat(at - nth[at], count)
        + np.arange(count.sum())
        - np.repeat(np.cumsum(count) - count, count)
    ]
    ok = agree(p.numbers[short[offset]], p.numbers[vouchers])
    bad = np.zeros(len(short), dtype=bool)
    bad[offset[~ok]] = True
    return short[bad]


def _refused(p: Prints, t: Thresholds, g: Grouping, start: int) -> int | None:
    """The first member from ``start`` on that its group does not take after all: its verdict
    is marginal and its group (its representative and the members ranked above it) does not
    corroborate it, or its group's members do not vouch for it (:func:`_unvouched`); None:
    none."""
    hits = np.arange(start, len(p))
    members = hits[g.rep[start:] != hits]
    if not len(members):
        return None
    unvouched = _unvouched(p, g.rep, members)
    first = int(unvouched[0]) if len(unvouched) else None
    rep = g.rep[members]
    marginal = _marginal(p, members, p, rep, g.similarity[members], g.hamming[members], t)
    for m in members[marginal].tolist():
        if first is not None and m > first:
            break
        if not _corroborates(p, m, p, np.flatnonzero(g.rep[:m] == g.rep[m]), t):
            return m
    return first


def _place(p: Prints, t: Thresholds, g: Grouping, m: int) -> tuple[int, int, float]:
    """Where the rule puts hit ``m``, whose group in ``g`` does not take it after all: the next
    representative ranked above it that takes it, else a group of its own."""
    reps = np.flatnonzero(g.rep[:m] == np.arange(m))
    reps = reps[reps > g.rep[m]]
    r, h, s = _first_corroborated(p, m, p, reps, lambda r: np.flatnonzero(g.rep[:m] == r), t)
    return (r, h, s) if r >= 0 else (m, 0, 1.0)


#: :mod:`indexer.grouping_kernel` once :func:`use_compiled` has loaded it (None: numpy only).
_compiled: ModuleType | None = None


def use_compiled() -> bool:
    """Group and assign with the compiled pass (:mod:`indexer.grouping_kernel`) from now on in
    this process, loading it now (from numba's cache, or compiling it once); False, and
    nothing changes, without numba. The same groups, distances and similarities, bit for bit
    (tested); the proxy calls it at start-up, the indexer's commands stay on numpy."""
    global _compiled
    if _compiled is None:
        try:
            import indexer.grouping_kernel as kernel
        except ImportError:
            return False
        _compiled = kernel
    return True


def _first_verified(
    a: Prints,
    b: Prints,
    t: Thresholds,
    start: int,
    rep: np.ndarray,
    ham: np.ndarray,
    sim: np.ndarray,
    members_end: int | None = None,
) -> bool:
    """:func:`group` (``b`` is ``a``) or :func:`assign` by the compiled pass, into ``rep``,
    ``ham``, ``sim``; False (nothing written) when the arrays are not of the types it is
    compiled for. ``members_end``: the rows (of a window) that corroborate (default all)."""
    assert _compiled is not None
    if a.minhash.dtype != b.minhash.dtype or a.minhash.shape[1] != b.minhash.shape[1]:
        return False
    sides = [
        (
            p.simhash,
            np.ascontiguousarray(p.minhash),
            p.key,
            p.token_count,
            p.present,
            np.ascontiguousarray(p.numbers),  # decoded cells are a slice of a wider table
        )
        for p in ((a,) if b is a else (a, b))
    ]
    unsure = _unsure_below(t, a.minhash.shape[1])
    limits = (
        *(t.max_distance, max(t.min_tokens, 1), t.close_distance, t.far_distance, CLOSE_FROM),
        *(_thresholds(t), unsure),
        *(VOUCHED_BELOW, VOUCHED_FROM, VOUCHERS),
    )
    equal = _similarity_of_counts(a.minhash.shape[1], a.minhash.dtype.itemsize)
    try:  # only the call: a type error here is a type the pass is not compiled for
        _compiled.first_verified(
            *sides[0],
            *sides[-1],
            b is a,
            start,
            len(a) if members_end is None else members_end,
            rep,
            ham,
            sim,
            *limits,
            equal,
            _CELLS,
        )
    except TypeError:  # another dtype than the signatures': the numpy path
        return False
    return True


#: The number sketch's layout as the compiled pass reads it (``grouping_kernel``).
_CELLS = np.array(
    [
        *(SKETCH_CELLS, NAMES_AT, WRITING_CELL, PARTS, PER_PART, NAME_BIT),
        *(SOURCE_BIT, WORD_MASK, LAST_BIT),
    ],
    dtype=np.int64,
)
_CELLS.flags.writeable = False


def _firsts(x: np.ndarray) -> np.ndarray:
    """(len(x),) bool: where a run of equal values of ``x`` starts."""
    first = np.empty(len(x), dtype=bool)
    first[:1] = True
    np.not_equal(x[1:], x[:-1], out=first[1:])
    return first


def matched_block(a: int, b: int, blocks: int) -> int | None:
    """The first SimHash block two fingerprints share (None: they share none)."""
    w = 64 // blocks
    x = (int(a) ^ int(b)) & ((1 << 64) - 1)
    mask = (1 << w) - 1
    for k in range(blocks):
        if (x >> (w * k)) & mask == 0:
            return k
    return None


def matched_band(a: np.ndarray, b: np.ndarray) -> int | None:
    """The first MinHash band (probe key, ``indexer.fingerprints.bands``) two sketches share
    (None: they share none)."""
    n = min(MAX_BANDS, len(a) // BAND_ROWS) * BAND_ROWS
    same = (np.asarray(a[:n]) == np.asarray(b[:n])).reshape(-1, BAND_ROWS).all(axis=1)
    hit = np.flatnonzero(same)
    return int(hit[0]) if len(hit) else None
