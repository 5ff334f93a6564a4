"""Text to fingerprints: the single-document and the batch API (same code path).

Per document only tokenisation and the exact key run in Python; token hashing is memoised
and everything after it (shingle hashes, SimHash votes, MinHash bins) runs in numpy over the
concatenated features of a chunk of documents. Functions are top-level and ``params`` is a
frozen pydantic model, so both pickle cleanly into worker processes.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np

from indexer.fingerprints.features import (
    SAMPLE,
    WEIGHT,
    Segments,
    content_units,
    distinct_token_ids,
    separated_token_hashes,
    shingle_hashes,
    token_tables,
    with_words,
)
from indexer.fingerprints.minhash import sketch_segments, value_dtype
from indexer.fingerprints.numbers import CELLS, number_sketches
from indexer.fingerprints.params import FingerprintParams
from indexer.fingerprints.record import FingerprintArrays, FingerprintRecord
from indexer.fingerprints.simhash import simhash_segments
from indexer.text import LINE, fold, word_bytes_many

__all__ = [
    "Tokens",
    "document_features",
    "features_kernel",
    "fingerprint",
    "fingerprint_arrays",
    "fingerprint_batch",
    "segment_fingerprints",
    "shingles",
    "token_fingerprints",
    "tokenise",
]

_DEFAULT = FingerprintParams()
_CHUNK_CHARS = 1 << 20  # bound the memory of one vectorised step (<= 2**19 tokens)
_CHUNK_DOCS = 4096


def _chunks(texts: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Split document indices into ranges of bounded total size (text length bounds tokens)."""
    start, total = 0, 0
    for i, text in enumerate(texts):
        if i > start and (total + len(text) > _CHUNK_CHARS or i - start >= _CHUNK_DOCS):
            yield start, i
            start, total = i, 0
        total += len(text)
    if start < len(texts):
        yield start, len(texts)


_SEP = b"\x00"  # never in a token (word_bytes turns it into a space): separates documents


class Tokens(NamedTuple):
    """A batch of texts tokenised (:func:`tokenise`)."""

    hashes: list[np.ndarray]  # per hash name, the token hashes of all texts (concatenated)
    lengths: np.ndarray  # tokens per text
    keys: list[str]  # each text's exact key (sha256 of its space-joined tokens)
    line_no: np.ndarray  # per token, its line in its text (the line breaks before it there;
    # empty when tokenised without ``lines``)
    folded: list[str]  # each text :func:`indexer.text.fold`-ed (what the number sketch reads)


def tokenise(texts: Sequence[str], names: Sequence[str], lines: bool = True) -> Tokens:
    """Tokenise texts in one go (per hash name; ``features.WEIGHT``: content weights).

    One ``split`` and one ``join`` for the batch instead of one of each per text (the
    definition; :func:`enable_arrow` and :func:`enable_kernel` put faster paths with the same
    output in its place). Without ``lines`` the tokens' line numbers are not returned
    (``line_no`` is empty): the same tokens, hashes and keys, for callers that do not look at
    lines.
    """
    if not texts:
        empty = np.zeros(0, dtype=np.uint64)
        return Tokens([empty for _ in names], np.zeros(0, np.int64), [], np.zeros(0, np.int32), [])
    folded = [fold(t) for t in texts]
    if _kernel is not None:
        values, counts, keys, line_no = _kernel.tokenise_folded(folded, names)
        return Tokens(values, counts, keys, line_no if lines else _NO_LINES, folded)
    # a line break is whitespace to the split: without ``lines`` it separates tokens as such
    words = word_bytes_many(folded, lines=lines, folded=True)
    if _arrow is not None and len(texts) >= _ARROW_MIN_TEXTS:
        return _tokenise_arrow(words, names, lines)._replace(folded=folded)
    tokens = b" \x00 ".join(words).split()
    hashes, lengths, line_no = separated_token_hashes(tokens, _SEP, names, LINE if lines else None)
    # the joined tokens of each text, between separators, without the line tokens
    joined = b" ".join(tokens)
    if lines:
        joined = joined.replace(_SPACED_LINE, b"")
    keys = [hashlib.sha256(piece.strip(_STRIP)).hexdigest() for piece in joined.split(_SEP)]
    return Tokens(hashes, lengths, keys, line_no if lines else _NO_LINES, folded)


_NO_LINES = np.zeros(0, dtype=np.int32)


_SPACED_LINE = b" " + LINE  # every line token but a batch's very first follows a space
_STRIP = b" " + LINE


_arrow: tuple[Any, Any] | None = None  # (pyarrow, pyarrow.compute) once enabled
_kernel: Any = None  # indexer.fingerprints.tokens_kernel once enabled
_features: Any = None  # indexer.fingerprints.features_kernel once enabled
_ARROW_MIN_TEXTS = 16  # smaller batches: the Python path (the per-call overhead dominates)


def enable_arrow() -> bool:
    """Tokenise batches with numpy and pyarrow from now on in this process (the ``indexer
    ingest`` workers call this); False, and nothing changes, without pyarrow.

    Same tokens, counts and keys as the Python path (tested): the batch split in numpy
    without a Python object per token, and each distinct token of a batch looked up in the
    vocabulary once (``dictionary_encode``) instead of once per occurrence.
    """
    global _arrow
    if "pyarrow" in sys.modules and sys.modules["pyarrow"] is None:
        del sys.modules["pyarrow"]  # marked absent by ``python -m indexer``: wanted now
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return False
    _arrow = (pyarrow, pyarrow.compute)
    return True


def enable_kernel() -> bool:
    """Tokenise with the compiled kernels (:mod:`indexer.fingerprints.tokens_kernel`) from
    now on in this process, loading them (from numba's cache, or compiling them once) now;
    False, and nothing changes, without numba. Same tokens, counts, keys and lines as the
    Python path (tested). Likewise :func:`fingerprint_arrays` then computes SimHash (count
    weights) and MinHash by :mod:`indexer.fingerprints.features_kernel` (the same values).
    ``indexer ingest`` calls it before forking its workers."""
    global _kernel, _features
    if _kernel is not None:
        return True
    try:
        import indexer.fingerprints.features_kernel as features
        import indexer.fingerprints.tokens_kernel as kernel
    except ImportError:
        return False
    kernel.warm()
    features.warm()
    _kernel, _features = kernel, features
    return True


def _tokenise_arrow(words: list[bytes], names: Sequence[str], lines: bool = True) -> Tokens:
    """:func:`tokenise` of ``word_bytes`` outputs, with numpy and pyarrow (see
    :func:`enable_arrow`).

    ``word_bytes`` leaves no ASCII bytes between tokens but whitespace, and :data:`LINE`
    only as a token of its own (between spaces), so the texts joined by a space are split
    with a byte table: a token is a maximal run of bytes that are neither ASCII whitespace
    nor :data:`LINE` (the line tokens drop out), and its bytes, packed one after the other,
    make the arrow array whose distinct tokens are looked up once
    (``dictionary_encode``). The exact keys hash each text's tokens with one space after
    each (the first whitespace byte after a token, kept, as a space).
    """
    assert _arrow is not None
    pa, _ = _arrow
    buf = b" ".join(words)
    a = np.frombuffer(buf, dtype=np.uint8)
    inside = np.frombuffer(buf.translate(_TOKEN_BYTE), dtype=np.bool_)
    # token bounds: where ``inside`` changes (a text starts and ends outside: the spaces)
    change = np.flatnonzero(inside[1:] != inside[:-1]) + 1
    if len(inside) and inside[0]:
        change = np.r_[0, change]
    if len(inside) and inside[-1]:
        change = np.r_[change, len(inside)]
    starts, ends = change[0::2], change[1::2]
    spans = np.fromiter(map(len, words), np.int64, count=len(words)) + 1  # with the space
    text_start = np.cumsum(spans) - spans
    first = np.searchsorted(starts, text_start)  # each text's first token
    lengths = np.diff(np.r_[first, len(starts)]).astype(np.int64)
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    data = buf.translate(None, _NOT_TOKEN)  # the tokens' bytes, one after the other
    line_no = _NO_LINES
    if lines:  # each token's line: the line tokens before it in its text
        marks = np.flatnonzero(a == LINE[0])
        before = np.searchsorted(marks, starts)
        text_of = np.repeat(np.arange(len(words)), lengths)
        line_no = (before - np.searchsorted(marks, text_start)[text_of]).astype(np.int32)
    # each token and the whitespace byte after it (a space): the texts' tokens space-joined
    spaced = inside.copy()
    spaced[1:] |= inside[:-1]
    joined = a[spaced].tobytes().translate(_SPACES)
    bounds = np.r_[first, len(starts)]
    at_byte = (offsets[bounds] + bounds).tolist()
    # a text's tokens end one byte before the next text's first
    keys = [
        hashlib.sha256(joined[lo : hi - 1] if hi > lo else b"").hexdigest()
        for lo, hi in pairwise(at_byte)
    ]
    tokens = pa.Array.from_buffers(
        pa.binary(),
        len(starts),
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
    )
    coded = tokens.dictionary_encode()
    ids = distinct_token_ids(coded.dictionary.to_pylist())
    at = coded.indices.to_numpy(zero_copy_only=False)
    return Tokens([table[ids][at] for table in token_tables(names)], lengths, keys, line_no, [])


_NOT_TOKEN = b" \t\n\r\x0b\x0c" + LINE  # ASCII whitespace and the line token
# per byte: 1 for a byte of a token, else 0
_TOKEN_BYTE = bytes(0 if c in _NOT_TOKEN else 1 for c in range(256))
_SPACES = bytes(32 if c in b" \t\n\r\x0b\x0c" else c for c in range(256))


def features_kernel() -> Any:
    """:mod:`indexer.fingerprints.features_kernel` once :func:`enable_kernel` loaded it in
    this process, else None."""
    return _features


def shingles(
    token_hashes: np.ndarray, lengths: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """``shingle_hashes(token_hashes, Segments(lengths), k)`` (compiled once
    :func:`enable_kernel` was called: the same values)."""
    if _features is not None:
        return _features.shingles(token_hashes, lengths, k)
    return shingle_hashes(token_hashes, Segments(lengths), k)


def segment_fingerprints(
    sh: np.ndarray, scounts: np.ndarray, mh: np.ndarray, mcounts: np.ndarray, p: FingerprintParams
) -> tuple[np.ndarray, np.ndarray]:
    """SimHash of each document's features ``sh`` (``scounts`` per document) and MinHash
    sketch of its ``mh`` (``mcounts``): ``simhash_segments`` and ``sketch_segments``, compiled
    for count weights once :func:`enable_kernel` was called (the same values)."""
    if _features is not None and p.weights == "count":
        return _features.segment_fingerprints(
            sh, scounts, mh, mcounts, p.minhash_size, p.minhash_bits
        )
    return (
        simhash_segments(sh, scounts, presence=p.weights == "presence"),
        sketch_segments(mh, mcounts, p.minhash_size, p.minhash_bits),
    )


def token_fingerprints(
    sim_tok: np.ndarray,
    min_tok: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
    p: FingerprintParams,
) -> tuple[np.ndarray, np.ndarray]:
    """SimHash and MinHash sketch of documents from their concatenated token hashes
    (:func:`document_features`, then :func:`segment_fingerprints`; in one compiled pass once
    :func:`enable_kernel` was called, for count weights)."""
    if _features is not None and p.weights == "count":
        return _features.fingerprints(
            sim_tok, min_tok, sample, lengths, units, p.shingle,
            p.minhash_shingle, p.minhash_size, p.minhash_bits,
        )  # fmt: skip
    sh, scounts, mh, mcounts = document_features(sim_tok, min_tok, sample, lengths, units, p)
    return segment_fingerprints(sh, scounts, mh, mcounts, p)


def document_features(
    sim_tok: np.ndarray,
    min_tok: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
    p: FingerprintParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Feature hashes of documents from their concatenated token hashes (SimHash family,
    MinHash family, :data:`~indexer.fingerprints.features.SAMPLE` values), token counts and
    content in words: per family the features (k-shingles, plus words for short documents:
    :func:`~indexer.fingerprints.features.with_words`) and their count per document."""
    lengths = np.asarray(lengths, dtype=np.int64)
    sh, scounts = shingles(sim_tok, lengths, p.shingle)
    mh, mcounts = shingles(min_tok, lengths, p.minhash_shingle)
    if p.shingle > 1:  # with k = 1 the shingles are the words already
        sh, scounts = with_words(sh, scounts, sim_tok, sample, lengths, units)
    if p.minhash_shingle > 1:
        mh, mcounts = with_words(mh, mcounts, min_tok, sample, lengths, units)
    return sh, scounts, mh, mcounts


def fingerprint_arrays(
    texts: Sequence[str], params: FingerprintParams = _DEFAULT
) -> FingerprintArrays:
    """Fingerprint many texts into arrays (the fast form; ``present`` is all True)."""
    n = len(texts)
    simhash = np.zeros(n, dtype=np.uint64)
    sketch = np.zeros((n, params.minhash_size), dtype=value_dtype(params.minhash_bits))
    keys: list[str] = []
    token_count = np.zeros(n, dtype=np.int64)
    numbers = np.zeros((n, CELLS), dtype=np.uint32)
    for a, b in _chunks(texts):
        names = (params.hash, "minhash", WEIGHT, SAMPLE)
        tokens = tokenise(texts[a:b], names, lines=False)  # lines are the host models'
        (sim_tok, min_tok, weights, sample), lengths = tokens.hashes, tokens.lengths
        units = content_units(weights, lengths)
        simhash[a:b], sketch[a:b] = token_fingerprints(
            sim_tok, min_tok, sample, lengths, units, params
        )
        keys += tokens.keys
        numbers[a:b] = number_sketches(tokens.folded, folded=True, units=units, written=texts[a:b])
        token_count[a:b] = units
    return FingerprintArrays(
        params=params,
        simhash=simhash,
        minhash=sketch,
        numbers=numbers,
        exact_keys=keys,
        token_count=token_count,
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
