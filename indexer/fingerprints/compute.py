"""Text to fingerprints: the single-document and the batch API (same code path).

Per document only tokenisation and the exact key run in Python; token hashing is memoised
and everything after it (shingle hashes, SimHash votes, MinHash bins) runs in numpy over the
concatenated features of a chunk of documents. Functions are top-level and ``params`` is a
frozen pydantic model, so both pickle cleanly into worker processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

from indexer.fingerprints.features import Segments, shingle_hashes, token_hash_arrays
from indexer.fingerprints.minhash import sketch_segments, value_dtype
from indexer.fingerprints.params import FingerprintParams
from indexer.fingerprints.record import FingerprintArrays, FingerprintRecord
from indexer.fingerprints.simhash import simhash_segments
from indexer.text import token_bytes

__all__ = ["fingerprint", "fingerprint_arrays", "fingerprint_batch"]

_DEFAULT = FingerprintParams()
_CHUNK_TOKENS = 1 << 18  # bound the memory of one vectorised step (~ (2**18 x 64) bytes)
_CHUNK_DOCS = 4096


def _chunks(tokens: list[list[bytes]]) -> Iterator[tuple[int, int]]:
    """Split document indices into ranges of bounded total token count."""
    start, total = 0, 0
    for i, toks in enumerate(tokens):
        if i > start and (total + len(toks) > _CHUNK_TOKENS or i - start >= _CHUNK_DOCS):
            yield start, i
            start, total = i, 0
        total += len(toks)
    if start < len(tokens):
        yield start, len(tokens)


def _arrays_for(tokens: list[list[bytes]], p: FingerprintParams) -> tuple[np.ndarray, np.ndarray]:
    """SimHash (n,) and MinHash (n, size) for already tokenised documents."""
    seg = Segments(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)))
    flat = list(chain.from_iterable(tokens))
    sim_tok, min_tok = token_hash_arrays(flat, (p.hash, "minhash"))
    sh, counts = shingle_hashes(sim_tok, seg, p.shingle)
    simhash = simhash_segments(sh, counts, presence=p.weights == "presence")
    mh, mcounts = shingle_hashes(min_tok, seg, p.minhash_shingle)
    sketch = sketch_segments(mh, mcounts, p.minhash_size, p.minhash_bits)
    return simhash, sketch


def fingerprint_arrays(
    texts: Sequence[str], params: FingerprintParams = _DEFAULT
) -> FingerprintArrays:
    """Fingerprint many texts into arrays (the fast form; ``present`` is all True)."""
    tokens = [token_bytes(t) for t in texts]
    keys = [hashlib.sha256(b" ".join(t)).hexdigest() for t in tokens]
    n = len(tokens)
    simhash = np.zeros(n, dtype=np.uint64)
    sketch = np.zeros((n, params.minhash_size), dtype=value_dtype(params.minhash_bits))
    for a, b in _chunks(tokens):
        simhash[a:b], sketch[a:b] = _arrays_for(tokens[a:b], params)
    return FingerprintArrays(
        params=params,
        simhash=simhash,
        minhash=sketch,
        exact_keys=keys,
        token_count=np.fromiter(map(len, tokens), dtype=np.int64, count=n),
        present=np.ones(n, dtype=bool),
    )


def fingerprint_batch(
    texts: Sequence[str], params: FingerprintParams = _DEFAULT
) -> list[FingerprintRecord]:
    """Fingerprint many texts; equals ``[fingerprint(t, params) for t in texts]``."""
    return fingerprint_arrays(texts, params).records()


def fingerprint(text: str, params: FingerprintParams = _DEFAULT) -> FingerprintRecord:
    """Fingerprint one text."""
    return fingerprint_arrays([text], params).record(0)
