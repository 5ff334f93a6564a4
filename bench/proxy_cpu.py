"""Where the proxy's CPU goes, per search: one worker as deployed, collapsed and pass-through.

Against the proxy benchmark's index (``bench-proxy``, built by ``bench/proxy_latency.py``),
with its queries (two words of an indexed document, size 10), in one run:

1. **CPU per request**: ``python -m collapse`` (one worker, access log on, as deployed) answers
   ``--requests`` searches per mode one after another; the proxy process's CPU time (user +
   system, ``/proc/<pid>/stat``) over them, divided by their number. Modes: ``proxy``
   (collapsing) and ``proxy-off`` (``collapse=false``). Elasticsearch's own p50 for the same
   queries is printed beside it (the machine's state).
2. **Per step**: the same proxy and the same requests under ``cProfile``, switched on and off
   around the measured requests by signals (a ``sitecustomize`` module this benchmark puts on
   the proxy's path: SIGUSR1 starts the profiler in the serving thread, SIGUSR2 writes it), so
   start-up and warm-up are not in it; every function's own time is given to a step by the
   module it is in (a C function's to the step of the Python function that called it, per
   caller), and each step's share of the profiled total is applied to the unprofiled CPU per
   request (the profiler's overhead is spread, not added).

    .venv/bin/python bench/proxy_cpu.py [--requests 400] [--tree DIR] [--es-pid PID]

``--es-pid``: Elasticsearch's process; its CPU per search over the same requests is printed
beside the proxy's (direct, collapsed, pass-through), which is what sizes the proxy's workers
against Elasticsearch's cores. Whatever else Elasticsearch serves meanwhile counts too.

``--tree`` measures another checkout's proxy (e.g. a ``git worktree`` of an older commit) with
the same index and queries; run once per tree, interleaved, to compare.
"""

from __future__ import annotations

import argparse
import os
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from proxy_latency import INDEX, queries, request_for, wait_ready  # noqa: E402
from stale import stale_index  # noqa: E402

#: Steps of a search, by the path of the module a function is in (first match wins).
STEPS: list[tuple[str, tuple[str, ...]]] = [
    (
        "HTTP client (httpx, collapse/http11.py)",
        (
            "/httpx",
            "/httpcore/",
            "/h11/",
            "/anyio/",
            "/aiohttp/",  # older trees (--tree)
            "/yarl/",
            "/multidict/",
            "/collapse/http11.py",
        ),
    ),
    ("HTTP server (uvicorn, httptools)", ("/uvicorn/", "/httptools/")),
    ("framework (Starlette, FastAPI)", ("/starlette/", "/fastapi/")),
    ("proxy middleware", ("/collapse/middleware/", "/collapse/exposure.py")),
    (
        "logging and metrics",
        ("/logging/", "/collapse/logging.py", "/collapse/metrics.py", "/prometheus_client/"),
    ),
    ("routes and upstream", ("/collapse/routes/", "/collapse/upstream.py", "/collapse/cred")),
    ("JSON in and out", ("/json/", "/collapse/jsonio.py", "orjson")),
    ("fingerprints read (doc values)", ("/indexer/hits.py", "/indexer/fingerprints/")),
    ("grouping rule", ("/indexer/grouping.py", "/indexer/grouping_kernel.py")),
    ("probe (candidates, verification)", ("/collapse/probe.py", "/indexer/candidates.py")),
    (
        "collapsed search (window, refills, batching)",
        (
            "/collapse/search/",
            "/collapse/pipeline.py",  # before collapse/search/ (older trees, --tree)
            "/collapse/executor.py",
            "/collapse/rounds.py",
            "/collapse/coalesce.py",
        ),
    ),
    (
        "request parsing and rendering",
        ("/collapse/params.py", "/collapse/paging.py", "/collapse/slim.py", "/collapse/source.py"),
    ),
    ("numpy (Python side)", ("/numpy/",)),
    ("asyncio event loop", ("/asyncio/", "/selectors.py", "/uvloop/")),
]
OTHER = "other"
DEBUG = bool(os.environ.get("PROXY_CPU_DEBUG"))


def step_of(filename: str) -> str | None:
    """The step of a Python module's file (None for a built-in: its caller decides)."""
    if filename == "~" or filename.startswith("<"):
        return None
    for name, parts in STEPS:
        if any(p in filename for p in parts):
            return name
    return OTHER


def breakdown(stats: pstats.Stats, unplaced: dict[str, float] | None = None) -> dict[str, float]:
    """Seconds of own time per step; a built-in's time goes to its callers' steps, per caller
    (``unplaced``, if given, collects the functions of the step "other")."""
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    out: dict[str, float] = defaultdict(float)

    def owner(func: tuple[str, int, str], depth: int = 0) -> list[tuple[str, float]]:
        step = step_of(func[0])
        if step is not None or depth > 3:
            return [(step or OTHER, 1.0)]
        callers = raw[func][4]
        total = sum(c[2] for c in callers.values()) or 1.0
        shares: list[tuple[str, float]] = []
        for caller, c in callers.items():
            for s, w in owner(caller, depth + 1):
                shares.append((s, w * c[2] / total))
        return shares or [(OTHER, 1.0)]

    for func, (_, _, tottime, _, _) in raw.items():
        if func[0] == "~" and "json" in func[2]:
            out["JSON in and out"] += tottime
            continue
        for step, share in owner(func):
            out[step] += tottime * share
            if step == OTHER and unplaced is not None:
                name = f"{func[0]}:{func[2]}"
                unplaced[name] = unplaced.get(name, 0.0) + tottime * share
    return dict(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_SITECUSTOMIZE = """
import cProfile, os, signal, time
_profile = cProfile.Profile(time.thread_time)
def _start(*_):
    _profile.enable()
def _dump(*_):
    _profile.disable()
    _profile.dump_stats(os.environ["PROXY_CPU_PROFILE"])
signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _dump)
"""


def serve(tree: Path, es_url: str, port: int, profile: Path | None) -> subprocess.Popen[bytes]:
    """The proxy of ``tree`` (one worker, access log on); with ``profile``, a profiler that
    SIGUSR1 starts and SIGUSR2 writes there."""
    args = [sys.executable, "-m", "collapse", "--port", str(port), "--workers", "1"]
    args += ["--log-level", "info"]
    path = str(tree)
    env = {**os.environ, "ES_URL": es_url}
    if profile is not None:
        (profile.parent / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        path = f"{profile.parent}{os.pathsep}{tree}"
        env["PROXY_CPU_PROFILE"] = str(profile)
    env["PYTHONPATH"] = path
    proc = subprocess.Popen(
        args, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return wait_ready(proc, port, f"the proxy of {tree}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)  # uvicorn shuts down
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def drive(mode: str, qs: list[dict[str, Any]], n: int, es_url: str, proxy_url: str) -> list[float]:
    """``n`` requests of ``mode``, one after another; their latencies (s)."""
    out: list[float] = []
    with httpx.Client(timeout=30) as client:
        for i in range(n):
            url, body = request_for(mode, qs[i % len(qs)], es_url, proxy_url)
            t = time.perf_counter()
            r = client.post(url, content=body, headers={"content-type": "application/json"})
            out.append(time.perf_counter() - t)
            if r.status_code != 200:
                raise RuntimeError(f"{mode}: {r.status_code} {r.text[:200]}")
    return out


def measure(
    tree: Path, es_url: str, qs: list[dict[str, Any]], n: int, es_pid: int | None = None
) -> tuple[dict[str, float], dict[str, dict[str, float]], dict[str, float]]:
    """CPU ms per request per mode, per mode the profiled breakdown (ms per request), and
    Elasticsearch's CPU ms per request per mode (``direct`` too) when ``es_pid`` is given."""
    cpu: dict[str, float] = {}
    engine: dict[str, float] = {}
    steps: dict[str, dict[str, float]] = {}
    modes = ("proxy", "proxy-off")
    port = free_port()
    proc = serve(tree, es_url, port, None)
    try:
        url = f"http://127.0.0.1:{port}"
        for mode in (("direct",) if es_pid else ()) + modes:
            drive(mode, qs, min(50, n), es_url, url)  # warm-up
            before = cpu_seconds(proc.pid)
            engine_before = cpu_seconds(es_pid) if es_pid else 0.0
            drive(mode, qs, n, es_url, url)
            if mode != "direct":
                cpu[mode] = (cpu_seconds(proc.pid) - before) / n * 1000
            if es_pid:
                engine[mode] = (cpu_seconds(es_pid) - engine_before) / n * 1000
    finally:
        stop(proc)
    for mode in modes:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "profile"
            port = free_port()
            proc = serve(tree, es_url, port, out)
            try:
                drive(mode, qs, min(50, n), es_url, f"http://127.0.0.1:{port}")
                proc.send_signal(signal.SIGUSR1)
                time.sleep(0.2)
                drive(mode, qs, n, es_url, f"http://127.0.0.1:{port}")
                proc.send_signal(signal.SIGUSR2)
                deadline = time.monotonic() + 30
                while not out.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(0.5)  # the file is written in one go; let it finish
            finally:
                stop(proc)
            unplaced: dict[str, float] = {}
            seconds = breakdown(pstats.Stats(str(out)), unplaced)
        if DEBUG:
            for name, t in sorted(unplaced.items(), key=lambda kv: -kv[1])[:15]:
                print(f"  {mode} other: {t / n * 1000:.3f} ms/request  {name}")
        total = sum(seconds.values()) or 1.0
        steps[mode] = {k: v / total * cpu[mode] for k, v in seconds.items()}
    return cpu, steps, engine


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def report(
    label: str,
    cpu: dict[str, float],
    steps: dict[str, dict[str, float]],
    direct: float,
    emit: Callable[[str], None] = print,
) -> None:
    emit(f"\n{label}: direct Elasticsearch p50 {direct:.2f} ms (the machine's state)")
    emit("| step | collapsed ms | pass-through ms |")
    emit("|---|---:|---:|")
    names = [n for n, _ in STEPS] + [OTHER]
    for name in sorted(names, key=lambda k: -steps["proxy"].get(k, 0.0)):
        a, b = steps["proxy"].get(name, 0.0), steps["proxy-off"].get(name, 0.0)
        if a >= 0.005 or b >= 0.005:
            emit(f"| {name} | {a:.2f} | {b:.2f} |")
    emit(f"| **proxy CPU per request** | **{cpu['proxy']:.2f}** | **{cpu['proxy-off']:.2f}** |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose proxy is measured")
    ap.add_argument("--es-pid", type=int, help="Elasticsearch's process: its CPU per search too")
    a = ap.parse_args(argv)
    es = Elasticsearch(a.es_url, request_timeout=60)
    stale = stale_index(es, INDEX, a.tree.resolve())
    if stale:
        print(stale, file=sys.stderr)
        return 2
    qs = queries(es, 400)
    direct = p50(drive("direct", qs, min(200, a.requests), a.es_url, ""))
    cpu, steps, engine = measure(a.tree.resolve(), a.es_url, qs, a.requests, a.es_pid)
    direct_after = p50(drive("direct", qs, min(200, a.requests), a.es_url, ""))
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    label = f"{a.tree} ({when}, {a.requests} requests, one worker)"
    report(label, cpu, steps, (direct + direct_after) / 2)
    if engine:
        print(
            f"Elasticsearch CPU per request (pid {a.es_pid}): direct {engine['direct']:.2f} ms, "
            f"collapsed {engine['proxy']:.2f} ms, pass-through {engine['proxy-off']:.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
