"""Fingerprinting speed on one core, side by side: ours vs naive Python vs PyPI SimHash packages.

Not a test: run ``python bench/corpus.py`` once, then ``python bench/fingerprint_speed.py``.
Every method processes the same shuffled documents, interleaved chunk by chunk, until it
has used ``--seconds`` of CPU time (or the corpus ends), and is reported in documents and
MB of input text per CPU second of this single-threaded process. Every method starts
from the raw text, so tokenisation is included everywhere.

PyPI packages that share the import name ``simhash`` (and would overwrite the ``simhash``
dev dependency) are installed aside with ``pip install --target ~/.cache/neardup/pkgs/NAME
NAME`` (python-simhash, simhash-pybind) and their compiled module is loaded by path.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import importlib.util  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CACHE, load  # noqa: E402

from indexer.fingerprints import FingerprintParams, fingerprint_arrays, fingerprint_batch  # noqa: E402
from indexer.fingerprints.features import Segments, shingle_hashes, token_hash_arrays  # noqa: E402
from indexer.fingerprints.simhash import simhash_segments  # noqa: E402
from indexer.text import shingles, token_bytes, tokenize  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description="fingerprinting speed, one core")
    ap.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per method")
    ap.add_argument("--chunk", type=int, default=128, help="documents per batch call")
    ap.add_argument("--min-words", type=int, default=0, help="only documents this long")
    args = ap.parse_args()
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
