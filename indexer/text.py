"""Text to features: normalisation, word tokens, word shingles and exact Jaccard.

Every fingerprint is computed from the token sequence produced here, so this module
defines what "the same text" means: NFKC-normalised, case-folded, Unicode ``\\w+`` words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["jaccard", "normalize", "shingle_set", "shingles", "token_bytes", "tokenize"]

_WORD = re.compile(r"\w+")
_WORD_BYTES = re.compile(rb"\w+")


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

    ASCII text takes a bytes regex, which matches exactly the same tokens as the
    Unicode pattern on ASCII input and avoids a separate encode per token.
    """
    norm = normalize(text)
    if norm.isascii():
        return _WORD_BYTES.findall(norm.encode("ascii"))
    return [t.encode("utf-8") for t in _WORD.findall(norm)]


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
