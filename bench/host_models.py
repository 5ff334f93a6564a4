"""Fingerprinting a batch of many hosts' pages: time against the number of host models.

Not a test. The English quality corpus's pages (``python -m bench.quality.build_corpus``
builds it; built here when missing) are spread over 1, 16, 128 and 512 hosts at random, a
host model is learnt for each host (``min_pages`` 1, so every host has one), and the pages are
fingerprinted in batches of 256 with their host's model (``boilerplate.fingerprint_features``,
numba kernels on, as ``indexer ingest`` runs it). ``--tree`` runs the same in another
checkout's code, in the same run, for a side-by-side figure (e.g. a ``git archive`` of an
older commit). Prints seconds per run and pages per second.

    .venv/bin/python bench/host_models.py [--pages 2048] [--rounds 2] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTS = (1, 16, 128, 512)
BATCH = 256


def _measure(pages: int) -> dict[int, float]:
    """Seconds to fingerprint ``pages`` pages spread over each number of hosts."""
    from bench.quality.build_corpus import DEFAULT_CACHE, build, load_jsonl
    from indexer.boilerplate import (
        BoilerplateConfig,
        Learner,
        doc_shingle_sets,
        features,
        fingerprint_features,
    )
    from indexer.fingerprints import FingerprintParams
    from indexer.fingerprints.compute import enable_kernel

    enable_kernel()
    corpus = DEFAULT_CACHE / "full"
    if not (corpus / "corpus.jsonl").exists():
        build(corpus)
    docs = list(load_jsonl(corpus / "corpus.jsonl"))[:pages]
    texts = [f"{d['title']}\n{d['body']}" for d in docs]
    p = FingerprintParams()
    batches = [features(texts[k : k + BATCH], p) for k in range(0, len(texts), BATCH)]
    out: dict[int, float] = {}
    for hosts in HOSTS:
        rng = random.Random(hosts)
        names = [f"h{rng.randrange(hosts)}" for _ in texts]
        learner = Learner(BoilerplateConfig(min_pages=1))
        for name, sets in zip(names, doc_shingle_sets(texts, p), strict=True):
            learner.add(name, sets)
        models = learner.models()
        per_page = [models.get(name) for name in names]
        t0 = time.perf_counter()
        for k, f in enumerate(batches):
            fingerprint_features(f, p, per_page[k * BATCH : (k + 1) * BATCH])
        out[hosts] = time.perf_counter() - t0
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tree", type=Path, help="another checkout to measure beside this one")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_measure(a.pages)))
        return 0
    trees = [("this tree", ROOT)] + ([("--tree", a.tree.resolve())] if a.tree else [])
    results: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    for _ in range(a.rounds):  # the trees in turn, each in its own process
        for label, tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                "--pages",
                str(a.pages),
            ]
            done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return done.returncode
            results[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{a.pages} pages in batches of {BATCH}, every host with a model; seconds per round")
    print("| tree | " + " | ".join(f"{h} hosts" for h in HOSTS) + " |")
    print("|---|" + "---:|" * len(HOSTS))
    for label, runs in results.items():
        cells = [
            ", ".join(f"{r[str(h)]:.2f}" for r in runs)
            + f" ({a.pages / min(r[str(h)] for r in runs):,.0f}/s)"
            for h in HOSTS
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
