"""The same text in Simplified and in Traditional Chinese (issue 18): folded or kept apart.

Takes Simplified Chinese texts of this machine (``fortunes-zh``'s ``chinese`` file, the NAME and
DESCRIPTION paragraphs of the ``zh_CN`` man pages), converts each character for character with
Debian's OpenCC (``opencc -c s2t.json``, installed by ``bench/quality/setup_multilingual.sh``)
and asks the grouping rule (``indexer.lookup.verdict``, default thresholds) about each pair:
folded with the writing cell (``indexer.fingerprints.writing``), and folded with the two cells
made equal (what the rule decides from the text's features alone). As a control, a copy of
each Simplified text with one character deleted and its punctuation made half-width, which
must still fold. Short: under 50 words of content (100 CJK characters).

Usage: ``python -m bench.writing_standards [--limit N]``; prints one table.
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from indexer.fingerprints import fingerprint_batch
from indexer.fingerprints.features import NO_WORDS
from indexer.fingerprints.numbers import WRITING_CELL
from indexer.fingerprints.record import FingerprintRecord
from indexer.fingerprints.writing import SIMPLIFIED, writing_codes
from indexer.lookup import verdict

FORTUNES = Path("/usr/share/games/fortunes/chinese")
MAN = Path("/usr/share/man/zh_CN")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MARK = "\n§§§§\n"  # between texts converted in one call (OpenCC leaves it as it is)
_HALF = str.maketrans("，。：；！？（）", ",.:;!?()")


def simplified_texts(limit: int) -> list[str]:
    """Simplified texts of 20 CJK characters or more: fortunes, then man page paragraphs."""
    texts = []
    if FORTUNES.exists():
        raw = _ANSI.sub("", FORTUNES.read_text(encoding="utf-8", errors="replace"))
        texts += [t.strip() for t in raw.split("\n%\n")]
    for page in sorted(MAN.glob("man1/*.gz"))[:400]:
        with gzip.open(page, "rt", encoding="utf-8", errors="replace") as f:
            source = f.read()
        paragraphs = re.split(r"\n\.(?:SH|PP|P|LP|TP)\b[^\n]*\n", source)
        texts += [re.sub(r"\\f[BIRP]|\\-|\n\.[A-Za-z]+[^\n]*", "", p).strip() for p in paragraphs]
    texts = [t for t in dict.fromkeys(texts) if len(re.findall(r"[\u4e00-\u9fff]", t)) >= 20]
    codes = writing_codes(texts)
    return [t for t, c in zip(texts, codes.tolist(), strict=True) if c == SIMPLIFIED][:limit]


def to_traditional(texts: list[str]) -> list[str]:
    """Each text converted by OpenCC's s2t, all in one call."""
    out = subprocess.run(
        ["opencc", "-c", "s2t.json"], input=_MARK.join(texts), capture_output=True, text=True
    )
    if out.returncode:
        sys.exit(f"opencc failed ({out.stderr.strip()}): apt-get install opencc")
    converted = out.stdout.split(_MARK)
    if len(converted) != len(texts):
        sys.exit("opencc changed the separator between texts")
    return converted


def _same_writing(a: FingerprintRecord, b: FingerprintRecord) -> FingerprintRecord:
    numbers = list(b.numbers)
    numbers[WRITING_CELL] = a.numbers[WRITING_CELL]
    return b.model_copy(update={"numbers": numbers})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=2000, help="Simplified texts read at most")
    args = ap.parse_args(argv)
    simplified = simplified_texts(args.limit)
    if not simplified:
        sys.exit("no Simplified texts: run bench/quality/setup_multilingual.sh (as root)")
    traditional = to_traditional(simplified)
    pairs = [(s, t) for s, t in zip(simplified, traditional, strict=True) if s != t]
    copies = [s.translate(_HALF)[:10] + s.translate(_HALF)[11:] for s, _ in pairs]
    records = fingerprint_batch([x for s, t in pairs for x in (s, t)] + copies)
    n = len(pairs)
    count: Counter[tuple[str, str]] = Counter()
    for k in range(n):
        a, b, c = records[2 * k], records[2 * k + 1], records[2 * n + k]
        length = "short" if min(a.token_count, b.token_count) < NO_WORDS else "long"
        count[length, "pairs"] += 1
        count[length, "folded"] += verdict(a, b).near_duplicate
        count[length, "folded, cells equal"] += verdict(a, _same_writing(a, b)).near_duplicate
        count[length, "copy folded"] += verdict(a, c).near_duplicate
    print(f"{n} Simplified texts and their OpenCC s2t conversions (default thresholds)")
    print("| length | pairs | conversion folded | ... with the writing cells equal | copy folded |")
    print("|---|---:|---:|---:|---:|")
    for length in ("short", "long"):
        m = count[length, "pairs"]
        if m:
            cells = [count[length, k] for k in ("folded", "folded, cells equal", "copy folded")]
            print(f"| {length} | {m} | " + " | ".join(f"{c} ({c / m:.1%})" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
