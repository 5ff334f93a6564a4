"""The compiled tokeniser (``indexer.fingerprints.tokens_kernel``) gives what the Python path
defines: the same tokens, token hashes, weights, samples, counts, exact keys and line numbers,
for text of every script (dense scripts, marks, URLs, digits, line breaks, empty texts), in
batches of any size and over a vocabulary that starts afresh or grows across batches; the
"blake2b" hash of new tokens is hashlib's."""

from __future__ import annotations

import hashlib
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import text
from indexer.fingerprints import compute, tokens_kernel
from indexer.fingerprints.features import DIGITS, SAMPLE, WEIGHT

NAMES = ("blake2b", "xxh3", "minhash", WEIGHT, SAMPLE, DIGITS)

PIECES = st.sampled_from(
    [
        *"abc XYZ09.,;_-'\n\t\r\x00\x01\x0b\x0c\x1c",
        *"éÉßİﬁ①Ⅻ٣\u00ad\u0301\u093f\u0e31\u2028\u3000\xa0«»。、！（）",
        *"жЖяकमि漢字中文水ひらカタ한국ㄱᄀกขไทยລາວខ្មែរမြန်",
        "\ud800",
        "😀",
        "word",
        "  ",
        "http://x.y/z1 ",
        "https://例子.测试/路径?q=1 ",
        "ftp://ÉX_a.b\n",
        "中文字符",
        "ภาษา",
        " \n \n",
        "水 字",
        "水\u0301",
        "x\u0301y",
    ]
)
TEXT = st.lists(PIECES, max_size=60).map("".join)
ANY_TEXT = st.text(max_size=80)


def _reference(texts: list[str], lines: bool) -> compute.Tokens:
    kernel, arrow = compute._kernel, compute._arrow
    compute._kernel = compute._arrow = None
    try:
        return compute.tokenise(texts, NAMES, lines)
    finally:
        compute._kernel, compute._arrow = kernel, arrow


def _compiled(texts: list[str], lines: bool) -> compute.Tokens:
    kernel = compute._kernel
    try:
        assert compute.enable_kernel()
        return compute.tokenise(texts, NAMES, lines)
    finally:
        compute._kernel = kernel


def _assert_same(got: compute.Tokens, want: compute.Tokens) -> None:
    assert got.keys == want.keys
    assert np.array_equal(got.lengths, want.lengths)
    for a, b in zip(got.hashes, want.hashes, strict=True):
        assert a.dtype == np.uint64
        assert np.array_equal(a, b)
    assert np.array_equal(got.line_no, want.line_no)
    assert got.folded == want.folded


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TEXT, ANY_TEXT), min_size=1, max_size=24), st.booleans())
def test_the_kernel_tokenises_as_the_python_path(texts: list[str], lines: bool) -> None:
    _assert_same(_compiled(texts, lines), _reference(texts, lines))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(TEXT, min_size=1, max_size=8), min_size=1, max_size=6))
def test_ids_of_a_fresh_or_a_grown_vocabulary_give_the_same_values(
    batches: list[list[str]],
) -> None:
    """Batch after batch (tokens met again, the tables grown and rehashed), and with the
    vocabulary started afresh, the values are those of the definition."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(tokens_kernel, "_vocab", tokens_kernel.Vocabulary(size=4))
        for texts in batches:
            _assert_same(_compiled(texts, True), _reference(texts, True))


def test_long_pages_of_every_script() -> None:
    """Long texts (the numpy paths of the reference: per code point, bigrams by numpy) of
    every script, each character of the Basic Multilingual Plane that is a letter, a digit
    or a mark, mixed with punctuation and line breaks."""
    rng = np.random.default_rng(18)
    chars = [
        chr(c)
        for c in range(0x20, 0x10000)
        if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c))[0] in "LMNP"
    ]
    picks = rng.integers(0, len(chars), size=(40, 2000))
    texts = []
    for row in picks:
        page = "".join(chars[i] for i in row.tolist())
        cut = rng.integers(0, len(page), size=40)
        for at in sorted(cut.tolist(), reverse=True):
            page = page[:at] + rng.choice([" ", "\n", ". ", "http://a.b/"]) + page[at:]
        texts.append(page)
    texts += ["", " ", "\n", "水" * 3000, "ab " * 1000]
    for lines in (True, False):
        _assert_same(_compiled(texts, lines), _reference(texts, lines))


def test_the_scan_learns_code_points_it_has_not_met() -> None:
    """Characters whose kind the process does not know yet (more than the scan records in
    one go) are learnt and the batch scanned again."""
    fresh = [chr(c) for c in range(0xA000, 0xA000 + 3 * tokens_kernel._UNKNOWN_ROOM)]
    texts = ["".join(fresh[i : i + 50]) + " x" for i in range(0, len(fresh), 50)]
    with pytest.MonkeyPatch.context() as m:
        table = np.full(0x110000, 255, dtype=np.uint8)  # nothing known yet
        m.setattr(text, "_kind_table", lambda: table)
        _assert_same(_compiled(texts, True), _reference(texts, True))


URL_PIECES = st.sampled_from(
    [*"aZ09+.-_:/ \n\t\x0b\x1c\x1f!?#", "://", "http", "http://", "a://", "1abc://x", "-://"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(URL_PIECES, max_size=30).map("".join), min_size=1, max_size=8))
def test_urls_of_ascii_texts_are_found_as_the_pattern_finds_them(texts: list[str]) -> None:
    """ASCII texts' URLs are found by the kernel itself: every placement of schemes,
    separators, whitespace (``\\x1c``-``\\x1f`` too) and ``://`` gives the tokens of
    :func:`indexer.text.sub_urls`."""
    for lines in (True, False):
        _assert_same(_compiled(texts, lines), _reference(texts, lines))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=20),
            st.integers(0, 400).map(lambda n: (bytes(range(256)) * 2)[:n]),
            st.binary(min_size=120, max_size=400),  # one block and more (128 bytes each)
        ),
        max_size=12,
    )
)
def test_the_blake2b_of_new_tokens_is_hashlibs(tokens: list[bytes]) -> None:
    """The "blake2b" token hash read from the vocabulary's arena (8-byte digest, read
    big-endian) is hashlib's, for tokens of any length: empty, within a block, at and across
    block ends."""
    arena = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    starts = np.r_[0, np.cumsum([len(t) for t in tokens])].astype(np.int64)
    got = np.empty(len(tokens), dtype=np.uint64)
    tokens_kernel._blake2b_8(
        arena, starts, 0, len(tokens), tokens_kernel._B2_IV, tokens_kernel._B2_SIGMA, got
    )
    want = [int.from_bytes(hashlib.blake2b(t, digest_size=8).digest(), "big") for t in tokens]
    assert got.tolist() == want
