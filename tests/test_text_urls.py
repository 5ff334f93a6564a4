"""URLs in text: :func:`indexer.text.sub_urls` replaces exactly what the URL pattern matches."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.text import DENSE_RANGES, sub_urls, tokenize

# The rule as written in indexer.text: ``scheme://`` up to the next whitespace, character of a
# script written without spaces, or CJK punctuation mark.
_DENSE = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in DENSE_RANGES)
URL = re.compile(f"[a-z][a-z0-9+.-]*://[^\\s{_DENSE}\u3000-\u303f\uff00-\uffef]+", re.IGNORECASE)

PIECES = st.sampled_from(
    ["http", "://", ":", "/", " ", "\n", "\t", "\u3000", "\xa0", "\x1c", "a", "Z", "K", "ſ",
     "é", "1", "+", ".", "-", "_", "x://", "h://y", "漢", "://://", "。", "，", "か", "ж"]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_sub_urls_is_the_pattern_substituted(text: str) -> None:
    assert sub_urls(" url ", text) == URL.sub(" url ", text)
    assert sub_urls(lambda m: f"<{m.group()}>", text) == URL.sub(lambda m: f"<{m.group()}>", text)


def test_urls_in_a_longer_text_are_tokens() -> None:
    """A scheme starts at a letter inside a word; one token to the end of the word."""
    text = "a\u3000xhttp://a.example/p?q=http://b\tend git+ssh://h/r, ://none 1http://x"
    assert tokenize(text) == [
        "a",
        "xhttpaexamplepqhttpb",
        "end",
        "gitsshhr",
        "none",
        "1",
        "httpx",
    ]


def test_text_of_a_script_without_spaces_right_after_a_url_stays_text() -> None:
    """Chinese and Japanese go on right after a link, with no space: the URL ends there, and
    the words after it are tokens of their own (not swallowed into the URL's token)."""
    assert tokenize("详见https://a.example/x-1，打印时间") == [
        "详见", "httpsaexamplex1", "打印", "印时", "时间"
    ]  # fmt: skip
    assert tokenize("https://b.example/y。次の文") == ["httpsbexampley", "次の", "の文"]
    # other scripts with spaces keep their letters in the URL (an IRI's path)
    assert tokenize("https://ru.example/статья конец") == ["httpsruexampleстатья", "конец"]
