"""Long non-ASCII texts: separators found per code point (a table) give the same tokens as
the per-character rule that shorter texts take; the weights and digit flags of many tokens at
once are each token's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import text
from indexer.fingerprints import features

# Latin, accents and combining marks, Cyrillic, Devanagari, CJK, Hangul, Thai, punctuation
# of several scripts, ideographic and no-break spaces, line breaks, a lone surrogate, emoji.
ALPHABET = st.sampled_from(
    [*"ab Z9_\n.,-", "é", "ß", "\u0301", "ж", "Ж", "क", "\u093f", "漢", "字", "。", "、",
     "한", "ก", "\u3000", "\xa0", "«", "»", "\ud800", "😀", "ﬁ", "Ⅻ", "٣"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, min_size=300, max_size=900).map("".join), st.booleans())
def test_long_texts_tokenise_as_by_the_character_rule(sample: str, folded: bool) -> None:
    by_table = text.word_bytes(sample, lines=True, folded=folded)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(text, "_TABLE_BYTES", 1 << 30)  # every text by the per-character rule
        by_character = text.word_bytes(sample, lines=True, folded=folded)
    assert by_table == by_character


PIECES = st.sampled_from([*"ab 1\n\t.,", "水", "中文", "ไทย", "한국", "é", "\x01", "。"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(PIECES, max_size=60).map(lambda p: "".join(p) * (40 if len(p) % 3 == 0 else 1)),
        max_size=8,
    ),
    st.booleans(),
)
def test_many_texts_tokenise_as_each_alone(texts: list[str], lines: bool) -> None:
    """The dense runs of several texts bigrammed in one pass are each text's own."""
    assert text.word_bytes_many(texts, lines=lines) == [
        text.word_bytes(t, lines=lines) for t in texts
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(ALPHABET, min_size=0, max_size=900).map("".join), max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_a_batch_of_long_texts_separated_at_once_as_each_alone(
    texts: list[str], lines: bool, folded: bool
) -> None:
    """The separators of a batch's long non-ASCII texts found in one pass are each text's."""
    assert text.word_bytes_many(texts, lines=lines, folded=folded) == [
        text.word_bytes(t, lines=lines, folded=folded) for t in texts
    ]


# code points of every weight class: ASCII, spaced scripts, each dense range's edges (Thai,
# Myanmar, Hangul, kana, Han, the supplementary planes), a surrogate's neighbours, emoji
WEIGHT_CHARS = st.sampled_from(
    [*"aZ9_", "é", "ж", "\u0301", "\u0e00", "\u0e7f", "\u1000", "\u109f", "\u1100", "\u3005",
     "\u3040", "\u30ff", "漢", "\u9fff", "\uac00", "\ud7ff", "\ue000", "\uf900", "\ufffd",
     "\U0001b000", "\U00020000", "\U0003ffff", "\U00040000", "😀", "\U0010ffff"]
)  # fmt: skip
TOKEN_BYTES = st.one_of(
    st.lists(WEIGHT_CHARS, max_size=5).map(lambda cs: "".join(cs).encode()),
    # a lone surrogate (surrogatepass, as the tokenisers encode one) or cut bytes
    st.lists(st.one_of(WEIGHT_CHARS, st.just("\ud800"), st.just("\udfff")), max_size=4).map(
        lambda cs: "".join(cs).encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=9),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKEN_BYTES, max_size=40))
def test_token_weights_are_each_tokens_weight(tokens: list[bytes]) -> None:
    assert text.token_weights(tokens).tolist() == [text.token_weight(t) for t in tokens]


DIGIT_TOKENS = st.one_of(
    st.lists(st.sampled_from([*"ab09_", "٣", "५", "１", "𝟎", "漢", "é", "\ud800"]), max_size=6).map(
        lambda cs: "".join(cs).encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=9),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(DIGIT_TOKENS, max_size=40))
def test_the_digits_of_many_tokens_are_each_tokens(tokens: list[bytes]) -> None:
    """The ``digits`` table of many new tokens at once (a digit of any script) is the
    definition's, token by token."""
    assert features._digits(tokens).tolist() == [features._has_digit(t) for t in tokens]
