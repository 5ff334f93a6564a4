"""MinHash accuracy against bytes stored, and the choice of MinHash shingle length.

Pairs are built from real corpus documents (``bench/corpus.py``): a document against a copy
with a random share of its words replaced, giving exact 4-shingle Jaccard from ~0.05 to 1.
For each sketch size and value width it prints the RMSE of the estimate against the exact
Jaccard, the share of pairs off by more than 0.1, and the bytes stored per document.
Then, per shingle length, the exact Jaccard of light edits (3% of words) against that of
unrelated documents from the same corpus: the gap a threshold has to fall in.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import load

from indexer.fingerprints import FingerprintParams, fingerprint_arrays
from indexer.fingerprints.minhash import similarity
from indexer.text import jaccard


def edited(words: list[str], share: float, rng: random.Random, pool: list[str]) -> str:
    """A copy of ``words`` with ``share`` of them replaced by words from ``pool``."""
    out = list(words)
    for i in rng.sample(range(len(out)), int(share * len(out))):
        out[i] = rng.choice(pool)
    return " ".join(out)


def main() -> None:
    rng = random.Random(7)
    docs = [t for t in load() if 800 <= len(t.split()) <= 1500]
    rng.shuffle(docs)
    pool = " ".join(docs[-50:]).split()
    base = docs[:400]
    variants = [
        edited(t.split(), rng.choice([0.005, 0.02, 0.05, 0.1, 0.2, 0.4]), rng, pool) for t in base
    ]
    exact = np.array([jaccard(a, b, 4) for a, b in zip(base, variants, strict=True)])
    print(f"{len(base)} pairs, exact 4-shingle Jaccard {exact.min():.2f}..{exact.max():.2f}")
    print(f"{'size':>5} {'bits':>5} {'bytes':>6} {'RMSE':>7} {'|err|>0.1':>10}")
    for size in (32, 64, 128, 256):
        p = FingerprintParams(minhash_size=size, minhash_bits=32)
        a = fingerprint_arrays(base, p).minhash
        b = fingerprint_arrays(variants, p).minhash
        for bits in (8, 16, 32):
            mask = np.uint32((1 << bits) - 1) if bits < 32 else np.uint32(0xFFFFFFFF)
            agree = np.mean((a & mask) == (b & mask), axis=1)
            chance = 2.0**-bits
            est = np.clip((agree - chance) / (1 - chance), 0, 1)
            err = est - exact
            rmse = float(np.sqrt(np.mean(err**2)))
            off = float(np.mean(abs(err) > 0.1))
            print(f"{size:5d} {bits:5d} {size * bits // 8:6d} {rmse:7.4f} {off:10.1%}")
    check = similarity(
        fingerprint_arrays(base[:1]).minhash[0], fingerprint_arrays(base[:1]).minhash[0]
    )
    assert check == 1.0
    print("\nshingle k: exact Jaccard of 3%-word edits vs unrelated documents")
    light = [edited(t.split(), 0.03, rng, pool) for t in base[:200]]
    others = base[200:400]
    for k in (2, 3, 4, 5, 6):
        near = np.array([jaccard(a, b, k) for a, b in zip(base[:200], light, strict=True)])
        far = np.array([jaccard(a, b, k) for a, b in zip(base[:200], others, strict=True)])
        print(
            f"k={k}: edits median {np.median(near):.2f} (5th pct {np.percentile(near, 5):.2f}) | "
            f"unrelated median {np.median(far):.3f} (99th pct {np.percentile(far, 99):.3f}, "
            f"max {far.max():.3f})"
        )


if __name__ == "__main__":
    main()
