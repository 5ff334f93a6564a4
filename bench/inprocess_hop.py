"""What the proxy's HTTP hop costs an app that already holds an Elasticsearch client.

The same two-word match queries on the ``bench-proxy`` index (``bench/proxy_latency.py`` builds
it), asked by one Python process (the "app") three ways, interleaved in one run:

* ``direct``     the app's ``AsyncElasticsearch`` on Elasticsearch itself (not collapsed);
* ``in-process`` ``collapse.AsyncCollapser`` over that same client (collapsed, no hop of ours);
* ``proxy``      an ``AsyncElasticsearch`` pointed at the proxy (``python -m collapse``, one
  worker, its own process, access log on as deployed): collapsed, one HTTP hop more.

p50/p99 latency and throughput at each concurrency level, and CPU per search of the app's
process and of the proxy's. Then the sync facade, one search after another: ``Elasticsearch``
direct, ``collapse.Collapser`` and an ``Elasticsearch`` client on the proxy. Before measuring,
the in-process answers are checked against the proxy's (hits, groups, counts). All traffic stays
on 127.0.0.1. Run under the benchmark lock:

    flock /tmp/neardup-bench.lock .venv/bin/python bench/inprocess_hop.py [--duration 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
from elasticsearch import AsyncElasticsearch, Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from proxy_cpu import cpu_seconds, free_port  # noqa: E402
from proxy_latency import INDEX, build, current_layout, load_average, queries, start_proxy  # noqa: E402

import collapse  # noqa: E402
from collapse.settings import Settings  # noqa: E402

MODES = ("direct", "in-process", "proxy")
Ask = Callable[[dict[str, Any]], Awaitable[Any]]


def comparable(answer: Any) -> dict[str, Any]:
    """An answer without its times (``took``, ``collapse.took_ms``)."""
    out = dict(answer)
    out.pop("took", None)
    out["collapse"] = {k: v for k, v in out.get("collapse", {}).items() if k != "took_ms"}
    return out


async def interleaved(
    asks: dict[str, Ask],
    clients: int,
    duration: float,
    rounds: int,
    qs: list[dict[str, Any]],
    proxy_pid: int,
) -> dict[str, dict[str, float]]:
    """Each mode for ``duration`` seconds in total, in ``rounds`` slices taken in turn (what
    else the machine does falls on every mode alike); CPU per search of both processes."""
    latencies: dict[str, list[float]] = {m: [] for m in asks}
    elapsed = dict.fromkeys(asks, 0.0)
    app_cpu = dict.fromkeys(asks, 0.0)
    proxy_cpu = dict.fromkeys(asks, 0.0)

    async def loop(mode: str, k: int, until: float, record: bool) -> None:
        i = k * 7919 + len(latencies[mode])
        while time.perf_counter() < until:
            q = qs[i % len(qs)]
            i += 1
            t0 = time.perf_counter()
            await asks[mode](q)
            if record:
                latencies[mode].append((time.perf_counter() - t0) * 1000)

    for mode in asks:  # warm-up: connections, caches
        until = time.perf_counter() + 1.5
        await asyncio.gather(*(loop(mode, k, until, False) for k in range(clients)))
    for _ in range(rounds):
        for mode in asks:
            start, cpu0, pcpu0 = time.perf_counter(), time.process_time(), cpu_seconds(proxy_pid)
            until = start + duration / rounds
            await asyncio.gather(*(loop(mode, k, until, True) for k in range(clients)))
            elapsed[mode] += time.perf_counter() - start
            app_cpu[mode] += time.process_time() - cpu0
            proxy_cpu[mode] += cpu_seconds(proxy_pid) - pcpu0
    out = {}
    for mode in asks:
        lat = np.array(latencies[mode])
        out[mode] = {
            "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)),
            "rps": len(lat) / elapsed[mode],
            "app_cpu": app_cpu[mode] / len(lat) * 1000,
            "proxy_cpu": proxy_cpu[mode] / len(lat) * 1000,
        }
    return out


async def async_run(
    es_url: str,
    proxy_url: str,
    proxy_pid: int,
    qs: list[dict[str, Any]],
    levels: list[int],
    duration: float,
) -> list[str]:
    limit = max(levels)
    direct = AsyncElasticsearch(es_url, connections_per_node=limit, request_timeout=60)
    via_proxy = AsyncElasticsearch(proxy_url, connections_per_node=limit, request_timeout=60)
    collapser = collapse.AsyncCollapser(direct, Settings(es_url=[es_url]))
    asks: dict[str, Ask] = {
        "direct": lambda q: direct.search(index=INDEX, query=q, size=10),
        "in-process": lambda q: collapser.search(index=INDEX, body={"query": q, "size": 10}),
        "proxy": lambda q: via_proxy.search(index=INDEX, query=q, size=10),
    }
    lines = []
    try:
        same = 0
        for q in qs[:50]:
            mine = await collapser.search(index=INDEX, body={"query": q, "size": 10})
            theirs = (await via_proxy.search(index=INDEX, query=q, size=10)).body
            same += comparable(mine) == comparable(theirs)
        lines.append(f"in-process answers equal to the proxy's (hits, groups, counts): {same}/50")
        rows = [
            "| clients | mode | p50 ms | p99 ms | searches/s | app CPU ms/search "
            "| proxy CPU ms/search |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
        for c in levels:
            rounds = max(1, int(duration // 2))
            measured = await interleaved(asks, c, duration, rounds, qs, proxy_pid)
            for mode in MODES:
                r = measured[mode]
                rows.append(
                    f"| {c} | {mode} | {r['p50']:.2f} | {r['p99']:.2f} | {r['rps']:.0f} "
                    f"| {r['app_cpu']:.2f} | {r['proxy_cpu']:.2f} |"
                )
                print(rows[-1], flush=True)
        lines += rows
    finally:
        await direct.close()
        await via_proxy.close()
    return lines


def sync_run(es_url: str, proxy_url: str, qs: list[dict[str, Any]], n: int) -> list[str]:
    """The sync facade: ``n`` searches one after another per mode, interleaved in 4 slices."""
    direct = Elasticsearch(es_url, request_timeout=60)
    via_proxy = Elasticsearch(proxy_url, request_timeout=60)
    collapser = collapse.Collapser(direct, Settings(es_url=[es_url]))
    asks: dict[str, Callable[[dict[str, Any]], Any]] = {
        "direct": lambda q: direct.search(index=INDEX, query=q, size=10),
        "in-process": lambda q: collapser.search(index=INDEX, body={"query": q, "size": 10}),
        "proxy": lambda q: via_proxy.search(index=INDEX, query=q, size=10),
    }
    latencies: dict[str, list[float]] = {m: [] for m in asks}
    try:
        for ask in asks.values():  # warm-up
            for q in qs[:30]:
                ask(q)
        for part in range(4):
            for mode, ask in asks.items():
                for i in range(part * n // 4, (part + 1) * n // 4):
                    t0 = time.perf_counter()
                    ask(qs[i % len(qs)])
                    latencies[mode].append((time.perf_counter() - t0) * 1000)
    finally:
        collapser.close()
        direct.close()
        via_proxy.close()
    rows = ["| sync, 1 caller | p50 ms | p99 ms |", "|---|---:|---:|"]
    for mode in MODES:
        lat = np.array(latencies[mode])
        rows.append(f"| {mode} | {np.percentile(lat, 50):.2f} | {np.percentile(lat, 99):.2f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=100_000, help="index size if it must be built")
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per measured cell")
    ap.add_argument("--levels", default="1,8")
    ap.add_argument("--sync-searches", type=int, default=400)
    args = ap.parse_args()
    es = Elasticsearch(args.es_url, request_timeout=120)
    if not es.indices.exists(index=INDEX) or not current_layout(es):
        build(es, args.docs)
    print(f"index {INDEX}: {es.count(index=INDEX)['count']} documents")
    qs = queries(es, 400)
    es.close()
    print("load average before:", load_average(), "cores:", os.cpu_count())
    port = free_port()
    proxy = start_proxy(args.es_url, port, 1)
    proxy_url = f"http://127.0.0.1:{port}"
    try:
        levels = [int(x) for x in args.levels.split(",")]
        lines = asyncio.run(async_run(args.es_url, proxy_url, proxy.pid, qs, levels, args.duration))
        lines += sync_run(args.es_url, proxy_url, qs, args.sync_searches)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
    print("\n".join(lines))
    print("load average after:", load_average())


if __name__ == "__main__":
    main()
