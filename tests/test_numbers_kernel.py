"""The number sketch's compiled kernel (``indexer.fingerprints.numbers_kernel``) gives what the
numpy reference (``numbers._sketches_of_buf_numpy``) defines: the same cells and the same frame
stamps, for text of every script with numbers, dates, URLs, units, line breaks and frames, in
batches of any size, with and without the short documents' rule."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import numbers
from indexer.fingerprints.numbers import number_sketches
from indexer.text import fold

PIECES = [
    "128", "2", "2026", "1999", "03", "11", "3.14", "$1,299.99", "2026-03-18", "10:55", "1/2",
    "18.03.2026", "v2.1", "x86", "mp3", "addr2line", "asn1_der", "kid3", "g991b", "0x1f", "_7",
    "gb", "GB", "kb", "kbx", "mhz", "kbps", "px", "mb_", "мгц", "Гб", "кб", "кбит", "мм",
    "version", "release", "the", "a", "October", "oct", "sept", "марта", "märz", "décembre",
    "2026年6月13日", "2026년 6월 13일", "年", "版本2", "第3章", "٣", "²", "①", "é", "naïve",
    "ελλάδα", "中文字", "ひらがな", "한국어", "ไทย", "עברית", "العربية", "देवनागरी", "😀",
    "-", "—", "–", ":", "|", "«", "»", "“", "”", "…", "、", "。", "「", "」", "¿", "\xa0", "\u3000",
    "https://example.org/a/1.2", "http://x.y/posix_1003.1e", "(https://q.r/v2/3)", "ftp://",
    "://", "x" * 40, "a" * 49, "Printed from https://host.example/page on", "Updated",
    "\x00", "\x01", "\ud800", "two", "Three", "one-year", "twenty", "eins", "fünf", "zwölf",
    "dreißig", "пять", "Двух", "семью", "twos", "one", "May", "«три»", "tenth", "koi8-r",
    "Python3", "utf8", "ab1", "abc", "_abc", "١٥٠", "۱۲۸gb", "२०२६", "৪৯", "๕๐", "၁၀", "𝟙𝟚",
]  # fmt: skip
SEPARATORS = [
    " ", "  ", "    ", "\n", "\n\n", " \n ", ", ", "-", "/", "\t", "", " | ", "\r\n", ",", "; ",
    " = ", "=", " ,", "\x02 ",
]  # fmt: skip
TEXT = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=50).map(
    lambda parts: "".join(w + s for w, s in parts)
)
TEXTS = st.lists(st.one_of(TEXT, st.text(max_size=60)), min_size=1, max_size=9)


def test_the_kernel_is_what_these_tests_compare() -> None:
    assert numbers.warm_kernel()
    assert numbers._kernel() is not None


def _both(
    words: Sequence[bytes], sides: np.ndarray | None
) -> tuple[tuple[list[list[int]], list[list[int]]], tuple[list[list[int]], list[list[int]]]]:
    """(kernel, reference): the cells and the stamps of the texts' bytes ``words``."""
    ends = np.cumsum([len(w) + 1 for w in words])
    buf = b"\0".join(words)
    got: list[list[int]] = [[] for _ in words]
    want: list[list[int]] = [[] for _ in words]
    numbers.warm_kernel()  # the kernel, not the numpy path, answers _sketches_of_buf
    kernel = numbers._sketches_of_buf(buf, ends.copy(), got, sides)
    reference = numbers._sketches_of_buf_numpy(buf, ends.copy(), want, sides)
    return (kernel.tolist(), got), (reference.tolist(), want)


def _texts_agree(docs: list[str], pick: int) -> None:
    """Kernel and reference agree on the texts, with no short document and with those
    ``pick``'s bits mark."""
    words = [numbers._bytes_of(t) for t in docs]
    sides = np.array([pick >> i & 1 for i in range(len(docs))], dtype=bool)
    for s in (None, sides):
        kernel, reference = _both(words, s)
        assert kernel == reference


@settings(max_examples=600, deadline=None)
@given(TEXTS, st.integers(0, 2**9 - 1))
def test_kernel_equals_the_reference(docs: list[str], pick: int) -> None:
    _texts_agree(docs, pick)


#: Pages of many lines: which of them are its edges decides whether a dated line is the frame's.
PAGES = st.lists(st.lists(TEXT, min_size=6, max_size=24).map("\n".join), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(PAGES, st.integers(0, 15))
def test_kernel_equals_the_reference_on_pages_of_many_lines(docs: list[str], pick: int) -> None:
    _texts_agree(docs, pick)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=80), min_size=1, max_size=6))
def test_kernel_equals_the_reference_on_any_bytes(words: list[bytes]) -> None:
    """Bytes no text gives (invalid UTF-8, a ``\\0`` inside a text, control bytes) as well."""
    sides = np.array([i % 2 == 1 for i in range(len(words))], dtype=bool)
    for s in (None, sides):
        kernel, reference = _both(words, s)
        assert kernel == reference


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_number_sketches_and_stamps_through_either_path(docs: list[str]) -> None:
    units = np.array([len(t.split()) for t in docs], dtype=np.int64)
    numbers.warm_kernel()
    got = number_sketches(docs, units=units), numbers.frame_stamp_lines(docs)
    kernel = numbers._sketches_of_buf
    numbers._sketches_of_buf = numbers._sketches_of_buf_numpy  # type: ignore[assignment]
    try:
        want = number_sketches(docs, units=units), numbers.frame_stamp_lines(docs)
    finally:
        numbers._sketches_of_buf = kernel  # type: ignore[assignment]
    assert got[0].tolist() == want[0].tolist()
    assert got[1] == want[1]


def test_edges() -> None:
    for words in (
        [b""],
        [b"", b""],
        [b"1"],
        [b"1 gb"],
        [b"9 "],
        [b"\xe2\x80"],
        [b"1\xe2\x80"],
        [b"2026 03 18", b"", b"x" * 60 + b"\x0111 march 2026\x01" + b"y" * 60],
        [b"\xc2\xa05 \xe2\x80\x94 6 \xe3\x80\x817"],
    ):
        for s in (None, np.ones(len(words), dtype=bool)):
            kernel, reference = _both(words, s)
            assert kernel == reference


URL_PIECES = [
    "http://x.y/posix_1003.1e", "https://Example.ORG/a/1.2?q=7&r=x_9", "(https://q.r/v2/3)",
    "ftp://", "://", "a://1", "x://", "1a://b", "+://c", "hTTp://H/2b", "://a://b/3",
    "mailto:x@y.z", "http://例子.测试/1", "word", "Word", "abcdefghijklmnopqrstuvwx", "a1b2",
    "12", "v2.1", "_", "-", "(", "é", "“", "2026年6月13日", "марта",
]  # fmt: skip
URL_SEPARATORS = [" ", "  ", "\n", "\n\n", "\t", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "", "\x00"]
URL_TEXT = st.lists(
    st.tuples(st.sampled_from(URL_PIECES), st.sampled_from(URL_SEPARATORS)), max_size=40
).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(URL_TEXT, TEXT, st.text(max_size=40)), max_size=9), st.booleans())
def test_joined_bytes_of_the_kernel_are_the_definitions(docs: list[str], folded: bool) -> None:
    """URLs of ASCII texts rewritten in the kernel as ``_urls`` does (one line or several,
    lines of content or not, numbers in the URL or none), the bytes translated, a text holding
    ``\\0`` itself, texts outside ASCII."""
    assert numbers.warm_kernel()
    texts = [fold(t) for t in docs] if folded else docs
    buf, ends = numbers._joined_bytes(texts, folded)
    want_buf, want_ends = numbers._joined_bytes_python(texts, folded)
    assert buf == want_buf
    assert ends.tolist() == want_ends.tolist()


def test_joined_bytes_at_the_line_weight() -> None:
    """A line weighing exactly ``_MIN_LINE`` is content (the URL's numbers kept), one letter
    less is not (in a document with a line of content; a document of short lines only is all
    content); words holding a digit weigh nothing; the words before the URL and after it; a URL
    that ends its line has no closing ``url``."""
    assert numbers.warm_kernel()
    w24 = "abcdefghijklmnopqrstuvwx"
    texts = [
        f"{w24} {w24} http://a.b/v1/2_3\nnext",
        f"{w24} {w24[1:]} http://a.b/v1/2\n{w24} {w24}",
        f"{w24} x{w24}9 (http://a.b/v1/2) {w24}\nnext",
        f"http://a.b/1 {w24} {w24}\n",
        f"{w24}{w24}://x/1 y\nz",
        f"{w24} {w24[1:]} http://a.b/v1/2\nnext",
    ]
    for folded in (False, True):
        for batch in [[t] for t in texts] + [texts]:
            got, ends = numbers._joined_bytes(batch, folded)
            want, want_ends = numbers._joined_bytes_python(batch, folded)
            assert got == want
            assert ends.tolist() == want_ends.tolist()
    lines = numbers._joined_bytes(texts, False)[0].split(b"\0")
    # a URL that ends its line has no closing word: a copy cut inside it ends the number there
    assert b" url v1 " in lines[0] and b" url v1 url " not in lines[0]
    assert b" url " in lines[1] and b"v1" not in lines[1]
    assert b" url v1 2 url " in lines[2]  # words after it on its line: closed
    assert b" url v1 2 " in lines[5] and b"v1 2 url" not in lines[5]  # short lines: content
