"""URLs in text: :func:`indexer.text.sub_urls` replaces exactly what the URL pattern matches."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.text import sub_urls, tokenize

# The rule as written in indexer.text: ``scheme://`` up to the next whitespace.
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)

PIECES = st.sampled_from(
    ["http", "://", ":", "/", " ", "\n", "\t", "\u3000", "\xa0", "\x1c", "a", "Z", "K", "ſ",
     "é", "1", "+", ".", "-", "_", "x://", "h://y", "漢", "://://"]
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
