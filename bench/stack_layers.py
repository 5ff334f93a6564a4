"""CPU per search entering the proxy's app at each layer: what each middleware costs in place.

``bench/proxy_cpu.py`` splits the served proxy's CPU with a profiler, which weighs code by its
number of Python calls; ``bench/search_steps.py`` times the collapsed search's own steps. Here
the app's ASGI stack is called directly, in one process (no server, no HTTP client): each query
is sent once through every entry point of the stack (the whole app, then each layer of
Starlette's and ours down to the search lane), the order flipping every query, and the
thread's CPU time of each call is summed per entry point. The difference between two adjacent
entry points is what that layer costs where it runs, between the rest of a request's work,
which is several times what the same layer costs called alone in a loop (docs/proxy.md).

    .venv/bin/python bench/stack_layers.py [--requests 400] [--pass-through] [--tree DIR]

The queries are the benchmark's (``bench-proxy``, size 10; ``bench/proxy_latency.py`` builds
the index). The access line goes to stderr, as when served: redirect it (``2>/dev/null``).
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

ROOT = Path(__file__).resolve().parent.parent

ASGI = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def scope_for(app: Any, path: str, query: bytes, body: bytes) -> dict[str, Any]:
    """An HTTP scope as uvicorn makes it for a search of ``body``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "app": app,
        "state": {},
    }


async def call(target: ASGI, scope: dict[str, Any], body: bytes) -> None:
    """One request through ``target``; fails unless it answers 200."""
    given = False
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # a client that stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await target(scope, receive, send)
    if sent[0]["status"] != 200:
        raise RuntimeError(f"status {sent[0]['status']}: {sent[1:2]}")


def entry_points(app: Any) -> list[tuple[str, ASGI]]:
    """The app, then each layer of its built middleware stack down to the search lane."""
    from collapse.middleware.search_lane import SearchLaneMiddleware

    if app.middleware_stack is None:
        app.middleware_stack = app.build_middleware_stack()
    out: list[tuple[str, ASGI]] = [("the whole app (FastAPI)", app)]
    node = app.middleware_stack
    while node is not None:
        out.append((type(node).__name__, node))
        if isinstance(node, SearchLaneMiddleware):
            break
        node = getattr(node, "app", None)
    return out


async def run(es_url: str, requests: int, pass_through: bool) -> dict[str, float]:
    """CPU seconds per entry point over ``requests`` searches (after one pass of warm-up)."""
    import importlib

    import orjson
    from elasticsearch import Elasticsearch

    from collapse.app import create_app
    from collapse.settings import Settings

    # Imported after the tree's ``collapse``: proxy_latency puts this checkout first on the path.
    latency = importlib.import_module("proxy_latency")
    INDEX, queries = latency.INDEX, latency.queries

    qs = queries(Elasticsearch(es_url), 400)
    app = create_app(Settings(es_url=[es_url]))
    query = b"collapse=false" if pass_through else b""
    spent: dict[str, float] = {}
    async with app.router.lifespan_context(app):
        points = entry_points(app)
        spent = dict.fromkeys((name for name, _ in points), 0.0)
        for measured in (False, True):
            for i in range(min(50, requests) if not measured else requests):
                body = orjson.dumps({"query": qs[i % len(qs)], "size": 10})
                for name, target in points if i % 2 else points[::-1]:
                    scope = scope_for(app, f"/{INDEX}/_search", query, body)
                    began = time.thread_time()
                    await call(target, scope, body)
                    if measured:
                        spent[name] += time.thread_time() - began
    return spent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--pass-through", action="store_true", help="collapse=false searches")
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose code is measured")
    a = ap.parse_args(argv)
    sys.path[:0] = [str(a.tree.resolve()), str(ROOT / "bench")]
    spent = asyncio.run(run(a.es_url, a.requests, a.pass_through))
    n = a.requests
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    mode = "collapse=false" if a.pass_through else "collapsed"
    load = os.getloadavg()[0]
    print(f"{a.tree} ({when}, {n} {mode} searches per entry point, load average {load:.1f})")
    print("| entered at | CPU ms per search | the layer itself ms |")
    print("|---|---:|---:|")
    names = list(spent)
    for k, name in enumerate(names):
        ms = spent[name] / n * 1000
        below = spent[names[k + 1]] / n * 1000 if k + 1 < len(names) else 0.0
        own = f"{ms - below:.3f}" if k + 1 < len(names) else "—"
        print(f"| {name} | {ms:.3f} | {own} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
