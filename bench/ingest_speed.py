"""Ingestion speed: ``indexer ingest`` against a plain bulk load of the same documents.

Builds (once) ~100,000 real-text documents (~100 MB: man pages, /usr/share/doc, licenses,
via ``bench/corpus.py``) into ``~/.cache/neardup/ingest_100k.jsonl``, then in one run against
the same cluster:

* plain: ``streaming_bulk`` of the parsed documents with their ids, no fingerprints (what a
  team's loader does today), one process;
* ours: ``python -m indexer ingest`` (wall time including start-up, the boilerplate learning
  pass, extraction-free JSONL parsing, fingerprints on every core, bulk).

    .venv/bin/python bench/ingest_speed.py [--docs 100000] [--es-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from elasticsearch import Elasticsearch, helpers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CACHE, documents

ROOT = Path(__file__).resolve().parent.parent


def build(path: Path, n: int) -> None:
    """~1 KB documents with ids, titles and per-source hosts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for i, (source, text) in enumerate(documents(170)):
            if i >= n:
                break
            host = source.split("/")[3] if source.count("/") > 3 else "local"
            out.write(
                json.dumps(
                    {
                        "id": f"doc-{i}",
                        "title": Path(source).name,
                        "body": text,
                        "url": f"https://{host}.example{source}#{i}",
                    }
                )
                + "\n"
            )


def plain(es: Elasticsearch, index: str, path: Path) -> float:
    def actions():  # type: ignore[no-untyped-def]
        with path.open(encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                yield {"_index": index, "_id": doc["id"], "_source": doc}

    t0 = time.perf_counter()
    for ok, _ in helpers.streaming_bulk(es, actions(), chunk_size=500, raise_on_error=False):
        assert ok
    return time.perf_counter() - t0


def ours(es_url: str, index: str, path: Path, extra: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "indexer",
            "ingest",
            "--index",
            index,
            "--es-url",
            es_url,
            "--no-progress",
            "--rejects",
            str(CACHE / "bench.rejects.jsonl"),
            "--state",
            str(CACHE / "bench.state.json"),
            *extra,
            str(path),
        ],
        cwd=ROOT,
        check=True,
    )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    args = ap.parse_args()
    path = CACHE / f"ingest_{args.docs // 1000}k.jsonl"
    if not path.exists():
        build(path, args.docs)
    n = sum(1 for _ in path.open("rb"))
    print(f"{n} documents, {path.stat().st_size / 1e6:.0f} MB, {os.cpu_count()} cores")
    es = Elasticsearch(args.es_url, request_timeout=120)
    rows = []
    for name, run in (
        ("plain bulk (no fingerprints)", lambda ix: plain(es, ix, path)),
        ("indexer ingest", lambda ix: ours(args.es_url, ix, path, [])),
        (
            "indexer ingest --no-boilerplate",
            lambda ix: ours(args.es_url, ix, path, ["--no-boilerplate"]),
        ),
    ):
        index = "bench-ingest"
        es.options(ignore_status=404).indices.delete(index=index)
        seconds = run(index)
        es.indices.refresh(index=index)
        count = es.count(index=index)["count"]
        rows.append((name, seconds, count))
        print(
            f"{name:34s} {seconds:7.1f} s  {n / seconds:8.0f} docs/s  ({count} in index)",
            flush=True,
        )
    es.options(ignore_status=404).indices.delete(index="bench-ingest")
    base = n / rows[0][1]
    for name, seconds, _ in rows[1:]:
        print(f"{name}: {(n / seconds) / base:.0%} of the plain bulk rate")


if __name__ == "__main__":
    main()
