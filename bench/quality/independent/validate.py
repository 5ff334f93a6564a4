"""Check a built corpus folder and print its counts table and a few sample groups.

Checks: unique ids, required fields, one original per group and one cell (language × length)
per group, near-misses alone in their group and pointing at an existing one, printer copies
without the site template, zh/zh-Hant pairs complete, every query's group present, every group
with a near-miss or a translation queried, and at least 100 groups and 30 near-misses in each
short cell.

    .venv/bin/python -m bench.quality.independent.validate DIR [N_SAMPLES]
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

KINDS = [
    "original",
    "syndicated",
    "corrected",
    "cut",
    "printer",
    "headline",
    "reformatted",
    "one_word",
    "near_miss:number",
    "near_miss:name",
]
REQUIRED = [
    "id",
    "title",
    "body",
    "url",
    "group",
    "kind",
    "family",
    "host",
    "source",
    "lang",
    "length",
]


def _trunc(s: str, n: int = 150) -> str:
    s = re.sub(r"\s+", " ", s)
    return s if len(s) <= n else s[:n] + "…"


def _load(path: Path) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(line) for line in f]


def _errors(docs: list[dict[str, Any]], qs: list[dict[str, Any]]) -> list[str]:
    errs: list[str] = []
    ids = Counter(d["id"] for d in docs)
    errs += [f"dup id {i}" for i, c in ids.items() if c > 1]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in docs:
        groups[d["group"]].append(d)
    for d in docs:
        errs += [f"{d['id']} missing {k}" for k in REQUIRED if k not in d]
        if d["kind"] == "near_miss":
            if d.get("near_miss_of") not in groups:
                errs.append(f"{d['id']} near_miss_of dangling")
            elif d["near_miss_of"] == d["group"]:
                errs.append(f"{d['id']} near_miss in own group")
            if len(groups[d["group"]]) != 1:
                errs.append(f"{d['id']} near-miss group not singleton")
        if d["kind"] == "printer" and d["body"].split("\n\n")[0] != d["title"]:
            errs.append(f"{d['id']} printer has template")
    for g, ds in groups.items():
        if ds[0]["kind"] == "near_miss":
            continue
        n_orig = sum(1 for d in ds if d["kind"] == "original")
        if n_orig != 1:
            errs.append(f"group {g} has {n_orig} originals")
        if len({(d["lang"], d["length"]) for d in ds}) != 1:
            errs.append(f"group {g} mixes cells")
    par = defaultdict(list)
    for d in docs:
        if d.get("parallel"):
            par[d["parallel"]].append(d["lang"])
    for k, ls in par.items():
        if sorted(ls) != ["zh", "zh-Hant"]:
            errs.append(f"parallel {k} -> {ls}")
    qgroups = {q["seed_group"] for q in qs}
    errs += [f"query {q['id']} seed_group missing" for q in qs if q["seed_group"] not in groups]
    nm_of = {d["near_miss_of"] for d in docs if d["kind"] == "near_miss"}
    need = nm_of | {d["group"] for d in docs if d.get("parallel") and d["lang"] == "zh"}
    miss = need - qgroups
    if miss:
        errs.append(f"{len(miss)} groups with near-miss/translation lack a query")
    return errs


def run(out: Path | str, samples: int = 3, seed: int = 0) -> list[str]:
    """Validate the corpus in ``out``, print the table and ``samples`` groups per cell.

    Returns the errors found (also printed).
    """
    out = Path(out)
    docs = _load(out / "corpus.jsonl")
    qs = _load(out / "queries.jsonl")
    errs = _errors(docs, qs)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in docs:
        groups[d["group"]].append(d)
    cells = sorted({(d["lang"], d["length"]) for d in docs})
    tab: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for d in docs:
        k = d["kind"] if d["kind"] != "near_miss" else "near_miss:" + d["near_miss"]
        tab[(d["lang"], d["length"])][k] += 1
    heads = " ".join(f"{k.replace('near_miss:', 'nm:')[:9]:>9}" for k in KINDS)
    print(f"\n{'cell':<14} {'docs':>6} {'groups':>6} " + heads + f" {'queries':>6}")
    qcell = Counter((q["lang"], q["length"]) for q in qs)
    for c in cells:
        ng = len({d["group"] for d in docs if (d["lang"], d["length"]) == c})
        row = " ".join(f"{tab[c][k]:9d}" for k in KINDS)
        print(
            f"{c[0] + '/' + c[1]:<14} {sum(tab[c].values()):6d} {ng:6d} " + row + f" {qcell[c]:6d}"
        )
        nm = tab[c]["near_miss:number"] + tab[c]["near_miss:name"]
        if c[1] == "short" and c[0] != "zh-Hant" and (ng < 100 or nm < 30):
            errs.append(f"cell {c}: groups {ng} near-misses {nm} below target")
    types = dict(Counter(q["type"] for q in qs))
    print(f"total docs {len(docs)}, groups {len(groups)}, queries {len(qs)} ({types})")
    print("ERRORS:" if errs else "validation OK", *errs[:30], sep="\n  ")
    _samples(docs, groups, cells, samples, seed)
    return errs


def _samples(
    docs: list[dict[str, Any]],
    groups: dict[str, list[dict[str, Any]]],
    cells: list[tuple[str, str]],
    samples: int,
    seed: int,
) -> None:
    rng = random.Random(seed)
    nms = defaultdict(list)
    for d in docs:
        if d["kind"] == "near_miss":
            nms[d["near_miss_of"]].append(d)
    for c in cells:
        if c[0] == "zh-Hant":
            continue
        gs = sorted(
            g
            for g, ds in groups.items()
            if (ds[0]["lang"], ds[0]["length"]) == c and (len(ds) > 1 or g in nms)
        )
        print("\n" + "=" * 30, f"{c[0]}/{c[1]}", "=" * 30)
        for g in rng.sample(gs, min(samples, len(gs))):
            print("-- group", g)
            for d in sorted(groups[g], key=lambda d: d["kind"] != "original"):
                edit = (" " + d["edit"]) if d.get("edit") else ""
                title, body = _trunc(d["title"], 50), _trunc(d["body"], 220)
                print(f"   [{d['kind']}{edit}] {title} | {body}")
            for d in nms.get(g, []):
                body = _trunc(d["body"], 160)
                print(f"   [NM {d['near_miss']}: {d['nm_detail']}] {body}")


if __name__ == "__main__":
    run(sys.argv[1], samples=int(sys.argv[2]) if len(sys.argv) > 2 else 3)
