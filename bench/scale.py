"""Scale: ``indexer ingest`` and plain bulk side by side at one size, then the proxy on it.

One run per size (``--docs 100000``, ``500000``, ``1000000``), against one cluster:

1. the corpus (built once into ``~/.cache/neardup/scale_<k>k.jsonl``, outside the repository;
   every size is a prefix of the next): one document in four is a real-text chunk from this
   machine (``bench/corpus.py``, as ``bench/ingest_speed.py`` cuts them), the others variants of
   earlier ones: near copies on mirror hosts (a few words changed, a mirror header) and remixes
   (thirds of three chunks spliced, new text made of real words);
2. plain ``streaming_bulk`` into ``scale-plain`` and ``indexer ingest`` into ``scale-ours``
   (``bench/ingest_speed.py``'s two loaders): documents per second, CPU of Elasticsearch and of
   the loader, peak resident memory of the loader's processes and of Elasticsearch, then
   Elasticsearch's heap and resident memory and each index's store size after a flush (the
   plain index is the same documents without ``collapse_fp``);
3. the proxy (``bench/proxy_latency.py``'s load generator and proxy start) on ``scale-ours``
   with the same 400 two-word queries at every size (drawn from the first 100k documents):
   p50/p99 of direct and collapsed searches at 1 and 32 clients, the proxy's and
   Elasticsearch's CPU per collapsed request at 32 clients, the probe's ``took``, round trip and
   candidates fetched per page (in-process, 150 queries), and the proxy's resident memory.

Prints the rows and appends them as one JSON object to ``~/.cache/neardup/scale-results.jsonl``;
``--report`` prints the tables of docs/operations.md from that file (per size, the last run's
ingestion and the last run's proxy phase: ``--skip-proxy`` and ``--proxy-only`` run one).

    .venv/bin/python bench/scale.py --docs 100000 --es-url http://127.0.0.1:9280
    .venv/bin/python bench/scale.py --report
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ingest_speed  # noqa: E402
import proxy_latency  # noqa: E402
from corpus import CACHE, documents  # noqa: E402

SIZES = (100_000, 500_000, 1_000_000)
PLAIN, OURS = "scale-plain", "scale-ours"
RESULTS = CACHE / "scale-results.jsonl"


# -- the corpus ---------------------------------------------------------------------------


def corpus_path(n: int) -> Path:
    return CACHE / f"scale_{n // 1000}k.jsonl"


def stream(n: int, seed: int = 16) -> Iterator[dict[str, str]]:
    """The first ``n`` documents: chunk, then three variants of earlier chunks, in turn."""
    rng = random.Random(seed)
    real = documents(170)
    bases: list[tuple[str, str]] = []
    vocabulary: list[str] = []
    for i in range(n):
        if i % 4 == 0 and (nxt := next(real, None)) is not None:
            source, text = nxt
            bases.append((source, text))
            if len(vocabulary) < 200_000:
                vocabulary.extend(w for w in text.split()[:50] if w.isalpha())
            yield ingest_speed.row(i, source, text)
            continue
        source, text = bases[rng.randrange(len(bases))]
        name = Path(source.split("#")[0]).name
        if rng.random() < 0.4:  # a near copy on a mirror host
            tokens = text.split()
            for _ in range(max(1, len(tokens) // 50)):
                tokens[rng.randrange(len(tokens))] = rng.choice(vocabulary)
            mirror = rng.randint(1, 50)
            body = f"Mirror {mirror} of the manual. {' '.join(tokens)}"
            host = f"mirror{mirror}"
        else:  # a remix: a third of each of three chunks
            parts = [text, *(bases[rng.randrange(len(bases))][1] for _ in range(2))]
            pieces = []
            for part in parts:
                tokens = part.split()
                k = max(1, len(tokens) // 3)
                lo = rng.randrange(max(1, len(tokens) - k + 1))
                pieces.append(" ".join(tokens[lo : lo + k]))
            body = " ".join(pieces)
            host = f"remix{rng.randint(1, 20)}"
        yield {
            "id": f"doc-{i}",
            "title": name,
            "body": body,
            "url": f"https://{host}.example/{name}#{i}",
        }


def build_corpus(sizes: list[int]) -> None:
    """Write every size's file in one pass (each a prefix of the next)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    outs = {n: corpus_path(n).open("w", encoding="utf-8") for n in sizes}
    try:
        for i, doc in enumerate(stream(max(sizes))):
            line = json.dumps(doc) + "\n"
            for n, out in outs.items():
                if i < n:
                    out.write(line)
    finally:
        for out in outs.values():
            out.close()


def corpus(n: int) -> Path:
    """The corpus file of ``n`` documents (every missing size built in one pass)."""
    missing = [s for s in sorted({*SIZES, n}) if not corpus_path(s).exists() and s >= n]
    if missing:
        t0 = time.perf_counter()
        build_corpus(sorted({*missing, n}))
        print(f"corpus built: {missing} in {time.perf_counter() - t0:.0f} s", flush=True)
    return corpus_path(n)


def fixed_queries(count: int = 400, seed: int = 3) -> list[dict[str, Any]]:
    """Two-word match queries from the first 100k documents: the same at every size."""
    rng = random.Random(seed)
    path = corpus(SIZES[0])
    with path.open(encoding="utf-8") as f:
        bodies = [json.loads(line)["body"] for line in f]
    out: list[dict[str, Any]] = []
    while len(out) < count:
        words = [w.lower() for w in rng.choice(bodies).split() if w.isalpha() and len(w) > 4]
        if len(words) >= 2:
            out.append({"match": {"body": " ".join(rng.sample(words, 2))}})
    return out


# -- Elasticsearch's and the proxy's own figures --------------------------------------------


def rss_of(pid: int) -> float:
    """Resident memory of one process, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of one process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def es_node(es: Elasticsearch) -> dict[str, Any]:
    """The local node's pid, heap used and max (MB), resident memory (MB) and version."""
    stats = es.nodes.stats(node_id="_local", metric="jvm,process")["nodes"]
    node = next(iter(stats.values()))
    info = next(iter(es.nodes.info(node_id="_local", metric="process,jvm")["nodes"].values()))
    pid = int(info["process"]["id"])
    return {
        "pid": pid,
        "heap_used_mb": node["jvm"]["mem"]["heap_used_in_bytes"] / 2**20,
        "heap_max_mb": node["jvm"]["mem"]["heap_max_in_bytes"] / 2**20,
        "rss_mb": rss_of(pid),
        "version": info["version"],
        "jvm": info["jvm"]["version"],
    }


def store(es: Elasticsearch, index: str) -> dict[str, float]:
    """Documents, primary store size (MB) and segments of ``index`` after a flush."""
    es.indices.flush(index=index)
    rows: Any = es.cat.indices(index=index, bytes="b", format="json", h="docs.count,pri.store.size")
    row = rows[0]
    segments = es.indices.stats(index=index, metric="segments")["_all"]["primaries"]
    return {
        "docs": int(row["docs.count"]),
        "store_mb": int(row["pri.store.size"]) / 2**20,
        "segments": segments["segments"]["count"],
    }


def descendants(pid: int) -> list[int]:
    """Every process started under ``pid`` (children of any of its threads, recursively)."""
    out: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids = [int(k) for k in children.read_text().split()]
        except OSError:  # gone meanwhile
            continue
        for kid in kids:
            out += [kid, *descendants(kid)]
    return out


class PeakMemory:
    """Peak resident memory (MiB) while a loader runs, sampled every half second: of this
    process, of the processes it started (``indexer ingest`` and its workers) together, and
    of Elasticsearch."""

    def __init__(self, es_pid: int) -> None:
        self.es_pid = es_pid
        self.own = self.children = self.es = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            kids = 0.0
            for pid in descendants(os.getpid()):
                with contextlib.suppress(OSError):
                    kids += rss_of(pid)
            self.children = max(self.children, kids)
            self.own = max(self.own, rss_of(os.getpid()))
            with contextlib.suppress(OSError):
                self.es = max(self.es, rss_of(self.es_pid))
            if self._stop.wait(0.5):
                return

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# -- the phases ---------------------------------------------------------------------------


def ingest(es: Elasticsearch, es_url: str, path: Path, n: int) -> dict[str, Any]:
    """Plain bulk, then ``indexer ingest``, each into a new index of its own."""
    out: dict[str, Any] = {}
    runs = (
        ("plain", PLAIN, lambda: ingest_speed.plain(es, PLAIN, path)),
        ("ours", OURS, lambda: ingest_speed.ours(es_url, OURS, path, [])),
    )
    for name, index, run in runs:
        es.options(ignore_status=404).indices.delete(index=index)
        cpu_es, cpu_own = ingest_speed.es_cpu(es), ingest_speed.own_cpu()
        with PeakMemory(es_node(es)["pid"]) as peak:
            seconds = run()
        cpu_es, cpu_own = ingest_speed.es_cpu(es) - cpu_es, ingest_speed.own_cpu() - cpu_own
        es.indices.refresh(index=index)
        row: dict[str, Any] = {
            "seconds": seconds,
            "docs_per_s": n / seconds,
            "es_cpu_s": cpu_es,
            "loader_cpu_s": cpu_own,
            "load": os.getloadavg()[0],
            **store(es, index),
            "es_after": es_node(es),
            "peak_mb": {"own": peak.own, "children": peak.children, "es": peak.es},
        }
        out[name] = row
        print(
            f"{name:5s} {seconds:7.1f} s {n / seconds:6.0f} docs/s  ES cpu {cpu_es:6.1f} s"
            f"  loader cpu {cpu_own:6.1f} s  load {row['load']:.1f}  {row['docs']} docs"
            f"  {row['store_mb']:.0f} MB in {row['segments']} segments"
            f"  ES heap {row['es_after']['heap_used_mb']:.0f} MB rss"
            f" {row['es_after']['rss_mb']:.0f} MB; peak RSS: this process {peak.own:.0f} MB,"
            f" its children {peak.children:.0f} MB, ES {peak.es:.0f} MB",
            flush=True,
        )
    return out


def probe_figures(es_url: str, qs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per collapsed page (in-process proxy, one request at a time, 150 queries): the probe's
    ``took``, round trip and candidates fetched and matching, and the page's ``collapse``."""
    from collapse import upstream as upstream_module
    from collapse.app import create_app
    from collapse.settings import Settings

    probes: list[dict[str, float]] = []
    original = upstream_module.Upstream.request

    async def recording(self: Any, method: str, path: str, **kw: Any) -> Any:
        t0 = time.perf_counter()
        answer = await original(self, method, path, **kw)
        wall = (time.perf_counter() - t0) * 1000
        if b"collapse_fp.band" in (kw.get("content") or b""):
            body = json.loads(answer.content)
            total = body.get("hits", {}).get("total", {})
            probes.append(
                {
                    "took": float(body.get("took", 0)),
                    "wall": wall,
                    "fetched": len(body.get("hits", {}).get("hits", [])),
                    "matching": float(total.get("value", 0)),
                    "matching_gte": float(total.get("relation") == "gte"),
                }
            )
        return answer

    async def run() -> list[dict[str, Any]]:
        app = create_app(Settings(es_url=[es_url]))
        logging.getLogger("collapse.access").setLevel(logging.WARNING)
        pages = []
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as px:
                for q in qs[:150]:
                    t0 = time.perf_counter()
                    answer = await px.post(
                        f"/{proxy_latency.INDEX}/_search", json={"query": q, "size": 10}
                    )
                    info = answer.json()["collapse"]
                    info["wall"] = (time.perf_counter() - t0) * 1000
                    pages.append(info)
        return pages

    upstream_module.Upstream.request = recording  # type: ignore[method-assign]
    try:
        pages = asyncio.run(run())
    finally:
        upstream_module.Upstream.request = original  # type: ignore[method-assign]

    def stat(values: list[float]) -> dict[str, float]:
        a = np.array(values or [0.0])
        return {
            "mean": float(a.mean()),
            "p50": float(np.percentile(a, 50)),
            "p99": float(np.percentile(a, 99)),
        }

    return {
        "pages": len(pages),
        "probes": len(probes),
        "probe_took_ms": stat([p["took"] for p in probes]),
        "probe_wall_ms": stat([p["wall"] for p in probes]),
        "candidates_fetched": stat([p["fetched"] for p in probes]),
        "candidates_matching": stat([p["matching"] for p in probes]),
        "probes_capped": int(sum(p["matching_gte"] for p in probes)),  # > size + 1 matching
        "window": stat([float(p["window"]) for p in pages]),
        "folded": stat([float(p["folded"]) for p in pages]),
        "folded_gte": sum(p["folded_relation"] == "gte" for p in pages),
        "grouping_ms": stat([float(p["took_ms"]) for p in pages]),
        "page_wall_ms": stat([p["wall"] for p in pages]),
    }


def proxy_phase(
    es: Elasticsearch, es_url: str, qs: list[dict[str, Any]], duration: float, port: int
) -> dict[str, Any]:
    """Latency at 1 and 32 clients (direct and collapsed, interleaved), CPU per collapsed
    request at 32 clients, probe figures, and the proxy's memory."""
    proxy_latency.INDEX = OURS  # the load generator's index
    proxy_url = f"http://127.0.0.1:{port}"
    stats = es.indices.stats(index=OURS, metric="merge,segments")["_all"]["primaries"]
    out: dict[str, Any] = {
        "segments": stats["segments"]["count"],
        "merges_running": stats["merges"]["current"],
    }
    print(f"{OURS}: {out['segments']} segments, {out['merges_running']} merges running")
    proxy = proxy_latency.start_proxy(es_url, port, 1)
    try:
        sample = httpx.post(f"{proxy_url}/{OURS}/_search", json={"query": qs[0]}).json()
        print("sample collapse:", json.dumps(sample["collapse"]), flush=True)
        out["rss_start_mb"] = proxy_latency.rss_mb(proxy.pid)
        for clients in (1, 32):
            rounds = max(1, int(duration // 2))
            measured = asyncio.run(
                proxy_latency.interleaved(
                    ["direct", "proxy"], clients, duration, rounds, qs, es_url, proxy_url
                )
            )
            out[f"c{clients}"] = measured
            d, p = measured["direct"], measured["proxy"]
            print(
                f"{clients:>2} clients: direct p50 {d['p50']:.2f} p99 {d['p99']:.2f} ms"
                f" {d['rps']:.0f} req/s | proxy p50 {p['p50']:.2f} p99 {p['p99']:.2f} ms"
                f" {p['rps']:.0f} req/s | added p50 {p['p50'] - d['p50']:+.2f}"
                f" p99 {p['p99'] - d['p99']:+.2f} ms | errors {d['errors']}/{p['errors']}",
                flush=True,
            )
        es_pid = es_node(es)["pid"]
        cpu_proxy, cpu_es = cpu_of(proxy.pid), cpu_of(es_pid)
        t0 = time.perf_counter()
        busy = asyncio.run(proxy_latency.drive("proxy", 32, duration, qs, es_url, proxy_url))
        wall = time.perf_counter() - t0
        cpu_proxy, cpu_es = cpu_of(proxy.pid) - cpu_proxy, cpu_of(es_pid) - cpu_es
        requests = busy["rps"] * wall  # the warm-up's requests too, at the measured rate
        out["capacity"] = {
            "rps": busy["rps"],
            "proxy_cpu_s": cpu_proxy,
            "es_cpu_s": cpu_es,
            "wall_s": wall,
            "requests_per_proxy_cpu_s": requests / cpu_proxy,
            "requests_per_es_cpu_s": requests / cpu_es,
        }
        print(
            f"32 clients collapsing {wall:.1f} s: {busy['rps']:.0f} req/s, proxy cpu "
            f"{cpu_proxy:.1f} s ({requests / cpu_proxy:.0f} req per proxy cpu-s), ES cpu "
            f"{cpu_es:.1f} s ({requests / cpu_es:.0f} req per ES cpu-s)",
            flush=True,
        )
        out["rss_end_mb"] = proxy_latency.rss_mb(proxy.pid)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
    out["probe"] = probe_figures(es_url, qs)
    pr = out["probe"]
    print(
        f"probe: took p50 {pr['probe_took_ms']['p50']:.1f} ms (mean "
        f"{pr['probe_took_ms']['mean']:.1f}), round trip p50 {pr['probe_wall_ms']['p50']:.1f} "
        f"ms, candidates fetched per page mean {pr['candidates_fetched']['mean']:.0f} p99 "
        f"{pr['candidates_fetched']['p99']:.0f}, matching mean "
        f"{pr['candidates_matching']['mean']:.0f}; folded per page mean "
        f"{pr['folded']['mean']:.1f} ({pr['folded_gte']} pages gte); proxy rss "
        f"{out['rss_start_mb']:.0f} -> {out['rss_end_mb']:.0f} MB",
        flush=True,
    )
    return out


def report() -> list[str]:
    """The growth curve and the capacity table, from the last run of each size."""
    runs: dict[int, dict[str, Any]] = {}
    with RESULTS.open(encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)  # a later run's phases replace an earlier one's
            merged = runs.setdefault(r["docs"], {})
            merged.update(r)
            for phase in ("ingest", "proxy"):
                if phase in r:
                    merged[f"{phase}_date"] = r["date"][11:]
    sizes = sorted(runs)
    cores = runs[sizes[0]]["cores"]

    def k(n: int) -> str:
        return f"{n // 1000:,}k" if n < 1_000_000 else f"{n / 1e6:g}M"

    out = [
        "| documents | run | plain bulk | `indexer ingest` | ours / plain | ES cpu-s plain / ours"
        " | loader cpu-s plain / ours | load avg | store MB plain / ours | ES heap, RSS MB"
        " | peak RSS MB: ingester (all processes), ES |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        r = runs[n]
        pl, us = r["ingest"]["plain"], r["ingest"]["ours"]
        out.append(
            f"| {k(n)} | {r['ingest_date']} | {pl['seconds']:.0f} s, {pl['docs_per_s']:,.0f}/s"
            f" | {us['seconds']:.0f} s, {us['docs_per_s']:,.0f}/s"
            f" | {us['docs_per_s'] / pl['docs_per_s']:.0%}"
            f" | {pl['es_cpu_s']:.0f} / {us['es_cpu_s']:.0f}"
            f" | {pl['loader_cpu_s']:.0f} / {us['loader_cpu_s']:.0f}"
            f" | {pl['load']:.1f} / {us['load']:.1f}"
            f" | {pl['store_mb']:,.0f} / {us['store_mb']:,.0f}"
            f" | {us['es_after']['heap_used_mb']:,.0f}, {us['es_after']['rss_mb']:,.0f}"
            + (
                f" | {us['peak_mb']['children']:,.0f}, {us['peak_mb']['es']:,.0f} |"
                if "peak_mb" in us
                else " | |"
            )
        )
    out += [
        "",
        "| documents | run | segments | 1 client: direct p50 / p99 | proxy p50 / p99"
        " | added p50 / p99"
        " | 32 clients: direct, proxy req/s | added p50 / p99 | probe took p50 / mean / p99"
        " | probe round trip p50 / p99 | candidates fetched per page mean / p50 / p99"
        " | probes capped | folded per page | proxy RSS MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        if "proxy" not in runs[n]:
            continue
        px = runs[n]["proxy"]
        d1, p1, d32, p32, pr = (
            px["c1"]["direct"],
            px["c1"]["proxy"],
            px["c32"]["direct"],
            px["c32"]["proxy"],
            px["probe"],
        )
        took, wall, fetched = pr["probe_took_ms"], pr["probe_wall_ms"], pr["candidates_fetched"]
        out.append(
            f"| {k(n)} | {runs[n]['proxy_date']} | {px.get('segments', '')}"
            f" | {d1['p50']:.1f} / {d1['p99']:.1f} | {p1['p50']:.1f} / {p1['p99']:.1f}"
            f" | {p1['p50'] - d1['p50']:+.1f} / {p1['p99'] - d1['p99']:+.1f}"
            f" | {d32['rps']:.0f}, {p32['rps']:.0f}"
            f" | {p32['p50'] - d32['p50']:+.0f} / {p32['p99'] - d32['p99']:+.0f}"
            f" | {took['p50']:.1f} / {took['mean']:.1f} / {took['p99']:.1f}"
            f" | {wall['p50']:.1f} / {wall['p99']:.1f}"
            f" | {fetched['mean']:.1f} / {fetched['p50']:.0f} / {fetched['p99']:.0f}"
            f" | {pr['probes_capped']} of {pr['probes']}"
            f" | {pr['folded']['mean']:.1f} ({pr['folded_gte']} pages gte)"
            f" | {px['rss_start_mb']:.0f} -> {px['rss_end_mb']:.0f} |"
        )
    out += ["", "| capacity | " + " | ".join(k(n) for n in sizes) + " |"]
    out.append("|---|" + "---:|" * len(sizes))

    def row(name: str, fn: Any) -> None:
        cells = []
        for n in sizes:
            try:
                cells.append(fn(runs[n], n))
            except KeyError:
                cells.append("")
        out.append(f"| {name} | " + " | ".join(cells) + " |")

    for who, label in (("ours", "`indexer ingest`"), ("plain", "plain bulk")):
        row(
            f"{label}: documents/s per core ({cores} cores, wall)",
            lambda r, n, w=who: f"{r['ingest'][w]['docs_per_s'] / cores:,.0f}",
        )
        row(
            f"{label}: documents per CPU-second (ES + loader)",
            lambda r, n, w=who: (
                f"{n / (r['ingest'][w]['es_cpu_s'] + r['ingest'][w]['loader_cpu_s']):,.0f}"
            ),
        )
    row(
        "proxy: collapsed requests per proxy CPU-second (32 clients)",
        lambda r, n: f"{r['proxy']['capacity']['requests_per_proxy_cpu_s']:,.0f}",
    )
    row(
        "Elasticsearch: collapsed requests per ES CPU-second (32 clients)",
        lambda r, n: f"{r['proxy']['capacity']['requests_per_es_cpu_s']:,.0f}",
    )
    row(
        "disk per million documents with `collapse_fp` (GiB)",
        lambda r, n: f"{r['ingest']['ours']['store_mb'] / 1024 * 1e6 / n:.2f}",
    )
    row(
        "disk per million documents without (plain, GiB)",
        lambda r, n: f"{r['ingest']['plain']['store_mb'] / 1024 * 1e6 / n:.2f}",
    )
    row(
        "ES heap used / RSS after the ingest (MB)",
        lambda r, n: (
            f"{r['ingest']['ours']['es_after']['heap_used_mb']:,.0f} / "
            f"{r['ingest']['ours']['es_after']['rss_mb']:,.0f}"
        ),
    )
    row("proxy RSS after the load (MB)", lambda r, n: f"{r['proxy']['rss_end_mb']:.0f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9280"))
    ap.add_argument("--docs", type=int, default=SIZES[0])
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per latency cell")
    ap.add_argument("--port", type=int, default=8790)
    ap.add_argument("--build-only", action="store_true", help="build the corpus files and stop")
    ap.add_argument("--skip-proxy", action="store_true")
    ap.add_argument(
        "--proxy-only",
        action="store_true",
        help="only the proxy phase, on the scale-ours index of an earlier run of --docs",
    )
    ap.add_argument("--report", action="store_true", help="print the tables of the runs so far")
    args = ap.parse_args()
    if args.report:
        print("\n".join(report()))
        return
    path = corpus(args.docs)
    if args.build_only:
        return
    es = Elasticsearch(args.es_url, request_timeout=600)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    before = es_node(es)
    head = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "docs": args.docs,
        "corpus_mb": path.stat().st_size / 1e6,
        "cores": os.cpu_count(),
        "ram_gb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
        "python": platform.python_version(),
        "es_before": before,
    }
    print(json.dumps(head), flush=True)
    result: dict[str, Any] = dict(head)
    if args.proxy_only:
        assert es.count(index=OURS)["count"] == args.docs, f"{OURS} does not hold --docs"
    else:
        result["ingest"] = ingest(es, args.es_url, path, args.docs)
        es.options(ignore_status=404).indices.delete(index=PLAIN)
    if not args.skip_proxy:
        result["proxy"] = proxy_phase(es, args.es_url, fixed_queries(), args.duration, args.port)
    result["es_end"] = es_node(es)
    with RESULTS.open("a", encoding="utf-8") as f:
        f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
