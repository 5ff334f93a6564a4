"""The grouping rule's compiled pass (``indexer.grouping_kernel``) gives what the numpy path of
``indexer.grouping`` gives, bit for bit: the same representatives, distances and similarities,
for first windows, windows grown by a refill and the probe's candidates; and both follow the
literal rule (``tests.test_grouping``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import grouping
from indexer.fingerprints.names import LAST_BIT, NAME_BIT, SOURCE_BIT, SUBJECT_WORDS
from indexer.grouping import Grouping, Prints, Thresholds, assign, group
from tests.test_grouping import (
    HITS,
    ON_THE_THRESHOLDS,
    _random_window,
    _rule_literally,
    _verifies_literally,
)

R = TypeVar("R")


@pytest.fixture
def numpy_only() -> Iterator[None]:
    """The numpy path for the test, whatever the process had before."""
    before = grouping._compiled
    grouping._compiled = None
    yield
    grouping._compiled = before


def _both(fn: Callable[..., R], *args: object) -> tuple[R, R]:
    """``fn(*args)`` on the numpy path, then on the compiled one."""
    before = grouping._compiled
    try:
        grouping._compiled = None
        want = fn(*args)
        assert grouping.use_compiled()
        got = fn(*args)
    finally:
        grouping._compiled = before
    return want, got


def _compiled_pass_takes(p: Prints, t: Thresholds) -> bool:
    """Whether the compiled pass groups ``p`` itself (no fall-back to numpy)."""
    before = grouping._compiled
    try:
        assert grouping.use_compiled()
        n = len(p)
        rep, ham, sim = np.arange(n), np.zeros(n, np.int64), np.ones(n)
        return grouping._first_verified(p, p, t, 0, rep, ham, sim)
    finally:
        grouping._compiled = before


def _same(a: Grouping, b: Grouping) -> None:
    assert a.rep.tolist() == b.rep.tolist()
    assert a.hamming.tolist() == b.hamming.tolist()
    assert a.similarity.tolist() == b.similarity.tolist()  # bit for bit


def _as(p: Prints, dtype: type[np.unsignedinteger]) -> Prints:
    """``p`` with its sketches of another value type (values kept below its range)."""
    top = np.iinfo(dtype).max
    minhash = (p.minhash.astype(np.uint64) % (top + 1)).astype(dtype)
    return Prints(p.simhash, minhash, p.key, p.token_count, p.present, p.numbers)


@settings(max_examples=200, deadline=None)
@given(
    HITS,
    st.integers(0, 30),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.integers(0, 40),
    st.sampled_from([np.uint8, np.uint16, np.uint32]),
)
def test_the_compiled_pass_groups_as_the_numpy_path(
    hits: list[tuple[int, int, int, bool]],
    d: int,
    s: float,
    split: int,
    dtype: type[np.unsignedinteger],
) -> None:
    """Random windows (clusters, sketch families, repeated keys, short and unfingerprinted
    hits, numbers and names that agree or conflict), whole and grown from their first
    ``split`` hits, with each value type of a sketch."""
    p = _as(_random_window(hits, seed=len(hits) * 29 + d), dtype)
    t = Thresholds(max_distance=d, min_similarity=s, min_tokens=10)
    want, got = _both(group, p, t)
    _same(want, got)
    assert got.rep.tolist() == _rule_literally(p, t)
    assert _compiled_pass_takes(p, t)
    head = group(p.take(np.arange(min(split, len(p)))), t)
    want, got = _both(lambda: group(p, t, settled=head))
    _same(want, got)


@settings(max_examples=150, deadline=None)
@given(ON_THE_THRESHOLDS, st.integers(0, 30))
def test_the_compiled_pass_corroborates_as_the_numpy_path(
    hits: list[tuple[int, int, int, bool]], split: int
) -> None:
    """Windows where many verdicts are marginal, whole and grown by a refill."""
    p = _random_window(hits, seed=len(hits) * 11 + split)
    t = Thresholds(max_distance=24, min_similarity=0.5, min_tokens=10)
    want, got = _both(group, p, t)
    _same(want, got)
    assert got.rep.tolist() == _rule_literally(p, t)
    head = group(p.take(np.arange(min(split, len(p)))), t)
    want, got = _both(lambda: group(p, t, settled=head))
    _same(want, got)


@settings(max_examples=150, deadline=None)
@given(ON_THE_THRESHOLDS, st.integers(1, 29))
def test_the_compiled_pass_credits_the_probe_as_the_numpy_path(
    hits: list[tuple[int, int, int, bool]], k: int
) -> None:
    """The probe's candidates on the thresholds, against a window's groups (representatives
    and members): credited alike, distances and similarities too."""
    p = _random_window(hits, seed=len(hits) * 7 + k)
    k = min(k, len(p) - 1)
    t = Thresholds(max_distance=24, min_similarity=0.5, min_tokens=10)
    g = group(p.take(np.arange(k)), t)
    reps = g.representatives
    rows = np.flatnonzero(~g.is_rep)
    args = (p.take(np.arange(k, len(p))), p.take(reps), t, p.take(rows))
    want, got = _both(assign, *args, np.searchsorted(reps, g.rep[rows]))
    for w, x in zip(want, got, strict=True):
        assert w.tolist() == x.tolist()


@settings(max_examples=150, deadline=None)
@given(
    HITS.filter(lambda hits: len(hits) >= 2),
    st.integers(1, 39),
    st.integers(0, 30),
    st.sampled_from([0.0, 0.5, 0.9]),
)
def test_the_compiled_pass_assigns_as_the_numpy_path(
    hits: list[tuple[int, int, int, bool]], k: int, d: int, s: float
) -> None:
    """The probe's candidates against the representatives: the same best-ranked one each."""
    p = _random_window(hits, seed=len(hits) * 13 + d)
    k = min(k, len(p) - 1)
    reps, cand = p.take(np.arange(k)), p.take(np.arange(k, len(p)))
    t = Thresholds(max_distance=d, min_similarity=s, min_tokens=10)
    want, got = _both(assign, cand, reps, t)
    for w, g in zip(want, got, strict=True):
        assert w.tolist() == g.tolist()
    for c, r in enumerate(got[0].tolist()):
        first = next((j for j in range(k) if _verifies_literally(cand, c, reps, j, t)), -1)
        assert r == first


def test_arrays_as_decoding_leaves_them_are_taken_as_they_are() -> None:
    """Read-only arrays and number sketches that are a slice of a wider table (as the packed
    values' decode leaves them) group as copies of them do."""
    p = _random_window([(o, o % 2, o % 3, False) for o in range(0, 60, 3)], seed=5)
    wide = np.zeros((len(p), p.numbers.shape[1] + 5), dtype=np.uint32)
    wide[:, : p.numbers.shape[1]] = p.numbers
    sliced = Prints(p.simhash, p.minhash, p.key, p.token_count, p.present, wide[:, :-5])
    for a in (sliced.simhash, sliced.minhash, sliced.key, sliced.token_count, sliced.present):
        a.flags.writeable = False
    t = Thresholds(max_distance=20, min_similarity=0.5, min_tokens=10)
    want, got = _both(group, sliced, t)
    _same(want, got)
    assert _compiled_pass_takes(sliced, t)
    assert len(set(got.rep.tolist())) < len(p)  # the window holds copies


def test_another_value_type_than_compiled_falls_back_to_numpy(numpy_only: None) -> None:
    """Sketches of a type the pass is not compiled for are grouped by the numpy path."""
    p = _random_window([(o, 0, 0, False) for o in range(0, 40, 4)], seed=3)
    odd = Prints(p.simhash, p.minhash.astype(np.int16), p.key, p.token_count, p.present, p.numbers)
    t = Thresholds(max_distance=20, min_similarity=0.5, min_tokens=10)
    want = group(odd, t)
    assert not _compiled_pass_takes(odd, t)
    assert grouping.use_compiled()
    _same(want, group(odd, t))


def test_the_proxy_loads_the_compiled_pass_unless_told_not_to(es_url: str) -> None:
    """``COLLAPSE_COMPILED`` (on by default) makes the app's start-up load the pass."""
    from collapse.app import create_app
    from collapse.settings import Settings

    async def started(on: bool) -> bool:
        app = create_app(Settings(es_url=[es_url], collapse_compiled=on))
        async with app.router.lifespan_context(app):
            return grouping._compiled is not None

    before = grouping._compiled
    try:
        for on in (False, True):
            grouping._compiled = None
            assert asyncio.run(started(on)) is on
    finally:
        grouping._compiled = before


_S = SOURCE_BIT
_L = LAST_BIT


@pytest.mark.parametrize(
    ("part", "subjects", "reps"),
    [
        (0, [[1, 2], [3, 4, 2], [1, 2, 9]], [0, 1, 0]),  # names sharing half: another name
        (0, [[1, 5, 2], [3, 4, 5, 2], [7, 1, 5, 2]], [0, 1, 0]),  # neither first word shared
        (0, [[1, 2, 3, 4, 5, 6], [3, 4, 7, 8], [9, 10, 11, 12]], [0, 0, 2]),  # longer: share one
        # a name against a longer subject: one word shared and no first word (apart), or two
        (0, [[1, 2, 3, 4, 5, 6], [7, 8, 5], [7, 3, 4, 9]], [0, 1, 0]),
        (2, [[1], [2, 1], [3], [3, 4, 5, 6]], [0, 0, 2, 2]),  # mentions: apart sharing none
        # credits: a name, then a source's words (marked); the same author with another work,
        # another author with the same work, the name alone, a source read as the name
        (
            1,
            [
                [1, 2, 3 | _S, 4 | _S, 5 | _S],
                [1, 2, 6 | _S, 7 | _S, 5 | _S],
                [8, 9, 3 | _S, 4 | _S, 5 | _S],
                [1, 2],
                [1, 2, 3, 4, 5],
                [3 | _S, 4 | _S],
            ],
            [0, 1, 2, 0, 0, 0],
        ),
        # names' last words (marked): another surname; the same; one among the other's words
        (
            1,
            [
                [1, 2, 3, 4, 5 | _L],
                [1, 2, 3, 4, 6 | _L],
                [1, 2, 3, 4, 5 | _L],
                [1, 2, 3 | _L, 4, 5],
            ],
            [0, 1, 0, 0],
        ),
    ],
    ids=[
        "names",
        "first words",
        "longer subjects",
        "a name and a longer subject",
        "mentions",
        "credits",
        "last words",
    ],
)
def test_subjects_conflict_alike_in_both_passes(
    part: int, subjects: list[list[int]], reps: list[int]
) -> None:
    """Copies alike in all but their subjects' words: two names (at most SUBJECT_WORDS words)
    sharing at most half of them stay apart, longer subjects only sharing none, a name and a
    longer subject sharing one word at most and neither first word; mentions
    (part 2) sharing none stay apart; credits (part 1) whose names, or sources, share at most
    half stay apart; the compiled pass and the numpy path agree. (Long enough that only
    their representatives judge them: ``test_members_vouch_for_short_hits_in_both_passes``.)"""
    one = _random_window([(0, 0, 0, False)], seed=1)
    n = len(subjects)
    numbers = np.zeros((n, one.numbers.shape[1]), dtype=np.uint32)
    at = grouping.NAMES_AT + part * grouping.PER_PART
    for row, words in zip(numbers, subjects, strict=True):
        row[at : at + len(words)] = words
        if part == 0 and len(words) <= SUBJECT_WORDS:  # a name: marked on its first cell
            row[at] |= NAME_BIT
    p = Prints(
        np.repeat(one.simhash, n),
        np.repeat(one.minhash, n, axis=0),
        np.arange(n, dtype=np.int64) + 100,
        np.full(n, grouping.VOUCHED_BELOW, dtype=one.token_count.dtype),  # not vouched for
        np.ones(n, dtype=bool),
        numbers,
    )
    want, got = _both(group, p, Thresholds(max_distance=3, min_similarity=0.5, min_tokens=10))
    assert want.rep.tolist() == got.rep.tolist() == reps


@pytest.mark.parametrize(
    "words", [20, grouping.VOUCHED_BELOW, grouping.VOUCHED_FROM - 1, grouping.VOUCHED_FROM, 800]
)
def test_members_vouch_for_short_and_long_hits_in_both_passes(words: int) -> None:
    """A representative whose numbers cannot tell (a copy in capitals, a cut without the
    price) takes the original; a short or a long near-miss whose number changed then stays
    out, since the original, its member, conflicts with it, in a window as among the probe's
    candidates. One in between (whose names are read, where vouching measured worse) is judged
    by its representative alone."""
    one = _random_window([(0, 0, 0, False)], seed=1)
    numbers = np.zeros((3, one.numbers.shape[1]), dtype=np.uint32)
    numbers[1, 5] = numbers[2, 5] = 0x1234 << 8
    numbers[1, 5] |= 0x11  # the original's price ...
    numbers[2, 5] |= 0x22  # ... and the near-miss's, in the same context
    p = Prints(
        np.repeat(one.simhash, 3),
        np.repeat(one.minhash, 3, axis=0),
        np.arange(3, dtype=np.int64) + 100,
        np.full(3, words, dtype=one.token_count.dtype),
        np.ones(3, dtype=bool),
        numbers,
    )
    t = Thresholds(max_distance=3, min_similarity=0.5, min_tokens=10)
    want, got = _both(group, p, t)
    short = bool(grouping.vouched_length(np.array([words]))[0])
    assert want.rep.tolist() == got.rep.tolist() == ([0, 0, 2] if short else [0, 0, 0])
    reps, members, cand = p.take(np.array([0])), p.take(np.array([1])), p.take(np.array([2]))
    owner = np.zeros(1, dtype=np.int64)
    (best, _, _), (best_c, _, _) = _both(assign, cand, reps, t, members, owner)
    assert best.tolist() == best_c.tolist() == ([-1] if short else [0])
