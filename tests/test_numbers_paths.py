"""The number sketch's and the name cells' fast paths equal the plain definitions they replace:
spaced units found from the digits (not a regex over every byte), a line's weight summed until
it reaches the threshold, frame lines weighed for the documents holding a stamp only, a title's
parts compared with the first words of each line only."""

from __future__ import annotations

import re
import unicodedata

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from indexer.fingerprints import names, numbers
from indexer.fingerprints.numbers import NUMBER_CELLS, SIDES_BELOW, number_sketches
from indexer.text import normalize, sub_urls, top_code_points

# the definitions the fast paths replace, as they were written
SPACED_UNIT = re.compile(
    b"([0-9]) {1,%d}(" % numbers._UNIT_SPACES
    + b"|".join(u.encode() for u in numbers._UNITS)
    + b")(?![0-9a-z_\x80-\xff])"
)


def line_weight(line: str) -> float:
    return sum(
        1 if c < "\x80" else len(c.encode("utf-8")) / 2
        for word in line.split()
        if not any(c.isdigit() for c in word)
        for c in word
        if c.isalpha()
    )


def frame_lines_whole(kind: np.ndarray, bounds: np.ndarray, numeric: np.ndarray) -> np.ndarray:
    k = kind[: len(bounds) - 1]
    sep = k == numbers._SEP
    line = np.cumsum((k == numbers._BREAK) | sep)
    doc = np.cumsum(sep)
    wordy = (k == numbers._ASCII) | (k == numbers._OTHER)
    wordy[numeric] = False
    weight = np.diff(bounds).astype(np.float64)
    weight[k == numbers._OTHER] *= 0.5
    lines = int(line[-1]) + 1
    size = np.bincount(line[wordy], weight[wordy], minlength=lines)
    line_doc = np.zeros(lines, dtype=np.int64)
    line_doc[line] = doc
    wordy_lines = np.bincount(line_doc[size > 0], minlength=int(doc[-1]) + 1)
    # among its document's first or last EDGE_LINES lines that hold a word or a number
    filled = np.zeros(lines, dtype=bool)
    filled[line[(k == numbers._ASCII) | (k == numbers._OTHER)]] = True
    edge = np.zeros(lines, dtype=bool)
    for d in range(int(doc[-1]) + 1):
        mine = [n for n in range(lines) if line_doc[n] == d and filled[n]]
        for rank, n in enumerate(mine):
            edge[n] = rank < numbers.EDGE_LINES or rank >= len(mine) - numbers.EDGE_LINES
    return (size[line] < numbers._MIN_LINE) & (wordy_lines[doc] > 1) & edge[line]


def starts_with_letters(line: str) -> bool:
    """Only spaces and punctuation before the line's first letter (and it has one)."""
    first = next((i for i, c in enumerate(line) if c.isalpha()), None)
    return first is not None and all(
        c.isspace() or unicodedata.category(c).startswith("P") for c in line[:first]
    )


def _candidates(words: list[str]) -> list[list[str]]:
    """A title part's words, and its words after each of its first dense characters (a
    headline glued before the name) that leave a word or two such characters."""
    out = [words]
    k = 0
    while k < len(words) and names._DENSE_CHAR.fullmatch(words[k]):
        k += 1
        rest = words[k:]
        if sum(0.5 if names._DENSE_CHAR.fullmatch(w) else 1 for w in rest) >= 1:
            out.append(rest)
    return out


def subject_whole(lines: list[str], title: str) -> list[str]:
    head = title.strip()
    own = [
        line
        for k, line in enumerate(lines)
        if line
        and line.strip() != head
        and starts_with_letters(line)
        and not (k and re.search(r"\s(?:-{1,2}|[\u2012-\u2015])\s*$|[|｜]\s*$", lines[k - 1]))
    ]
    if not own:
        return []
    for read in (lambda t: t, names._uncoded):  # as written, else without codes and quantities
        starts = [names._words(read(line)) for line in own]
        best: list[str] = []
        for part in names._TITLE_SEPARATORS.split(title):
            if not 0 < len(names._words(part)) <= names._MAX_TITLE:
                continue
            for words in _candidates(names._words(read(part))):
                n = len(words)
                if len(best) < n and any(line[:n] == words for line in starts):
                    best = words
        if best:
            return best
    return []


WORDS = [
    "128", "2", "2026", "1999", "03", "11", "gb", "GB", "mhz", "kbps", "kb", "kbx", "mb_",
    "мгц", "Гб", "кб", "кбит", "px", "version", "release", "october", "Oct", "марта", "年",
    "the", "a", "x86", "mp3", "asn1_der", "é", "naïve", "²", "٣", "ελλάδα", "中文字", "-", "—",
    ":", "|", "«", "»", "...", "https://example.org/a/1.2", "x" * 40, "a" * 49,
    "⼀", "二〇二六", "第三章", "märz", "décembre", "2026년", "ᄂ", "…",
]  # fmt: skip
SEPARATORS = [" ", "  ", "\n", "\n\n", ", ", "-", "/", "\t", "", " | "]
text = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=40).map(
    lambda parts: "".join(w + s for w, s in parts)
)
texts = st.lists(text, min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_units_found_from_the_digits_are_the_patterns_matches(docs: list[str]) -> None:
    buf = b"\0".join(numbers._bytes_of(t) for t in docs)
    digits = np.flatnonzero(np.frombuffer(buf.translate(numbers._DIGITS), dtype=np.bool_))
    spaces = numbers._unit_spaces(buf, digits)
    joined = np.delete(np.frombuffer(buf, dtype=np.uint8), spaces).tobytes()
    assert joined == SPACED_UNIT.sub(rb"\1\2", buf)


def test_units_at_the_edges() -> None:
    for raw in [
        *(b"1 gb", b"1 gbx", b"1 g", b"2 \xd0\xbc\xd0\xb3\xd1\x86", b"3 mb\x001 kb", b"9 "),
        *(b"1  gb", b"1    gb", b"1     gb", b"1  gbx", b"9  ", b"4  \x001 kb"),
    ]:
        digits = np.flatnonzero(np.frombuffer(raw.translate(numbers._DIGITS), dtype=np.bool_))
        joined = np.delete(np.frombuffer(raw, dtype=np.uint8), numbers._unit_spaces(raw, digits))
        assert joined.tobytes() == SPACED_UNIT.sub(rb"\1\2", raw)


@settings(max_examples=500, deadline=None)
@given(st.one_of(text, st.text(max_size=200)))
def test_content_line_is_the_weight_threshold(line: str) -> None:
    assert numbers._is_content(line) == (line_weight(line) >= numbers._MIN_LINE)


@settings(max_examples=300, deadline=None)
@given(texts)
@example(["128\n" * 8 + "gb\ngb\n128 "])  # eleven lines: the sixth is none of the edges'
def test_frame_lines_of_the_stamped_documents_equal_the_whole_batchs(docs: list[str]) -> None:
    words = [numbers._bytes_of(t) for t in docs]
    buf = b"\0".join(words)
    digits = np.flatnonzero(np.frombuffer(buf.translate(numbers._DIGITS), dtype=np.bool_))
    if not len(digits):
        return
    cls = np.frombuffer(buf.translate(numbers._CLASSES), dtype=np.uint8).copy()
    if not buf.isascii():
        numbers._punctuation_is_space(buf, cls)
    a = np.frombuffer(buf, dtype=np.uint8)
    bounds = np.r_[0, np.flatnonzero(cls[1:] != cls[:-1]) + 1, len(a)]
    kind = np.r_[cls[bounds[:-1]], numbers._SEP, numbers._SEP]
    runs = np.unique(np.searchsorted(bounds, digits, side="right") - 1)
    ends = np.cumsum([len(w) + 1 for w in words])
    starts = np.concatenate(([0], ends[:-1]))
    doc = np.searchsorted(ends, bounds[runs], side="right")
    for pick in (np.ones(len(runs), dtype=bool), np.arange(len(runs)) % 2 == 0):
        holding = np.unique(doc[pick])
        lo = np.searchsorted(bounds, starts[holding])
        hi = np.searchsorted(bounds, ends[holding] - 1)
        fast = numbers._frame_lines(kind, bounds, runs, runs[pick], lo, hi)
        assert fast.tolist() == frame_lines_whole(kind, bounds, runs)[runs[pick]].tolist()


@settings(max_examples=150, deadline=None)
@given(texts)
def test_a_batch_sketches_each_text_as_alone(docs: list[str]) -> None:
    """Stamps, units and names found over a batch are each document's own."""
    units = np.array([len(t.split()) for t in docs], dtype=np.int64)
    together = number_sketches(docs, units=units, written=docs)
    for i, t in enumerate(docs):
        alone = number_sketches([t], units=units[i : i + 1], written=[t])
        assert together[i].tolist() == alone[0].tolist()
    assert not together[units >= max(SIDES_BELOW, names.NAMED_BELOW), NUMBER_CELLS:].any()


title = st.lists(
    st.tuples(st.sampled_from([*WORDS, "apostrophe", "shop"]), st.sampled_from([" ", " - ", ": "])),
    max_size=30,
).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=400, deadline=None)
@given(title, st.lists(st.one_of(title, text), max_size=5))
@example("年 年 x86 ", ["年 ", "年 年 x86 "])  # a glued headline: read without codes too
def test_subject_from_the_first_words_of_lines(head: str, lines: list[str]) -> None:
    lines = [*lines, head.split(" | ")[0], ""]
    assert names._subject(lines, head)[0] == subject_whole(lines, head)


url_line = st.lists(
    st.tuples(
        st.sampled_from([*WORDS, "http://a.b/c", "x://y", "(https://q.r/1)", "ftp://", "://"]),
        st.sampled_from([" ", "  ", "\t", "", "\x1c"]),
    ),
    max_size=60,
).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=500, deadline=None)
@given(url_line)
def test_content_line_of_a_url_line_is_its_cut_lines(line: str) -> None:
    if "://" in line:
        expected = line_weight(sub_urls(" ", line)) >= numbers._MIN_LINE
        assert numbers._content_line(line) == expected


def sketches_text_by_text(docs: list[str], sides: np.ndarray | None) -> np.ndarray:
    """The number sketch as it was computed: each text's bytes (``_bytes_of``) made one by
    one, then joined."""
    return numbers.sketches_of_bytes([numbers._bytes_of(t) for t in docs], sides=sides)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(text, st.sampled_from(["a\x00b 12", "\x00", "", "x 2 gb\x00"])), max_size=8)
)
def test_a_batch_encoded_at_once_equals_text_by_text(docs: list[str]) -> None:
    """The batch's bytes encoded and translated in one go sketch as each text's bytes made
    alone; texts holding ``\\0`` take the text-by-text path."""
    sides = np.array([i % 2 == 0 for i in range(len(docs))], dtype=bool)
    got = numbers._sketches_of_buf(*numbers._joined_bytes(docs, False), sides=sides)
    assert got.tolist() == sketches_text_by_text(docs, sides).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(text, st.text(max_size=30)), max_size=8))
def test_top_code_points_are_each_texts_largest(docs: list[str]) -> None:
    assert top_code_points(docs).tolist() == [max(map(ord, t), default=0) for t in docs]


CJK_NUMBER_CHARS = set(numbers._DIGIT_OF) | set(numbers._SMALL) | set(numbers._LARGE)


def test_no_code_point_below_the_cjk_bound_normalises_to_a_numeral() -> None:
    """Texts below ``_CJK_FROM`` skip the numeral search: no character there becomes one."""
    below = (chr(c) for c in range(0x80, numbers._CJK_FROM) if not 0xD800 <= c < 0xE000)
    assert not [c for c in below if CJK_NUMBER_CHARS & set(normalize(c))]
    assert CJK_NUMBER_CHARS & set(normalize(chr(numbers._CJK_FROM)))


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=numbers._CJK_FROM - 1), max_size=60))
def test_a_text_below_the_cjk_bound_holds_no_numeral_normalised(t: str) -> None:
    """Sequences too (combining marks, conjoining Hangul jamo): none composes into a numeral."""
    assert not CJK_NUMBER_CHARS & set(normalize(t))


def test_each_month_stem_holds_its_mark() -> None:
    by_mark = dict(numbers._STEMS_BY_MARK)
    assert sorted(s for stems in by_mark.values() for s in stems) == sorted(numbers._MONTH_STEMS)
    assert all(mark in s for mark, stems in by_mark.items() for s in stems)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*WORDS, *numbers._MONTH_STEMS, "ä", "я"]), max_size=12))
def test_a_month_is_looked_for_as_before(words: list[str]) -> None:
    norm = " ".join(words)
    before = any(m in norm for m in numbers._MONTH_MARKS) and any(
        s in norm for s in numbers._MONTH_STEMS
    )
    assert numbers._may_name_a_month(norm) == before
