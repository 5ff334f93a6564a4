"""Tokenisation's fast paths equal the definitions they replace: the batch split by a byte
table (tokens, counts, exact keys, line numbers equal those of the Python path's ``split``),
tokenising without line numbers (same tokens and keys), and the short documents' words placed
directly instead of by a stable sort."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import compute, features
from indexer.fingerprints.features import SAMPLE, WEIGHT, Segments, shingle_hashes, with_words

NAMES = ("xxh3", "minhash", WEIGHT, SAMPLE)

# characters that exercise every class: separators of both kinds, line breaks, the bytes the
# tokeniser uses itself, dense scripts, marks, URLs, whitespace outside ASCII
PIECES = st.sampled_from(
    [
        *"abc XYZ.,;\n\t\x00\x01é水ß\u00adİﬁ①_-'\r\x0b\x0c\x1c\u2028\u3000",
        "\ud800",
        "word",
        "the",
        "  ",
        "http://x.y/z1 ",
        "中文字符",
        "ภาษา",
        " \n \n",
    ]
)
TEXT = st.lists(PIECES, max_size=60).map("".join)


def with_words_sorted(
    shingles: np.ndarray,
    counts: np.ndarray,
    words: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``with_words`` as it was written: every token compared, merged by a stable sort."""
    from indexer.fingerprints.features import word_share

    share = word_share(units)
    if not (share > 0).any():
        return shingles, counts
    doc = np.repeat(np.arange(len(lengths)), lengths)
    take = (sample >> np.uint64(11)).astype(np.float64) < share[doc] * float(1 << 53)
    added = np.bincount(doc[take], minlength=len(lengths))
    sdoc = np.repeat(np.arange(len(counts)), counts)
    order = np.argsort(np.concatenate([sdoc, doc[take]]), kind="stable")
    return np.concatenate([shingles, words[take]])[order], counts + added


def _python_path(texts: list[str], lines: bool) -> compute.Tokens:
    was = compute._arrow
    compute._arrow = None
    try:
        return compute.tokenise(texts, NAMES, lines)
    finally:
        compute._arrow = was


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, min_size=16, max_size=40), st.booleans())
def test_batch_split_equals_the_python_path(texts: list[str], lines: bool) -> None:
    pytest.importorskip("pyarrow")
    want = _python_path(texts, lines)
    was = compute._arrow
    try:
        assert compute.enable_arrow()
        got = compute.tokenise(texts, NAMES, lines)
    finally:
        compute._arrow = was
    assert got.keys == want.keys
    assert np.array_equal(got.lengths, want.lengths)
    for a, b in zip(got.hashes, want.hashes, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(got.line_no, want.line_no)


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_without_lines_the_tokens_and_keys_are_the_same(texts: list[str]) -> None:
    with_lines = _python_path(texts, True)
    without = _python_path(texts, False)
    assert without.keys == with_lines.keys
    assert np.array_equal(without.lengths, with_lines.lengths)
    for a, b in zip(without.hashes, with_lines.hashes, strict=True):
        assert np.array_equal(a, b)
    assert len(without.line_no) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 70), min_size=1, max_size=30),
    st.integers(1, 4),
    st.integers(0, 2**32),
)
def test_words_placed_directly_equal_the_stable_sort(lengths: list[int], k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = np.array(lengths, dtype=np.int64)
    tokens = rng.integers(0, 2**64 - 1, size=int(n.sum()), dtype=np.uint64)
    sample = rng.integers(0, 2**64 - 1, size=len(tokens), dtype=np.uint64)
    units = np.maximum(n + rng.integers(-5, 5, size=len(n)), 0)
    shingles, counts = shingle_hashes(tokens, Segments(n), k)
    got = with_words(shingles, counts, tokens, sample, n, units)
    want = with_words_sorted(shingles, counts, tokens, sample, n, units)
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1], want[1])


TOKEN = st.one_of(
    st.binary(min_size=1, max_size=12),
    st.text(min_size=1, max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TOKEN, max_size=40), st.sampled_from(sorted(features._PER_TOKEN)))
def test_new_tokens_hashed_at_once_equal_one_call_per_token(tokens: list[bytes], name: str) -> None:
    want = np.fromiter(map(features._PER_TOKEN[name], tokens), dtype=np.uint64, count=len(tokens))
    got = features._per_token(name, tokens)
    assert got.dtype == np.uint64
    assert np.array_equal(got, want)
    assert np.array_equal(
        features._per_token(name, [*tokens, b""]),
        np.r_[want, features._PER_TOKEN[name](b"")].astype(np.uint64),
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(TOKEN, max_size=30), max_size=5))
def test_vocabulary_ids_in_one_call_equal_one_lookup_per_token(batches: list[list[bytes]]) -> None:
    """Ids looked up for a batch at once are those of one lookup per token, new tokens
    numbered in order of first sight."""
    at_once, one_by_one = features._Vocabulary(), features._Vocabulary()
    for tokens in batches:
        want = [one_by_one[t] for t in tokens]
        assert at_once.ids(tokens).tolist() == want
    assert at_once.tokens == one_by_one.tokens
