"""Ingestion speed: ``indexer ingest`` against a plain bulk load of the same documents.

Builds (once) ~100,000 real-text documents (~100 MB: man pages, /usr/share/doc, licenses,
via ``bench/corpus.py``) into ``~/.cache/neardup/ingest_100k.jsonl``, then in one run against
the same cluster:

* plain: ``streaming_bulk`` of the parsed documents with their ids, no fingerprints (what a
  team's loader does today), one process;
* ours: ``python -m indexer ingest`` (wall time including start-up, the boilerplate learning
  pass, extraction-free JSONL parsing, fingerprints on every core, bulk).

Runs are interleaved (plain, ours, plain, ours, ...) so load from other work on the machine
hits both alike; each row also reports the CPU seconds Elasticsearch spent (node stats) and
the CPU seconds of the loader's own processes, and the load average at its end; then, after a
refresh, Elasticsearch's CPU to the end of the merges the load started, the index's segments
and its merges (their count and time).
``--baseline DIR`` adds ``indexer ingest`` from another checkout (e.g. a git worktree of the
previous commit) to every round.

    .venv/bin/python bench/ingest_speed.py [--docs 100000] [--rounds 3] [--baseline DIR]

The goal (issue 4): ``indexer ingest`` at 80% or more of the plain rate in every round.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from elasticsearch import Elasticsearch, helpers

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from corpus import CACHE, documents

ROOT = Path(__file__).resolve().parent.parent


def row(i: int, source: str, text: str) -> dict[str, str]:
    """Document ``i`` of the corpus as ``indexer ingest`` reads it: id, title, body and a URL
    whose host is the source's top folder (man, doc, common-licenses)."""
    host = source.split("/")[3] if source.count("/") > 3 else "local"
    return {
        "id": f"doc-{i}",
        "title": Path(source).name,
        "body": text,
        "url": f"https://{host}.example{source}#{i}",
    }


def build(path: Path, n: int) -> None:
    """~1 KB documents with ids, titles and per-source hosts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for i, (source, text) in enumerate(documents(170)):
            if i >= n:
                break
            out.write(json.dumps(row(i, source, text)) + "\n")


def es_cpu(es: Elasticsearch) -> float:
    """CPU seconds used so far by the local Elasticsearch process."""
    stats = es.nodes.stats(node_id="_local", metric="process")["nodes"]
    return next(iter(stats.values()))["process"]["cpu"]["total_in_millis"] / 1000


def own_cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@dataclass
class Merged:
    """The index once the merges its load started have ended, and the node's CPU then."""

    cpu: float  # Elasticsearch's CPU seconds so far (as :func:`es_cpu`)
    segments: int
    merges: int  # merges the index went through (total)
    merge_s: float  # their time (merge threads)


def merged(es: Elasticsearch, index: str) -> Merged:
    """Wait for the index's running merges to end; what the load cost Elasticsearch in all
    (a load that ends just before a merge would start looks cheaper than one just after)."""
    while True:
        st = es.indices.stats(index=index, metric="merge,segments")["_all"]["primaries"]
        if not st["merges"]["current"]:
            break
        time.sleep(0.2)
    m = st["merges"]
    return Merged(es_cpu(es), st["segments"]["count"], m["total"], m["total_time_in_millis"] / 1000)


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


def prefingerprinted(path: Path) -> list[object]:
    """Every document as ``indexer ingest`` would send it (fingerprinted; not timed)."""
    from indexer.prepare import PrepareConfig, prepare_batch
    from indexer.sources import read_rows, take

    out: list[object] = []
    rows = read_rows([str(path)])
    while (batch := take(rows, 256)) is not None:
        out.extend(prepare_batch(batch.items(), PrepareConfig(), {}))
    return out


def send_only(es: Elasticsearch, index: str, ready: list[object]) -> float:
    """Our bulk path alone (``indexer.bulk.send``) on already fingerprinted documents."""
    from indexer.bulk import send

    t0 = time.perf_counter()
    for result in send(es, index, ready):  # type: ignore[arg-type]
        assert result.ok, result
    return time.perf_counter() - t0


def ours(es_url: str, index: str, path: Path, extra: list[str], root: Path = ROOT) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [
            str(ROOT / ".venv/bin/python"),
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
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,  # its summary line; the row printed here says the same
    )
    return time.perf_counter() - t0


def warm(root: Path) -> None:
    """The tree's bytecode and compiled kernels, as ``scripts/bootstrap`` leaves them, so that
    no row pays for compiling either (an export of another commit has neither)."""
    python = str(ROOT / ".venv/bin/python")
    kernels = "from indexer.fingerprints import compute, numbers; "
    kernels += "compute.enable_kernel(); numbers.warm_kernel()"
    for args in (["-m", "compileall", "-q", "indexer", "collapse"], ["-c", kernels]):
        subprocess.run([python, *args], cwd=root, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout to run `indexer ingest` from")
    ap.add_argument("--extra", default="", help="more `indexer ingest` options (ours only)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="add a row: `indexer ingest` with these options (repeatable; e.g. '--workers 3')",
    )
    ap.add_argument(
        "--send-only",
        action="store_true",
        help="add a row: our bulk path on pre-fingerprinted documents (ES cost of collapse_fp)",
    )
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    args = ap.parse_args()
    path = CACHE / f"ingest_{args.docs // 1000}k.jsonl"
    if not path.exists():
        build(path, args.docs)
    n = sum(1 for _ in path.open("rb"))
    print(f"{n} documents, {path.stat().st_size / 1e6:.0f} MB, {os.cpu_count()} cores")
    es = Elasticsearch(args.es_url, request_timeout=120)
    runs = [
        ("plain streaming_bulk", lambda ix: plain(es, ix, path)),
        ("indexer ingest", lambda ix: ours(args.es_url, ix, path, args.extra.split())),
    ]
    for variant in args.variant:
        runs.append(
            (f"ingest {variant}", lambda ix, v=variant: ours(args.es_url, ix, path, v.split()))
        )
    warm(ROOT)
    if args.baseline:
        base = args.baseline.resolve()
        warm(base)
        runs.append(("indexer ingest (baseline)", lambda ix: ours(args.es_url, ix, path, [], base)))
    if args.send_only:
        ready = prefingerprinted(path)
        runs.append(("send pre-fingerprinted", lambda ix: send_only(es, ix, ready)))
    rates: dict[str, list[float]] = {}
    for r in range(args.rounds):
        for name, run in runs:
            index = "bench-ingest"
            es.options(ignore_status=404).indices.delete(index=index)
            if name == "send pre-fingerprinted":  # the index `indexer ingest` would create
                from indexer.fingerprints import FingerprintParams
                from indexer.mapping import ensure_index

                ensure_index(es, index, FingerprintParams())
            cpu_es, cpu_own = es_cpu(es), own_cpu()
            seconds = run(index)
            cpu_es_end, cpu_own = es_cpu(es), own_cpu() - cpu_own
            es.indices.refresh(index=index)
            count = es.count(index=index)["count"]
            after = merged(es, index)  # the merges this load started, to their end
            cpu_merged, cpu_es = after.cpu - cpu_es, cpu_es_end - cpu_es
            rates.setdefault(name, []).append(n / seconds)
            print(
                f"round {r + 1} {name:30s} {seconds:6.1f} s {n / seconds:6.0f} docs/s"
                f"  ES cpu {cpu_es:5.1f} s ({cpu_es / seconds:.2f} cores)"
                f"  loader cpu {cpu_own:5.1f} s ({cpu_own / seconds:.2f} cores)"
                f"  load {os.getloadavg()[0]:.1f}  ({count} in index)"
                f"  | ES cpu to merged {cpu_merged:5.1f} s, {after.segments} segments,"
                f" {after.merges} merges ({after.merge_s:.1f} s)",
                flush=True,
            )
    es.options(ignore_status=404).indices.delete(index="bench-ingest")
    for r in range(args.rounds):
        base_rate = rates["plain streaming_bulk"][r]
        print(
            f"round {r + 1}: "
            + ", ".join(f"{k}: {v[r] / base_rate:.0%} of plain" for k, v in rates.items() if v)
        )
    # The run as a whole: every round's documents over every round's seconds, per method.
    overall = {k: len(v) / sum(1 / rate for rate in v) for k, v in rates.items() if v}
    base_rate = overall["plain streaming_bulk"]
    print(
        f"all {args.rounds} rounds: "
        + ", ".join(
            f"{k}: {rate:.0f} docs/s, {rate / base_rate:.0%} of plain"
            for k, rate in overall.items()
        )
    )


if __name__ == "__main__":
    main()
