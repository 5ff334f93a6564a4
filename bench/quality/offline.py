"""Threshold sweeps without the proxy: the same windows, fingerprints and grouping rule, in-process.

The end-to-end benchmark (``run.py``) is the deliverable; this module answers the questions
the proxy cannot be asked per request — other shingle lengths or sketch sizes, the per-host
boilerplate model on or off without re-ingesting — and sweeps a dense grid in seconds:

1. the corpus is loaded into a scratch index (title and body only) to get each query's
   uncollapsed window from Elasticsearch's own ranking (cached);
2. every document is fingerprinted with ``indexer.fingerprints`` (with the per-host model of
   ``indexer.boilerplate`` or without);
3. each window is grouped with ``indexer.grouping.group`` for every threshold pair and scored
   with a vectorised equivalent of :func:`bench.quality.scoring.score_window` (checked against
   it on the first windows).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from bench.quality.scoring import (
    NEGATIVE_TYPES,
    Counts,
    DocLabel,
    Score,
    negative_types,
    score_window,
)

__all__ = ["WindowTruth", "fetch_windows", "fingerprints", "prints_for", "sweep"]


def _labels(docs: Sequence[dict]) -> dict[str, DocLabel]:
    return {d["id"]: DocLabel(d["group"], d["kind"], d["host"], d["family"]) for d in docs}


def fetch_windows(
    es: str,
    docs: Sequence[dict],
    queries: Sequence[dict],
    window: int,
    cache: Path,
    index: str = "neardup-quality-windows",
) -> dict[str, list[str]]:
    """Uncollapsed windows (hit ids in rank order) of every query, from a scratch index."""
    if cache.exists():
        got = json.loads(cache.read_text())
        if got.get("window") == window and len(got["windows"]) == len(queries):
            return got["windows"]
    with httpx.Client(base_url=es, timeout=120) as c:
        c.delete(f"/{index}")
        c.put(
            f"/{index}",
            json={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}},
            },
        ).raise_for_status()
        for lo in range(0, len(docs), 500):
            lines = []
            for d in docs[lo : lo + 500]:
                lines.append(json.dumps({"index": {"_id": d["id"]}}))
                lines.append(json.dumps({"title": d["title"], "body": d["body"]}))
            r = c.post(
                f"/{index}/_bulk",
                content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"},
            )
            r.raise_for_status()
            assert not r.json()["errors"]
        c.post(f"/{index}/_refresh").raise_for_status()
        out = {}
        for q in queries:
            r = c.post(f"/{index}/_search", json=search_body(q["text"], window))
            r.raise_for_status()
            out[q["id"]] = [h["_id"] for h in r.json()["hits"]["hits"]]
        c.delete(f"/{index}")
    cache.write_text(json.dumps({"window": window, "windows": out}))
    return out


def search_body(text: str, size: int) -> dict:
    """The query every run sends (same ranking for the scratch index and the real ones)."""
    return {
        "size": size,
        "_source": False,
        "query": {"multi_match": {"query": text, "fields": ["title^2", "body"]}},
    }


_REMOVED: dict[int, np.ndarray] = {}


def fingerprints(docs: Sequence[dict], params, boilerplate: bool):
    """FingerprintArrays of the corpus, as ``indexer ingest`` computes them (in one batch)."""
    from indexer.boilerplate import (
        BoilerplateConfig,
        Learner,
        doc_shingle_sets,
        fingerprint_excluding,
    )
    from indexer.documents import document_text, host_of
    from indexer.fingerprints import fingerprint_arrays

    texts = [document_text(d) for d in docs]
    if not boilerplate:
        return fingerprint_arrays(texts, params)
    cfg = BoilerplateConfig()
    hosts = [host_of(d.get("url")) for d in docs]
    learner = Learner(cfg)
    for h, sets in zip(hosts, doc_shingle_sets(texts, params), strict=True):
        if h:
            learner.add(h, sets)
    models = learner.models()
    arrays, removed = fingerprint_excluding(
        texts,
        params,
        [models.get(h) if h else None for h in hosts],
        cfg.max_removed,
        getattr(cfg, "min_remaining", 50),
    )
    _REMOVED[id(arrays)] = removed  # for explain()
    return arrays


def prints_for(arrays):
    """indexer.grouping.Prints of all documents (row i = document i)."""
    from indexer.grouping import Prints

    codes: dict[str, int] = {}
    key = np.array([codes.setdefault(k, len(codes)) if k else -1 for k in arrays.exact_keys])
    return Prints(
        arrays.simhash,
        arrays.minhash,
        key.astype(np.int64),
        arrays.token_count,
        arrays.present,
        arrays.numbers,
    )


@dataclass
class WindowTruth:
    """Pair masks of one window (upper triangle), to score many groupings fast."""

    ids: list[str]
    iu: tuple[np.ndarray, np.ndarray]
    true: np.ndarray
    kind_masks: dict[str, np.ndarray]
    neg_masks: dict[str, np.ndarray]

    @classmethod
    def build(cls, ids: Sequence[str], labels: dict[str, DocLabel]) -> WindowTruth:
        n = len(ids)
        iu = np.triu_indices(n, 1)
        labs = [labels[h] for h in ids]
        grp = np.array([lb.group for lb in labs])
        kind = np.array([lb.kind for lb in labs])
        true = grp[iu[0]] == grp[iu[1]]
        kinds = {k: (kind[iu[0]] == k) | (kind[iu[1]] == k) for k in set(kind.tolist())}
        neg = {t: np.zeros(len(true), dtype=bool) for t in NEGATIVE_TYPES}
        for p in np.flatnonzero(~true):
            for t in negative_types(labs[iu[0][p]], labs[iu[1][p]]):
                neg[t][p] = True
        return cls(list(ids), iu, true, kinds, neg)

    def score(self, rep: np.ndarray) -> Score:
        """Score a grouping given as each hit's representative index (all hits shown)."""
        folded = rep[self.iu[0]] == rep[self.iu[1]]
        s = Score(windows=1, hits=len(self.ids))
        s.overall = _counts(self.true, folded)
        s.by_kind = {k: _counts(self.true[m], folded[m]) for k, m in self.kind_masks.items()}
        s.negatives = {
            t: [int((folded & m).sum()), int(m.sum())] for t, m in self.neg_masks.items() if m.any()
        }
        s.violations = int((rep > np.arange(len(rep))).sum())
        return s


def _counts(true: np.ndarray, folded: np.ndarray) -> Counts:
    return Counts(
        tp=int((true & folded).sum()),
        fp=int((~true & folded).sum()),
        fn=int((true & ~folded).sum()),
        tn=int((~true & ~folded).sum()),
    )


def sweep(docs, windows, arrays, grid, *, min_tokens: int = 50, check: int = 3):
    """Score every (max_distance, min_similarity) of ``grid`` over all windows."""
    from indexer.grouping import Thresholds, group

    labels = _labels(docs)
    row = {d["id"]: i for i, d in enumerate(docs)}
    allp = prints_for(arrays)
    truths = []
    for ids in windows.values():
        ids = [h for h in ids if h in row]
        truths.append((WindowTruth.build(ids, labels), allp.take(np.array([row[h] for h in ids]))))
    out = {}
    for md, ms in grid:
        t = Thresholds(max_distance=md, min_similarity=ms, min_tokens=min_tokens)
        total = Score()
        for wi, (truth, p) in enumerate(truths):
            g = group(p, t)
            s = truth.score(g.rep)
            if wi < check:  # the fast path must agree with the reference scoring
                coll = [
                    (truth.ids[r], [truth.ids[m] for m in g.members(r)]) for r in g.representatives
                ]
                ref = score_window(truth.ids, coll, labels)
                assert ref.overall == s.overall and ref.violations == s.violations, (md, ms)
            total += s
        out[(md, ms)] = total
    return out


def explain(docs, windows, arrays, max_distance: int, min_similarity: float) -> dict:
    """Why true pairs of the windows stay apart, and which different pairs fold, at one setting.

    Missed pairs are attributed to: ``distance`` (SimHash beyond max_distance), ``similarity``
    (MinHash below min_similarity), ``short`` (a side below min_tokens, exact key only) or
    ``rank`` (both verify but the grouping put them behind different representatives).
    """
    from indexer.fingerprints.bits import popcount64
    from indexer.fingerprints.minhash import similarity
    from indexer.grouping import Thresholds, group

    t = Thresholds(max_distance, min_similarity, arrays.params.min_tokens)
    row = {d["id"]: i for i, d in enumerate(docs)}
    allp = prints_for(arrays)
    removed = _REMOVED.get(id(arrays), np.zeros(len(docs)))
    causes: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {}
    wrong: dict[str, int] = {}
    seen: set[tuple[int, int]] = set()
    samples: list[dict] = []
    for ids in windows.values():
        rows = np.array([row[h] for h in ids])
        g = group(allp.take(rows), t)
        for a in range(len(rows)):
            for b in range(a + 1, len(rows)):
                i, j = int(rows[a]), int(rows[b])
                same = docs[i]["group"] == docs[j]["group"]
                folded = g.rep[a] == g.rep[b]
                if same == folded or (i, j) in seen:
                    continue
                seen.add((i, j))
                ham = int(popcount64(np.array([arrays.simhash[i] ^ arrays.simhash[j]]))[0])
                sim = float(similarity(arrays.minhash[i], arrays.minhash[j]))
                if not same:
                    key = f"{docs[i]['family']} ~ {docs[j]['family']}"
                    wrong[key] = wrong.get(key, 0) + 1
                    continue
                if min(arrays.token_count[i], arrays.token_count[j]) < t.min_tokens:
                    cause = "short"
                elif ham > max_distance:
                    cause = "distance"
                elif sim < min_similarity:
                    cause = "similarity"
                else:
                    cause = "rank"
                causes[cause] = causes.get(cause, 0) + 1
                kinds = "+".join(sorted({docs[i]["kind"], docs[j]["kind"]}))
                by_kind.setdefault(kinds, {}).setdefault(cause, 0)
                by_kind[kinds][cause] += 1
                if len(samples) < 12:
                    samples.append(
                        {
                            "pair": [docs[i]["id"], docs[j]["id"]],
                            "cause": cause,
                            "hamming": ham,
                            "similarity": round(sim, 3),
                            "tokens": [int(arrays.token_count[i]), int(arrays.token_count[j])],
                            "removed": [round(float(removed[i]), 2), round(float(removed[j]), 2)],
                            "hosts": [docs[i]["host"], docs[j]["host"]],
                        }
                    )
    return {
        "missed_pairs_by_cause": causes,
        "missed_by_kinds": by_kind,
        "wrong_folds_by_family": wrong,
        "samples": samples,
    }


DISTANCES = (-1, 0, 3, 5, 7, 10, 12, 14, 16, 18, 20, 22, 24, 28, 32, 64)
SIMILARITIES = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import time

    from bench.quality.build_corpus import DEFAULT_CACHE, load_jsonl
    from indexer.fingerprints import FingerprintParams

    ap = argparse.ArgumentParser(description="offline threshold sweep (no proxy)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CACHE / "full")
    ap.add_argument("--es", default="http://127.0.0.1:9200")
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument(
        "--params",
        action="append",
        default=[],
        help="FingerprintParams as JSON (repeatable); default: the indexer's",
    )
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--small-grid", action="store_true", help="5 x 5 points near the optimum")
    ap.add_argument("--no-nobp", action="store_true", help="only with the boilerplate model")
    ap.add_argument(
        "--explain",
        default=None,
        metavar="D,S",
        help="only explain misses and wrong folds at max_distance D, similarity S",
    )
    a = ap.parse_args(argv)
    docs = list(load_jsonl(a.corpus / "corpus.jsonl"))
    queries = list(load_jsonl(a.corpus / "queries.jsonl"))
    windows = fetch_windows(a.es, docs, queries, a.window, a.corpus / f"windows-{a.window}.json")
    if a.explain:
        d, s = a.explain.split(",")
        arrays = fingerprints(docs, FingerprintParams(), True)
        print(json.dumps(explain(docs, windows, arrays, int(d), float(s)), indent=1))
        return 0
    grid = [(d, s) for d in DISTANCES for s in SIMILARITIES]
    if a.small_grid:
        grid = [(d, s) for d in (12, 18, 24, 32, 64) for s in (0.3, 0.4, 0.45, 0.5, 0.6)]
    results = []
    for raw in a.params or ["{}"]:
        params = FingerprintParams(**json.loads(raw))
        for bp in (True,) if a.no_nobp else (True, False):
            t0 = time.perf_counter()
            arrays = fingerprints(docs, params, bp)
            scores = sweep(docs, windows, arrays, grid, min_tokens=params.min_tokens)
            for (d, s), sc in scores.items():
                results.append(
                    {
                        "version": params.version,
                        "boilerplate": bp,
                        "max_distance": d,
                        "min_similarity": s,
                        **sc.as_dict(),
                    }
                )
            print(f"{params.version} boilerplate={bp}: {time.perf_counter() - t0:.1f}s", flush=True)
    out = a.out or a.corpus / "offline.json"
    out.write_text(json.dumps(results))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
