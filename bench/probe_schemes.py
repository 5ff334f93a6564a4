"""The two probe schemes side by side in one run: MinHash band keys against the design card's
four 16-bit SimHash blocks (``indexer init --probe bands|blocks``).

Against the real cluster (``ES_URL``), on the quality benchmark's labelled corpus
(``bench/quality``, built if missing) and its 300 queries:

1. per scheme: ``indexer init --probe S`` then ``indexer ingest`` (the CLI, per-host
   boilerplate model), ``rounds`` times alternating the schemes (the best docs/s of each is
   kept); index size after a merge to one segment, and the probe keys' own share
   (``_disk_usage``);
2. the proxy (a real uvicorn process, no refills) answers each query against both indices in
   turn, at the default thresholds and window, page 1 of 10, every member listed with how it
   was found; and once more with a window holding every match (every pair compared: the
   reference);
3. each page's probe is replayed directly against Elasticsearch (the body the proxy sends,
   read from doc values): its round trip, and how many documents match it.

Printed as a Markdown table (docs/proxy.md, "Probe schemes"); ``--out`` keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from bench.quality.build_corpus import DEFAULT_CACHE, load_jsonl
from bench.quality.offline import search_body
from bench.quality.run import PY, ROOT, Proxy, _env
from collapse import probe, slim
from indexer.hits import VERIFY_SOURCE, decode, exact_keys_of, probe_keys

SCHEMES = ("bands", "blocks")
PAGE = 10
#: The reference window: every document of the corpus (5,881), so every pair is compared.
REFERENCE = 6000


def ingest(es: str, corpus: Path, index: str, scheme: str, work: Path) -> dict[str, Any]:
    """Recreate ``index`` for ``scheme`` and ingest the corpus with the CLI; seconds, docs."""
    httpx.delete(f"{es}/{index}", timeout=60)
    env = _env(es)
    subprocess.run(
        [PY, "-m", "indexer", "init", "--index", index, "--probe", scheme, "--es-url", es],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip
    cmd = [
        PY, "-m", "indexer", "ingest", "--index", index, str(corpus), "--allow-rejects",
        "--no-progress", "--rejects", str(work / f"{index}.rejects.jsonl"),
        "--state", str(work / f".{index}.state.json"), "--es-url", es,
    ]  # fmt: skip
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise RuntimeError(f"ingest failed ({res.returncode}): {res.stderr[-2000:]}")
    httpx.post(f"{es}/{index}/_refresh", timeout=60).raise_for_status()
    count = httpx.get(f"{es}/{index}/_count", timeout=60).json()["count"]
    return {"seconds": seconds, "count": count, "docs_per_s": count / seconds}


def sizes(es: str, index: str) -> dict[str, int]:
    """Store size after a merge to one segment, and the bytes of the probe-key fields."""
    httpx.post(f"{es}/{index}/_forcemerge", params={"max_num_segments": 1}, timeout=600)
    store = httpx.get(f"{es}/{index}/_stats/store", timeout=60).json()
    total = store["indices"][index]["primaries"]["store"]["size_in_bytes"]
    usage = httpx.post(
        f"{es}/{index}/_disk_usage", params={"run_expensive_tasks": "true"}, timeout=600
    ).json()
    fields = usage.get(index, {}).get("fields", {})
    keys = sum(
        int(v.get("total_in_bytes", 0))
        for name, v in fields.items()
        if name == "collapse_fp.band" or name.startswith("collapse_fp.block_")
    )
    return {"store": total, "keys": keys}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def replay_probe(
    client: httpx.Client, index: str, scheme: str, text: str, window: int, reps: list[str]
) -> tuple[float, int, int]:
    """The page's probe as the proxy sends it: (round trip ms, fetched, matching)."""
    body = search_body(text, window)
    got = client.post(f"/{index}/_search", json={**body, "_source": VERIFY_SOURCE}).json()
    hits = got["hits"]["hits"]
    dec = decode(hits, 10)
    if dec.params is None:
        return 0.0, 0, 0
    row = {h["_id"]: i for i, h in enumerate(hits)}
    rows = [row[r] for r in reps if r in row and dec.prints.present[row[r]]]
    p = dec.prints
    terms = [
        probe_keys(int(p.simhash[i]), p.minhash[i], dec.params, frozenset({scheme}))
        for i in rows
        if p.token_count[i] >= 10
    ]
    keys = exact_keys_of([hits[i] for i in rows], dec.params)
    seen = [(index, h["_id"]) for h in hits]
    full = probe.probe_body({"query": body["query"]}, terms, keys, seen, 30)
    sent = slim.probe_body(full)
    t0 = time.perf_counter()
    answer = client.post(f"/{index}/_search", json=sent).json()
    ms = (time.perf_counter() - t0) * 1000
    fetched = len(answer["hits"]["hits"])
    counted = client.post(
        f"/{index}/_search", json={"query": full["query"], "size": 0, "track_total_hits": True}
    ).json()["hits"]["total"]["value"]
    return ms, fetched, counted


def run(es: str, corpus_dir: Path, rounds: int, limit: int | None) -> dict[str, Any]:
    corpus = corpus_dir / "corpus.jsonl"
    queries = list(load_jsonl(corpus_dir / "queries.jsonl"))[:limit]
    group = {d["id"]: d["group"] for d in load_jsonl(corpus)}
    work = corpus_dir / "work"
    work.mkdir(exist_ok=True)
    index = {s: f"neardup-probe-{s}" for s in SCHEMES}
    ingests: dict[str, list[dict[str, Any]]] = {s: [] for s in SCHEMES}
    for _ in range(rounds):
        for s in SCHEMES:
            ingests[s].append(ingest(es, corpus, index[s], s, work))
    size = {s: sizes(es, index[s]) for s in SCHEMES}
    stats: dict[str, dict[str, Any]] = {
        s: {"found": 0, "reference": 0, "found_of_reference": 0, "probe_true": 0,
            "same_group_beyond": 0, "folded": 0, "folded_true": 0, "ms": [], "fetched": [],
            "matching": [], "search_ms": []}
        for s in SCHEMES
    }  # fmt: skip
    os.environ["COLLAPSE_MAX_WINDOW"] = str(REFERENCE)  # the proxy's environment is ours
    proxy = Proxy(es, work / "probe-schemes-proxy.log")
    try:
        with (
            httpx.Client(base_url=proxy.url, timeout=60) as px,
            httpx.Client(base_url=es, timeout=60) as direct,
        ):
            for q in queries:
                for s in SCHEMES:
                    _one(px, direct, index[s], s, q["text"], group, stats[s])
    finally:
        proxy.stop()
    for s in SCHEMES:
        httpx.delete(f"{es}/{index[s]}", timeout=60)
    return {"queries": len(queries), "ingest": ingests, "size": size, "stats": stats}


def _one(
    px: httpx.Client,
    direct: httpx.Client,
    index: str,
    scheme: str,
    text: str,
    group: dict[str, str],
    st: dict[str, Any],
) -> None:
    """One query against one index: the page, its reference, its probe replayed."""
    params: dict[str, str | int] = {"collapse_members": 1000, "collapse_explain": "true"}
    t0 = time.perf_counter()
    page = px.post(f"/{index}/_search", json=search_body(text, PAGE), params=params).json()
    st["search_ms"].append((time.perf_counter() - t0) * 1000)
    window = page["collapse"]["window"]
    ref = px.post(
        f"/{index}/_search",
        json=search_body(text, PAGE),
        params={**params, "collapse_window": REFERENCE},
    ).json()
    ranking = direct.post(f"/{index}/_search", json=search_body(text, REFERENCE)).json()
    rank = {h["_id"]: i for i, h in enumerate(ranking["hits"]["hits"])}
    ref_members = {
        h["_id"]: {m["_id"] for m in h["_collapse"]["members"]} for h in ref["hits"]["hits"]
    }
    reps = [h["_id"] for h in page["hits"]["hits"]]
    for h in page["hits"]["hits"]:
        members = h["_collapse"]["members"]
        g = group.get(h["_id"])
        beyond_ref = {m for m in ref_members.get(h["_id"], set()) if rank.get(m, 0) >= window}
        probed = {m["_id"] for m in members if m["found"] == "probe"}
        st["found"] += len(probed)
        st["reference"] += len(beyond_ref)
        st["found_of_reference"] += len(probed & beyond_ref)
        st["probe_true"] += sum(group.get(m) == g for m in probed)
        st["same_group_beyond"] += sum(
            1 for d, r in rank.items() if r >= window and d != h["_id"] and group.get(d) == g
        )
        st["folded"] += len(members)
        st["folded_true"] += sum(group.get(m["_id"]) == g for m in members)
    ms, fetched, matching = replay_probe(direct, index, scheme, text, window, reps)
    if fetched or matching or ms:
        st["ms"].append(ms)
        st["fetched"].append(fetched)
        st["matching"].append(matching)


def table(result: dict[str, Any]) -> str:
    """The side-by-side table (Markdown)."""
    rows = {
        "copies beyond the window found (of those a window of every match folds)": lambda s, st: (
            f"{st['found_of_reference']:,} of {st['reference']:,} "
            f"({st['found_of_reference'] / max(st['reference'], 1):.1%})"
        ),
        "copies found beyond the window, all / same true group": lambda s, st: (
            f"{st['found']:,} / {st['probe_true']:,}"
        ),
        "candidates fetched per page (mean; cap 30)": lambda s, st: (
            f"{statistics.fmean(st['fetched']):.1f}"
        ),
        "documents matching the probe per page (median / mean)": lambda s, st: (
            f"{statistics.median(st['matching']):.0f} / {statistics.fmean(st['matching']):.1f}"
        ),
        "probe round trip p50 / p99": lambda s, st: (
            f"{pct(st['ms'], 0.5):.1f} / {pct(st['ms'], 0.99):.1f} ms"
        ),
        "collapsed search through the proxy p50 / p99": lambda s, st: (
            f"{pct(st['search_ms'], 0.5):.1f} / {pct(st['search_ms'], 0.99):.1f} ms"
        ),
        "ingestion (best of rounds)": lambda s, st: (
            f"{max(r['docs_per_s'] for r in result['ingest'][s]):,.0f} docs/s"
        ),
        "index size (1 segment) / probe-key fields": lambda s, st: (
            f"{result['size'][s]['store'] / 2**20:.1f} MiB / "
            f"{result['size'][s]['keys'] / 2**20:.2f} MiB"
        ),
        "page folds in the same true group (precision)": lambda s, st: (
            f"{st['folded_true'] / max(st['folded'], 1):.4f} ({st['folded']:,} folded)"
        ),
        "same-group copies beyond the window found (recall)": lambda s, st: (
            f"{st['probe_true'] / max(st['same_group_beyond'], 1):.3f} "
            f"of {st['same_group_beyond']:,}"
        ),
    }
    lines = [
        "| measure | bands (MinHash 16 × 4) | blocks (SimHash 4 × 16 bits) |",
        "|---|---:|---:|",
    ]
    for name, cell in rows.items():
        cells = [cell(s, result["stats"][s]) for s in SCHEMES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CACHE / "full")
    ap.add_argument("--rounds", type=int, default=2, help="ingestions per scheme")
    ap.add_argument("--queries", type=int, default=None, help="first N queries only")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    result = run(args.es_url, args.corpus, args.rounds, args.queries)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    print(f"{result['queries']} queries, page 1 of {PAGE}, default thresholds and window\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
