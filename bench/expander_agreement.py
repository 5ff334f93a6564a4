"""Does "N similar results omitted — show" show N? The search and the expander, query by query.

For each query of the quality benchmark's corpus (``bench/quality``; its index, e.g.
``neardup-quality-bp``): page 1 of the collapsed search (``size`` 10, ``collapse_members``
1000), then, for every representative that folded copies, the expander with the same body
(members in one page). Prints how many groups agree on the count and on the members, and the
latency of the search and of the expander (p50/p99), against a running proxy.

    .venv/bin/python bench/expander_agreement.py --proxy http://127.0.0.1:8000 \
        --index neardup-quality-bp --queries ~/.cache/neardup/quality/full/queries.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np


def _body(text: str) -> dict[str, Any]:
    """The quality benchmark's query (``bench.quality.offline.search_body``), page 1 of 10."""
    return {
        "size": 10,
        "_source": False,
        "query": {"multi_match": {"query": text, "fields": ["title^2", "body"]}},
    }


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    p50, p99 = np.percentile(values, [50, 99])
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy", default="http://127.0.0.1:8000")
    parser.add_argument("--index", default="neardup-quality-bp")
    parser.add_argument(
        "--queries", type=Path, default=Path.home() / ".cache/neardup/quality/full/queries.jsonl"
    )
    parser.add_argument("--limit", type=int, default=0, help="first N queries (0: all)")
    args = parser.parse_args()
    texts = [json.loads(line)["text"] for line in args.queries.read_text().splitlines()]
    if args.limit:
        texts = texts[: args.limit]
    groups = same_count = same_members = 0
    search_ms: list[float] = []
    expand_ms: list[float] = []
    differ: list[str] = []
    with httpx.Client(base_url=args.proxy, timeout=60) as client:
        for text in texts:
            body = _body(text)
            t0 = time.perf_counter()
            found = client.post(
                f"/{args.index}/_search", json=body, params={"collapse_members": 1000}
            )
            search_ms.append((time.perf_counter() - t0) * 1000)
            found.raise_for_status()
            for hit in found.json()["hits"]["hits"]:
                folded = hit["_collapse"]["folded"]
                if not folded:
                    continue
                groups += 1
                t0 = time.perf_counter()
                answer = client.post(
                    f"/{args.index}/_collapse/{hit['_id']}", json=body, params={"size": 1000}
                )
                expand_ms.append((time.perf_counter() - t0) * 1000)
                answer.raise_for_status()
                listed = [h["_id"] for h in answer.json()["hits"]["hits"]]
                total = answer.json()["hits"]["total"]["value"]
                same_count += total == folded
                same_members += listed == [m["_id"] for m in hit["_collapse"]["members"]]
                if total != folded:
                    differ.append(f"{hit['_id']}: folded {folded}, expander {total}")
    print(f"queries {len(texts)}, folded groups {groups}")
    print(f"expander total == folded: {same_count}/{groups}; same members: {same_members}/{groups}")
    for line in differ[:20]:
        print("  ", line)
    print(f"search   {_ms(search_ms)}")
    print(f"expander {_ms(expand_ms)}")


if __name__ == "__main__":
    main()
