"""The common words of each language written in a script with letter case, so that a short
text's uncommon words can be read as what it names.

A word that is common in no language (``grep``, ``systemd``, ``Wayland``, ``dpkg``) names a
command, a product or a place more often than not: where a short text has one, another one in
its place makes another text, as another capitalised name does. Common is wordfreq's Zipf
frequency 3 or more (once per million words) in the text's language (:func:`language`: the
language in which most of its words are frequent, Zipf 4 or more; most words common in one
language are common in many others' web text), read from ``common_words.bin`` (written by
``scripts/common_words.py``). Guarantees: a word common in the language is never uncommon; an
uncommon word is taken for a common one with a probability of about 1 in 4,000 at most (the
file holds CRC-32 codes of ~10^6 words).
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from collections.abc import Iterable, Set
from pathlib import Path

import numpy as np

__all__ = ["LANGUAGES", "language", "masks_of", "uncommon", "uncommon_words"]

#: wordfreq's languages written in scripts with case, one bit each (the file's masks).
LANGUAGES = (
    "bg", "ca", "cs", "da", "de", "el", "en", "es", "fi", "fil", "fr", "hu", "id", "is", "it",
    "lt", "lv", "mk", "ms", "nb", "nl", "pl", "pt", "ro", "ru", "sh", "sk", "sl", "sv", "tr",
    "uk", "vi",
)  # fmt: skip
_PATH = Path(__file__).with_name("common_words.bin")
#: What joins the parts of a word (``sex-starved``, ``judge's``): each part is looked up.
_JOINS = re.compile("['’\\-]")


@functools.cache
def _table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted CRC-32 codes of the common words, the languages where each is common, and
    where frequent."""
    data = _PATH.read_bytes()
    sizes = np.frombuffer(data[:12], dtype="<u4").tolist()
    ends = np.cumsum([12, *sizes]).tolist()
    arrays = [
        np.frombuffer(zlib.decompress(data[a:b]), dtype="<u4") for a, b in itertools.pairwise(ends)
    ]
    return np.cumsum(arrays[0], dtype=np.uint32), arrays[1], arrays[2]


#: Every language's bit: the common mask of a word with no part to look up (never uncommon).
_EVERY = (1 << len(LANGUAGES)) - 1


def _lookup(part: str) -> tuple[int, int]:
    codes, common, frequent = _table()
    code = zlib.crc32(part.encode("utf-8", "surrogatepass"))
    i = int(codes.searchsorted(np.uint32(code)))
    if i < len(codes) and int(codes[i]) == code:
        return int(common[i]), int(frequent[i])
    return 0, 0


@functools.lru_cache(maxsize=1 << 16)
def _masks(word: str) -> int:
    """:func:`masks_of` as one integer: common in the low 32 bits, frequent in the high."""
    common = frequent = 0
    parts = [p for p in _JOINS.split(word.casefold()) if len(p) > 2]
    if not parts:
        return _EVERY
    for part in parts:
        c, f = _lookup(part)
        common |= c
        frequent |= f
    return common | frequent << 32


def masks_of(word: str) -> tuple[int, int]:
    """The languages (bits of :data:`LANGUAGES`) in which ``word`` (NFKC; case folded here) is
    common, and frequent: where one of its parts of three letters or more is (``sex-starved``
    is common in English, ``apt-listbugs`` too: "apt" is); a word without such a part (``xz``)
    is common everywhere and frequent nowhere."""
    masks = _masks(word)
    return masks & _EVERY, masks >> 32


def _language(masks: np.ndarray) -> int:
    """:func:`language` of words with these :func:`_masks`."""
    if not masks.size:
        return 0
    # each word's 64 bits, counted per bit: common per language, then frequent
    bits = np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(-1, 64)
    counts = bits.sum(axis=0).tolist()
    common, frequent = counts[:32], counts[32:]
    top = max(frequent)
    if not top:
        return 0
    best = max(c for c, f in zip(common, frequent, strict=True) if f == top)
    return sum(
        1 << b
        for b, (c, f) in enumerate(zip(common, frequent, strict=True))
        if f == top and c == best
    )


def language(words: Iterable[str]) -> int:
    """The languages (bits) in which the most of ``words`` (each counted once) are frequent,
    of those the ones in which the most are common; 0 when none is frequent anywhere."""
    return _language(np.array(list(map(_masks, set(words))), dtype="<u8"))


def uncommon(word: str, languages: int) -> bool:
    """Whether ``word`` is common in none of ``languages`` (bits; none: nothing is
    uncommon)."""
    return bool(languages) and not _masks(word) & languages


def uncommon_words(words: Set[str]) -> tuple[int, list[str]]:
    """The language of a text of these distinct ``words`` (:func:`language`), and those of
    them uncommon in it (:func:`uncommon`), in one pass."""
    listed = list(words)
    masks = np.array(list(map(_masks, listed)), dtype="<u8")
    languages = _language(masks)
    if not languages:
        return 0, []
    rare = np.flatnonzero((masks & np.uint64(languages)) == 0).tolist()
    return languages, [listed[i] for i in rare]
