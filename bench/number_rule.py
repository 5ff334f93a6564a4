"""Numbers keep their meaning (issue 18): both sides of the number rule, pair by pair.

Reads the multilingual corpus (``python -m bench.quality.build_multilingual --quick``: zh, ja,
ru, de, en and zh-Hant, short and long) and the English quality corpus if built, fingerprints
every document with the indexer (no boilerplate model: host templates stay in, the harder
case for the number rule) and asks ``indexer.grouping.verify`` at the default thresholds,
with and without the number rule, about:

* **true copies**: each variant of a group against its original (syndicated inside another
  host's template, corrected, cut, printer copies with their print line, new headlines and
  bylines, reformatted, one word changed): folded with the rule / folded without it;
* **number near-misses**: the corpus's (a short text with one number changed: a capacity, a
  price, a version, a year) against every member of the group it imitates; and made here from
  every long original with a number in the middle of its text: that number changed (last
  digit + 1) in the original itself (same template), and the same change set against the
  group's syndicated and printer copies (other frames: the rule must see through them);
* name near-misses, for the record (the number rule is not about them).

Usage: ``python -m bench.number_rule [--corpus PATH ...]``; prints a table per language and length.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from indexer.fingerprints import fingerprint_arrays
from indexer.fingerprints.numbers import CELLS
from indexer.grouping import Prints, Thresholds, verify
from indexer.hits import key_code

T = Thresholds(max_distance=24, min_similarity=0.45)  # the proxy's defaults
ML = Path("~/.cache/neardup/quality-ml/quick/corpus.jsonl").expanduser()
EN = Path("~/.cache/neardup/quality/quick/corpus.jsonl").expanduser()
# a number standing alone (not part of a name such as import1): what the rule is about
_DIGITS = re.compile(r"(?<![A-Za-z0-9_０-９])[0-9０-９]+(?![A-Za-z0-9_０-９])")


def text_of(doc: dict[str, Any]) -> str:
    return f"{doc.get('title', '')}\n{doc['body']}"


def prints_of(texts: list[str]) -> Prints:
    a = fingerprint_arrays(texts)
    keys = np.array([key_code(k) for k in a.exact_keys], dtype=np.int64)
    return Prints(a.simhash, a.minhash, keys, a.token_count, a.present, a.numbers)


def change_a_number(text: str, rng: random.Random) -> str | None:
    """``text`` with one number in its middle 80% changed (its last digit + 1), or None."""
    lo, hi = len(text) // 10, len(text) * 9 // 10
    found = [m for m in _DIGITS.finditer(text) if lo <= m.start() < hi]
    if not found:
        return None
    m = rng.choice(found)
    last = m.group()[-1]
    base = ord("０") if last >= "０" else ord("0")
    bumped = chr(base + (ord(last) - base + 1) % 10)
    return text[: m.end() - 1] + bumped + text[m.end() :]


def pairs(docs: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], list[tuple]]:
    """Texts and (i, j, side, cell) pairs: side "true" / "number" / "name"."""
    texts = [text_of(d) for d in docs]
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        by_group[d["group"]].append(i)
    out: list[tuple] = []
    for rows in by_group.values():
        first = docs[rows[0]]
        cell = f"{first.get('lang', 'en')}/{first.get('length', 'long')}"
        if first.get("near_miss"):
            for j in by_group.get(first["near_miss_of"], []):
                out.append((rows[0], j, first["near_miss"], cell, "corpus"))
            continue
        orig = rows[0]
        for j in rows[1:]:
            out.append((j, orig, "true", cell, docs[j].get("kind", "")))
        if docs[orig].get("length", "long") != "long":
            continue
        changed = change_a_number(texts[orig], rng)
        if changed is None:
            continue
        k = len(texts)
        texts.append(changed)
        out.append((k, orig, "number", cell, "long, same frame"))
        for j in rows[1:]:
            if docs[j].get("kind") in ("syndicated", "printer", "headline"):
                out.append((k, j, "number", cell, f"long, vs {docs[j]['kind']}"))
    return texts, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--corpus", type=Path, nargs="*", default=[ML, EN])
    ap.add_argument("--seed", type=int, default=18)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    rows: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    kinds: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for path in a.corpus:
        if not path.exists():
            print(f"skipped (not built): {path}", file=sys.stderr)
            continue
        docs = [json.loads(line) for line in path.open(encoding="utf-8")]
        texts, ps = pairs(docs, rng)
        p = prints_of(texts)
        i = np.array([x[0] for x in ps], dtype=np.int64)
        j = np.array([x[1] for x in ps], dtype=np.int64)
        with_rule, _, _ = verify(p, i, p, j, T)
        blind = Prints(p.simhash, p.minhash, p.key, p.token_count, p.present,
                       np.zeros((len(p), CELLS), dtype=np.uint32))  # fmt: skip
        without, _, _ = verify(blind, i, blind, j, T)
        for (_, _, side, cell, kind), w, wo in zip(ps, with_rule, without, strict=True):
            for table, key in ((rows, (side, cell)), (kinds, (side, kind))):
                table[key][0] += 1
                table[key][1] += int(wo)
                table[key][2] += int(w)
    print("side    cell              pairs  folded without rule  folded with rule")
    for table in (rows, kinds):
        for side in ("true", "number", "name"):
            total = [0, 0, 0]
            for (s, cell), (n, wo, w) in sorted(table.items()):
                if s != side:
                    continue
                total = [total[0] + n, total[1] + wo, total[2] + w]
                print(f"{side:7} {cell:22} {n:5}  {wo:5} ({wo / n:6.1%})  {w:5} ({w / n:6.1%})")
            if total[0] and table is rows:
                n, wo, w = total
                print(f"{side:7} {'ALL':22} {n:5}  {wo:5} ({wo / n:6.1%})  {w:5} ({w / n:6.1%})")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
