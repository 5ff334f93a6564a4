"""The writing cell: which of Chinese's two written standards a text is in, so that the same
text in Simplified and in Traditional characters stays apart.

A Traditional rendering of a Simplified text (a Taiwan or Hong Kong site publishing a mainland
story) is a translation, not a copy. Character for character, the two differ only where the
standards do (这/這, 说/說, 国/國): from a third to a half of a text's Han characters, so
a pair often keeps enough shared features to verify, the shorter the likelier. This cell
records the standard, compared at verification beside the number sketch.

Definitions: a *Simplified-only* character has a traditional form other than itself in the
Unicode Han Database and is not itself traditional; *Traditional-only* likewise
(:mod:`indexer.fingerprints.han_forms`, generated from Unihan). A text is **Simplified** (code
1) when it holds Simplified-only characters and at most one Traditional-only character for
every :data:`DOMINANCE` of them, **Traditional** (code 2) the other way round, else unknown
(0). Texts with kana or Hangul beside their Han characters (one for every
:data:`MIXED_SHARE` Han characters or more: Japanese, Korean) are unknown too: their kanji and
hanja follow neither standard.

**Conflict** (:func:`writings_agree`): both codes known and different. Guarantees: a copy in
the same standard never conflicts with its original, whatever it adds or drops (an edit can
only move a text to unknown, never to the other standard); a full conversion between the
standards always conflicts when the text holds a character the standards write differently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from indexer.fingerprints.han_forms import SIMPLIFIED_ONLY, TRADITIONAL_ONLY
from indexer.text import top_code_points

__all__ = [
    "DOMINANCE",
    "MIXED_SHARE",
    "SIMPLIFIED",
    "TRADITIONAL",
    "writing_codes",
    "writings_agree",
]

#: Codes of the cell (0: unknown).
SIMPLIFIED, TRADITIONAL = 1, 2
#: A standard's characters must outnumber the other's by this factor.
DOMINANCE = 8
#: Kana or Hangul at one for this many Han characters or more: not Chinese.
MIXED_SHARE = 20

_S, _T, _HAN, _KANA, _HANGUL = 1, 2, 3, 4, 5
_CLASSES = 6
_RANGES = (
    (_HAN, 0x3400, 0x4DBF),
    (_HAN, 0x4E00, 0x9FFF),
    (_HAN, 0xF900, 0xFAFF),
    (_KANA, 0x3040, 0x30FF),
    (_KANA, 0x31F0, 0x31FF),
    (_KANA, 0xFF66, 0xFF9F),
    (_HANGUL, 0x1100, 0x11FF),
    (_HANGUL, 0x3130, 0x318F),
    (_HANGUL, 0xAC00, 0xD7AF),
)


@lru_cache(maxsize=1)
def _table() -> np.ndarray:
    """(0x10000,) uint8: each BMP code point's class (0: none of these)."""
    table = np.zeros(0x10000, dtype=np.uint8)
    for cls, lo, hi in _RANGES:
        table[lo : hi + 1] = cls
    table[[ord(c) for c in SIMPLIFIED_ONLY]] = _S
    table[[ord(c) for c in TRADITIONAL_ONLY]] = _T
    table.flags.writeable = False
    return table


#: A Han character (what makes a text worth classing).
_HAN_CHAR = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


#: The first code point of :data:`_HAN_CHAR`: a text wholly below it holds no Han character.
_HAN_FROM = 0x3400


def writing_codes(texts: Sequence[str], top: np.ndarray | None = None) -> np.ndarray:
    """(n,) uint32: each text's writing code (module docstring), the characters of the texts
    that hold Han characters classed by one table lookup (the texts searched for one are those
    that reach its first code point; ``top``: :func:`indexer.text.top_code_points` of
    ``texts``, when the caller has it)."""
    out = np.zeros(len(texts), dtype=np.uint32)
    if top is None:
        top = top_code_points(texts)
    wide = np.flatnonzero(top >= _HAN_FROM).tolist()
    rows = [i for i in wide if _HAN_CHAR.search(texts[i]) is not None]
    if not rows:
        return out
    chosen = [texts[i] for i in rows]
    points = np.frombuffer("".join(chosen).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    points = np.minimum(points, 0xFFFF)  # beyond the BMP: of no class here
    doc = np.repeat(np.arange(len(rows)), [len(t) for t in chosen])
    counts = np.bincount(doc * _CLASSES + _table()[points], minlength=len(rows) * _CLASSES).reshape(
        len(rows), _CLASSES
    )
    s, t = counts[:, _S], counts[:, _T]
    han = s + t + counts[:, _HAN]
    chinese = (counts[:, _KANA] + counts[:, _HANGUL]) * MIXED_SHARE < np.maximum(han, 1)
    code = np.where((s > 0) & (t * DOMINANCE <= s), SIMPLIFIED, 0)
    code = np.where((t > 0) & (s * DOMINANCE <= t), TRADITIONAL, code)
    out[rows] = np.where(chinese, code, 0)
    return out


def writings_agree(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(k,) bool: whether k pairs of writing codes do not conflict (known and different)."""
    return (a == b) | (a == 0) | (b == 0)
