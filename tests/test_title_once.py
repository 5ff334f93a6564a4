"""The title counted once: where a heading repeats a text's title (or its start or its end),
the title line gives no SimHash or MinHash features (indexer.fingerprints.features
.titles_repeated), so a short copy under a new headline, which it repeats above the text, is as
close to its original as the headline's own words make it, not twice as far."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.boilerplate import HostModel, fingerprint_excluding
from indexer.fingerprints import FingerprintParams, fingerprint_arrays
from indexer.fingerprints.features import line_starts, titles_repeated
from tests.test_names import folds_with_first

STORY = (
    "New tablet Kestrel T9 in graphite with 1024 GB for 399 USD. Limited stock available. "
    "Ships within 3 days."
)


def test_a_short_copy_under_a_new_headline_repeated_above_it_folds() -> None:
    """A listing repeats its title as a heading; its copy under a headline five words longer
    does too. Counted twice, the headline's words were ten of the copy's 41 and the pair fell
    25 SimHash bits apart; counted once it folds, as the copy printed without a heading and the
    copy with the site's name after its title do. Another text under the same title stays
    apart."""
    title = "New tablet Kestrel T9 in graphite"
    headline = f"{title}: what you need to know"
    texts = [
        f"{title}\n\n{title}\n\n{STORY}",
        f"{headline}\n\n{headline}\n\n{STORY}",
        f"{title}\n\n{STORY}",  # no heading
        f"{title} | Gadget Shop\n\n{title}\n\n{STORY}",  # the site's name after the title
        f"{title}\n\n{title}\n\nA smartphone with a small screen, sold out, back in a month.",
    ]
    assert folds_with_first(texts) == [True, True, True, False]


def _reference(tokens: list[list[list[int]]]) -> list[list[bool]]:
    """Per text (its lines' tokens), per token: whether titles_repeated marks it."""
    out = []
    for lines in tokens:
        filled = [line for line in lines if line]
        title = filled[0] if filled else []
        n = len(title)
        repeated = any(
            n / 2 <= len(line) <= n
            and (line == title[: len(line)] or line == title[n - len(line) :])
            for line in filled[1:]
        )
        out.append([repeated and k == 0 for k, line in enumerate(filled) for _ in line])
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.integers(1, 3), max_size=4), min_size=1, max_size=4),
        min_size=1,
        max_size=5,
    )
)
def test_titles_repeated_reads_as_documented(texts: list[list[list[int]]]) -> None:
    """A text's first line with tokens is its title; its tokens are marked when a later line
    equals it, its start or its end, holding half of its tokens or more."""
    hashes, line_no, lengths = [], [], []
    for lines in texts:
        count = 0
        for k, line in enumerate(lines):
            hashes += line
            line_no += [k] * len(line)
            count += len(line)
        lengths.append(count)
    h = np.array(hashes, dtype=np.uint64)
    n = np.array(lengths, dtype=np.int64)
    starts = line_starts(np.array(line_no, dtype=np.int32), n)
    got = titles_repeated(h, starts, np.repeat(np.arange(len(n)), n))
    want = [flag for text in _reference(texts) for flag in text]
    assert got.tolist() == want


def test_both_paths_count_the_title_once() -> None:
    """Texts with and without a repeated title: the host models' path (a model that covers
    none of their words) and the plain one give the same fingerprints."""
    p = FingerprintParams()
    texts = [
        f"Kestrel tablet\n\nKestrel tablet\n\n{STORY}",
        f"Kestrel tablet | Shop\n\nKestrel tablet\n\n{STORY}",
        f"Explained: Kestrel tablet\n\nKestrel tablet\n\n{STORY}",
        STORY,
    ]
    unrelated = HostModel("x", 50, np.array([1, 2, 3], np.uint64), np.array([4], np.uint64))
    arrays, _ = fingerprint_excluding(texts, p, [unrelated] * len(texts))
    plain = fingerprint_arrays(texts, p)
    assert (arrays.simhash == plain.simhash).all()
    assert (arrays.minhash == plain.minhash).all()
