"""The ingest workers' faster paths give what their definitions give.

* ``features_kernel.distinct`` (the learning sample's unique shingles per page): each
  document's values are those of ``np.unique`` of its segment, each once, for any hashes and
  segment lengths; and the learner's models are the same from either;
* ``numbers._may_name_a_month``: False only where the month-name regex finds nothing, so
  ``_dates_spelt_out`` is the regex's substitution for any text;
* ``names._WORD``: the words the lookahead form of the pattern finds, for any text;
* ``record._block_json_table``: the rows the per-value format gives, for every block width.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.boilerplate import BoilerplateConfig, Learner, PageSets, _sorted_unique_per_doc
from indexer.fingerprints import compute, features_kernel, names, numbers, record

HASH = st.one_of(
    st.sampled_from([0, 1, 2, 3, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15]),
    st.integers(0, 2**64 - 1),
)


@st.composite
def segments(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    counts = draw(st.lists(st.one_of(st.integers(0, 5), st.integers(0, 300)), max_size=8))
    values = draw(st.lists(HASH, min_size=sum(counts), max_size=sum(counts)))
    return np.array(values, dtype=np.uint64), np.array(counts, dtype=np.int64)


def _per_doc(values: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    ends = np.cumsum(counts)
    return [values[e - c : e] for e, c in zip(ends.tolist(), counts.tolist(), strict=True)]


@settings(max_examples=300, deadline=None)
@given(segments())
def test_distinct_is_each_documents_unique_values(batch: tuple[np.ndarray, np.ndarray]) -> None:
    assert compute.enable_kernel()
    h, counts = batch
    got, kept = features_kernel.distinct(h, counts)
    assert len(kept) == len(counts) and int(kept.sum()) == len(got)
    want = _sorted_unique_per_doc(h, counts)
    for mine, segment, ref in zip(_per_doc(got, kept), _per_doc(h, counts), want, strict=True):
        assert np.array_equal(np.sort(mine), np.unique(segment))
        assert np.array_equal(np.sort(mine), ref)
        # in the order first seen
        firsts = np.unique(segment, return_index=True)[1]
        assert np.array_equal(mine, segment[np.sort(firsts)])


@settings(max_examples=60, deadline=None)
@given(st.lists(segments(), min_size=1, max_size=6), st.integers(1, 4))
def test_models_are_the_same_from_either(
    pages: list[tuple[np.ndarray, np.ndarray]], min_docs: int
) -> None:
    assert compute.enable_kernel()
    config = BoilerplateConfig(min_pages=1, min_docs=min_docs, min_share=0.3, slot_share=0.3)
    learnt = []
    for unique in (_sorted_unique_per_doc, None):
        learner = Learner(config)
        for h, counts in pages:
            if unique is None:
                got, kept = features_kernel.distinct(h, counts)
                sets = _per_doc(got, kept)
            else:
                sets = unique(h, counts)
            empty = np.zeros(0, dtype=np.uint64)
            for s in sets:
                learner.add("h", PageSets(s, s, empty, empty))
        learnt.append(learner.models())
    (want, got_models) = learnt
    assert want.keys() == got_models.keys()
    for host, model in want.items():
        assert np.array_equal(model.simhash_hashes, got_models[host].simhash_hashes)
        assert np.array_equal(model.minhash_hashes, got_models[host].minhash_hashes)


# the letters and words the month names are made of, and others around them
MONTH_TEXT = st.lists(
    st.sampled_from(
        [
            *"абвгдежзийклмнопрстуфхцчшщъыьэюяё",
            *"äéûçèàü",
            *"abcdefmorvz",
            *" _\n-1年년月월日2",
            *numbers._MONTH_STEMS,
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.one_of(MONTH_TEXT, st.text(max_size=40)))
def test_dates_spelt_out_is_the_regex(text: str) -> None:
    want = numbers._MONTH_WORD.sub(numbers._month, text)
    if numbers._MONTH_WORD.search(text):
        assert numbers._may_name_a_month(text)
    if "年" not in text and "년" not in text:
        assert numbers._dates_spelt_out(text) == want


def test_every_month_name_passes_the_filter() -> None:
    for stem in numbers._MONTH_STEMS:
        assert numbers._may_name_a_month(f"x {stem} y")


def _regex_month_names() -> list[str]:
    """Each alternative of ``_MONTH_WORD`` as the words it matches (an optional letter with
    and without, each letter of a class), read from the pattern itself."""
    body = numbers._MONTH_WORD.pattern.removeprefix("(?:").removesuffix(r")\b")
    words: list[str] = []
    for alt in body.split("|"):
        forms = [""]
        for m in re.finditer(r"\[([^\]]+)\]|(.)(\?)?", alt):
            if m.group(1):
                forms = [f + c for f in forms for c in m.group(1)]
            elif m.group(3):
                forms = [f + x for f in forms for x in ("", m.group(2))]
            else:
                forms = [f + m.group(2) for f in forms]
        words += forms
    return words


def test_every_name_the_month_regex_knows_passes_the_filter() -> None:
    names_ = _regex_month_names()
    assert len(names_) > 40  # the pattern was read, not an empty split
    for word in names_:
        assert numbers._MONTH_WORD.fullmatch(word), word
        assert numbers._may_name_a_month(f"x {word} y"), word


WORDY = "aé1_ -'’中文かナ한ไทยລາວខ្មែរမြန်Ωж"  # dense and other letters, digits, _, apostrophes
_LETTER = rf"(?![{names._DENSE}])[^\W\d_]"
_LOOKAHEAD_WORD = re.compile(rf"[{names._DENSE}]|(?:{_LETTER})+(?:['’](?:{_LETTER})+)*")


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        st.text(st.sampled_from([*WORDY, "\u0e33", "\ufa0e"]), max_size=60),
    )
)
def test_words_are_the_lookahead_patterns(text: str) -> None:
    assert names._WORD.findall(text) == _LOOKAHEAD_WORD.findall(text)


def _table_by_format(blocks: int, bits: int) -> np.ndarray | None:
    """The block JSON table as one format per row (the definition)."""
    if bits > 16:
        return None
    hexes = [format(v, f"0{bits // 4}x") for v in range(1 << bits)]
    pieces = [f',"block_{j}":"{h}"'.encode("ascii") for j in range(blocks) for h in hexes]
    if len({len(x) for x in pieces}) != 1:
        return None
    return np.frombuffer(b"".join(pieces), dtype=np.uint8).reshape(len(pieces), -1)


def test_block_json_table_is_the_formatted_rows() -> None:
    for blocks in (1, 2, 3, 4, 8, 9, 10, 16):
        for bits in range(1, 18):
            want = _table_by_format(blocks, bits)
            record._BLOCK_JSON.pop((blocks, bits), None)
            got = record._block_json_table(blocks, bits)
            if want is None:
                assert got is None
            else:
                assert got is not None and np.array_equal(got, want)
