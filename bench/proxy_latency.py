"""Proxy latency: the same queries against the same 100k-document index, in one run.

Four ways to ask, each at 1, 8 and 32 concurrent clients (p50/p99 latency and throughput):

* ``direct``      Elasticsearch itself;
* ``es-collapse`` Elasticsearch's native ``collapse`` on ``collapse_fp.exact_key``;
* ``proxy-off``   the proxy with ``collapse=false`` (pure pass-through);
* ``proxy``       the proxy collapsing (window 3 x size, then one probe search).

Then a sustained collapsing run samples the proxy's resident memory, and two offline
measurements on the index's own fingerprints: window grouping cost (all-pairs vs block tables)
and, for each probe layout, how many true near-duplicate pairs share a key and at what candidate
cost. The index (``bench-proxy``) is built once from real text on this machine
(``bench/corpus.py``: man pages, /usr/share/doc, licenses), cut into documents of 50-180 words,
with synthetic near-duplicate families (outlet header/footer, a few words changed), bulk-loaded
with ``helpers.bulk`` and ``fingerprint_batch``. All traffic stays on 127.0.0.1.

    .venv/bin/python bench/proxy_latency.py [--docs 100000] [--duration 8] [--rebuild]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
from elasticsearch import Elasticsearch, helpers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from corpus import load  # noqa: E402
from stale import INDEX, index_version  # noqa: E402

from collapse.http11 import Http11Transport, Origin, Timeouts, request_head  # noqa: E402
from collapse.settings import Settings  # noqa: E402
from indexer.fingerprints import FingerprintParams, fingerprint_arrays  # noqa: E402
from indexer.fingerprints.bands import BAND_ROWS, MAX_BANDS  # noqa: E402
from indexer.fingerprints.bits import popcount64  # noqa: E402
from indexer.fingerprints.minhash import similarity  # noqa: E402
from indexer.grouping import Prints, Thresholds, group, window_pairs  # noqa: E402
from indexer.mapping import index_mappings  # noqa: E402

PARAMS = FingerprintParams()
#: The proxy's default thresholds: what a "true near-duplicate pair" means in the tables.
T = Thresholds(
    max_distance=Settings.model_fields["collapse_max_distance"].default,
    min_similarity=Settings.model_fields["collapse_min_similarity"].default,
    min_tokens=PARAMS.min_tokens,
)
MODES = ("direct", "es-collapse", "proxy-off", "proxy")


# -- the index ---------------------------------------------------------------------------


def documents(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` documents: real-text chunks, ~30% of them in near-duplicate families."""
    rng = random.Random(seed)
    words: list[str] = []
    bases: list[str] = []
    for text in load():
        words = text.split()
        i = 0
        while i + 50 <= len(words):
            k = rng.randint(50, 180)
            bases.append(" ".join(words[i : i + k]))
            i += k
    rng.shuffle(bases)
    vocabulary = [w for w in words if w.isalpha()] or ["news"]
    docs: list[dict[str, Any]] = []
    b = 0
    while len(docs) < n and b < len(bases):
        base = bases[b]
        family = f"f{b}"
        b += 1
        docs.append({"_id": f"{family}-0", "family": family, "body": base})
        if rng.random() < 0.12:  # a family: 1..6 more copies
            tokens = base.split()
            for c in range(1, rng.randint(2, 7)):
                copy = list(tokens)
                for _ in range(max(1, len(copy) // 60)):
                    copy[rng.randrange(len(copy))] = rng.choice(vocabulary)
                head = f"Outlet {rng.randint(1, 999)} desk."
                docs.append(
                    {"_id": f"{family}-{c}", "family": family, "body": f"{head} {' '.join(copy)}"}
                )
    return docs[:n]


def build(es: Elasticsearch, n: int) -> None:
    """Create and bulk-load the index (fingerprints computed in chunks)."""
    es.options(ignore_status=404).indices.delete(index=INDEX)
    mappings = index_mappings(PARAMS)
    mappings["properties"].update({"body": {"type": "text"}, "family": {"type": "keyword"}})
    # The corpus may hold fewer than ``n`` documents: what was asked is kept to compare with.
    mappings.setdefault("_meta", {})["bench_docs"] = n
    es.indices.create(
        index=INDEX,
        mappings=mappings,
        settings={"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
    )
    docs = documents(n)
    started = time.perf_counter()

    def actions() -> Any:
        for lo in range(0, len(docs), 2000):
            chunk = docs[lo : lo + 2000]
            records = fingerprint_arrays([d["body"] for d in chunk], PARAMS).records()
            for doc, record in zip(chunk, records, strict=True):
                # As the indexer writes it: with the document's own id (and ``packed``).
                yield {"_index": INDEX, **doc, "collapse_fp": record.to_es(doc["_id"])}

    ok, errors = helpers.bulk(es.options(request_timeout=120), actions(), chunk_size=1000)
    es.indices.put_settings(index=INDEX, settings={"refresh_interval": "1s"})
    es.indices.refresh(index=INDEX)
    es.indices.forcemerge(index=INDEX, max_num_segments=1, request_timeout=600)
    print(
        f"built {INDEX}: {ok} documents, {len(errors)} errors, "
        f"{time.perf_counter() - started:.0f} s"
    )


def current_layout(es: Elasticsearch) -> bool:
    """Whether the index has the fingerprint mapping ``indexer init`` creates now and documents
    of the current fingerprint version (an index built by an older version of this benchmark
    is rebuilt rather than measured)."""
    mapping = es.indices.get_mapping(index=INDEX)[INDEX]["mappings"]["properties"]
    want = index_mappings(PARAMS)["properties"]["collapse_fp"]["properties"]
    if mapping.get("collapse_fp", {}).get("properties") != want:
        return False
    # and documents fingerprinted by this generation (a new one changes values, not mapping)
    return index_version(es, INDEX) == PARAMS.version


def queries(es: Elasticsearch, count: int, seed: int = 3) -> list[dict[str, Any]]:
    """Two-word match queries drawn from the index's own documents."""
    rng = random.Random(seed)
    sample = es.search(
        index=INDEX,
        size=count,
        query={"function_score": {"random_score": {"seed": seed, "field": "_seq_no"}}},
        source=["body"],
    )["hits"]["hits"]
    out = []
    for hit in sample:
        words = [w.lower() for w in hit["_source"]["body"].split() if w.isalpha() and len(w) > 4]
        if len(words) >= 2:
            out.append({"match": {"body": " ".join(rng.sample(words, 2))}})
    return out


# -- load generation ------------------------------------------------------------------


def request_for(mode: str, query: dict[str, Any], es_url: str, proxy_url: str) -> tuple[str, bytes]:
    body: dict[str, Any] = {"query": query, "size": 10}
    if mode == "direct":
        return f"{es_url}/{INDEX}/_search", json.dumps(body).encode()
    if mode == "es-collapse":
        body["collapse"] = {"field": "collapse_fp.exact_key"}
        return f"{es_url}/{INDEX}/_search", json.dumps(body).encode()
    if mode == "proxy-off":
        return f"{proxy_url}/{INDEX}/_search?collapse=false", json.dumps(body).encode()
    return f"{proxy_url}/{INDEX}/_search", json.dumps(body).encode()


async def drive(
    mode: str,
    clients: int,
    duration: float,
    qs: list[dict[str, Any]],
    es_url: str,
    proxy_url: str,
    client: str = "lean",
) -> dict[str, float]:
    """``clients`` concurrent loops for ``duration`` seconds (after a short warm-up)."""
    return (await interleaved([mode], clients, duration, 1, qs, es_url, proxy_url, client))[mode]


Send = Callable[[int, int], Awaitable[int]]
"""Send request ``i`` (of the query list) on client loop ``k``; the answer's status."""


@asynccontextmanager
async def senders(
    client: str,
    modes: list[str],
    clients: int,
    qs: list[dict[str, Any]],
    es_url: str,
    proxy_url: str,
) -> AsyncIterator[dict[str, Send]]:
    """One sender per mode: ``lean`` (the proxy's ``collapse.http11`` transport called directly,
    keep-alive connections, requests laid out once) or ``httpx`` (one ``AsyncClient`` pool, as a
    Python frontend would send)."""
    reqs = {m: [request_for(m, q, es_url, proxy_url) for q in qs] for m in modes}
    if client == "httpx":
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        headers = {"content-type": "application/json"}
        async with httpx.AsyncClient(limits=limits, timeout=60) as http:

            def via_httpx(mode: str) -> Send:
                async def send(k: int, i: int) -> int:
                    url, body = reqs[mode][i % len(qs)]
                    return (await http.post(url, content=body, headers=headers)).status_code

                return send

            yield {m: via_httpx(m) for m in modes}
        return
    if client != "lean":
        raise ValueError(f"unknown load client {client!r}: lean or httpx")
    # lean: the proxy's own HTTP/1.1 transport, called with each request laid out once
    transport = Http11Transport(max_connections=clients)
    timeouts = Timeouts(connect=10.0, read=60.0, pool=60.0)

    def via_lean(mode: str) -> Send:
        parts = urlsplit(reqs[mode][0][0])
        origin = Origin("http", parts.hostname or "127.0.0.1", parts.port or 80)
        laid_out = []
        for url, body in reqs[mode]:
            target = urlsplit(url)
            path = target.path + (f"?{target.query}" if target.query else "")
            head = request_head(
                "POST",
                path,
                parts.netloc,
                [("content-type", "application/json"), ("content-length", str(len(body)))],
            )
            laid_out.append((head, body))

        async def send(k: int, i: int) -> int:
            head, body = laid_out[i % len(laid_out)]
            return (await transport.exchange(origin, head, body, timeouts)).status

        return send

    try:
        yield {m: via_lean(m) for m in modes}
    finally:
        await transport.aclose()


async def interleaved(
    modes: list[str],
    clients: int,
    duration: float,
    rounds: int,
    qs: list[dict[str, Any]],
    es_url: str,
    proxy_url: str,
    client: str = "lean",
) -> dict[str, dict[str, float]]:
    """Each mode for ``duration`` seconds in total, in ``rounds`` slices taken in turn, so that
    whatever else the machine does falls on every mode alike. ``client_cpu_ms`` is the load
    generator's own CPU per request: where it nears the server's, the figure measures it."""
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    elapsed = dict.fromkeys(modes, 0.0)
    own_cpu = dict.fromkeys(modes, 0.0)
    errors = dict.fromkeys(modes, 0)
    async with senders(client, modes, clients, qs, es_url, proxy_url) as send_by_mode:

        async def loop(mode: str, k: int, until: float, record: bool) -> None:
            send = send_by_mode[mode]
            i = k * 7919 + len(latencies[mode])
            while time.perf_counter() < until:
                t0 = time.perf_counter()
                status = await send(k, i)
                i += 1
                if record:
                    latencies[mode].append((time.perf_counter() - t0) * 1000)
                    errors[mode] += status != 200

        for mode in modes:  # warm-up: connections, caches, JIT
            until = time.perf_counter() + 1.5
            await asyncio.gather(*(loop(mode, k, until, False) for k in range(clients)))
        for _ in range(rounds):
            for mode in modes:
                start, cpu0 = time.perf_counter(), time.process_time()
                until = start + duration / rounds
                await asyncio.gather(*(loop(mode, k, until, True) for k in range(clients)))
                elapsed[mode] += time.perf_counter() - start
                own_cpu[mode] += time.process_time() - cpu0
    out = {}
    for mode in modes:
        lat = np.array(latencies[mode])
        out[mode] = {
            "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)),
            "rps": len(lat) / elapsed[mode],
            "errors": errors[mode],
            "client_cpu_ms": own_cpu[mode] * 1000 / max(1, len(lat)),
        }
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (uvicorn workers), in MB."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def start_proxy(es_url: str, port: int, workers: int, tree: Path = ROOT) -> subprocess.Popen[bytes]:
    """``python -m collapse`` of the code in ``tree``, ready to answer."""
    env = {**os.environ, "ES_URL": es_url, "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collapse",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "info",  # as deployed: one JSON access line per request (to /dev/null here)
        ],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return wait_ready(proc, port, f"the proxy of {tree}")


def wait_ready(
    proc: subprocess.Popen[bytes], port: int, what: str, seconds: float = 30
) -> subprocess.Popen[bytes]:
    """``proc`` once its ``/health`` on ``port`` answers 200 (killed, and an error, if it
    does not within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{what} did not start")


# -- offline measurements on the index's fingerprints ------------------------------------


def fingerprints_of_index(es: Elasticsearch) -> tuple[list[str], Prints]:
    families: list[str] = []
    fps: list[dict[str, Any]] = []
    for hit in helpers.scan(es, index=INDEX, _source=["family", "collapse_fp"], size=5000):
        families.append(hit["_source"]["family"])
        fps.append(hit["_source"]["collapse_fp"])
    from indexer.fingerprints import decode_many
    from indexer.hits import key_code

    a = decode_many(fps, PARAMS)
    keys = np.array([key_code(k) for k in a.exact_keys], dtype=np.int64)
    return families, Prints(a.simhash, a.minhash, keys, a.token_count, a.present, a.numbers)


def block_table_pairs(p: Prints, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs sharing one of ``blocks`` SimHash blocks (the index-side layout)."""
    w = 64 // blocks
    out_i, out_j = [], []
    for b in range(blocks):
        vals = (p.simhash >> np.uint64(b * w)) & np.uint64((1 << w) - 1)
        order = np.argsort(vals, kind="stable")
        sv = vals[order]
        starts = np.flatnonzero(np.r_[True, sv[1:] != sv[:-1]])
        ends = np.r_[starts[1:], len(sv)]
        for s, e in zip(starts, ends, strict=True):
            if e - s > 1:
                members = np.sort(order[s:e])
                ii, jj = np.triu_indices(e - s, 1)
                out_i.append(members[jj])
                out_j.append(members[ii])
    if not out_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.unique(np.stack([np.concatenate(out_i), np.concatenate(out_j)]), axis=1)
    return pairs[0], pairs[1]


def window_costs(p: Prints) -> list[str]:
    rows = [
        "| window hits | all-pairs (ms) | 8-bit block tables (ms) | grouping total (ms) |",
        "|---:|---:|---:|---:|",
    ]
    rng = np.random.default_rng(1)
    for n in (30, 300, 1000, 3000):
        sub = p.take(rng.choice(len(p), n, replace=False))
        t0 = time.perf_counter()
        for _ in range(5):
            window_pairs(sub, T)
        ap = (time.perf_counter() - t0) / 5 * 1000
        t0 = time.perf_counter()
        for _ in range(5):
            block_table_pairs(sub, 8)
        bt = (time.perf_counter() - t0) / 5 * 1000
        t0 = time.perf_counter()
        for _ in range(5):
            group(sub, T)
        gt = (time.perf_counter() - t0) / 5 * 1000
        rows.append(f"| {n} | {ap:.2f} | {bt:.2f} | {gt:.2f} |")
    return rows


def layouts(families: list[str], p: Prints) -> list[str]:
    """Recall of each probe key layout on true near-duplicate pairs, and its candidate cost."""
    fam = np.array(families)
    order = np.argsort(fam, kind="stable")
    sf = fam[order]
    starts = np.flatnonzero(np.r_[True, sf[1:] != sf[:-1]])
    ends = np.r_[starts[1:], len(sf)]
    pi, pj = [], []
    for s, e in zip(starts, ends, strict=True):
        if e - s > 1:
            ii, jj = np.triu_indices(e - s, 1)
            pi.append(order[s:e][ii])
            pj.append(order[s:e][jj])
    i, j = np.concatenate(pi), np.concatenate(pj)
    ham = popcount64(p.simhash[i] ^ p.simhash[j]).astype(int)
    sim = similarity(p.minhash[i], p.minhash[j])
    true = (ham <= T.max_distance) & (sim >= T.min_similarity)
    i, j, ham = i[true], j[true], ham[true]
    n = len(p)
    rows = [
        f"True near-duplicate pairs (same family, Hamming <= {T.max_distance}, "
        f"MinHash >= {T.min_similarity}): {len(i)}; "
        f"Hamming p50 {np.median(ham):.0f}, p90 {np.percentile(ham, 90):.0f}, "
        f"share > 7 bits {np.mean(ham > 7):.0%}.",
        "",
        "| probe keys | pairs found | candidates per probe (whole index, any query) |",
        "|---|---:|---:|",
    ]

    def simhash_keys(blocks: int) -> np.ndarray:
        w = 64 // blocks
        shifts = np.arange(blocks, dtype=np.uint64) * np.uint64(w)
        return (p.simhash[:, None] >> shifts) & np.uint64((1 << w) - 1)

    def band_keys(bands: int, rows: int) -> np.ndarray:
        m = p.minhash.astype(np.uint64)
        out = np.zeros((n, bands), dtype=np.uint64)
        for b in range(bands):
            h = np.zeros(n, dtype=np.uint64)
            for c in range(rows):
                h = h * np.uint64(0x100000001B3) ^ m[:, b * rows + c]
            out[:, b] = h
        return out

    layouts_ = [
        ("4 x 16-bit SimHash blocks (the textbook; --probe blocks)", simhash_keys(4)),
        ("8 x 8-bit SimHash blocks (before sh4)", simhash_keys(8)),
        ("16 x 4-bit SimHash blocks", simhash_keys(16)),
        (f"MinHash bands {MAX_BANDS} x {BAND_ROWS} values (ours)", band_keys(MAX_BANDS, BAND_ROWS)),
        ("MinHash bands 32 x 4 values", band_keys(32, 4)),
        ("MinHash bands 16 x 8 values", band_keys(16, 8)),
    ]
    for name, keys in layouts_:
        found = (keys[i] == keys[j]).any(axis=1).mean()
        cost = 0.0
        for b in range(keys.shape[1]):
            _, inverse, counts = np.unique(keys[:, b], return_inverse=True, return_counts=True)
            cost += float(np.mean(counts[inverse] - 1))
        rows.append(f"| {name} | {found:.1%} | {cost:,.0f} (upper bound, summed over keys) |")
    return rows


def took_breakdown(es_url: str, qs: list[dict[str, Any]]) -> list[str]:
    """Where a collapsed request's Elasticsearch time goes: ``took`` (and round-trip wall time)
    of the window fetch and of the probe, against the direct search of the same query; the
    proxy in-process (ASGI transport), one request at a time, 150 queries."""
    from collapse import upstream as upstream_module
    from collapse.app import create_app
    from collapse.settings import Settings

    seen: list[tuple[str, float, float]] = []
    original = upstream_module.Upstream.request

    async def recording(self: Any, method: str, path: str, **kw: Any) -> Any:
        t0 = time.perf_counter()
        answer = await original(self, method, path, **kw)
        wall = (time.perf_counter() - t0) * 1000
        content = kw.get("content") or b""
        if path.endswith("_msearch") or b"collapse_fp.band" in content:
            kind = "probe"
        elif b'"stored_fields":"_none_"' in content:
            kind = "refill"  # from doc values
        elif b'"ids"' in content:
            kind = "fill"  # the page's representatives of a refill, in full
        else:
            kind = "window"
        body = json.loads(answer.content)
        for item in body.get("responses", [body]):  # a probe _msearch (before 2026-11-30)
            seen.append((kind, float(item.get("took", 0)), wall))
        return answer

    async def run() -> tuple[list[float], list[float], list[float]]:
        app = create_app(Settings(es_url=[es_url]))
        logging.getLogger("collapse.access").setLevel(logging.WARNING)
        direct_took, direct_wall, proxy_wall = [], [], []
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://proxy") as px,
                httpx.AsyncClient() as es,
            ):
                for q in qs[:150]:
                    t0 = time.perf_counter()
                    r = await es.post(f"{es_url}/{INDEX}/_search", json={"query": q, "size": 10})
                    direct_wall.append((time.perf_counter() - t0) * 1000)
                    direct_took.append(float(r.json()["took"]))
                    t0 = time.perf_counter()
                    await px.post(f"/{INDEX}/_search", json={"query": q, "size": 10})
                    proxy_wall.append((time.perf_counter() - t0) * 1000)
        return direct_took, direct_wall, proxy_wall

    upstream_module.Upstream.request = recording  # type: ignore[method-assign]
    try:
        direct_took, direct_wall, proxy_wall = asyncio.run(run())
    finally:
        upstream_module.Upstream.request = original  # type: ignore[method-assign]
    rows = [
        "| search | count | ES took mean ms | ES took p50 ms | round trip p50 ms |",
        "|---|---:|---:|---:|---:|",
        f"| direct (size 10) | {len(direct_took)} | {np.mean(direct_took):.2f} | "
        f"{np.median(direct_took):.1f} | {np.median(direct_wall):.2f} |",
    ]
    for kind in ("window", "refill", "probe", "fill"):
        took = [t for k, t, _ in seen if k == kind]
        wall = [w for k, _, w in seen if k == kind]
        if took:
            rows.append(
                f"| {kind} | {len(took)} | {np.mean(took):.2f} | {np.median(took):.1f} | "
                f"{np.median(wall):.2f} |"
            )
    rows.append(f"| whole collapsed request (in-process) | 150 | | | {np.median(proxy_wall):.2f} |")
    return rows


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def probe_sizes(es_url: str, qs: list[dict[str, Any]]) -> list[str]:
    """``folded`` found on page 1 (size 10) by probe size, against a 1,000-candidate probe."""
    from collapse.app import create_app
    from collapse.settings import Settings

    async def run(size: int) -> tuple[int, float]:
        app = create_app(Settings(es_url=[es_url], collapse_probe_size=size))
        logging.getLogger("collapse.access").setLevel(logging.WARNING)
        folded, spent = 0, []
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as px:
                for q in qs[:150]:
                    t0 = time.perf_counter()
                    out = (await px.post(f"/{INDEX}/_search", json={"query": q})).json()
                    spent.append((time.perf_counter() - t0) * 1000)
                    folded += out["collapse"]["folded"]
        return folded, float(np.median(spent))

    rows = [
        "| probe size | folded found (150 queries) | share of the 1,000 probe | p50 ms |",
        "|---:|---:|---:|---:|",
    ]
    results = {size: asyncio.run(run(size)) for size in (1000, 0, 10, 30, 100)}
    ref = results[1000][0] or 1
    for size, (folded, p50) in results.items():
        rows.append(f"| {size} | {folded} | {folded / ref:.1%} | {p50:.1f} |")
    return rows


# -- main -----------------------------------------------------------------------------------


def table(results: dict[tuple[str, int], dict[str, float]], levels: list[int]) -> list[str]:
    rows = [
        "| clients | mode | p50 ms | p99 ms | req/s | Δp50 vs direct | Δp99 vs direct "
        "| req/s vs direct |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in levels:
        d = results[(c, "direct")]
        for mode in MODES:
            r = results[(c, mode)]
            rows.append(
                f"| {c} | {mode} | {r['p50']:.1f} | {r['p99']:.1f} | {r['rps']:.0f} | "
                f"{r['p50'] - d['p50']:+.1f} | {r['p99'] - d['p99']:+.1f} | "
                f"{r['rps'] / d['rps']:.0%} |"
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per measured cell")
    ap.add_argument("--levels", default="1,8,32")
    ap.add_argument("--workers", type=int, default=1, help="proxy worker processes")
    ap.add_argument("--sustain", type=float, default=60.0, help="seconds of the memory run")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument(
        "--client",
        choices=("lean", "httpx"),
        default="lean",
        help="load generator: the proxy's HTTP/1.1 transport, called directly (default), or httpx",
    )
    ap.add_argument(
        "--skip-offline",
        action="store_true",
        help="skip the offline tables (window grouping cost, probe key layouts)",
    )
    args = ap.parse_args()
    es = Elasticsearch(args.es_url, request_timeout=120)
    have = es.count(index=INDEX)["count"] if es.indices.exists(index=INDEX) else 0
    asked = (
        es.indices.get_mapping(index=INDEX)[INDEX]["mappings"].get("_meta", {}).get("bench_docs")
        if have
        else None
    )
    if args.rebuild or (have < args.docs and asked != args.docs) or not current_layout(es):
        build(es, args.docs)
    print(f"index {INDEX}: {es.count(index=INDEX)['count']} documents")
    qs = queries(es, 400)
    print("load average before:", load_average(), "cores:", os.cpu_count())
    levels = [int(x) for x in args.levels.split(",")]
    proxy = start_proxy(args.es_url, args.port, args.workers)
    proxy_url = f"http://127.0.0.1:{args.port}"
    results: dict[tuple[str, int], dict[str, float]] = {}
    try:
        sample = httpx.post(
            f"{proxy_url}/{INDEX}/_search", json={"query": qs[0], "size": 10}
        ).json()
        print("sample collapse:", json.dumps(sample["collapse"]))
        for c in levels:
            rounds = max(1, int(args.duration // 2))
            measured = asyncio.run(
                interleaved(
                    list(MODES), c, args.duration, rounds, qs, args.es_url, proxy_url, args.client
                )
            )
            for mode in MODES:
                results[(c, mode)] = r = measured[mode]
                print(
                    f"{c:>3} clients {mode:<12} p50 {r['p50']:7.2f} ms  p99 {r['p99']:7.2f} ms  "
                    f"{r['rps']:7.0f} req/s  errors {r['errors']}  "
                    f"client cpu {r['client_cpu_ms']:.3f} ms/req",
                    flush=True,
                )
        print("\n".join(table(results, levels)))
        print("load average after the latency run:", load_average())
        before = rss_mb(proxy.pid)
        samples = [before]
        for _ in range(max(1, int(args.sustain // 10))):
            asyncio.run(drive("proxy", 8, 10.0, qs, args.es_url, proxy_url, args.client))
            samples.append(rss_mb(proxy.pid))
        print(
            "proxy RSS (MB) every 10 s of collapsing at 8 clients:",
            " ".join(f"{s:.0f}" for s in samples),
        )
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
    print("\n".join(took_breakdown(args.es_url, qs)))
    print("\n".join(probe_sizes(args.es_url, qs)))
    if args.skip_offline:
        return
    families, prints = fingerprints_of_index(es)
    print("\n".join(window_costs(prints)))
    print("\n".join(layouts(families, prints)))


if __name__ == "__main__":
    main()
