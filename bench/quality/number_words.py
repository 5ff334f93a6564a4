"""Numbers written as words in short texts: near-misses that change one, copies that keep it.

The multilingual corpus changes numbers written in digits. This check takes real short texts
(fortunes in English, Russian and German, 12 to 70 words) that write a cardinal from two to ten
as a word, and asks the grouping rule (offline, :func:`indexer.lookup.verdict`) about pairs:

* ``word to word``: that word replaced by another cardinal of the language (a negative: the
  share *folded* is reported);
* ``word to digits``: that word written in digits (a true pair: the share *missed*);
* ``other word misspelt``: another word of four letters or more loses a letter, the number
  word kept (a true pair);
* ``word to word, framed``: the first pair, each text under a site's header line and over its
  footer line (one template, as ``frames.py``'s), joined by blank lines (a negative).

    .venv/bin/python -m bench.quality.number_words [--per-language 300] [--seed 3]

Needs the fortunes packages (``bench/quality/setup_multilingual.sh`` installs them).
Results: docs/quality.md, "Numbers written as words".
"""

from __future__ import annotations

import argparse
import collections
import random
import re

from bench.quality.frames import SITES, TEMPLATES, Pair, fortunes, framed, report

#: Cardinals two to ten as the texts write them (the nominative; Russian genitive too), with
#: their values: the generator's own list, not the fingerprint's.
CARDINALS = {
    "en": ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"],
    "de": ["zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn"],
    "ru": ["два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять", "десять"],
}
_RU_GENITIVE = ["двух", "трёх", "четырёх", "пяти", "шести", "семи", "восьми", "девяти", "десяти"]


def _forms(lang: str) -> list[list[str]]:
    """Lists of cardinals of one grammatical form (a word is replaced within its list)."""
    return [CARDINALS[lang], _RU_GENITIVE] if lang == "ru" else [CARDINALS[lang]]


def cases(lang: str, n: int, rng: random.Random) -> dict[str, list[Pair]]:
    """Every category's pairs for one language (module docstring)."""
    forms = _forms(lang)
    words = {w: (form, i + 2) for form in forms for i, w in enumerate(form)}
    pattern = re.compile(r"\b(" + "|".join(sorted(words, key=len, reverse=True)) + r")\b", re.I)
    texts = [t for t in fortunes(lang) if pattern.search(t)]
    rng.shuffle(texts)
    out: dict[str, list[Pair]] = collections.defaultdict(list)
    header, footer = TEMPLATES[lang][0]
    for text in texts[:n]:
        m = rng.choice(list(pattern.finditer(text)))
        written = m.group(1)
        form, value = words[written.lower()]
        new = rng.choice([w for w in form if w != written.lower()])
        if written[0].isupper():
            new = new.capitalize()
        other = text[: m.start(1)] + new + text[m.end(1) :]
        digits = text[: m.start(1)] + str(value) + text[m.end(1) :]
        out["word to word"].append((text, other, False))
        out["word to digits"].append((text, digits, True))
        spans = [
            s for s in re.finditer(r"\w{4,}", text) if s.end() <= m.start() or s.start() >= m.end()
        ]
        if spans:
            s = rng.choice(spans)
            cut = rng.randrange(s.start() + 1, s.end())
            out["other word misspelt"].append((text, text[:cut] + text[cut + 1 :], True))
        site = rng.choice(SITES[lang])
        out["word to word, framed"].append(
            (
                framed(header, footer, site, text, "\n\n"),
                framed(header, footer, site, other, "\n\n"),
                False,
            )
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-language", type=int, default=300, help="texts per language, at most")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    head = f"{'language and category':32s} {'wrong':>9s}"
    print(f"{head}  (missed for true pairs, folded for others)")
    for lang in ("en", "ru", "de"):
        report(lang, cases(lang, args.per_language, rng), 29)


if __name__ == "__main__":
    main()
