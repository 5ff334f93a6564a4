"""Faults on a local three-node cluster (``scripts/cluster``): what clients and ingestion see.

**Searches.** The proxy (``python -m collapse``, one worker, default retries, ``ES_URL`` = the
three nodes) serves ``--clients`` concurrent collapsed searches on 127.0.0.1 against an index of
3 shards and 1 replica, while the elected master is stopped (SIGTERM; ``--crash``: SIGKILL) and
started again. Each request counts in the phase in which it was sent:

    before      --before seconds of normal service
    down        from the stop command, until the node is gone and --down seconds more
    recovering  from the start command until the node answers and the cluster is green again
    after       --after seconds

Per phase: requests, errors (by status or exception), answers with shard failures, latency.
Recovery: seconds from the start command until the node answers, and until green.
Claim: no error before and after, and no more errors than requests in flight at the stop.

**Ingestion.** ``indexer ingest`` of ``--docs`` documents (explicit ids) into an index of 3 shards
and 1 replica; once a fifth is acknowledged, a node is killed (SIGKILL). ``--ingest-to one``
sends the ingest to the killed node only, so it fails, and ``ingest --resume`` given all three
nodes (the dead one among them) finishes it; ``all`` gives the first run the three nodes (its
client moves on by itself; ``--resume`` only if it failed). Claim: the index holds every id
exactly once (count and ids), and once the node is back and the cluster green, every copy does
(all docs = 2 × primaries' docs).

    flock /tmp/neardup-bench.lock .venv/bin/python bench/faults_cluster.py

starts the cluster (``scripts/cluster``, ports 9500-9502 unless ``--port``), runs both, prints a
table and JSON, and stops and wipes the cluster. Exit status 1 when a claim fails.
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from elasticsearch import Elasticsearch, helpers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer.fingerprints import FingerprintParams, encode_id, fingerprint_batch  # noqa: E402
from indexer.mapping import index_mappings  # noqa: E402

PHASES = ("before", "down", "recovering", "after")
_VOCABULARY = (
    "market council river energy station report policy minister company shares storm coast "
    "village school hospital budget election court judge police officer museum festival bridge "
    "railway airport harbour factory worker union strike price growth farmer harvest drought"
)
WORDS = _VOCABULARY.split()
QUERIES = ["market", "storm coast", "election court", "river harbour", "farmer harvest"]


class Cluster:
    """The three nodes of ``scripts/cluster`` on ``port``..``port + 2``, data under ``state``."""

    def __init__(self, port: int = 9500, state: Path | None = None, heap: str = "384m") -> None:
        self.port = port
        self.urls = [f"http://127.0.0.1:{port + n}" for n in range(3)]
        self.env = {k: v for k, v in os.environ.items() if k != "ES_URL"}
        self.env.update(
            CLUSTER_PORT=str(port), CLUSTER_TRANSPORT_PORT=str(port + 100), CLUSTER_HEAP=heap
        )
        if state is not None:
            self.env["CLUSTER_STATE"] = str(state)

    def run(self, *args: str) -> None:
        """``scripts/cluster ARGS``; raises with its output when it fails."""
        done = subprocess.run(
            [str(ROOT / "scripts" / "cluster"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=400,
        )
        if done.returncode != 0:
            raise RuntimeError(f"scripts/cluster {' '.join(args)} failed:\n{done.stderr[-3000:]}")

    def es(self, urls: list[str] | None = None) -> Elasticsearch:
        return Elasticsearch(urls or self.urls, request_timeout=120)

    def health(self, **params: str) -> dict[str, Any]:
        """The cluster's health from the first node that answers (``wait_for_*`` passed on)."""
        for url in self.urls:
            try:
                answer = httpx.get(f"{url}/_cluster/health", params=params, timeout=150)
            except httpx.HTTPError:
                continue
            if answer.status_code in (200, 408):
                return dict(answer.json())
        raise RuntimeError("no node of the cluster answers")

    def wait_green(self, nodes: int = 3) -> None:
        health = self.health(wait_for_status="green", wait_for_nodes=str(nodes), timeout="120s")
        if health.get("timed_out") or health["status"] != "green":
            raise RuntimeError(f"the cluster did not turn green: {health}")

    def master(self) -> int:
        """The number (0-2) of the elected master."""
        for url in self.urls:
            try:
                answer = httpx.get(f"{url}/_cat/master", params={"format": "json"}, timeout=10)
                name = answer.json()[0]["node"]
            except (httpx.HTTPError, ValueError, KeyError, IndexError):
                continue
            return int(name.removeprefix("node-")) - self.port
        raise RuntimeError("no node names a master")


def create_index(es: Elasticsearch, index: str, docs: int, seed: int = 7) -> None:
    """3 shards, 1 replica: generated texts with fingerprints, a fifth near-duplicate copies."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < docs:
        base = [rng.choice(WORDS) for _ in range(rng.randint(120, 300))]
        texts.append(" ".join(base))
        if rng.random() < 0.25:
            copy = list(base)
            copy[rng.randrange(len(copy))] = rng.choice(WORDS)
            texts.append(" ".join(copy))
    texts = texts[:docs]
    params = FingerprintParams()
    mappings = index_mappings(params)
    mappings["properties"].update({"body": {"type": "text"}})
    es.indices.create(
        index=index,
        mappings=mappings,
        settings={"number_of_shards": 3, "number_of_replicas": 1},
        wait_for_active_shards="all",
    )
    records = fingerprint_batch(texts, params)
    actions = (
        {
            "_index": index,
            "_id": str(i),
            "body": t,
            "collapse_fp": {**r.to_es(), "id": encode_id(str(i))},
        }
        for i, (t, r) in enumerate(zip(texts, records, strict=True))
    )
    helpers.bulk(es, actions, refresh="wait_for", chunk_size=500)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proxy:
    """``python -m collapse`` on a free loopback port in front of ``urls``."""

    def __init__(self, urls: list[str], log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "collapse",
                "--port",
                self.url.rsplit(":", 1)[1],
                "--log-level",
                "warning",
            ],
            env={**os.environ, "ES_URL": ",".join(urls), "ES_ENGINE": "elasticsearch"},
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.close()
        raise RuntimeError(f"the proxy did not start; its log: {log}")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        self._log.close()


@dataclass
class Phase:
    """What the clients saw in one phase."""

    seconds: float = 0.0
    requests: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    shard_failures: int = 0
    shard_failure_reasons: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    @property
    def failed(self) -> int:
        return sum(self.errors.values())

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms) or [0.0]
        return {
            "seconds": round(self.seconds, 1),
            "requests": self.requests,
            "errors": self.failed,
            "errors_by_kind": self.errors,
            "answers_with_shard_failures": self.shard_failures,
            "shard_failure_reasons": self.shard_failure_reasons,
            "p50_ms": round(statistics.median(lat), 1),
            "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
            "max_ms": round(lat[-1], 1),
        }


@dataclass
class SearchOutage:
    """The searches' report: phases, the node stopped, in-flight requests, recovery times."""

    clients: int
    victim: int
    crash: bool = False
    in_flight_at_stop: int = 0
    stop_seconds: float = 0.0
    rejoin_seconds: float = 0.0
    green_seconds: float = 0.0
    phases: dict[str, Phase] = field(default_factory=lambda: {p: Phase() for p in PHASES})

    @property
    def failed(self) -> int:
        return sum(p.failed for p in self.phases.values())

    def problems(self) -> list[str]:
        """The claims that failed (empty: all hold)."""
        out = [
            f"{p}: {self.phases[p].failed} errors"
            for p in ("before", "after")
            if self.phases[p].failed
        ]
        if self.failed > self.in_flight_at_stop:
            out.append(
                f"{self.failed} failed requests, more than the {self.in_flight_at_stop} in "
                "flight when the node stopped"
            )
        if not all(self.phases[p].requests for p in PHASES):
            out.append("a phase served no request")
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "victim": self.victim,
            "crash": self.crash,
            "in_flight_at_stop": self.in_flight_at_stop,
            "stop_seconds": round(self.stop_seconds, 1),
            "rejoin_seconds": round(self.rejoin_seconds, 1),
            "green_seconds": round(self.green_seconds, 1),
            "phases": {name: phase.summary() for name, phase in self.phases.items()},
            "problems": self.problems(),
        }


async def search_outage(
    cluster: Cluster,
    proxy: str,
    index: str,
    *,
    clients: int = 32,
    before: float = 10,
    down: float = 10,
    after: float = 10,
    crash: bool = False,
) -> SearchOutage:
    """Searches from ``clients`` clients while the master is stopped (``crash``: killed) and
    started again."""
    victim = cluster.master()
    report = SearchOutage(clients=clients, victim=victim, crash=crash)
    current = ["before"]
    in_flight = [0]
    stopping = asyncio.Event()

    async def client(http: httpx.AsyncClient, seed: int) -> None:
        rng = random.Random(seed)
        while not stopping.is_set():
            phase = report.phases[current[0]]
            body = {
                "query": {"match": {"body": rng.choice(QUERIES)}},
                "size": 10,
                "from": 10 * rng.randrange(3),
            }
            phase.requests += 1
            in_flight[0] += 1
            began = time.perf_counter()
            try:
                answer = await http.post(f"/{index}/_search", json=body)
            except httpx.HTTPError as exc:
                kind = type(exc).__name__
            else:
                kind = "" if answer.status_code == 200 else str(answer.status_code)
                shards = answer.json()["_shards"] if not kind else {}
                if shards.get("failed"):
                    phase.shard_failures += 1
                    for failure in shards.get("failures", []):
                        reason = str(failure.get("reason", {}).get("type"))
                        phase.shard_failure_reasons[reason] = (
                            phase.shard_failure_reasons.get(reason, 0) + 1
                        )
            finally:
                in_flight[0] -= 1
            phase.latencies_ms.append((time.perf_counter() - began) * 1000)
            if kind:
                phase.errors[kind] = phase.errors.get(kind, 0) + 1

    def enter(name: str) -> float:
        now = time.monotonic()
        report.phases[current[0]].seconds = now - entered[0]
        current[0], entered[0] = name, now
        return now

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=proxy, timeout=60, limits=limits) as http:
        entered = [time.monotonic()]
        tasks = [asyncio.create_task(client(http, 1000 + i)) for i in range(clients)]
        await asyncio.sleep(before)
        stopped = enter("down")
        report.in_flight_at_stop = in_flight[0]
        await asyncio.to_thread(cluster.run, "kill" if crash else "stop", str(victim))
        report.stop_seconds = time.monotonic() - stopped
        await asyncio.sleep(down)
        started = enter("recovering")
        await asyncio.to_thread(cluster.run, "start", str(victim))
        report.rejoin_seconds = time.monotonic() - started
        await asyncio.to_thread(cluster.wait_green)
        report.green_seconds = time.monotonic() - started
        enter("after")
        await asyncio.sleep(after)
        stopping.set()
        await asyncio.gather(*tasks)
        enter("after")
    return report


@dataclass
class IngestKill:
    """The ingestion's report: exit codes, when the node died, and what the index holds."""

    docs: int
    ingest_to: str
    victim: int = -1
    settled_at_kill: int = 0
    first_exit: int = 0
    resumed: bool = False
    resume_exit: int = 0
    seconds: float = 0.0
    count: int = 0
    distinct_ids: int = 0
    ids_match: bool = False
    primaries_docs: int = 0
    all_copies_docs: int = 0

    def problems(self) -> list[str]:
        out = []
        if self.count != self.docs or self.distinct_ids != self.docs or not self.ids_match:
            out.append(
                f"index holds {self.count} documents, {self.distinct_ids} distinct ids "
                f"(ids match: {self.ids_match}); expected {self.docs}"
            )
        if self.primaries_docs != self.docs or self.all_copies_docs != 2 * self.docs:
            out.append(
                f"after recovery: primaries {self.primaries_docs}, all copies "
                f"{self.all_copies_docs}; expected {self.docs} and {2 * self.docs}"
            )
        if (self.resume_exit if self.resumed else self.first_exit) != 0:
            out.append("the ingestion did not finish with exit 0")
        return out

    def summary(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 1), "problems": self.problems()}


def write_input(path: Path, docs: int) -> list[str]:
    """``docs`` JSON lines with explicit ids; returns the ids."""
    rng = random.Random(3)
    ids = [f"doc-{i}" for i in range(docs)]
    with path.open("w", encoding="utf-8") as out:
        for i, doc_id in enumerate(ids):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 160)))
            doc = {"id": doc_id, "url": f"https://site{i % 40}.example/{i}", "body": body}
            out.write(json.dumps(doc) + "\n")
    return ids


def ingest_kill(
    cluster: Cluster, index: str, workdir: Path, *, docs: int = 3000, ingest_to: str = "one"
) -> IngestKill:
    """``indexer ingest`` while a node is killed, resumed when it failed; then counted."""
    report = IngestKill(docs=docs, ingest_to=ingest_to)
    source = workdir / f"{index}.jsonl"
    ids = write_input(source, docs)
    es = cluster.es()
    es.indices.create(
        index=index,
        settings={"number_of_shards": 3, "number_of_replicas": 1},
        wait_for_active_shards="all",
    )
    es.close()
    report.victim = victim = cluster.master()
    survivors = [u for n, u in enumerate(cluster.urls) if n != victim]
    first_urls = [cluster.urls[victim]] if ingest_to == "one" else cluster.urls
    state = workdir / f"{index}.state.json"
    common = ["--index", index, "--state", str(state), "--rejects", str(workdir / "rejects.jsonl")]
    indexer = [sys.executable, "-m", "indexer"]
    env = {k: v for k, v in os.environ.items() if k != "ES_URL"}
    subprocess.run(
        [*indexer, "init", "--index", index, "--es-url", cluster.urls[0]],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    ingest = [
        *indexer,
        "ingest",
        *common,
        "--no-boilerplate",
        "--no-progress",
        "--chunk-size",
        "50",
        "--workers",
        "1",
        str(source),
    ]
    began = time.monotonic()
    log = (workdir / f"{index}.ingest.log").open("wb")
    process = subprocess.Popen(
        [*ingest, "--es-url", ",".join(first_urls)],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        while process.poll() is None and time.monotonic() - began < 300:
            done = _settled(state)
            if done >= docs // 5:
                report.settled_at_kill = done
                cluster.run("kill", str(victim))
                break
            time.sleep(0.02)
        report.first_exit = process.wait(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if report.settled_at_kill == 0:
        raise RuntimeError("the ingestion ended before a fifth was settled: give it more --docs")
    if report.first_exit != 0:
        report.resumed = True
        resumed = subprocess.run(  # the killed node listed too, as a user would
            [*ingest, "--resume", "--es-url", ",".join(cluster.urls)],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=600,
        )
        report.resume_exit = resumed.returncode
    log.close()
    report.seconds = time.monotonic() - began
    es = cluster.es(survivors)
    es.indices.refresh(index=index)
    report.count = int(es.count(index=index)["count"])
    found = es.search(index=index, size=docs + 100, source=False, sort=["_doc"])
    seen = [hit["_id"] for hit in found["hits"]["hits"]]
    report.distinct_ids = len(set(seen))
    report.ids_match = sorted(seen) == sorted(ids)
    es.close()
    cluster.run("start", str(victim))
    cluster.wait_green()
    es = cluster.es()
    es.indices.refresh(index=index)
    stats = es.indices.stats(index=index, metric="docs")["indices"][index]
    report.primaries_docs = int(stats["primaries"]["docs"]["count"])
    report.all_copies_docs = int(stats["total"]["docs"]["count"])
    es.close()
    return report


def _settled(state: Path) -> int:
    """The watermark of an ingestion's state file (0 before the first save)."""
    try:
        return int(json.loads(state.read_text(encoding="utf-8"))["done"])
    except (FileNotFoundError, ValueError, KeyError):
        return 0


def table(search: SearchOutage, ingests: list[IngestKill]) -> str:
    """The Markdown tables of docs/operations.md."""
    lines = [
        "| phase | seconds | requests | errors | answers with shard failures "
        "| p50 / p99 / max ms |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, phase in search.phases.items():
        s = phase.summary()
        kinds = ", ".join(f"{k} × {v}" for k, v in phase.errors.items())
        lines.append(
            f"| {name} | {s['seconds']} | {s['requests']} | **{s['errors']}**"
            f"{f' ({kinds})' if kinds else ''} | {s['answers_with_shard_failures']} | "
            f"{s['p50_ms']:.0f} / {s['p99_ms']:.0f} / {s['max_ms']:.0f} |"
        )
    lines.append("")
    lines.append(
        f"Node {search.victim} (the master) {'killed' if search.crash else 'stopped'} in "
        f"{search.stop_seconds:.1f} s with "
        f"{search.in_flight_at_stop} requests in flight; after the start command it answered in "
        f"{search.rejoin_seconds:.1f} s and the cluster was green in {search.green_seconds:.1f} s."
    )
    lines += [
        "",
        "| ingest sent to | documents | settled at the kill | first run exit | resumed (exit) "
        "| count / distinct ids / ids match | primaries / all copies after recovery |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ing in ingests:
        lines.append(
            f"| {'the killed node' if ing.ingest_to == 'one' else 'all three nodes'} | "
            f"{ing.docs} | {ing.settled_at_kill} | {ing.first_exit} | "
            f"{f'yes ({ing.resume_exit})' if ing.resumed else 'no'} | "
            f"{ing.count} / {ing.distinct_ids} / {'yes' if ing.ids_match else 'NO'} | "
            f"{ing.primaries_docs} / {ing.all_copies_docs} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=9500, help="HTTP port of node 0")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--before", type=float, default=15)
    parser.add_argument("--down", type=float, default=15)
    parser.add_argument("--after", type=float, default=15)
    parser.add_argument("--search-docs", type=int, default=3000)
    parser.add_argument("--docs", type=int, default=5000, help="documents ingested")
    parser.add_argument("--ingest-to", choices=["one", "all", "both", "none"], default="both")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/neardup-faults"))
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--crash", action="store_true", help="SIGKILL the node, not SIGTERM")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(args.port)
    cluster.run("start")
    try:
        cluster.wait_green()
        es = cluster.es()
        create_index(es, "faults-search", args.search_docs)
        es.close()
        proxy = Proxy(cluster.urls, args.workdir / "proxy.log")
        try:
            search = asyncio.run(
                search_outage(
                    cluster,
                    proxy.url,
                    "faults-search",
                    clients=args.clients,
                    before=args.before,
                    crash=args.crash,
                    down=args.down,
                    after=args.after,
                )
            )
        finally:
            proxy.close()
        modes = {"both": ["one", "all"], "none": []}.get(args.ingest_to, [args.ingest_to])
        ingests = [
            ingest_kill(
                cluster, f"faults-ingest-{mode}", args.workdir, docs=args.docs, ingest_to=mode
            )
            for mode in modes
        ]
    finally:
        if not args.keep:
            cluster.run("wipe")
    print(table(search, ingests))
    print(
        json.dumps({"search": search.summary(), "ingest": [i.summary() for i in ingests]}, indent=2)
    )
    problems = search.problems() + [p for i in ingests for p in i.problems()]
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
