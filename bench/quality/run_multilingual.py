"""End-to-end multilingual quality benchmark (issue 18): per language × length, at the defaults.

Against the real cluster (``ES_URL``, default ``http://127.0.0.1:9200``):

1. build (or reuse) the corpus of ``build_multilingual`` (zh, ja, ru, de, en; short and long;
   zh-Hant translations as hard negatives);
2. ingest it with ``python -m indexer ingest`` (per-host boilerplate model on, as in
   production) into index ``<prefix>`` (``run.ingest``);
3. start the proxy as a real process on 127.0.0.1 (``run.Proxy``: production settings except no
   refills and a 10 s time budget, as in ``run.py``);
4. per query: the uncollapsed window (``collapse=false``), then the collapsed answer with the
   proxy's own thresholds (only ``collapse_window`` and ``collapse_members`` are sent);
   ``--grid`` adds a few threshold points to see where the defaults stand;
5. score each answer with :func:`bench.quality.scoring.score_window`, on the whole window and
   on each language × length cell (the window restricted to that cell's hits, so a cell's
   pairs are the pairs of two of its documents), and count wrong folds per hard-negative type:

   ``number``        a near-miss with one number changed and a member of the group it imitates;
   ``name``          the same with one name changed;
   ``translation``   a Traditional Chinese document and a member of the Simplified group it
                     translates (same ``parallel``);
   ``site_template`` two pages of one host inside its template; ``family`` one man-page
                     family, Debian Reference chapter, fortune file or listing shop;
   ``other``         any other pair of different groups.

Results: ``results.json`` beside the corpus; ``--report FILE`` prints the Markdown tables of a
results file and draws ``docs/img/quality_multilingual.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.quality.build_corpus import load_jsonl
from bench.quality.build_multilingual import ALL_LANGS, DEFAULT_CACHE, LANGS, build
from bench.quality.offline import search_body
from bench.quality.run import Proxy, _collapsed, ingest
from bench.quality.scoring import DocLabel, Score, fold_map, score_window

__all__ = [
    "GOALS",
    "NEGATIVES",
    "MlLabel",
    "MlScore",
    "main",
    "negative_types",
    "project",
    "report",
    "score_ml",
]

ROOT = Path(__file__).resolve().parents[2]
NEGATIVES = ("number", "name", "translation", "site_template", "family", "other")
#: Issue 18's goals, per language × length, end to end at the defaults.
GOALS = {"precision": 0.99, "recall": 0.97, "number": 0.01, "translation": 0.01}
GRID = [(d, s) for d in (24, 32) for s in (0.3, 0.45, 0.6)]
_NO_TEMPLATE = frozenset({"printer"})


@dataclass(frozen=True)
class MlLabel:
    """The truth about one document of the multilingual corpus (fields of its corpus line)."""

    group: str
    kind: str
    host: str
    family: str
    lang: str
    length: str
    near_miss: str = ""  # "number" | "name"
    near_miss_of: str = ""  # the group a near-miss imitates
    parallel: str = ""  # shared by a Simplified text and its Traditional translation

    @property
    def cell(self) -> str:
        return f"{self.lang}/{self.length}"

    def doc_label(self) -> DocLabel:
        return DocLabel(self.group, self.kind, self.host, self.family)


def labels_of(docs: Sequence[Mapping]) -> dict[str, MlLabel]:
    return {
        d["id"]: MlLabel(
            d["group"],
            d["kind"],
            d["host"],
            d["family"],
            d["lang"],
            d["length"],
            d.get("near_miss", ""),
            d.get("near_miss_of", ""),
            d.get("parallel", ""),
        )
        for d in docs
    }


def negative_types(a: MlLabel, b: MlLabel) -> tuple[str, ...]:
    """Types of hard negative of a pair from different groups (``("other",)`` if none)."""
    types = []
    for x, y in ((a, b), (b, a)):
        if x.near_miss and x.near_miss_of == y.group:
            types.append(x.near_miss)
    if a.parallel and a.parallel == b.parallel and a.lang != b.lang:
        types.append("translation")
    if a.host and a.host == b.host and a.kind not in _NO_TEMPLATE and b.kind not in _NO_TEMPLATE:
        types.append("site_template")
    if a.family and a.family == b.family:
        types.append("family")
    return tuple(types) or ("other",)


def project(
    window: Sequence[str], collapsed: Sequence[tuple[str, Sequence[str]]], keep: set[str]
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The window and collapsed answer restricted to the hits in ``keep``.

    Every pair of kept hits keeps its decision (folded or not); a group whose representative
    is not kept is shown by its first kept member. Lost results and representative violations
    are only meaningful on the whole window.
    """
    w = [h for h in window if h in keep]
    c = []
    for rep, members in collapsed:
        ids = [x for x in (rep, *members) if x in keep]
        if ids:
            c.append((ids[0], ids[1:]))
    return w, c


@dataclass
class MlScore:
    """A whole-window score, one score per language × length cell, wrong folds per type."""

    total: Score = field(default_factory=Score)
    cells: dict[str, Score] = field(default_factory=dict)
    negatives: dict[str, list[int]] = field(default_factory=dict)  # "type[/cell]" -> [folded, n]
    examples: dict[str, list] = field(default_factory=dict)  # "type[/cell]" -> folded pairs

    def __iadd__(self, other: MlScore) -> MlScore:
        self.total += other.total
        for k, s in other.cells.items():
            self.cells.setdefault(k, Score())
            self.cells[k] += s
        for k, (f, n) in other.negatives.items():
            cur = self.negatives.setdefault(k, [0, 0])
            cur[0] += f
            cur[1] += n
        for k, v in other.examples.items():
            have = self.examples.setdefault(k, [])
            have.extend(v[: max(0, 5 - len(have))])
        return self

    def as_dict(self) -> dict:
        return {
            **self.total.as_dict(),
            "cells": {k: s.as_dict() for k, s in sorted(self.cells.items())},
            "negatives": {
                k: {"folded": f, "pairs": n, "rate": f / n if n else 0.0}
                for k, (f, n) in sorted(self.negatives.items())
            },
            "negative_examples": self.examples,
        }


def score_ml(
    window: Sequence[str],
    collapsed: Sequence[tuple[str, Sequence[str]]],
    labels: Mapping[str, MlLabel],
    pairs: list[list[str]] | None = None,
) -> MlScore:
    """Score one query's window and collapsed answer (module docstring). ``pairs``, when
    given, gets every wrong decision of the window: ``[types, cell, id, id]`` for a folded
    pair of different groups (its :func:`negative_types` joined by ``+``), ``["missed",
    cell, id, id]`` for a true pair left apart (``cell``: the pair's, or its length when its
    documents' cells differ)."""
    doc_labels = {h: labels[h].doc_label() for h in window}
    out = MlScore(total=score_window(window, collapsed, doc_labels))
    for cell in sorted({labels[h].cell for h in window}):
        keep = {h for h in window if labels[h].cell == cell}
        w, c = project(window, collapsed, keep)
        out.cells[cell] = score_window(w, c, doc_labels)
    groups = fold_map(collapsed)
    ids = list(window)
    for i in range(len(ids)):
        a = labels[ids[i]]
        for j in range(i + 1, len(ids)):
            b = labels[ids[j]]
            folded = groups.get(ids[i], -1 - i) == groups.get(ids[j], -1 - j)
            cell = a.cell if a.cell == b.cell else f"{a.length}"
            if a.group == b.group:
                if pairs is not None and not folded:
                    pairs.append(["missed", cell, ids[i], ids[j]])
                continue
            types = negative_types(a, b)
            if folded and pairs is not None:
                pairs.append(["+".join(types), cell, ids[i], ids[j]])
            for t in types:
                for key in (t, f"{t}/{cell}"):
                    cur = out.negatives.setdefault(key, [0, 0])
                    cur[0] += folded
                    cur[1] += 1
                if folded and t != "other":
                    ex = out.examples.setdefault(t, [])
                    if len(ex) < 5:
                        ex.append([ids[i], ids[j]])
    return out


# ---------------------------------------------------------------- the run


def run(
    corpus_dir: Path,
    *,
    es: str,
    window: int,
    index: str,
    grid: list[tuple[int, float]],
    concurrency: int,
    work: Path,
    reuse: bool = False,
    tree: Path = ROOT,
    pairs: Path | None = None,
) -> dict:
    docs = list(load_jsonl(corpus_dir / "corpus.jsonl"))
    queries = list(load_jsonl(corpus_dir / "queries.jsonl"))
    labels = labels_of(docs)
    work.mkdir(parents=True, exist_ok=True)
    have = httpx.get(f"{es}/{index}/_count", timeout=30)
    if reuse and have.status_code == 200 and have.json()["count"] == len(docs):
        ing = {"index": index, "reused": True, "count": len(docs), "seconds": 0}
    else:
        ing = ingest(es, corpus_dir / "corpus.jsonl", index, True, work, tree)
        print(f"ingested {index}: {ing['count']} docs in {ing['seconds']} s", file=sys.stderr)
    proxy = Proxy(es, work / "proxy.log", tree)
    rows = []
    try:
        with (
            httpx.Client(timeout=60, limits=httpx.Limits(max_connections=concurrency * 2)) as c,
            ThreadPoolExecutor(concurrency) as pool,
        ):

            def post(params: dict, q: dict) -> dict:
                r = c.post(
                    f"{proxy.url}/{index}/_search",
                    json=search_body(q["text"], window),
                    params=params,
                )
                r.raise_for_status()
                return r.json()

            flat = pool.map(lambda q: post({"collapse": "false"}, q), queries)
            windows = {
                q["id"]: [h["_id"] for h in b["hits"]["hits"]]
                for q, b in zip(queries, flat, strict=True)
            }
            settings: list[tuple[str, int | None, float | None]] = [("proxy_defaults", None, None)]
            settings += [("simhash+minhash", d, s) for d, s in grid]
            for method, d, s in settings:
                params: dict = {"collapse_window": window, "collapse_members": 1000}
                if method != "proxy_defaults":
                    params |= {"collapse_max_distance": d, "collapse_min_similarity": s}
                t0 = time.perf_counter()
                total = MlScore()
                degraded = 0
                answers = pool.map(lambda q, p=params: post(p, q), queries)
                wrong: list[list[str]] = []  # at the defaults (the first row), for --pairs
                for q, b in zip(queries, answers, strict=True):
                    found: list[list[str]] | None = [] if pairs and not rows else None
                    total += score_ml(windows[q["id"]], _collapsed(b), labels, found)
                    wrong += [[q["id"], *r] for r in found or ()]
                    info = b.get("collapse", {})
                    degraded += bool(info.get("degraded"))
                    if method == "proxy_defaults":
                        d, s = info.get("max_distance"), info.get("min_similarity")
                rows.append(
                    {
                        "method": method,
                        "max_distance": d,
                        "min_similarity": s,
                        "degraded": degraded,
                        "seconds": round(time.perf_counter() - t0, 2),
                        **total.as_dict(),
                    }
                )
                if pairs and len(rows) == 1:
                    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in wrong)
                    pairs.write_text(text, encoding="utf-8")
                o = rows[-1]["overall"]
                print(
                    f"{method:16} d={d!s:>4} s={s!s:>4} P={o['precision']:.4f} R={o['recall']:.4f}"
                    f" number={_rate(rows[-1], 'number'):.3f}"
                    f" translation={_rate(rows[-1], 'translation'):.3f}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        proxy.stop()
    return {
        "measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "corpus": json.loads((corpus_dir / "manifest.json").read_text()),
        "window": window,
        "queries": len(queries),
        "ingest": ing,
        "code": _code(tree),
        "rows": rows,
    }


def _code(tree: Path) -> str:
    """Which code was measured: the tree's commit (a ``git archive`` of one names it in its
    folder) and whether it had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
        )
        if head.returncode == 0:
            dirty = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no", "indexer", "collapse"],
                cwd=tree,
                capture_output=True,
                text=True,
            ).stdout.strip()
            return f"{tree} at {head.stdout.strip()}" + (
                " with uncommitted changes" if dirty else ""
            )
    except OSError:
        pass
    return str(tree)


def _rate(row: dict, key: str) -> float:
    return row["negatives"].get(key, {}).get("rate", 0.0)


# ---------------------------------------------------------------- report


def _f(x: float) -> str:
    return f"{x:.4f}"


def _pct(neg: dict | None) -> str:
    if not neg or not neg["pairs"]:
        return "–"
    return f"{100 * neg['rate']:.1f} % ({neg['folded']:,} of {neg['pairs']:,})"


def report(res: dict, row: dict | None = None) -> str:
    """Markdown tables of one row (default: the proxy at its defaults) of a results file."""
    row = row or next(r for r in res["rows"] if r["method"] == "proxy_defaults")
    neg = row["negatives"]
    corpus = res["corpus"]  # the second corpus's manifest counts documents only
    size = (
        f"{corpus['documents']:,} documents in {corpus['groups']:,} groups"
        if "groups" in corpus
        else f"{corpus.get('n_docs', 0):,} documents"
    )
    lines = [
        f"Measured {res['measured']} ({res['machine']}); corpus {size}, "
        f"{res['queries']} queries, window {res['window']}; the proxy at "
        f"max_distance={row['max_distance']}, min_similarity={row['min_similarity']}; "
        f"answers degraded: {row['degraded']}; results lost: {row['lost']}; "
        f"representative-rule violations: {row['violations']}.",
        "",
        "| language | length | true pairs | precision | recall | F1 | number-changed folded "
        "| name-changed folded | goals |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for lang in ALL_LANGS:
        for length in ("short", "long"):
            cell = f"{lang}/{length}"
            s = row["cells"].get(cell)
            if not s:
                continue
            o = s["overall"]
            num = neg.get(f"number/{cell}")
            ok = o["precision"] >= GOALS["precision"] and o["recall"] >= GOALS["recall"]
            if num and num["pairs"]:
                ok = ok and num["rate"] <= GOALS["number"]
            goal = ("met" if ok else "**not met**") if lang in LANGS else "(not a goal)"
            lines.append(
                f"| {lang} | {length} | {o['tp'] + o['fn']:,} | {_f(o['precision'])} | "
                f"{_f(o['recall'])} | {_f(o['f1'])} | {_pct(num)} | "
                f"{_pct(neg.get(f'name/{cell}'))} | {goal} |"
            )
    o = row["overall"]
    lines += [
        f"| **all** | | {o['tp'] + o['fn']:,} | {_f(o['precision'])} | {_f(o['recall'])} | "
        f"{_f(o['f1'])} | {_pct(neg.get('number'))} | {_pct(neg.get('name'))} | |",
        "",
        "Wrong folds by type of hard negative (pairs of different groups met in a window):",
        "",
        "| type | short | long | all |",
        "|---|---:|---:|---:|",
    ]
    for t in NEGATIVES:
        short = {"folded": 0, "pairs": 0}
        long_ = {"folded": 0, "pairs": 0}
        for k, v in neg.items():
            if not k.startswith(t + "/"):
                continue
            tgt = short if k.endswith("short") else long_
            tgt["folded"] += v["folded"]
            tgt["pairs"] += v["pairs"]
        for x in (short, long_):
            x["rate"] = x["folded"] / x["pairs"] if x["pairs"] else 0.0
        lines.append(f"| {t} | {_pct(short)} | {_pct(long_)} | {_pct(neg.get(t))} |")
    kinds = sorted({k for s in row["cells"].values() for k in s["by_kind"]})
    lines += [
        "",
        "Recall by kind of variant (pairs with at least one document of that kind):",
        "",
        "| kind | " + " | ".join(f"{x} short | {x} long" for x in LANGS) + " |",
        "|---|" + "---:|" * (2 * len(LANGS)),
    ]
    for k in kinds:
        cells = []
        for lang in LANGS:
            for length in ("short", "long"):
                c = row["cells"].get(f"{lang}/{length}", {}).get("by_kind", {}).get(k)
                n = (c["tp"] + c["fn"]) if c else 0
                cells.append(f"{c['recall']:.3f}" if n else "–")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    grid = [r for r in res["rows"] if r["method"] != "proxy_defaults"]
    if grid:
        lines += [
            "",
            "Other thresholds (`--grid`), same windows; the lowest precision and recall of the",
            "ten goal cells:",
            "",
            "| max_distance | min_similarity | precision | recall | lowest cell precision "
            "| lowest cell recall | number-changed folded | translations folded |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in grid:
            goal_cells = [r["cells"][c]["overall"] for c in _goal_cells() if c in r["cells"]]
            lines.append(
                f"| {r['max_distance']} | {r['min_similarity']} | "
                f"{_f(r['overall']['precision'])} | {_f(r['overall']['recall'])} | "
                f"{_f(min(c['precision'] for c in goal_cells))} | "
                f"{_f(min(c['recall'] for c in goal_cells))} | "
                f"{_pct(r['negatives'].get('number'))} | "
                f"{_pct(r['negatives'].get('translation'))} |"
            )
    return "\n".join(lines)


def _goal_cells() -> list[str]:
    return [f"{lang}/{length}" for lang in LANGS for length in ("short", "long")]


def plot(results: Sequence[tuple[str, dict]], path: Path) -> Path:
    """Precision and recall per language × length at the defaults, and the wrong folds per
    hard negative, for one or more results files (e.g. before and after a change)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = [f"{lang}/{length}" for lang in LANGS for length in ("short", "long")]
    types = ("number", "name", "translation", "site_template", "family")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [3, 2]})
    n = len(results)
    width = 0.8 / (2 * n)
    blues, oranges = ("#9ecae1", "#3b75af", "#08306b"), ("#fdbe85", "#ef8636", "#a63603")
    for i, (label, res) in enumerate(results):
        row = next(r for r in res["rows"] if r["method"] == "proxy_defaults")
        p = [row["cells"].get(c, {}).get("overall", {}).get("precision", 0) for c in cells]
        r = [row["cells"].get(c, {}).get("overall", {}).get("recall", 0) for c in cells]
        off = -0.4 + width / 2 + 2 * i * width
        ax.bar(
            [x + off for x in range(len(cells))],
            p,
            width,
            color=blues[i % 3],
            label=f"precision, {label}",
        )
        ax.bar(
            [x + off + width for x in range(len(cells))],
            r,
            width,
            color=oranges[i % 3],
            label=f"recall, {label}",
        )
        vals = [100 * row["negatives"].get(t, {}).get("rate", 0.0) for t in types]
        bw = 0.8 / n
        bx.bar(
            [x - 0.4 + bw / 2 + i * bw for x in range(len(types))],
            vals,
            bw,
            color=blues[(i + 1) % 3],
            label=label,
        )
    ax.axhline(GOALS["precision"], color="#3b75af", ls="--", lw=0.8)
    ax.axhline(GOALS["recall"], color="#ef8636", ls=":", lw=0.8)
    ax.set_xticks(range(len(cells)), cells, rotation=45, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_title("pairwise precision and recall at the defaults (goals: 0.99 / 0.97)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=7, ncol=2 * n)
    bx.axhline(100 * GOALS["number"], color="k", ls="--", lw=0.8)
    bx.set_xticks(range(len(types)), types, rotation=30, ha="right")
    bx.set_ylabel("% of pairs folded (goal for number, translation: 1 %)")
    bx.set_title("wrong folds by hard negative")
    bx.legend(fontsize=7)
    first = results[0][1]
    fig.text(
        0.01,
        0.01,
        "bench/quality/run_multilingual.py; "
        + "; ".join(f"{label}: {res['measured']}" for label, res in results)
        + f"; {first['queries']} queries, {first['corpus']['documents']} documents, window "
        f"{first['window']}",
        fontsize=7,
        color="#555",
    )
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _label(spec: str) -> tuple[str, Path]:
    """``results.json`` or ``results.json=label`` (default label: the measured code tree)."""
    file, _, label = spec.partition("=")
    res = json.loads(Path(file).read_text())
    return label or Path(res.get("code", file).split(" ")[0]).name, Path(file)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small corpus (a few minutes)")
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--prefix", default="neardup-quality-ml")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--corpus", type=Path, default=None, help="corpus folder (built if missing)")
    ap.add_argument("--rebuild", action="store_true", help="build the corpus even if present")
    ap.add_argument("--out", type=Path, default=None, help="results JSON [corpus/results.json]")
    ap.add_argument("--grid", action="store_true", help=f"also the threshold points {GRID}")
    ap.add_argument("--reuse-indices", action="store_true", help="skip ingestion if complete")
    ap.add_argument(
        "--pairs",
        type=Path,
        default=None,
        help="write every wrong decision at the defaults to this JSON Lines file (replaced):"
        " [query, type or 'missed', cell, id, id]",
    )
    ap.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="code tree whose indexer and proxy are measured (e.g. a git archive of a commit)",
    )
    ap.add_argument(
        "--report",
        nargs="+",
        metavar="RESULTS[=LABEL]",
        help="print the tables of results files and draw them in one figure (no run)",
    )
    ap.add_argument(
        "--plot",
        type=Path,
        default=ROOT / "docs/img/quality_multilingual.png",
        help="figure written with --report",
    )
    a = ap.parse_args(argv)
    if a.report:
        results = []
        for spec in a.report:
            label, file = _label(spec)
            res = json.loads(file.read_text())
            print(f"### {label}\n\n{report(res)}\n")
            results.append((label, res))
        print(f"wrote {plot(results, a.plot)}", file=sys.stderr)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the proxy on the way out
    es = a.es_url.split(",")[0].rstrip("/")
    corpus = a.corpus or DEFAULT_CACHE / ("quick" if a.quick else "full")
    if a.rebuild or not (corpus / "corpus.jsonl").exists():
        build(corpus, quick=a.quick)
    res = run(
        corpus,
        es=es,
        window=a.window,
        index=a.prefix + ("-quick" if a.quick else ""),
        grid=GRID if a.grid else [],
        concurrency=a.concurrency,
        work=corpus / "work",
        reuse=a.reuse_indices,
        tree=a.tree.resolve(),
        pairs=a.pairs,
    )
    out = a.out or corpus / "results.json"
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False))
    print(report(res))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
