"""Interleaved A/B of two code trees of the proxy: what decides a change on a noisy machine.

Runs of ``bench/proxy_latency.py`` taken minutes apart differ by more than most changes are
worth (docs/proxy.md: 1.3 ms at p50 between runs of one code on one day). Here both trees are
served at once (``python -m collapse``, one worker each, access log on, as deployed) and one
client alternates between them query by query, the order flipping every query, with a direct
Elasticsearch call beside each pair: whatever the machine does falls on both alike. The
queries are the benchmark's (``size`` 10 on the ``bench-proxy`` index, which
``bench/proxy_latency.py`` builds); ``--pass-through`` sends them with ``collapse=false``.
Beside the latencies, each proxy's CPU per request (user + system, ``/proc/<pid>/stat``, over
the measured requests only): both processes see the same requests in the same minutes, so the
difference is the code's. All traffic stays on 127.0.0.1.

    git worktree add /tmp/before <commit>
    .venv/bin/python bench/ab.py /tmp/before . [--rounds 4] [--pass-through]

A change of the fingerprint's generation: A reads an index built by A's code
(``--index-a``, e.g. ``bench-proxy-a``: ``bench/proxy_latency.py``'s ``build`` run in A's
tree with ``INDEX`` set to it), B and the direct calls ``bench-proxy``; the two hold the same
documents, so the queries find the same hits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import httpx
import numpy as np
from elasticsearch import Elasticsearch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_latency import INDEX, queries, start_proxy
from stale import stale_index


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    urls: dict[str, str], bodies: list[bytes], rounds: int, pids: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, list[int]]]:
    """Milliseconds per request for each of ``urls``, taken in turn for every query (round by
    round, query by query); the CPU milliseconds per request of each process of ``pids`` over
    the measured requests; and each proxy's window per query (``collapse.window``, first round)."""
    headers = {"content-type": "application/json"}
    latencies: dict[str, list[float]] = {name: [] for name in urls}
    windows: dict[str, list[int]] = {name: [] for name in pids}
    async with httpx.AsyncClient(timeout=60) as client:
        for body in bodies[:50]:  # warm-up: connections, caches, JIT
            for url in urls.values():
                await client.post(url, content=body, headers=headers)
        cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        for r in range(rounds):
            for i, body in enumerate(bodies):
                names = ["direct", "A", "B"] if (i + r) % 2 else ["direct", "B", "A"]
                for name in names:
                    began = time.perf_counter()
                    answer = await client.post(urls[name], content=body, headers=headers)
                    latencies[name].append((time.perf_counter() - began) * 1000)
                    answer.raise_for_status()
                    if r == 0 and name in windows:  # collapse=false answers carry none: 0
                        window = answer.json().get("collapse", {}).get("window", 0)
                        windows[name].append(int(window))
        requests = rounds * len(bodies)
        cpu = {name: (cpu_seconds(pid) - cpu[name]) / requests * 1000 for name, pid in pids.items()}
    return latencies, cpu, windows


def report(latencies: dict[str, list[float]], cpu: dict[str, float] | None) -> None:
    """One table: each of direct, A and B's percentiles, against direct."""
    direct = np.array(latencies["direct"])
    print("| | p50 ms | p90 ms | p99 ms | Δp50 vs direct | Δp99 vs direct | CPU ms/request |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in ("direct", "A", "B"):
        v = np.array(latencies[name])
        p50, p90, p99 = np.percentile(v, [50, 90, 99])
        print(
            f"| {name} | {p50:.2f} | {p90:.2f} | {p99:.2f} | "
            f"{p50 - np.median(direct):+.2f} | {p99 - np.percentile(direct, 99):+.2f} | "
            + (f"{cpu[name]:.3f} |" if cpu and name in cpu else "— |")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree_a", type=Path, help="code tree A (e.g. a worktree of the old commit)")
    ap.add_argument("tree_b", type=Path, help="code tree B")
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--rounds", type=int, default=4, help="passes over the 400 queries")
    ap.add_argument("--port", type=int, default=8610, help="A's port; B's is the next")
    ap.add_argument(
        "--pass-through", action="store_true", help="the proxies' searches with collapse=false"
    )
    ap.add_argument(
        "--index-a",
        default=INDEX,
        help="the index A searches (the same documents fingerprinted by A's generation)",
    )
    args = ap.parse_args()
    # Collapsing, both proxies read the index's fingerprints: of each tree's version.
    for tree, index in (
        () if args.pass_through else ((args.tree_a, args.index_a), (args.tree_b, INDEX))
    ):
        stale = stale_index(Elasticsearch(args.es_url), index, tree.resolve())
        if stale:
            raise SystemExit(stale)
    bodies = [
        json.dumps({"query": q, "size": 10}).encode()
        for q in queries(Elasticsearch(args.es_url), 400)
    ]
    procs = [
        start_proxy(args.es_url, args.port, 1, args.tree_a.resolve()),
        start_proxy(args.es_url, args.port + 1, 1, args.tree_b.resolve()),
    ]
    query = "?collapse=false" if args.pass_through else ""
    try:
        urls = {
            "direct": f"{args.es_url}/{INDEX}/_search",
            "A": f"http://127.0.0.1:{args.port}/{args.index_a}/_search{query}",
            "B": f"http://127.0.0.1:{args.port + 1}/{INDEX}/_search{query}",
        }
        pids = {"A": procs[0].pid, "B": procs[1].pid}
        latencies, cpu, windows = asyncio.run(measure(urls, bodies, args.rounds, pids))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
    mode = "collapse=false" if args.pass_through else "collapsed"
    print(
        f"{len(latencies['direct'])} {mode} requests each; A = {args.tree_a} on {args.index_a}, "
        f"B = {args.tree_b} on {INDEX}"
    )
    report(latencies, cpu)
    # Two indices of the same documents may rank tied hits in another order (Lucene's doc
    # order), so that some queries need another window: those compared apart as well.
    same = [i for i, (a, b) in enumerate(zip(windows["A"], windows["B"], strict=True)) if a == b]
    if not args.pass_through and len(same) < len(bodies):
        n = len(bodies)
        keep = {r * n + i for r in range(args.rounds) for i in same}
        print(
            f"\nThe {len(same)} of {n} queries whose window is the same size in A and B "
            f"(hits read: A {sum(windows['A'])}, B {sum(windows['B'])}):"
        )
        report({k: [v[j] for j in sorted(keep)] for k, v in latencies.items()}, None)


if __name__ == "__main__":
    main()
