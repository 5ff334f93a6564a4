"""Fingerprinting speed on one core, side by side: ours vs naive Python vs PyPI SimHash packages.

Not a test: run ``python bench/corpus.py`` once, then ``python bench/fingerprint_speed.py``.
Every method processes the same shuffled documents, interleaved chunk by chunk, until it
has used ``--seconds`` of CPU time (or the corpus ends), and is reported in documents and
MB of input text per CPU second of this single-threaded process. Every method starts
from the raw text, so tokenisation is included everywhere.

PyPI packages that share the import name ``simhash`` (and would overwrite the ``simhash``
dev dependency) are installed aside with ``pip install --target ~/.cache/neardup/pkgs/NAME
NAME`` (python-simhash, simhash-pybind) and their compiled module is loaded by path.

``--vote`` times the SimHash vote alone instead (``simhash._ones_per_bit`` against the
float64 BLAS product it replaced, interleaved call by call on random hashes), each round in
child processes under each BLAS environment: the machine's as is, without
``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE``, and both with ``OPENBLAS_NUM_THREADS=1``. The
children keep the BLAS thread settings they are given, as ``indexer ingest`` workers do.
"""

from __future__ import annotations

import os

if os.environ.get("NEARDUP_BENCH_BLAS_AS_IS") != "1":  # --vote children: settings as given
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import hashlib
import importlib.util
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CACHE, load

from indexer.fingerprints import (
    FingerprintParams,
    fingerprint_arrays,
    fingerprint_batch,
    simhash,
)
from indexer.fingerprints.features import Segments, shingle_hashes, token_hash_arrays
from indexer.fingerprints.simhash import simhash_segments
from indexer.text import shingles, token_bytes, tokenize

Method = Callable[[Sequence[str]], object]
PARAMS = FingerprintParams()


def naive_simhash(text: str) -> int:
    """Per-bit pure-Python SimHash over word 4-shingles, blake2b-8 features (seed style)."""
    counts = [0] * 64
    for sh in shingles(tokenize(text), 4):
        h = int.from_bytes(hashlib.blake2b(sh.encode(), digest_size=8).digest(), "big")
        for i in range(64):
            counts[i] += 1 if (h >> i) & 1 else -1
    return sum(1 << i for i in range(64) if counts[i] > 0)


def ours_simhash_only(texts: Sequence[str], params: FingerprintParams = PARAMS) -> np.ndarray:
    """Our pipeline up to the SimHash only: tokens, token hashes, shingles, votes."""
    out = []
    for a in range(0, len(texts), 256):
        toks = [token_bytes(t) for t in texts[a : a + 256]]
        seg = Segments(np.fromiter(map(len, toks), dtype=np.int64, count=len(toks)))
        (th,) = token_hash_arrays([t for d in toks for t in d], (params.hash,))
        sh, counts = shingle_hashes(th, seg, params.shingle)
        out.append(simhash_segments(sh, counts, presence=params.weights == "presence"))
    return np.concatenate(out)


def _load_ext(alias: str, pkg_dir: Path) -> ModuleType | None:
    """Load the compiled ``simhash/_simhash*.so`` installed under ``pkg_dir`` as ``alias``."""
    found = sorted((pkg_dir / "simhash").glob("_simhash*.so"))
    if not found:
        return None
    spec = importlib.util.spec_from_file_location(f"{alias}._simhash", found[0])
    if spec is None or spec.loader is None:
        return None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _md5_64(data: bytes) -> int:
    """simhash-pybind's feature hash: the first 8 MD5 bytes, big-endian."""
    return int.from_bytes(hashlib.md5(data).digest()[:8], "big")


def methods() -> dict[str, Method]:
    """Every method available on this machine, by label."""
    found: dict[str, Method] = {
        "naive per-bit Python (blake2b, k=4)": lambda ts: [naive_simhash(t) for t in ts],
    }
    try:
        from simhash import Simhash

        found["PyPI simhash 2.x (pure Python, md5 per feature)"] = lambda ts: [
            Simhash(shingles(tokenize(t), 4)).value for t in ts
        ]
    except ImportError:
        pass
    rs = _load_ext("rs_simhash", CACHE / "pkgs" / "python-simhash")
    if rs is not None:
        rs.set_num_threads(1)
        found["PyPI python-simhash (Rust, xxh3)"] = lambda ts: [
            rs.simhash(shingles(tokenize(t), 4), "xxh3") for t in ts
        ]
    pb = _load_ext("pb_simhash", CACHE / "pkgs" / "simhash-pybind")
    if pb is not None:
        found["PyPI simhash-pybind (C++ votes, md5 per feature)"] = lambda ts: [
            pb.compute([_md5_64(s.encode()) for s in shingles(tokenize(t), 4)]) for t in ts
        ]
    found["ours: SimHash only (batch)"] = ours_simhash_only
    found["ours: SimHash + MinHash + key (arrays)"] = lambda ts: fingerprint_arrays(ts, PARAMS)
    found["ours: full records (fingerprint_batch)"] = lambda ts: fingerprint_batch(ts, PARAMS)
    found["ours: one fingerprint() per document"] = lambda ts: [
        fingerprint_arrays([t], PARAMS) for t in ts
    ]
    found["ours: SimHash + MinHash, xxh3 features"] = lambda ts: fingerprint_arrays(
        ts, FingerprintParams(hash="xxh3")
    )
    return found


def measure_all(
    found: dict[str, Method], docs: Sequence[str], seconds: float, chunk: int
) -> dict[str, tuple[int, int, float]]:
    """Run the methods round-robin, one chunk each per round, until each has used ``seconds``
    of CPU time or finished the corpus: {label: (docs, bytes, cpu seconds)}.

    CPU time of this process (``time.process_time``, one thread) rather than wall time, and
    interleaving, keep the comparison fair on a machine shared with other work.
    """
    for fn in found.values():
        fn(docs[:8])  # warm-up (imports, token caches of the first documents)
    state = {label: [0, 0, 0.0] for label in found}
    active = set(found)
    while active:
        for label, fn in found.items():
            if label not in active:
                continue
            st = state[label]
            part = docs[st[0] : st[0] + chunk]
            t0 = time.process_time()
            fn(part)
            st[2] += time.process_time() - t0
            st[0] += len(part)
            st[1] += sum(len(t.encode("utf-8")) for t in part)
            if st[0] >= len(docs) or st[2] >= seconds:
                active.discard(label)
    return {label: (int(n), int(size), float(cpu)) for label, (n, size, cpu) in state.items()}


_BYTE_BITS_F = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)

# (documents, mean features per document): an `indexer ingest` task of ~170-word documents,
# this benchmark's chunks of >=1,000-word documents, and a large batch.
VOTE_SIZES = ((256, 170), (128, 1200), (4096, 500))
VOTE_ENVS: dict[str, dict[str, str | None]] = {
    "as is": {},
    "-u CORETYPE/L2_SIZE": {"OPENBLAS_CORETYPE": None, "OPENBLAS_L2_SIZE": None},
    "as is, 1 thread": {"OPENBLAS_NUM_THREADS": "1"},
    "-u CORETYPE/L2_SIZE, 1 thread": {
        "OPENBLAS_CORETYPE": None,
        "OPENBLAS_L2_SIZE": None,
        "OPENBLAS_NUM_THREADS": "1",
    },
}


def blas_vote(h: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The vote as it was before issue 18: byte histograms times a (256, 8) float64 bit
    table through BLAS (``hist @ table``). Kept here only to compare against."""
    ndocs = len(counts)
    base = np.repeat(np.arange(0, ndocs * 256, 256, dtype=np.intp), counts)
    by = h.astype(">u8").view(np.uint8).reshape(-1, 8)
    out = np.empty((ndocs, 64), dtype=np.float64)
    for j in range(8):
        hist = np.bincount(base + by[:, j], minlength=ndocs * 256).reshape(ndocs, 256)
        out[:, 8 * j : 8 * j + 8] = hist @ _BYTE_BITS_F
    return out.astype(np.int64)


def vote_child(calls: float) -> dict[str, dict[str, float]]:
    """Median seconds per call of each vote at each size, the two called alternately."""
    votes = {"BLAS product (before)": blas_vote, "integer halving (now)": simhash._ones_per_bit}
    result: dict[str, dict[str, float]] = {}
    for ndocs, mean in VOTE_SIZES:
        rng = np.random.default_rng(ndocs)
        counts = rng.integers(0, 2 * mean, ndocs)
        h = rng.integers(0, 1 << 64, int(counts.sum()), dtype=np.uint64, endpoint=False)
        want = blas_vote(h, counts)
        assert all(np.array_equal(vote(h, counts), want) for vote in votes.values())
        times: dict[str, list[float]] = {label: [] for label in votes}
        for _ in range(max(5, int(calls / len(h)))):
            for label, vote in votes.items():
                t0 = time.perf_counter()
                vote(h, counts)
                times[label].append(time.perf_counter() - t0)
        result[f"{ndocs} docs x {mean}"] = {k: float(np.median(v)) for k, v in times.items()}
    return result


def vote_main(rounds: int, calls: float) -> None:
    """Rounds of one child process per BLAS environment; medians over rounds."""
    found: dict[tuple[str, str, str], list[float]] = {}
    for r in range(rounds):
        for env_label, change in VOTE_ENVS.items():
            env = {**os.environ, "NEARDUP_BENCH_BLAS_AS_IS": "1"}
            for var, value in change.items():
                if value is None:
                    env.pop(var, None)
                else:
                    env[var] = value
            out = subprocess.run(
                [sys.executable, __file__, "--vote-child", "--calls", str(calls)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            for size, by_vote in json.loads(out).items():
                for vote, seconds in by_vote.items():
                    found.setdefault((env_label, size, vote), []).append(seconds)
        print(f"round {r + 1}/{rounds} done, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'BLAS environment':32} {'size':16} {'vote':24} {'median ms':>9} {'min..max':>17}")
    for (env_label, size, vote), seconds in found.items():
        ms = np.array(seconds) * 1e3
        print(
            f"{env_label:32} {size:16} {vote:24} {np.median(ms):9.2f}"
            f" {ms.min():8.2f}..{ms.max():<8.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description="fingerprinting speed, one core")
    ap.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per method")
    ap.add_argument("--chunk", type=int, default=128, help="documents per batch call")
    ap.add_argument("--min-words", type=int, default=0, help="only documents this long")
    ap.add_argument("--vote", action="store_true", help="time the SimHash vote alone")
    ap.add_argument("--rounds", type=int, default=5, help="--vote: rounds of child processes")
    ap.add_argument("--calls", type=float, default=2e7, help="--vote: features voted per size")
    ap.add_argument("--vote-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.vote_child:
        print(json.dumps(vote_child(args.calls)))
        return
    if args.vote:
        vote_main(args.rounds, args.calls)
        return
    docs = [t for t in load() if args.min_words == 0 or len(t.split()) >= args.min_words]
    random.Random(1).shuffle(docs)
    total_mb = sum(len(t.encode("utf-8")) for t in docs) / 1e6
    words = sum(len(t.split()) for t in docs) / len(docs)
    print(f"corpus: {len(docs)} documents, {total_mb:.1f} MB, {words:.0f} words/document")
    print(f"{'method':50} {'docs':>7} {'MB':>6} {'docs/s':>8} {'MB/s':>6} {'x naive':>8}")
    base = None
    for label, (n, size, dt) in measure_all(methods(), docs, args.seconds, args.chunk).items():
        rate = n / dt
        base = base or rate
        mbs = size / 1e6 / dt
        print(f"{label:50} {n:7d} {size / 1e6:6.1f} {rate:8.0f} {mbs:6.2f} {rate / base:7.1f}x")


if __name__ == "__main__":
    main()
