"""The grouping rule (indexer.grouping): pure numpy, no Elasticsearch."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import grouping
from indexer.fingerprints.bits import popcount64
from indexer.fingerprints.minhash import similarity
from indexer.fingerprints.names import LAST_BIT, NAME_BIT, PER_PART, SOURCE_BIT, WORD_MASK
from indexer.fingerprints.numbers import CELLS, NAMES_AT, SKETCH_CELLS, WRITING_CELL
from indexer.grouping import (
    VOUCHED_BELOW,
    VOUCHED_FROM,
    VOUCHERS,
    Prints,
    Thresholds,
    assign,
    group,
    matched_block,
    window_pairs,
)

T = Thresholds(max_distance=18, min_similarity=0.5, min_tokens=50)
BASE = 0x0123_4567_89AB_CDEF


def prints(
    simhashes: list[int],
    *,
    sketches: list[np.ndarray] | None = None,
    keys: list[int] | None = None,
    tokens: list[int] | None = None,
    present: list[bool] | None = None,
    numbers: list[np.ndarray] | None = None,
) -> Prints:
    n = len(simhashes)
    sketch = np.arange(64, dtype=np.uint16)
    return Prints(
        simhash=np.array(simhashes, dtype=np.uint64),
        minhash=np.stack(sketches) if sketches else np.tile(sketch, (n, 1)),
        key=np.array(keys if keys is not None else range(100, 100 + n), dtype=np.int64),
        token_count=np.array(tokens or [200] * n, dtype=np.int64),
        present=np.array(present or [True] * n, dtype=bool),
        numbers=np.stack(numbers) if numbers else np.zeros((n, CELLS), dtype=np.uint32),
    )


def flip(x: int, bits: range | list[int]) -> int:
    for b in bits:
        x ^= 1 << b
    return x


def test_near_copies_fold_behind_the_best_ranked() -> None:
    p = prints([BASE, flip(BASE, range(10)), flip(BASE, range(30, 45)), flip(BASE, range(64))])
    g = group(p, T)
    assert g.rep.tolist() == [0, 0, 0, 3]
    assert g.hamming.tolist() == [0, 10, 15, 0]
    assert g.members(0).tolist() == [1, 2]


def test_a_chain_does_not_merge_its_ends() -> None:
    a = BASE
    b = flip(a, range(10))  # 10 bits from a
    c = flip(b, range(10, 20))  # 10 bits from b, 20 from a
    g = group(prints([a, b, c]), T)
    assert g.rep.tolist() == [0, 0, 2]  # c verifies only against b, which is not a representative
    # The same when c arrives with a refill, after a and b were grouped.
    settled = group(prints([a, b]), T)
    assert group(prints([a, b, c]), T, settled=settled).rep.tolist() == [0, 0, 2]


def test_a_hit_between_two_representatives_joins_the_better_ranked() -> None:
    a = BASE
    c = flip(a, list(range(20)))  # 20 bits from a: its own group
    b = flip(a, list(range(10)))  # 10 bits from a and from c
    assert group(prints([a, c, b]), T).rep.tolist() == [0, 1, 0]
    # Also when b comes with a refill of its own, taken in turn by the settled representatives.
    settled = group(prints([a, c]), T)
    with mock.patch.object(grouping, "_IN_TURN_MIN_HITS", 1):
        assert group(prints([a, c, b]), T, settled=settled).rep.tolist() == [0, 1, 0]


def test_a_hit_joins_the_best_ranked_representative_it_verifies_against() -> None:
    a = BASE
    b = flip(a, range(20))  # 20 from a: its own group
    c = flip(a, range(10, 20))  # 10 from a and 10 from b
    g = group(prints([a, b, c]), T)
    assert g.rep.tolist() == [0, 1, 0]


def test_the_second_hash_vetoes_close_simhashes() -> None:
    same = np.arange(64, dtype=np.uint16)
    other = np.arange(64, 128, dtype=np.uint16)
    p = prints([BASE, flip(BASE, [1])], sketches=[same, other])
    assert group(p, T).rep.tolist() == [0, 1]


def test_numbers_that_conflict_veto_a_close_pair_but_not_an_equal_exact_key() -> None:
    cells = np.arange(CELLS, dtype=np.uint32) << 8  # contexts, values 0
    other = cells.copy()
    other[5] += 7  # the same contexts in cell 5, another value there
    framed = cells.copy()
    framed[9] += 1 << 8  # another context in cell 9 (a frame's number): no conflict
    p = prints([BASE, BASE, BASE], numbers=[cells, other, framed])
    assert group(p, T).rep.tolist() == [0, 1, 0]
    ok, _, _ = grouping.verify(p, np.array([1, 2]), p, np.array([0, 0]), T)
    assert ok.tolist() == [False, True]
    i, j, _, _ = grouping.verified_pairs(p, p, T, earlier_only=True)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(2, 0)]
    same = prints([BASE, BASE], keys=[7, 7], numbers=[cells, other])  # equal exact keys
    assert group(same, T).rep.tolist() == [0, 0]


def test_a_text_of_middle_length_needs_less_similarity_than_a_long_one() -> None:
    """From 50 words up (shingles alone, no words among them) a pair needs less than
    min_similarity, rising to all of it at 200 words: a copy edited as much folds at 125 words
    and not at 250; at 49 words (the short documents' rule) it does not either."""
    t = Thresholds(max_distance=18, min_similarity=0.5, min_tokens=9)
    original = np.arange(64, dtype=np.uint16)
    copy = original.copy()
    copy[31:] += 1000  # 31 of 64 values equal
    s = float(similarity(original[None, :], copy[None, :])[0])
    assert 0.475 <= s < 0.5  # 0.475: the threshold at 125 words
    for words, folds in ((125, True), (250, False), (200, False), (49, False)):
        p = prints([BASE, flip(BASE, [1])], sketches=[original, copy], tokens=[words, words])
        assert (group(p, t).rep.tolist() == [0, 0]) is folds, words


def test_a_mid_length_copy_under_the_threshold_folds_when_its_simhash_is_close() -> None:
    """From 100 to 149 words a pair within close_distance bits needs close_relief less: a copy
    28 of 64 values alike (0.44, under the 0.475 that 125 words need) folds 1 or 16 bits away,
    not 17 bits away, not at 80, 150 or 250 words, and not with the relief turned off."""
    t = Thresholds(max_distance=24, min_similarity=0.5, min_tokens=9)
    original, copy = np.arange(64, dtype=np.uint16), _sketch(range(28, 64))
    s = float(similarity(original[None, :], copy[None, :])[0])
    assert t.similarity_for(np.array([125]))[0] - t.close_relief <= s < 0.45
    off = Thresholds(max_distance=24, min_similarity=0.5, min_tokens=9, close_distance=-1)
    for bits, words, rule, folds in (
        (1, 125, t, True),
        (t.close_distance, 125, t, True),
        (t.close_distance + 1, 125, t, False),
        (1, 80, t, False),
        (1, 150, t, False),
        (1, 250, t, False),
        (1, 125, off, False),
    ):
        p = prints([BASE, flip(BASE, range(bits))], sketches=[original, copy], tokens=[words] * 2)
        assert (group(p, rule).rep.tolist() == [0, 0]) is folds, (bits, words)
        assert bool(grouping.verify(p, np.array([1]), p, np.array([0]), rule)[0][0]) is folds


def test_a_short_pair_far_in_simhash_verifies_when_minhash_finds_it_alike() -> None:
    """Under 100 words, a pair more than max_distance SimHash bits apart and at most
    far_distance verifies at far_similarity (a short copy under a new headline said twice,
    whose few shingles' vote moved): 0.69 alike at 40 words folds 25 and 28 bits away, not 29,
    not at 100 words, not 0.53 alike, and not with the band turned off."""
    t = Thresholds(max_distance=24, min_similarity=0.45, min_tokens=9)
    assert (t.far_distance, t.far_similarity) == (28, 0.55)
    original, alike, less = np.arange(64, dtype=np.uint16), _sketch(range(20)), _sketch(range(30))
    assert float(similarity(original[None, :], alike[None, :])[0]) >= 0.55
    assert (
        t.similarity_for(np.array([40]))[0]
        < float(similarity(original[None, :], less[None, :])[0])
        < 0.55
    )
    off = Thresholds(max_distance=24, min_similarity=0.45, min_tokens=9, far_bits=0)
    for bits, words, copy, rule, folds in (
        (24, 40, less, t, True),
        (25, 40, alike, t, True),
        (28, 40, alike, t, True),
        (29, 40, alike, t, False),
        (26, 100, alike, t, False),
        (26, 40, less, t, False),
        (26, 40, alike, off, False),
    ):
        p = prints([BASE, flip(BASE, range(bits))], sketches=[original, copy], tokens=[words] * 2)
        assert (group(p, rule).rep.tolist() == [0, 0]) is folds, (bits, words)
        assert bool(grouping.verify(p, np.array([1]), p, np.array([0]), rule)[0][0]) is folds
        joined = assign(p.take(np.array([1])), p.take(np.array([0])), rule)[0]
        assert (joined.tolist() == [0]) is folds


def test_short_documents_group_only_by_exact_key() -> None:
    p = prints([BASE, BASE, BASE], keys=[7, 8, 7], tokens=[10, 10, 10])
    assert group(p, T).rep.tolist() == [0, 1, 0]


def test_hits_without_fingerprints_are_singletons() -> None:
    p = prints([BASE, BASE, BASE], keys=[7, 7, 7], present=[True, False, True])
    assert group(p, T).rep.tolist() == [0, 1, 0]


def test_equal_exact_keys_group_whatever_the_distance() -> None:
    p = prints([BASE, flip(BASE, range(40))], keys=[5, 5])
    g = group(p, T)
    assert g.rep.tolist() == [0, 0]
    assert g.hamming.tolist() == [0, 40]


def _sketch(changed: range) -> np.ndarray:
    """The default sketch (0 .. 63) with the values at ``changed`` replaced by unique ones."""
    out = np.arange(64, dtype=np.uint16)
    out[list(changed)] += 1000
    return out


#: A copy's sketches against the original's (0 .. 63): ``edited`` 54 of 64 values alike (0.84);
#: ``marginal`` 34 alike (0.53: within one standard error, sqrt(0.25 / 64), of T's 0.5), and
#: only 24 alike with ``edited``; ``sure`` 44 alike (0.69), 34 with ``edited``.
EDITED, MARGINAL, SURE = _sketch(range(10)), _sketch(range(34, 64)), _sketch(range(44, 64))


def test_a_marginal_hit_joins_only_a_group_that_corroborates_it() -> None:
    # The representative and an edited copy; a hit on the threshold of the representative and
    # far from the copy: on average under the thresholds of the group, so it founds its own.
    near = [BASE, flip(BASE, range(5)), flip(BASE, range(5, 10))]
    p = prints(near, sketches=[_sketch(range(0)), EDITED, MARGINAL])
    assert group(p, T).rep.tolist() == [0, 0, 2]
    # Alone with the representative, nothing contradicts it: it joins.
    assert group(p.take(np.array([0, 2])), T).rep.tolist() == [0, 0]
    # A sure verdict (well above the threshold) needs no corroboration.
    sure = prints(near, sketches=[_sketch(range(0)), EDITED, SURE])
    assert group(sure, T).rep.tolist() == [0, 0, 0]
    # The same when it arrives with a refill, after the group was settled.
    settled = group(p.take(np.array([0, 1])), T)
    assert group(p, T, settled=settled).rep.tolist() == [0, 0, 2]


def test_a_hit_the_first_group_refuses_joins_the_next_that_takes_it() -> None:
    # Two sibling pages (representatives 0 and 2, 20 bits apart) and a copy of the second,
    # ranked below both: on the threshold of the first, beyond max_distance of its member, so
    # it goes to the second.
    sibling = MARGINAL.copy()
    sibling[:4] += 2000  # 60 values alike with the copy (0.94)
    p = prints(
        [BASE, flip(BASE, range(5)), flip(BASE, range(40, 60)), flip(BASE, range(44, 60))],
        sketches=[_sketch(range(0)), EDITED, sibling, MARGINAL],
    )
    g = group(p, T)
    assert g.rep.tolist() == [0, 0, 2, 2]
    best, _, _ = assign(p.take(np.array([3])), p.take(np.array([0, 2])), T)
    assert best.tolist() == [0]  # without their members, the first representative takes it
    members = p.take(np.array([1]))
    best, _, _ = assign(p.take(np.array([3])), p.take(np.array([0, 2])), T, members, np.array([0]))
    assert best.tolist() == [1]


def test_assign_credits_the_best_ranked_representative() -> None:
    reps = prints([BASE, flip(BASE, range(40))])
    cand = prints([flip(BASE, range(40, 44)), flip(BASE, range(3, 40)), flip(BASE, range(64))])
    best, ham, _ = assign(cand, reps, T)
    assert best.tolist() == [0, 1, -1]
    assert ham[:2].tolist() == [4, 3]


def test_matched_block_names_the_shared_block() -> None:
    assert matched_block(BASE, flip(BASE, [0, 9, 17, 25, 33, 41, 49]), 8) == 7
    assert matched_block(BASE, flip(BASE, [0, 9, 17, 25, 33, 41, 49, 57]), 8) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40), st.integers(0, 64))
def test_window_pairs_are_exactly_the_close_pairs(values: list[int], d: int) -> None:
    p = prints(values, keys=[-1] * len(values))
    t = Thresholds(d, 0.5)
    ci, cj = window_pairs(p, t)
    x = np.array(values, dtype=np.uint64)
    dist = popcount64(x[:, None] ^ x[None, :])
    tc = p.token_count
    want = {
        (i, j)
        for i in range(len(x))
        for j in range(i)
        if dist[i, j] <= d or (dist[i, j] <= d + 4 and min(tc[i], tc[j]) < 100)
    }
    assert set(zip(ci.tolist(), cj.tolist(), strict=True)) == want


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 63), min_size=2, max_size=30).map(
        lambda flips: [flip(BASE, range(f, min(64, f + 9))) for f in flips]
    ),
    st.integers(1, 30),
)
def test_grouping_is_prefix_stable(values: list[int], k: int) -> None:
    """Extending the window never changes the groups of hits already seen (paging relies on it)."""
    k = min(k, len(values))
    full = group(prints(values), T)
    head = group(prints(values[:k]), T)
    assert head.rep.tolist() == full.rep[:k].tolist()
    members_verify = full.hamming[~full.is_rep] <= T.far_distance
    assert members_verify.all()


def _needed(t: Thresholds, words: int, d: int) -> float:
    """The similarity a pair needs, its shorter side having ``words`` words, its SimHash ``d``
    bits apart: min_similarity from 200 words, mid_similarity (default 0.9 of it) at 50, in a
    straight line between, less close_relief (not below 0) from 100 to 149 words within
    close_distance bits;
    short_similarity (default 0.8 of it) up to 20, in a straight line to min_similarity below
    50; beyond max_distance bits and within far_distance, under 100 words, at least
    far_similarity too (far_distance: far_bits past max_distance)."""
    if t.max_distance < d <= t.far_distance and words < 100:
        return max(_needed(t, words, t.max_distance), t.far_similarity)
    short = t.min_similarity * 0.8 if t.short_similarity is None else t.short_similarity
    mid = t.min_similarity * 0.9 if t.mid_similarity is None else t.mid_similarity
    if words >= 200:
        return t.min_similarity
    if words >= 50:
        need = mid + (t.min_similarity - mid) * (words - 50) / 150
        close = 100 <= words < 150 and d <= t.close_distance
        return max(need - t.close_relief, 0.0) if close else need
    if words <= 20:
        return short
    return t.min_similarity - (t.min_similarity - short) * (50 - words) / 30


def _agree_literally(a: Prints, i: int, b: Prints, r: int) -> bool:
    """Whether the numbers, names and writing of a[i] and b[r] do not conflict (scalar
    comparisons, no shortcut)."""
    # the numbers: no cell with the same contexts (top 16 bits) holding other values (low 8)
    agree = not any(
        int(x) >> 8 == int(y) >> 8 and int(x) != int(y)
        for x, y in zip(a.numbers[i, :SKETCH_CELLS], b.numbers[r, :SKETCH_CELLS], strict=True)
    )

    # the names: the subject not disjoint, nor two names (subjects marked NAME_BIT)
    # sharing at most half of the smaller one's words or neither one's first word, nor two
    # such attributions (their words
    # whether a name's or a source's, their names' or their sources'), nor the mentions disjoint
    def apart(x: set[int], y: set[int]) -> bool:
        return bool(x and y) and 2 * len(x & y) <= min(len(x), len(y))

    for part in range(3):
        cols = slice(NAMES_AT + part * PER_PART, NAMES_AT + (part + 1) * PER_PART)
        xs = {int(v) for v in a.numbers[i, cols] if v}
        ys = {int(v) for v in b.numbers[r, cols] if v}
        x, y = {v & WORD_MASK for v in xs}, {v & WORD_MASK for v in ys}
        # a subject that is a name: marked on its first cell (at most SUBJECT_WORDS words)
        nx, ny = (bool(int(z.numbers[k, cols][0]) & NAME_BIT) for z, k in ((a, i), (b, r)))
        names = nx and ny
        if part == 0 and x and y and (not x & y or (apart(x, y) and names)):
            agree = False
        # two names, neither one's first word (its first cell) among the other's words
        fx, fy = (int(z.numbers[k, cols][0]) & WORD_MASK for z, k in ((a, i), (b, r)))
        if part == 0 and x and y and names and fx not in y and fy not in x:
            agree = False
        # a name against a longer subject: neither first word in the other, one word shared
        small = nx or ny
        if part == 0 and x and y and small and fx not in y and fy not in x and len(x & y) <= 1:
            agree = False
        if part == 1 and any(
            apart(*({v & WORD_MASK for v in z if v & SOURCE_BIT == kind} for z in (xs, ys)))
            for kind in (0, SOURCE_BIT)
        ):
            agree = False
        if (part == 1 and apart(x, y)) or (part == 2 and x and y and not x & y):
            agree = False
        # two credits' names' last words (a surname), neither among the other's words
        lx, ly = ({v & WORD_MASK for v in z if v & LAST_BIT} for z in (xs, ys))
        if part == 1 and lx and ly and not lx & y and not ly & x:
            agree = False
    # the writing: both known (Simplified, Traditional) and different
    wa, wb = int(a.numbers[i, WRITING_CELL]), int(b.numbers[r, WRITING_CELL])
    if wa and wb and wa != wb:
        agree = False
    return agree


def _verifies_literally(a: Prints, i: int, b: Prints, r: int, t: Thresholds) -> bool:
    """Whether a[i] and b[r] verify, by scalar comparisons (no shortcut)."""
    words = min(a.token_count[i], b.token_count[r])
    long_enough = words >= max(t.min_tokens, 1)
    both = a.present[i] and b.present[r]
    same_key = both and a.key[i] >= 0 and a.key[i] == b.key[r] and a.token_count[i] > 0
    d = bin(int(a.simhash[i]) ^ int(b.simhash[r])).count("1")
    s = float(similarity(a.minhash[i], b.minhash[r]))  # the second hash's estimate
    agree = _agree_literally(a, i, b, r)
    near = d <= t.max_distance or (d <= t.far_distance and words < 100)
    close = both and long_enough and near and s >= _needed(t, words, d) and agree
    return bool(same_key or close)


def _distance(a: Prints, i: int, b: Prints, r: int) -> int:
    return bin(int(a.simhash[i]) ^ int(b.simhash[r])).count("1")


def _similar_literally(a: Prints, i: int, b: Prints, r: int, t: Thresholds) -> float:
    """The pair's similarity as the rule reads it: the sketches' where both are long enough and
    within max_distance bits (far_distance under 100 words), else 1.0 for an equal exact key,
    else 0.0."""
    words = min(a.token_count[i], b.token_count[r])
    d = bin(int(a.simhash[i]) ^ int(b.simhash[r])).count("1")
    near = d <= t.max_distance or (d <= t.far_distance and words < 100)
    if a.present[i] and b.present[r] and words >= max(t.min_tokens, 1) and near:
        return float(similarity(a.minhash[i], b.minhash[r]))
    same_key = a.present[i] and b.present[r] and a.key[i] >= 0 and a.key[i] == b.key[r]
    return 1.0 if same_key and a.token_count[i] > 0 else 0.0


def _joins_literally(a: Prints, i: int, b: Prints, group: list[int], t: Thresholds) -> bool:
    """Whether a[i] joins the group ``group`` (rows of ``b``, its representative first): it
    verifies against the representative, and when that verdict is marginal (not an equal exact
    key, similarity within one standard error sqrt(s (1 - s) / m) of the threshold s) its
    similarities to the whole group exceed their thresholds on average; a hit under
    VOUCHED_BELOW words, or of VOUCHED_FROM or more, agrees with the group's first VOUCHERS
    members."""
    r = group[0]
    if not _verifies_literally(a, i, b, r, t):
        return False
    vouched = a.token_count[i] < VOUCHED_BELOW or a.token_count[i] >= VOUCHED_FROM
    if vouched and not all(_agree_literally(a, i, b, x) for x in group[1 : 1 + VOUCHERS]):
        return False  # the first members do not vouch for a short or a long hit
    same_key = a.key[i] >= 0 and a.key[i] == b.key[r] and a.token_count[i] > 0
    need = _needed(t, min(a.token_count[i], b.token_count[r]), _distance(a, i, b, r))
    m = a.minhash.shape[1]
    if same_key or _similar_literally(a, i, b, r, t) >= need + (need * (1 - need) / m) ** 0.5:
        return True
    margins = [
        _similar_literally(a, i, b, x, t)
        - _needed(t, min(a.token_count[i], b.token_count[x]), _distance(a, i, b, x))
        for x in group
    ]
    return sum(margins) / len(margins) >= 0


def _rule_literally(p: Prints, t: Thresholds) -> list[int]:
    """The rule as written, one hit at a time: join the best-ranked representative whose group
    takes it (:func:`_joins_literally`), else found a group (scalar comparisons, no shortcut)."""
    out: list[int] = []
    for i in range(len(p)):
        reps = [r for r in range(i) if out[r] == r]
        groups = [[x for x in range(i) if out[x] == r] for r in reps]
        out.append(next((g[0] for g in groups if _joins_literally(p, i, p, g, t)), i))
    return out


#: Random windows: (offset, centre, family, short) per hit (see :func:`_random_window`).
HITS = st.lists(
    st.tuples(st.integers(0, 63), st.integers(0, 3), st.integers(0, 2), st.booleans()),
    min_size=1,
    max_size=40,
)


def _random_window(hits: list[tuple[int, int, int, bool]], seed: int) -> Prints:
    """SimHash clusters around a few centres, three sketch families, repeated exact keys,
    short and unfingerprinted hits among them; in each family, number sketches that agree,
    conflict (a value sum changed) or differ without conflict (a context sum changed)."""
    rng = np.random.default_rng(seed)
    centres = [flip(BASE, range(c * 16, c * 16 + 7)) for c in range(4)]
    families = [rng.integers(0, 2**16, 64, dtype=np.uint16) for _ in range(3)]
    figures = [rng.integers(0, 2**24, CELLS, dtype=np.uint32) for _ in range(3)]
    for f in figures:  # name cells: names and longer subjects of a small vocabulary, or none
        f[NAMES_AT:] = 0
        for part in range(3):
            at = NAMES_AT + part * PER_PART
            many = rng.integers(0, PER_PART + 1)
            words = rng.choice(np.arange(1, 9, dtype=np.uint32), many, replace=False)
            if part == 1:  # a credit: its name's words (the last marked), its source's (marked)
                k = rng.integers(0, many + 1)
                words[k:] |= np.uint32(SOURCE_BIT)
                if k > 0 and rng.random() < 0.7:
                    words[k - 1] |= np.uint32(LAST_BIT)
            f[at : at + len(words)] = words
        f[WRITING_CELL] = rng.integers(0, 3)  # unknown, Simplified or Traditional
    simhashes, sketches, keys, tokens, present, numbers = [], [], [], [], [], []
    for offset, centre, family, short in hits:
        bits = [b % 64 for b in range(offset, offset + offset % 12)]
        simhashes.append(flip(centres[centre], bits))
        sketch = families[family].copy()
        changed = rng.choice(64, offset % 40, replace=False)  # two hits' changes overlap by chance
        sketch[changed] = rng.integers(0, 2**16, offset % 40, dtype=np.uint16)
        sketches.append(sketch)
        keys.append(family if offset % 5 == 0 else 1000 + len(keys))
        tokens.append(
            (5, 12, 20, 35, 49)[offset % 5] if short else (200, 50, 90, 130, 900)[offset % 5]
        )
        present.append(offset % 17 != 0)
        cells = figures[family].copy()
        k = offset % CELLS
        if offset % 4 == 1:  # another value in one cell: conflicts with the family's
            cells[k] = cells[k] & ~np.uint32(0xFF) | (cells[k] + np.uint32(1)) & np.uint32(0xFF)
        elif offset % 4 == 2:  # another context in one cell: no conflict
            cells[k] = (cells[k] + np.uint32(1 << 8)) & np.uint32(0xFFFFFF)
        numbers.append(cells)
    return prints(
        simhashes, sketches=sketches, keys=keys, tokens=tokens, present=present, numbers=numbers
    )


@settings(max_examples=200, deadline=None)
@given(
    HITS,
    st.integers(0, 30),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.sampled_from([0, 10**9]),
    st.integers(0, 40),
    st.sampled_from([1, 3, 1000]),
    st.sampled_from([1, 10**6]),
    st.sampled_from([1, 2, 8]),
)
def test_group_applies_the_rule_exactly(
    hits: list[tuple[int, int, int, bool]],
    d: int,
    s: float,
    batch_pairs: int,
    split: int,
    claim_reps: int,
    in_turn: int,
    ahead: int,
) -> None:
    """Against the literal rule on random windows: SimHash clusters around a few centres, three
    sketch families, repeated exact keys, short and unfingerprinted hits among them. Also when
    the window grows by a refill: its first ``split`` hits grouped before the rest."""
    p = _random_window(hits, seed=len(hits) * 31 + d)
    t = Thresholds(max_distance=d, min_similarity=s, min_tokens=10)
    # From candidate pairs: all at once, representative by representative, or the first
    # ``claim_reps`` of them one by one and the rest at once; or taking copies in turn (when
    # ``in_turn`` hits or more are grouped), the first ``claim_reps`` then by pairs; the turns'
    # pairs verified ``ahead`` representatives at a time.
    with (
        mock.patch.object(grouping, "_AHEAD", ahead),
        mock.patch.object(grouping, "_TURNS_AHEAD", ahead),
        mock.patch.object(grouping, "_BATCH_PAIRS", batch_pairs),
        mock.patch.object(grouping, "_PAIRS_PER_HIT", batch_pairs),
        mock.patch.object(grouping, "_CLAIM_REPS", claim_reps),
        mock.patch.object(grouping, "_IN_TURN_MIN_HITS", in_turn),
    ):
        whole = group(p, t)
        assert whole.rep.tolist() == _rule_literally(p, t)
        head = group(p.take(np.arange(min(split, len(p)))), t)
        extended = group(p, t, settled=head)
    assert extended.rep.tolist() == whole.rep.tolist()
    assert extended.hamming.tolist() == whole.hamming.tolist()
    assert extended.similarity.tolist() == whole.similarity.tolist()


#: Windows on the thresholds: one SimHash cluster, two sketch families, each hit 10-27 of its
#: family's 64 values away (similarities of about 0.4-0.7 to each other, around 0.5).
ON_THE_THRESHOLDS = st.lists(
    st.tuples(st.integers(10, 27), st.just(0), st.integers(0, 1), st.just(False)),
    min_size=2,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(ON_THE_THRESHOLDS, st.integers(0, 30))
def test_group_corroborates_marginal_verdicts_as_the_rule_says(
    hits: list[tuple[int, int, int, bool]], split: int
) -> None:
    """Windows where many verdicts are marginal: the groups are the literal rule's, also when
    the window grows by a refill."""
    p = _random_window(hits, seed=len(hits) * 13 + split)
    t = Thresholds(max_distance=24, min_similarity=0.5, min_tokens=10)
    whole = group(p, t)
    assert whole.rep.tolist() == _rule_literally(p, t)
    head = group(p.take(np.arange(min(split, len(p)))), t)
    assert group(p, t, settled=head).rep.tolist() == whole.rep.tolist()


@settings(max_examples=150, deadline=None)
@given(
    HITS.filter(lambda hits: len(hits) >= 2),
    st.integers(1, 39),
    st.integers(0, 30),
    st.sampled_from([0.0, 0.5, 0.9]),
)
def test_assign_credits_the_literal_best_ranked_representative(
    hits: list[tuple[int, int, int, bool]], k: int, d: int, s: float
) -> None:
    """Candidates beyond the window (the probe's) against representatives and their members:
    each is credited to the first representative whose group takes it, with that pair's
    distance and similarity."""
    p = _random_window(hits, seed=len(hits) * 17 + d)
    k = min(k, len(p) - 1)
    reps, cand = p.take(np.arange(k)), p.take(np.arange(k, len(p)))
    t = Thresholds(max_distance=d, min_similarity=s, min_tokens=10)
    owner = np.random.default_rng(k).integers(0, k, len(cand) // 2)
    members, cand = cand.take(np.arange(len(owner))), cand.take(np.arange(len(owner), len(cand)))
    best, ham, sim = assign(cand, reps, t, members, owner)
    both = Prints.concat([reps, members])
    groups = [[r, *(k + np.flatnonzero(owner == r)).tolist()] for r in range(k)]
    for c in range(len(cand)):
        want = next((g[0] for g in groups if _joins_literally(cand, c, both, g, t)), -1)
        assert best[c] == want
        if want >= 0:
            assert ham[c] == bin(int(cand.simhash[c]) ^ int(reps.simhash[want])).count("1")
            if cand.key[c] != reps.key[want]:  # verified by distance and similarity
                assert sim[c] == pytest.approx(
                    float(similarity(cand.minhash[c], reps.minhash[want]))
                )


@settings(max_examples=150, deadline=None)
@given(
    HITS,
    HITS,
    st.integers(0, 40),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.sampled_from([None, 0.3, 0.95]),
)
def test_the_pair_table_verifies_as_pair_by_pair(
    left: list[tuple[int, int, int, bool]],
    right: list[tuple[int, int, int, bool]],
    d: int,
    s: float,
    short: float | None,
) -> None:
    """``verified_pairs`` (the whole table at once: a first window, the probe's candidates)
    gives what ``verify`` gives pair by pair, in row-major order and bit for bit: within a
    window (earlier hits only, or every pair with itself too) and between two sets."""
    a = _random_window(left, seed=len(left) * 13 + d)
    b = _random_window(right, seed=len(right) * 7 + d + 1)
    t = Thresholds(max_distance=d, min_similarity=s, min_tokens=10, short_similarity=short)
    for x, y, earlier_only in ((a, a, True), (a, a, False), (a, b, False)):
        i, j = np.nonzero(np.ones((len(x), len(y)), dtype=bool))
        if earlier_only:
            i, j = i[j < i], j[j < i]
        ok, ham, sim = grouping.verify(x, i, y, j, t)
        got = grouping.verified_pairs(x, y, t, earlier_only=earlier_only)
        assert [v.tolist() for v in got] == [
            i[ok].tolist(),
            j[ok].tolist(),
            ham[ok].tolist(),
            sim[ok].tolist(),
        ]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from([np.uint8, np.uint16, np.uint32]),
    st.sampled_from([4, 8, 64, 128, 256]),
    st.integers(0, 40),
    st.floats(0.0, 1.0),
    st.integers(0, 2**32 - 1),
)
def test_the_rules_similarity_is_the_sketches(
    dtype: type, m: int, k: int, same: float, seed: int
) -> None:
    """The verification's MinHash estimate of many pairs at once is ``similarity``'s, bit for
    bit, at every sketch width (values of 8, 16 or 32 bits) and length."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (k, m)).astype(dtype)
    y = np.where(rng.random((k, m)) < same, x, rng.integers(0, 4, (k, m))).astype(dtype)
    want = np.asarray(similarity(x, y))
    got = grouping._similarity(x, y)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
