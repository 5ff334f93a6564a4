"""Write ``indexer/fingerprints/common_words.bin``: the common words of each language.

Usage: ``pip install wordfreq==3.1.1 && python scripts/common_words.py``. The file is
committed; run this again only to follow a newer wordfreq (and bump the fingerprint
generation: the name sketch reads it).

From wordfreq's "small" word lists (Robyn Speer's word frequencies in 40+ languages, built
from subtitles, Wikipedia, news, books and web text; data CC BY-SA 4.0): every word whose
frequency reaches :data:`MIN_ZIPF` on the Zipf scale (once per million words) in a language
written in a script with letter case (Latin, Greek, Cyrillic: the scripts whose words
:mod:`indexer.fingerprints.sentence_names` reads; :data:`~indexer.fingerprints.lexicon.LANGUAGES`,
one bit each), and at :data:`FREQUENT_ZIPF` (once per 100,000 words). Stored as three
zlib-compressed arrays of little-endian ``uint32``, their byte lengths first: the sorted CRC-32
codes of the words' UTF-8 bytes (the words as wordfreq gives them: NFKC, case folded) as gaps
between consecutive codes, each code's languages where it is common, and where frequent.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
from wordfreq import available_languages, get_frequency_list

from indexer.fingerprints.lexicon import LANGUAGES

OUT = Path(__file__).resolve().parent.parent / "indexer" / "fingerprints" / "common_words.bin"
MIN_ZIPF = 3.0
#: The frequency of a language's *frequent* words, which tell the language of a text (most of
#: its words are common in many languages' web text too: English words above all).
FREQUENT_ZIPF = 4.0


def common_words() -> dict[int, tuple[int, int]]:
    """CRC-32 code -> masks of the languages (bits in :data:`LANGUAGES`' order) in which a
    word of that code is at :data:`MIN_ZIPF` or more, and at :data:`FREQUENT_ZIPF` or more."""
    missing = set(LANGUAGES) - set(available_languages("small"))
    if missing:
        raise SystemExit(f"wordfreq has no small list for {sorted(missing)}")
    out: dict[int, tuple[int, int]] = {}
    for bit, lang in enumerate(LANGUAGES):
        # bucket i holds the words of frequency 10 ** (-i / 100): Zipf 9 - i / 100
        for i, bucket in enumerate(get_frequency_list(lang, "small")):
            zipf = 9 - i / 100
            if zipf < MIN_ZIPF:
                break
            for word in bucket:
                code = zlib.crc32(word.encode())
                common, frequent = out.get(code, (0, 0))
                out[code] = (
                    common | 1 << bit,
                    frequent | (1 << bit if zipf >= FREQUENT_ZIPF else 0),
                )
    return out


def main() -> None:
    table = common_words()
    codes = np.array(sorted(table), dtype=np.uint32)
    common = np.array([table[c][0] for c in codes.tolist()], dtype="<u4")
    frequent = np.array([table[c][1] for c in codes.tolist()], dtype="<u4")
    gaps = np.diff(codes, prepend=np.uint32(0)).astype("<u4")
    parts = [zlib.compress(a.tobytes(), 9) for a in (gaps, common, frequent)]
    head = np.array([len(p) for p in parts], dtype="<u4").tobytes()
    OUT.write_bytes(head + b"".join(parts))
    print(f"{len(codes)} codes, {OUT.stat().st_size} bytes: {OUT}")


if __name__ == "__main__":
    main()
