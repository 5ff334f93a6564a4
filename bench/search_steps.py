"""CPU per step of the collapsed search's own path, timed without a profiler.

``bench/proxy_cpu.py`` splits the served proxy's CPU by a ``cProfile`` run, which adds its own
cost per Python call: code made of many small Python calls (a helper per hit) weighs several
times more there than it costs, numpy and orjson less. Here each step's function is wrapped in
a ``time.thread_time`` pair instead (its own cost: docs/proxy.md), in one process: the
proxy's app over ``httpx.ASGITransport`` against the benchmark's index and queries
(``bench-proxy``, size 10), ``--requests`` searches after 50 of warm-up. Nested steps (the
decoding and the grouping rule inside the window's grouping) are printed below their step and
are part of it. The process's CPU per request (``time.process_time``: the proxy, its HTTP
client and this benchmark's client) is printed beside them; garbage collection is timed too.

    .venv/bin/python bench/search_steps.py [--requests 800] [--tree DIR]

``--tree`` measures another checkout's code (e.g. a ``git archive`` of an older commit).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import logging
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: (label, module, function, depth): each step's function where it is looked up when called.
STEPS: list[tuple[str, str, str, int]] = [
    ("request parsed", "collapse.routes.search", "parse", 0),
    ("window grouped (first fetch)", "collapse.search.grouped", "start", 0),
    ("window grouped (refills)", "collapse.search.grouped", "extend", 0),
    ("fingerprints decoded", "collapse.search.grouped", "decode", 1),
    ("grouping rule", "collapse.search.grouped", "group", 1),
    ("doc-value hits read (refills, probe)", "collapse.slim", "hits_of", 0),
    ("probe body (keys, exclusions)", "collapse.search.beyond", "probe_body", 0),
    ("probe keys", "collapse.search.beyond", "probe_keys", 1),
    ("probe keys", "collapse.search.beyond", "probe_keys_many", 1),
    ("probe verified", "collapse.search.beyond", "verify", 0),
    ("candidates decoded", "collapse.search.beyond", "decode", 1),
    ("candidates against representatives", "collapse.search.beyond", "assign", 1),
    ("fill (body, answer)", "collapse.search.beyond", "fill_body", 0),
    ("fill (body, answer)", "collapse.search.beyond", "fill", 0),
    ("Elasticsearch's answers parsed", "collapse.executor", "_safe_loads", 0),
    ("answer rendered", "collapse.routes.search", "render", 0),
]


def instrument(spent: dict[str, float], calls: dict[str, int]) -> None:
    """Wrap every step's function in its module (the name its caller looks up)."""
    for label, module_name, name, _ in STEPS:
        module = importlib.import_module(module_name)
        if not hasattr(module, name):  # a step of another version of the code
            continue
        inner: Callable[..., Any] = getattr(module, name)

        def timed(
            *args: Any, _inner: Callable[..., Any] = inner, _label: str = label, **kwargs: Any
        ) -> Any:
            began = time.thread_time()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_label] += time.thread_time() - began
                calls[_label] += 1

        setattr(module, name, timed)

    started: list[float] = []

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[:] = [time.thread_time()]
        elif started:
            spent["garbage collection"] += time.thread_time() - started[0]
            calls["garbage collection"] += 1

    gc.callbacks.append(collected)


async def run(es_url: str, requests: int) -> tuple[dict[str, float], dict[str, int], float]:
    """Seconds and calls per step over ``requests`` searches, and the process's CPU seconds."""
    import httpx
    from elasticsearch import Elasticsearch
    from proxy_latency import INDEX, queries

    from collapse.app import create_app
    from collapse.settings import Settings

    spent: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    instrument(spent, calls)
    qs = queries(Elasticsearch(es_url), 400)
    app = create_app(Settings(es_url=[es_url]))
    logging.getLogger("collapse.access").setLevel(logging.WARNING)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as proxy:
            for i in range(50 + requests):
                if i == 50:
                    spent.clear()
                    calls.clear()
                    cpu = time.process_time()
                body = {"query": qs[i % len(qs)], "size": 10}
                answer = await proxy.post(f"/{INDEX}/_search", json=body)
                answer.raise_for_status()
            cpu = time.process_time() - cpu
    return spent, calls, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--requests", type=int, default=800)
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose code is measured")
    a = ap.parse_args(argv)
    tree = a.tree.resolve()
    # The tree's own bench/ first: proxy_latency puts its checkout first on sys.path.
    bench = tree / "bench" if (tree / "bench" / "proxy_latency.py").exists() else ROOT / "bench"
    from elasticsearch import Elasticsearch
    from stale import INDEX, stale_index  # this checkout's, before the tree's code is on the path

    stale = stale_index(Elasticsearch(a.es_url), INDEX, tree)
    if stale:
        print(stale, file=sys.stderr)
        return 2
    sys.path[:0] = [str(tree), str(bench)]
    spent, calls, cpu = asyncio.run(run(a.es_url, a.requests))
    import collapse

    measured = Path(collapse.__file__).resolve()
    if not measured.is_relative_to(tree):
        raise SystemExit(f"measured {measured}, not the code of {tree}")
    n = a.requests
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    print(f"{a.tree} ({when}, {n} collapsed searches, load average {load:.1f})")
    print("| step | ms per search | calls per search |")
    print("|---|---:|---:|")
    for label in dict.fromkeys([s[0] for s in STEPS] + ["garbage collection"]):
        depth = max((s[3] for s in STEPS if s[0] == label), default=0)
        name = ("  " * depth + "of which: " if depth else "") + label
        ms, per = spent.get(label, 0.0) / n * 1000, calls.get(label, 0) / n
        print(f"| {name} | {ms:.3f} | {per:.2f} |")
    print(f"| **process CPU per search** | **{cpu / n * 1000:.3f}** | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
