"""The proxy's HTTP client against its peers: CPU and wall time per search round trip.

The proxy talks to Elasticsearch through one pooled ``httpx.AsyncClient``; its transport decides
most of the cost (the proxy's own is ``collapse.http11``, chosen against these: docs/proxy.md).
In one process, on uvloop, the same searches (the benchmark index's queries, ``size`` 10,
``accept-encoding: identity`` as the proxy sends) through the maintained peers:

* ``httpx`` with its default transport (httpcore + anyio);
* ``httpx`` over aiohttp's pooled connector (``httpx_aiohttp.AiohttpTransport``);
* ``aiohttp`` alone.

aiohttp and httpx-aiohttp are not the product's dependencies: ``pip install -e '.[bench]'``.

Rounds are interleaved; CPU is the process's own (``time.process_time``). All traffic stays on
127.0.0.1. Needs the ``bench-proxy`` index (``bench/proxy_latency.py`` builds it).

    .venv/bin/python bench/http_client.py [--requests 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
import uvloop
from httpx_aiohttp import AiohttpTransport

INDEX = "bench-proxy"
HEADERS = {"content-type": "application/json", "accept-encoding": "identity"}


async def measure(es_url: str, n: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    url = f"{es_url}/{INDEX}/_search"
    async with httpx.AsyncClient() as probe:
        sample = (
            await probe.post(
                url,
                json={"size": 150, "_source": ["body"], "query": {"match_all": {}}},
            )
        ).json()["hits"]["hits"]
    words = [h["_source"]["body"].split()[:2] for h in sample]
    bodies = [
        json.dumps({"query": {"match": {"body": " ".join(w)}}, "size": 10}).encode()
        for w in words
        if len(w) == 2
    ]
    plain = httpx.AsyncClient()
    over_aiohttp = httpx.AsyncClient(transport=AiohttpTransport())
    session = aiohttp.ClientSession()

    async def with_httpx(client: httpx.AsyncClient, body: bytes) -> None:
        (await client.post(url, content=body, headers=HEADERS)).raise_for_status()

    async def with_aiohttp(body: bytes) -> None:
        async with session.post(url, data=body, headers=HEADERS) as answer:
            answer.raise_for_status()
            await answer.read()

    ways: dict[str, Callable[[bytes], Awaitable[None]]] = {
        "httpx (default transport)": lambda b: with_httpx(plain, b),
        "httpx over aiohttp (the proxy's)": lambda b: with_httpx(over_aiohttp, b),
        "aiohttp alone": with_aiohttp,
    }
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    try:
        for _ in range(rounds):
            for name, send in ways.items():
                for body in bodies[:20]:  # warm the pool and the code paths
                    await send(body)
                cpu, wall = time.process_time(), time.perf_counter()
                for i in range(n):
                    await send(bodies[i % len(bodies)])
                out[name].append(
                    (
                        (time.process_time() - cpu) / n * 1000,
                        (time.perf_counter() - wall) / n * 1000,
                    )
                )
    finally:
        await plain.aclose()
        await over_aiohttp.aclose()
        await session.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default="http://127.0.0.1:9200")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    results = uvloop.run(measure(args.es_url, args.requests, args.rounds))
    print(f"{args.requests} searches per round, {args.rounds} rounds, interleaved")
    print("| client | CPU ms per round trip (median) | wall ms per round trip (median) |")
    print("|---|---:|---:|")
    for name, rows in results.items():
        cpu = statistics.median(r[0] for r in rows)
        wall = statistics.median(r[1] for r in rows)
        print(f"| {name} | {cpu:.2f} | {wall:.2f} |")


if __name__ == "__main__":
    main()
