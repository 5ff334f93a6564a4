"""Text normalisation, tokens, shingles and the exact Jaccard (seed 000's table)."""

from __future__ import annotations

import pytest

from indexer.text import jaccard, normalize, shingles, token_bytes, tokenize

BASE = (
    "The city council approved a new budget on Tuesday that raises spending on public "
    "transport by 12 percent. The plan adds three bus routes in the northern districts "
    "and extends evening service on the tram network. The mayor said the new routes "
    "would start in the spring and promised a review after one year."
)
DOCS = {
    "orig": BASE,
    "syndicated": BASE + " This story was first published by the Daily Ledger.",
    "edited": BASE.replace(
        "approved a new budget on Tuesday", "on Tuesday approved a new budget"
    ).replace("would start in the spring", "will begin operating in spring"),
    "other": (
        "The city council postponed a vote on the housing plan on Tuesday. The plan "
        "would allow taller buildings near tram stops and cut parking requirements. "
        "The mayor said a revised proposal would be presented in the spring."
    ),
}
# Seed 000: orig vs each document, k = 1, 3, 5.
TABLE = {
    "syndicated": (0.85, 0.85, 0.85),
    "edited": (0.89, 0.62, 0.49),
    "other": (0.25, 0.04, 0.00),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_seed_000_jaccard_table(name: str) -> None:
    got = tuple(round(jaccard(DOCS["orig"], DOCS[name], k), 2) for k in (1, 3, 5))
    assert got == TABLE[name]


def test_normalize_nfkc_and_casefold() -> None:
    assert normalize("Straße ﬁle Ｆｕｌｌ") == "strasse file full"
    assert normalize("ABC def") == "abc def"


def test_tokenize_unicode_words() -> None:
    assert tokenize("Hello, wörld! snake_case 42 — Ελληνικά") == [
        "hello",
        "wörld",
        "snake_case",
        "42",
        "ελληνικά",
    ]
    assert tokenize("") == []
    assert tokenize("  ...  ") == []


@pytest.mark.parametrize(
    "text",
    ["Plain ASCII, with punctuation; and_underscores 123!", "Ünïcödé — mixed ＡＢＣ text", ""],
)
def test_token_bytes_matches_tokenize(text: str) -> None:
    assert [t.decode("utf-8") for t in token_bytes(text)] == tokenize(text)


def test_shingles() -> None:
    toks = ["a", "rose", "is", "a", "rose", "is", "a", "rose"]
    assert set(shingles(toks, 4)) == {"a rose is a", "rose is a rose", "is a rose is"}
    assert shingles(["a", "b"], 4) == ["a b"]
    assert shingles([], 4) == []
    assert shingles(["x", "y"], 1) == ["x", "y"]
    with pytest.raises(ValueError):
        shingles(["x"], 0)


def test_jaccard_seed_002_examples() -> None:
    d1 = "the crawler fetches each page and follows its links to new pages"
    d2 = "the crawler fetches every page and follows its links to other pages"
    assert jaccard(d1, d2, 3) == pytest.approx(1 / 3)
    d3, d4 = "a rose is a rose is a rose", "a rose is a flower which is a rose"
    assert jaccard(d3, d4, 3) == pytest.approx(3 / 7)
    assert jaccard(d3, d4, 2) == pytest.approx(0.5)
    assert jaccard("", "", 4) == 1.0
    assert jaccard("", "x", 4) == 0.0


def test_a_url_is_one_token() -> None:
    """A printer's footer names the page's address: one token, not a dozen words."""
    line = "Printed from https://Example.org/en/fortune/cookie-146?print=1 on October 6"
    assert tokenize(line) == [
        "printed",
        "from",
        "httpsexampleorgenfortunecookie146print1",
        "on",
        "october",
        "6",
    ]
    assert tokenize("see http://a.example/x and http://b.example/x") == [
        "see",
        "httpaexamplex",
        "and",
        "httpbexamplex",
    ]
