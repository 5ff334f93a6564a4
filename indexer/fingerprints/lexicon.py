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
from collections.abc import Iterable, Iterator, Set
from pathlib import Path

import numpy as np

__all__ = [
    "LANGUAGES",
    "language",
    "languages_near",
    "masks_of",
    "misspelt",
    "misspelt_words",
    "uncommon",
    "uncommon_words",
]

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


def _mask_array(words: Iterable[str]) -> np.ndarray:
    """The :func:`_masks` of ``words``, in their order."""
    listed = words if isinstance(words, list) else list(words)
    return np.fromiter(map(_masks, listed), dtype="<u8", count=len(listed))


def _bit_counts(masks: np.ndarray) -> list[int]:
    """How many of ``masks`` hold each of the 64 bits: common per language, then frequent."""
    return np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(-1, 64).sum(0).tolist()


def _language(counts: list[int]) -> int:
    """:func:`language` of words with these :func:`_bit_counts`."""
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


def _near(counts: list[int]) -> int:
    """:func:`languages_near` of words with these :func:`_bit_counts`."""
    frequent = counts[32:]
    top = max(frequent)
    if not top:
        return 0
    return sum(1 << b for b, f in enumerate(frequent) if f >= NEAR * top)


def language(words: Iterable[str]) -> int:
    """The languages (bits) in which the most of ``words`` (each counted once) are frequent,
    of those the ones in which the most are common; 0 when none is frequent anywhere."""
    masks = _mask_array(set(words))
    return _language(_bit_counts(masks)) if masks.size else 0


#: :func:`languages_near`: the share of the most frequent words a language needs to be near.
NEAR = 0.8


def languages_near(words: Iterable[str]) -> int:
    """The languages (bits) in which at least :data:`NEAR` as many of ``words`` (each counted
    once) are frequent as in the language where the most are: a text's language and those
    its words fit almost as well (Danish beside Norwegian, Spanish beside Catalan), so that
    two copies whose counts differ by a word or two are read in the same languages."""
    masks = _mask_array(set(words))
    return _near(_bit_counts(masks)) if masks.size else 0


#: The vowels a misspelling may put for one another (:func:`misspelt_words`).
_VOWELS = "aeiou"


def _misspellings(folded: str, lower: bool) -> Iterator[str]:
    """The words of which ``folded`` would be a misspelling (:func:`misspelt_words`)."""
    for i in range(1, len(folded) - 1):
        if folded[i] != folded[i + 1]:
            yield folded[:i] + folded[i + 1] + folded[i] + folded[i + 2 :]
    for i in range(2, len(folded)):
        if folded[i] == folded[i - 1]:
            if i < len(folded) - 1:
                yield folded[:i] + folded[i + 1 :]
        elif folded[i - 1] not in _VOWELS:
            yield folded[:i] + folded[i - 1] + folded[i:]
    if len(folded) >= 5 or not lower:  # a command's vowel: grep is no grip
        for i in range(1, len(folded)):
            if folded[i] in _VOWELS:
                for vowel in _VOWELS.replace(folded[i], ""):
                    yield folded[:i] + vowel + folded[i + 1 :]


#: Endings that inflect a word (English and German), with :data:`_STEM` letters left.
_ENDINGS = ("s", "es", "ed", "ing", "ly", "er", "ers", "e", "en", "em", "n")
#: Letters an inflected word's stem keeps (``deceive`` of ``deceives``; ``vlen`` has none).
_STEM = 4


def _stems(folded: str) -> Iterator[str]:
    """The words of which ``folded`` would be an inflected form (:func:`misspelt_words`)."""
    for ending in _ENDINGS:
        if folded.endswith(ending) and len(folded) - len(ending) >= _STEM:
            stem = folded[: -len(ending)]
            yield stem
            if ending[0] in "ei":
                yield stem + "e"


#: What :func:`misspelt_words` found per (word, languages), until it holds too many.
_MISSPELT: dict[tuple[str, int], bool] = {}


def misspelt_words(words: Iterable[str], languages: int) -> set[str]:
    """Those of ``words`` that are a common word of ``languages`` misspelt or inflected: two
    neighbouring letters after the first swapped (``zreo``, ``srcipt``, ``Jonh``), an inner
    letter doubled (``commmand``, ``seearch``) or a doubled consonant written once (``adress``,
    ``Ergebnise``), a vowel after the first letter another (``Jahn``; in a word of five
    letters or more when written in lower case), or an ending of :data:`_ENDINGS` on a common
    word of four letters or more (``deceives``, ``subgroups``), in one of its parts (split at
    hyphens and apostrophes: ``mahct's``), or the whole word a common contraction
    (``wasn't``). The variants are looked up together, in one search of the codes."""
    found: set[str] = set()
    owners: list[str] = []
    codes: list[int] = []
    for word in words:
        known = _MISSPELT.get((word, languages))
        if known is not None:
            if known:
                found.add(word)
            continue
        _MISSPELT[word, languages] = False
        folded = word.casefold()
        variants = [folded.replace("’", "'")] if "'" in folded or "’" in folded else []
        for part in _JOINS.split(folded):
            if len(part) > 2:
                variants += _misspellings(part, word.islower())
                variants += _stems(part)
        for variant in variants:
            if len(variant) > 2:
                owners.append(word)
                codes.append(zlib.crc32(variant.encode("utf-8", "surrogatepass")))
    if codes:
        table, common, _ = _table()
        wanted = np.array(codes, dtype=np.uint32)
        at = np.minimum(table.searchsorted(wanted), len(table) - 1)
        hit = (table[at] == wanted) & ((common[at] & np.uint32(languages & _EVERY)) != 0)
        for i in np.flatnonzero(hit).tolist():
            found.add(owners[i])
            _MISSPELT[owners[i], languages] = True
    if len(_MISSPELT) > 1 << 16:
        _MISSPELT.clear()
    return found


def misspelt(word: str, languages: int) -> bool:
    """Whether ``word`` is a common word of ``languages`` misspelt or inflected
    (:func:`misspelt_words`)."""
    return bool(misspelt_words((word,), languages))


def uncommon(word: str, languages: int) -> bool:
    """Whether ``word`` is common in none of ``languages`` (bits; none: nothing is
    uncommon)."""
    return bool(languages) and not _masks(word) & languages


def uncommon_words(words: Set[str]) -> tuple[int, list[str]]:
    """The language of a text of these distinct ``words`` (:func:`language`), and those of
    them uncommon in it (:func:`uncommon`), in one pass."""
    languages, rare, _ = read_words(words)
    return languages, rare


def read_words(words: Set[str], near: Set[str] | None = None) -> tuple[int, list[str], int]:
    """:func:`uncommon_words` of a text's distinct ``words``, and :func:`languages_near` of
    ``near`` (some of them; None: all), counting the words' languages once where the two are
    the same words."""
    listed = list(words)
    masks = list(map(_masks, listed))
    counts = _bit_counts(np.array(masks, dtype="<u8")) if masks else [0] * 64
    if near is None or len(near) == len(listed):
        near_languages = _near(counts)
    else:
        near_languages = languages_near(near)
    languages = _language(counts)
    if not languages:
        return 0, [], near_languages
    return (
        languages,
        [w for w, m in zip(listed, masks, strict=True) if not m & languages],
        near_languages,
    )
