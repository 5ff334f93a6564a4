"""Whether the benchmark's index can measure a tree's proxy: it exists and holds fingerprints of
the version that tree computes. A proxy reads hits of another version as unfingerprinted, so
against a stale index it would time searches without grouping or probe.

Imports nothing of the project: benchmarks that measure another checkout (``--tree``) call it
before that checkout's code is put on ``sys.path``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from elasticsearch import Elasticsearch

__all__ = ["INDEX", "index_version", "stale_index"]

#: The proxy benchmarks' index (built by ``bench/proxy_latency.py``).
INDEX = "bench-proxy"
_VERSION = "from indexer.fingerprints import FingerprintParams; print(FingerprintParams().version)"


def index_version(es: Elasticsearch, index: str) -> str | None:
    """The fingerprint version of the index's documents (None: no fingerprinted document)."""
    hits = es.search(index=index, size=1, source=["collapse_fp.version"])["hits"]["hits"]
    return hits[0]["_source"].get("collapse_fp", {}).get("version") if hits else None


def stale_index(es: Elasticsearch, index: str, tree: Path) -> str | None:
    """Why ``index`` cannot measure ``tree``'s proxy (None: it can)."""
    if not es.indices.exists(index=index):
        return f"no index {index}: build it with bench/proxy_latency.py first"
    wanted = subprocess.run(
        [sys.executable, "-c", _VERSION], cwd=tree, capture_output=True, text=True, check=True
    ).stdout.strip()
    found = index_version(es, index)
    if found != wanted:
        return (
            f"{index} holds fingerprints {found}, {tree} computes {wanted}: its proxy would "
            "time searches without grouping or probe; rebuild the index with "
            "bench/proxy_latency.py (it does when the version differs)"
        )
    return None
