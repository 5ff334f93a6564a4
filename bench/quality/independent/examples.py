"""One example per language × kind: the changed words, the note or the size change it shows.

For number and name near-misses and word edits the snippet is centred on the new text; for
syndicated copies it is the attribution line, for reformatted ones the first paragraph that
changed (before and after), for cut ones the sizes in words.

    .venv/bin/python -m bench.quality.independent.examples DIR
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

from bench.quality.independent.lexicon import SYN

KINDS = [
    "syndicated",
    "corrected",
    "cut",
    "printer",
    "headline",
    "reformatted",
    "one_word",
    "number",
    "name",
]
_SYND = re.compile(r"(Originally published|Ursprünglich|Впервые|この記事は|本文转载)[^\n]*")


def _clip(s: str, k: int = 150) -> str:
    s = re.sub(r"\s+", " ", s)
    return s if len(s) <= k else s[:k] + "…"


def _around(body: str, needle: str, k: int = 70) -> str:
    i = body.find(needle)
    if i < 0:
        return _clip(body, 150)
    return _clip("…" + body[max(0, i - k) : i + len(needle) + k] + "…", 160)


def report(out: Path | str) -> None:
    """Print one example per language × kind of the corpus in folder ``out``."""
    with open(Path(out) / "corpus.jsonl") as f:
        docs = [json.loads(line) for line in f]
    orig = {d["group"]: d for d in docs if d["kind"] == "original"}
    rng = random.Random(11)
    for lang in ["zh", "ja", "ru", "de", "en"]:
        print("#####", lang)
        for kind in KINDS:
            ds = [
                d
                for d in docs
                if d["lang"] == lang and (d["kind"] == kind or d.get("near_miss") == kind)
            ]
            if not ds:
                continue
            d = rng.choice(ds)
            det = d.get("nm_detail") or d.get("edit") or ""
            if kind in ("number", "name"):
                new = det.split("->")[1].rsplit(" (", 1)[0]
                print(f"  {kind:<11} {det[:28]:<28} {_around(d['body'], new)}")
            elif kind in ("one_word", "corrected"):
                word = SYN.get(lang, {}).get(det.split(",")[0].split(":")[-1], "")
                shown = _around(d["body"], word) if word else _clip(d["body"])
                print(f"  {kind:<11} {det[:28]:<28} {shown}")
            elif kind == "syndicated":
                m = _SYND.search(d["body"])
                print(f"  {kind:<11} {d['title'][:28]:<28} {_clip(m.group(0) if m else d['body'])}")
            elif kind == "reformatted":
                o = orig[d["group"]]
                diff = [
                    (x, y)
                    for x, y in zip(o["body"].split("\n\n"), d["body"].split("\n\n"), strict=False)
                    if x != y and not re.search(r"\d+\s*$", x)
                ]
                x, y = diff[0] if diff else ("", "")
                print(f"  {kind:<11} orig: {_clip(x, 120)}\n  {'':<11} new:  {_clip(y, 120)}")
            elif kind == "cut":
                o = orig[d["group"]]
                n0, n1 = len(o["body"].split()), len(d["body"].split())
                print(f"  {kind:<11} {det:<28} {n0} -> {n1} words")
            else:
                print(f"  {kind:<11} {_clip(d['body'])}")


if __name__ == "__main__":
    report(sys.argv[1])
