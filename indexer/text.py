"""Text to features: normalisation, word tokens, word shingles and exact Jaccard.

Every fingerprint is computed from the token sequence produced here, so this module
defines what "the same text" means: NFKC-normalised, case-folded, Unicode ``\\w+`` words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "jaccard",
    "normalize",
    "shingle_set",
    "shingles",
    "token_bytes",
    "tokenize",
    "word_bytes",
]

_WORD = re.compile(r"\w+")
# ASCII fast path: lower-case letters, keep [0-9_a-z], every other byte becomes a space.
_ASCII_WORDS = bytes(
    (c | 0x20) if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95) else 32
    for c in range(256)
)
_UTF8_WORDS = _ASCII_WORDS[:128] + bytes(range(128, 256))  # non-ASCII bytes kept as they are
_ASCII_BYTES = bytes(range(128))


def normalize(text: str) -> str:
    """Return ``text`` NFKC-normalised and case-folded, so trivial variants compare equal."""
    if text.isascii():
        # NFKC is the identity on ASCII and casefold() equals lower() there; skip the work.
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold()


def tokenize(text: str) -> list[str]:
    """Return the Unicode word tokens (``\\w+``) of the normalised text."""
    return _WORD.findall(normalize(text))


def token_bytes(text: str) -> list[bytes]:
    """Return the tokens of :func:`tokenize` as UTF-8 bytes (the hot-path form).

    ASCII text (where NFKC is the identity, case folding is lower-casing and ``\\w`` is
    ``[0-9A-Za-z_]``) takes one ``bytes.translate`` and ``split``, which yields exactly the
    tokens of the regex several times faster. Other text: see :func:`word_bytes`.
    """
    return word_bytes(text).split()


def word_bytes(text: str) -> bytes:
    """The tokens of :func:`tokenize` as UTF-8, separated by runs of spaces (``split()`` them).

    Every byte that is not part of a token is a space, so a byte never in any token (such as
    ``\\x00``) can be put between the outputs of several texts to tokenise them in one go.
    """
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS)
    norm = normalize(text)
    try:
        data = norm.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the regex path, as before
        return b" ".join(t.encode("utf-8") for t in _WORD.findall(norm))
    # Same tokens without a regex scan over the whole text: ASCII bytes as in the fast path
    # (already case-folded), non-ASCII characters kept when they are word characters (what
    # ``\\w`` matches: ``str.isalnum()``) and otherwise replaced by a space. UTF-8 is
    # self-synchronising, so replacing one character's bytes never touches another's.
    out = data.translate(_UTF8_WORDS)
    for ch in set(data.translate(None, _ASCII_BYTES).decode("utf-8")):
        if not ch.isalnum():
            out = out.replace(ch.encode("utf-8"), b" ")
    return out


def shingles(tokens: Sequence[str], k: int) -> list[str]:
    """Return the word k-shingles of ``tokens`` (k words joined by one space), in order.

    Fewer than ``k`` tokens give a single shingle of all tokens; no tokens give none.
    """
    if k < 1:
        raise ValueError(f"shingle length must be >= 1, got {k}")
    n = len(tokens)
    if n == 0:
        return []
    if n < k:
        return [" ".join(tokens)]
    return [" ".join(tokens[i : i + k]) for i in range(n - k + 1)]


def shingle_set(text: str, k: int) -> set[str]:
    """Return the set of word k-shingles of a raw text."""
    return set(shingles(tokenize(text), k))


def jaccard(a_text: str, b_text: str, k: int) -> float:
    """Exact Jaccard similarity of the k-shingle sets of two texts (1.0 if both are empty)."""
    a, b = shingle_set(a_text, k), shingle_set(b_text, k)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
