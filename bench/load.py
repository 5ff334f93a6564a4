"""A bounded load test of the proxy on loopback: zero errors, and memory that stays flat.

Starts the proxy (``python -m collapse``, one worker by default) on a free 127.0.0.1 port in
front of the real Elasticsearch node, loads an index of generated documents with fingerprints
(a fifth of them near-duplicate copies), warms up, then sends a mix of requests from
``--clients`` concurrent clients for ``--duration`` seconds:

    collapsed _search (several queries, pages 1-3)   60 %
    _search with collapse=false                      10 %
    _msearch of two collapsed searches               10 %
    _count, get document, the expander               15 %
    /health                                           5 %

Reports requests, errors, throughput, latency percentiles and the proxy's resident memory (RSS,
from /proc) after warm-up and at the end. Exit status 1 when any request failed or the RSS at
the end is more than ``--max-rss-growth`` (default 10 %) above the RSS after warm-up.

Run it alone on the machine (benchmarks share two cores):

    flock /tmp/neardup-bench.lock .venv/bin/python bench/load.py --duration 60 --clients 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
from elasticsearch import Elasticsearch, helpers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer.fingerprints import FingerprintParams, encode_id, fingerprint_batch  # noqa: E402
from indexer.mapping import index_mappings  # noqa: E402

_VOCABULARY = (
    "market council river energy station report policy minister company shares storm coast "
    "village school hospital budget election court judge police officer museum festival "
    "bridge railway airport harbour factory worker union strike price growth farmer harvest "
    "drought flood rescue team season match player coach league stadium record science "
    "research study university climate ocean forest mountain valley desert island city"
)
WORDS = _VOCABULARY.split()
QUERIES = ["market", "storm coast", "election court", "river flood rescue", "science study"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_bytes(pid: int) -> int:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def build_index(es: Elasticsearch, index: str, docs: int, seed: int = 7) -> list[str]:
    """Generated texts, a fifth of them copies with a few words changed; returns the ids."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < docs:
        base = [rng.choice(WORDS) for _ in range(rng.randint(120, 300))]
        texts.append(" ".join(base))
        if rng.random() < 0.25:
            for _ in range(rng.randint(1, 4)):
                copy = list(base)
                for _ in range(3):
                    copy[rng.randrange(len(copy))] = rng.choice(WORDS)
                texts.append(" ".join(copy))
    texts = texts[:docs]
    params = FingerprintParams()
    mappings = index_mappings(params)
    mappings["properties"].update({"body": {"type": "text"}, "n": {"type": "integer"}})
    es.indices.create(index=index, mappings=mappings, settings={"number_of_shards": 1})
    records = fingerprint_batch(texts, params)
    actions = (
        {
            "_index": index,
            "_id": str(i),
            "body": t,
            "n": i,
            "collapse_fp": {**r.to_es(), "id": encode_id(str(i))},
        }
        for i, (t, r) in enumerate(zip(texts, records, strict=True))
    )
    helpers.bulk(es, actions, refresh="wait_for", chunk_size=500)
    return [str(i) for i in range(docs)]


def one_request(rng: random.Random, index: str, ids: list[str]) -> tuple[str, str, dict]:
    """(method, path, httpx kwargs) of one request of the mix."""
    roll = rng.random()
    query = {"query": {"match": {"body": rng.choice(QUERIES)}}}
    if roll < 0.60:
        body = {**query, "size": 10, "from": 10 * rng.randrange(3)}
        return "POST", f"/{index}/_search", {"json": body}
    if roll < 0.70:
        return "POST", f"/{index}/_search", {"json": query, "params": {"collapse": "false"}}
    if roll < 0.80:
        lines = [{}, {**query, "size": 10}, {}, {"query": {"match": {"body": "market"}}}]
        content = "".join(json.dumps(line) + "\n" for line in lines)
        return (
            "POST",
            f"/{index}/_msearch",
            {"content": content, "headers": {"content-type": "application/x-ndjson"}},
        )
    if roll < 0.85:
        return "POST", f"/{index}/_count", {"json": query}
    if roll < 0.90:
        return "GET", f"/{index}/_doc/{rng.choice(ids)}", {}
    if roll < 0.95:
        return "POST", f"/{index}/_collapse/{rng.choice(ids)}", {"json": {}}
    return "GET", "/health", {}


class Tally:
    def __init__(self) -> None:
        self.sent = 0
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


async def client_loop(
    client: httpx.AsyncClient, seed: int, index: str, ids: list[str], until: float, tally: Tally
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        method, path, kwargs = one_request(rng, index, ids)
        began = time.perf_counter()
        tally.sent += 1
        try:
            answer = await client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            tally.error(f"{method} {path.split('/')[-1]}: {type(exc).__name__}")
            continue
        tally.latencies.append(time.perf_counter() - began)
        if answer.status_code >= 400:
            tally.error(f"{method} {path.split('/')[-1] or path}: {answer.status_code}")
        elif "_msearch" in path and any("error" in r for r in answer.json()["responses"]):
            tally.error(f"{method} _msearch: item error")


async def run_phase(
    base: str, clients: int, seconds: float, index: str, ids: list[str], seed: int
) -> Tally:
    tally = Tally()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as client:
        until = time.monotonic() + seconds
        await asyncio.gather(
            *(client_loop(client, seed + i, index, ids, until, tally) for i in range(clients))
        )
    return tally


def degraded_answers(base: str) -> float:
    """Answers the proxy returned with ``collapse.degraded: true`` so far, by its /metrics."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("collapse_degraded_answers_total{")
    )


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of measured load")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds of warm-up load")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients")
    parser.add_argument("--docs", type=int, default=3000, help="documents in the index")
    parser.add_argument("--workers", type=int, default=1, help="proxy worker processes")
    parser.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    parser.add_argument("--max-rss-growth", type=float, default=0.10)
    args = parser.parse_args()

    es_url = args.es_url.split(",")[0].rstrip("/")
    es = Elasticsearch(es_url, request_timeout=120)
    index = f"bench-load-{uuid.uuid4().hex[:8]}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proxy = None
    try:
        began = time.monotonic()
        ids = build_index(es, index, args.docs)
        print(f"index {index}: {len(ids)} documents in {time.monotonic() - began:.1f}s")
        proxy = subprocess.Popen(
            [sys.executable, "-m", "collapse", "--port", str(port), "--workers", str(args.workers)],
            cwd=ROOT,
            env={**os.environ, "ES_URL": args.es_url},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proxy.poll() is not None:
                raise RuntimeError("the proxy did not start")
            time.sleep(0.2)

        warm = asyncio.run(run_phase(base, args.clients, args.warmup, index, ids, seed=1000))
        rss_warm = rss_bytes(proxy.pid)
        began = time.monotonic()
        tally = asyncio.run(run_phase(base, args.clients, args.duration, index, ids, seed=2000))
        elapsed = time.monotonic() - began
        rss_end = rss_bytes(proxy.pid)
        degraded = degraded_answers(base)
    finally:
        if proxy is not None and proxy.poll() is None:
            os.killpg(proxy.pid, signal.SIGTERM)
            proxy.wait(timeout=30)
        es.options(ignore_status=404).indices.delete(index=index)
        es.close()

    total = tally.sent
    errors = sum(tally.errors.values())
    growth = (rss_end - rss_warm) / rss_warm
    lat = sorted(tally.latencies)
    print(f"warm-up: {warm.sent} requests, {sum(warm.errors.values())} errors")
    print(
        f"load: {args.clients} clients x {args.duration:.0f}s on 127.0.0.1, "
        f"{args.workers} worker(s), {args.docs} documents"
    )
    print(f"requests: {total}  errors: {errors}  throughput: {total / elapsed:.0f} req/s")
    print(
        "latency ms: p50 {:.1f}  p95 {:.1f}  p99 {:.1f}  max {:.1f}".format(
            *(1000 * percentile(lat, q) for q in (50, 95, 99)), 1000 * (lat[-1] if lat else 0)
        )
    )
    print(
        f"proxy RSS: after warm-up {rss_warm / 2**20:.1f} MiB, at the end {rss_end / 2**20:.1f} "
        f"MiB ({100 * growth:+.1f} %, limit {100 * args.max_rss_growth:.0f} %)"
    )
    print(f"degraded answers (collapse.degraded, from /metrics, warm-up included): {degraded:.0f}")
    for what, count in sorted(tally.errors.items()):
        print(f"  error {what}: {count}")
    ok = errors == 0 and growth <= args.max_rss_growth
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
