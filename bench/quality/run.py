"""End-to-end quality benchmark: ingest, query through the real proxy, score every window pair.

Against the real cluster (``ES_URL``, default ``http://127.0.0.1:9200``):

1. build (or reuse) the labelled corpus (``build_corpus``);
2. ingest it twice with ``python -m indexer ingest``: index ``<prefix>-bp`` with the per-host
   boilerplate model and ``<prefix>-nobp`` with ``--no-boilerplate``;
3. start the proxy (``python -m collapse``, a real uvicorn process on 127.0.0.1, free port);
4. per query and index: the uncollapsed window (``collapse=false``, ``size`` = window), then
   the collapsed answer for every grid point (``collapse_max_distance``,
   ``collapse_min_similarity``, ``collapse_window`` = window, ``collapse_members`` = 1000), and
   Elasticsearch's native ``collapse`` on ``collapse_fp.exact_key`` sent to the cluster
   directly (the "exact key only" baseline);
5. score each answer against the window with :func:`bench.quality.scoring.score_window`.

Rows of the result (``results.json``): ``index`` (bp / nobp), ``method`` (``native_exact``,
``exact`` = distance 0 and similarity 1.0 through the proxy, ``simhash`` = similarity 0,
``simhash+minhash``), thresholds, and the scores. ``python -m bench.quality.run --quick``
takes one to five minutes; the full run 12-30 minutes on two cores, with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.quality.build_corpus import DEFAULT_CACHE, build, load_jsonl
from bench.quality.offline import search_body
from bench.quality.scoring import DocLabel, Score, score_window

__all__ = ["FULL_GRID", "FULL_GRID_NOBP", "QUICK_GRID", "main", "run"]

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
FULL_GRID = [
    (d, s) for d in (3, 7, 12, 16, 20, 24, 32, 64) for s in (0.0, 0.3, 0.4, 0.45, 0.5, 0.6, 0.7)
]
#: Without the boilerplate model fewer points: no setting comes near the goals there.
FULL_GRID_NOBP = [(d, s) for d in (3, 7, 12, 18, 24, 64) for s in (0.0, 0.4, 0.45, 0.5, 0.6)]
QUICK_GRID = [(d, s) for d in (3, 7, 18, 64) for s in (0.0, 0.4, 0.5, 0.7)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ingest(
    es: str, corpus: Path, index: str, boilerplate: bool, work: Path, root: Path = ROOT
) -> dict:
    """Recreate ``index`` and ingest the corpus with the indexer's CLI (of the code tree
    ``root``), its hosts' models learnt afresh; returns timing."""
    httpx.delete(f"{es}/{index}", timeout=60)
    cmd = [
        PY,
        "-m",
        "indexer",
        "ingest",
        "--index",
        index,
        str(corpus),
        "--allow-rejects",
        "--no-progress",
        "--rejects",
        str(work / f"{index}.rejects.jsonl"),
        "--state",
        str(work / f".{index}.state.json"),
    ]
    if boilerplate:
        # the models of this tree's learning, not those an earlier run stored for the index
        cmd.append("--relearn")
    else:
        cmd.append("--no-boilerplate")
    t0 = time.perf_counter()
    res = subprocess.run(
        cmd, cwd=root, capture_output=True, text=True, env=_env(es, root), check=False
    )
    took = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise RuntimeError(f"ingest failed ({res.returncode}): {res.stderr[-2000:]}")
    (work / f".{index}.state.json").unlink(missing_ok=True)
    httpx.post(f"{es}/{index}/_refresh", timeout=60).raise_for_status()
    # One segment, merged before any query: a background merge that ends between a query's
    # uncollapsed window and its collapsed answer reorders hits of equal score (copies), which
    # would score as lost results and rule violations that no rule made.
    httpx.post(
        f"{es}/{index}/_forcemerge", params={"max_num_segments": 1}, timeout=600
    ).raise_for_status()
    count = httpx.get(f"{es}/{index}/_count", timeout=60).json()["count"]
    return {
        "index": index,
        "seconds": round(took, 2),
        "count": count,
        "stderr_tail": res.stderr.strip().splitlines()[-3:],
    }


def _env(es: str, root: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env["ES_URL"] = es
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Proxy:
    """The proxy (of the code tree ``root``) as a real uvicorn process on a free local port."""

    def __init__(self, es: str, log: Path, root: Path = ROOT) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = _env(es, root)
        env["COLLAPSE_TIME_BUDGET_MS"] = "10000"  # measure grouping, not the time-out fallback
        # the window's groups cover every window hit: no refill fetches beyond it are needed
        env["COLLAPSE_REFILLS"] = "0"
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "collapse",
                "--port",
                str(self.port),
                "--es-url",
                es,
                "--log-level",
                "warning",
            ],
            cwd=root,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"proxy exited with {self.proc.returncode}; see {log}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("proxy did not become healthy in 60 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


def _collapsed(body: dict) -> list[tuple[str, list[str]]]:
    out = []
    for h in body["hits"]["hits"]:
        members = [m["_id"] for m in h.get("_collapse", {}).get("members", [])]
        out.append((h["_id"], members))
    return out


def _native(body: dict) -> list[tuple[str, list[str]]]:
    out = []
    for h in body["hits"]["hits"]:
        inner = h.get("inner_hits", {}).get("dups", {}).get("hits", {}).get("hits", [])
        out.append((h["_id"], [m["_id"] for m in inner if m["_id"] != h["_id"]]))
    return out


def run(
    corpus_dir: Path,
    *,
    es: str,
    window: int,
    grid: dict[str, list[tuple[int, float]]],
    prefix: str,
    queries_limit: int | None,
    concurrency: int,
    work: Path,
    reuse: bool = False,
) -> dict:
    docs = list(load_jsonl(corpus_dir / "corpus.jsonl"))
    queries = list(load_jsonl(corpus_dir / "queries.jsonl"))[:queries_limit]
    labels = {d["id"]: DocLabel(d["group"], d["kind"], d["host"], d["family"]) for d in docs}
    work.mkdir(parents=True, exist_ok=True)
    indices = {"bp": f"{prefix}-bp", "nobp": f"{prefix}-nobp"}
    ingests = {}
    for k, v in indices.items():
        have = httpx.get(f"{es}/{v}/_count", timeout=30)
        if reuse and have.status_code == 200 and have.json()["count"] == len(docs):
            ingests[k] = {"index": v, "reused": True, "count": len(docs), "seconds": 0}
            continue
        ingests[k] = ingest(es, corpus_dir / "corpus.jsonl", v, k == "bp", work)
        print(
            f"ingested {v}: {ingests[k]['count']} docs in {ingests[k]['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    proxy = Proxy(es, work / "proxy.log")
    rows: list[dict] = []
    try:
        with httpx.Client(timeout=60, limits=httpx.Limits(max_connections=concurrency * 2)) as c:
            for key, index in indices.items():
                rows.extend(
                    _run_index(
                        c,
                        proxy.url,
                        es,
                        index,
                        key,
                        queries,
                        labels,
                        window,
                        grid[key],
                        concurrency,
                    )
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
        "ingest": ingests,
        "rows": rows,
    }


def _run_index(
    c: httpx.Client,
    proxy: str,
    es: str,
    index: str,
    key: str,
    queries: list[dict],
    labels: dict[str, DocLabel],
    window: int,
    grid: list[tuple[int, float]],
    concurrency: int,
) -> list[dict]:
    def post(url: str, body: dict, params: dict) -> dict:
        r = c.post(url, json=body, params=params)
        r.raise_for_status()
        return r.json()

    windows: dict[str, list[str]] = {}
    search = f"{proxy}/{index}/_search"
    with ThreadPoolExecutor(concurrency) as pool:
        bodies = {q["id"]: search_body(q["text"], window) for q in queries}
        flat = pool.map(lambda q: post(search, bodies[q["id"]], {"collapse": "false"}), queries)
        for q, b in zip(queries, flat, strict=True):
            windows[q["id"]] = [h["_id"] for h in b["hits"]["hits"]]
        methods: list[tuple[str, int | None, float | None]] = [
            ("native_exact", None, None),
            ("proxy_defaults", None, None),
            ("exact", 0, 1.0),
        ]
        methods += [("simhash" if s == 0 else "simhash+minhash", d, s) for d, s in grid]
        rows = []
        for method, d, s in methods:
            t0 = time.perf_counter()
            if method == "native_exact":

                def one(q: dict) -> tuple[list, bool, tuple]:
                    b = dict(bodies[q["id"]])
                    b["collapse"] = {
                        "field": "collapse_fp.exact_key",
                        "inner_hits": {"name": "dups", "size": 100, "_source": False},
                    }
                    return _native(post(f"{es}/{index}/_search", b, {})), False, (None, None)
            else:
                params = {"collapse_window": window, "collapse_members": 1000}
                if method != "proxy_defaults":  # else the thresholds the proxy is set up with
                    params |= {"collapse_max_distance": d, "collapse_min_similarity": s}

                def one(q: dict, params=params) -> tuple[list, bool, tuple]:
                    b = post(search, bodies[q["id"]], params)
                    info = b.get("collapse", {})
                    used = (info.get("max_distance"), info.get("min_similarity"))
                    return _collapsed(b), bool(info.get("degraded")), used

            total = Score()
            degraded = 0
            for q, (coll, deg, used) in zip(queries, pool.map(one, queries), strict=True):
                total += score_window(windows[q["id"]], coll, labels)
                degraded += deg
                if method == "proxy_defaults":
                    d, s = used
            rows.append(
                {
                    "index": key,
                    "method": method,
                    "max_distance": d,
                    "min_similarity": s,
                    "degraded": degraded,
                    "seconds": round(time.perf_counter() - t0, 2),
                    **total.as_dict(),
                }
            )
            o = rows[-1]["overall"]
            print(
                f"{key:5} {method:16} d={d!s:>4} s={s!s:>4} P={o['precision']:.4f} "
                f"R={o['recall']:.4f} lost={total.lost} viol={total.violations}",
                file=sys.stderr,
                flush=True,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small corpus, 60 queries, small grid")
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--prefix", default="neardup-quality")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--corpus", type=Path, default=None, help="corpus folder (built if missing)")
    ap.add_argument("--out", type=Path, default=None, help="results JSON [corpus/results.json]")
    ap.add_argument(
        "--reuse-indices",
        action="store_true",
        help="keep indices that already hold the whole corpus (skip ingestion)",
    )
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the proxy on the way out
    es = a.es_url.split(",")[0].rstrip("/")
    corpus = a.corpus or DEFAULT_CACHE / ("quick" if a.quick else "full")
    if not (corpus / "corpus.jsonl").exists():
        build(corpus, quick=a.quick)
    res = run(
        corpus,
        es=es,
        window=a.window,
        grid={"bp": QUICK_GRID, "nobp": QUICK_GRID}
        if a.quick
        else {"bp": FULL_GRID, "nobp": FULL_GRID_NOBP},
        prefix=a.prefix + ("-quick" if a.quick else ""),
        queries_limit=60 if a.quick else None,
        concurrency=a.concurrency,
        work=corpus / "work",
        reuse=a.reuse_indices,
    )
    out = a.out or corpus / "results.json"
    out.write_text(json.dumps(res, indent=1))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
