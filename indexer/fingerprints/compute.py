"""Text to fingerprints: the single-document and the batch API (same code path).

Per document only tokenisation and the exact key run in Python; token hashing is memoised
and everything after it (shingle hashes, SimHash votes, MinHash bins) runs in numpy over the
concatenated features of a chunk of documents. Functions are top-level and ``params`` is a
frozen pydantic model, so both pickle cleanly into worker processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
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
    "fingerprint",
    "fingerprint_arrays",
    "fingerprint_batch",
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
    line_no: np.ndarray  # per token, its line in its text (the line breaks before it there)
    folded: list[str]  # each text :func:`indexer.text.fold`-ed (what the number sketch reads)


def tokenise(texts: Sequence[str], names: Sequence[str]) -> Tokens:
    """Tokenise texts in one go (per hash name; ``features.WEIGHT``: content weights).

    One ``split`` and one ``join`` for the batch instead of one of each per text.
    """
    if not texts:
        empty = np.zeros(0, dtype=np.uint64)
        return Tokens([empty for _ in names], np.zeros(0, np.int64), [], np.zeros(0, np.int32), [])
    folded = [fold(t) for t in texts]
    words = word_bytes_many(folded, lines=True, folded=True)
    if _arrow is not None and len(texts) >= _ARROW_MIN_TEXTS:
        return _tokenise_arrow(words, names)._replace(folded=folded)
    tokens = b" \x00 ".join(words).split()
    hashes, lengths, line_no = separated_token_hashes(tokens, _SEP, names, LINE)
    # the joined tokens of each text, between separators, without the line tokens
    joined = b" ".join(tokens).replace(_SPACED_LINE, b"")
    keys = [hashlib.sha256(piece.strip(_STRIP)).hexdigest() for piece in joined.split(_SEP)]
    return Tokens(hashes, lengths, keys, line_no, folded)


_SPACED_LINE = b" " + LINE  # every line token but a batch's very first follows a space
_STRIP = b" " + LINE


_arrow: tuple[Any, Any] | None = None  # (pyarrow, pyarrow.compute) once enabled
_ARROW_MIN_TEXTS = 16  # smaller batches: the Python path (the per-call overhead dominates)


def enable_arrow() -> bool:
    """Tokenise batches with pyarrow's compute kernels from now on in this process (the
    ``indexer ingest`` workers call this); False, and nothing changes, without pyarrow.

    Same tokens, counts and keys as the Python path (tested): split on spaces, empty
    pieces dropped, and each distinct token of a batch looked up in the vocabulary once
    (``dictionary_encode``) instead of once per occurrence.
    """
    global _arrow
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return False
    _arrow = (pyarrow, pyarrow.compute)
    return True


def _tokenise_arrow(words: list[bytes], names: Sequence[str]) -> Tokens:
    """:func:`tokenise` of ``word_bytes`` outputs, with pyarrow (see :func:`enable_arrow`)."""
    assert _arrow is not None
    pa, pc = _arrow
    # word_bytes leaves no ASCII whitespace but spaces (line breaks are LINE tokens), and its
    # output is UTF-8: split on runs of whitespace (fewer empty pieces than on each space)
    parts = pc.ascii_split_whitespace(pa.array(words, type=pa.binary()).view(pa.string()))
    pieces = parts.flatten().view(pa.binary())
    nonempty = pc.greater(pc.binary_length(pieces), 0)
    marks = pc.equal(pieces, LINE)
    keep = pc.and_(nonempty, pc.invert(marks))
    kept = keep.to_numpy(zero_copy_only=False)
    tokens = pieces.filter(keep)
    # each kept token's line: the line tokens before it in its text
    offsets = np.asarray(parts.offsets)
    marks_np = marks.to_numpy(zero_copy_only=False)
    counted = np.concatenate(([0], np.cumsum(marks_np)))
    text_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    line_no = (counted[:-1] - counted[offsets[:-1]][text_of])[kept].astype(np.int32)
    prior = np.concatenate(([0], np.cumsum(kept)))  # kept tokens before each position
    # tokens per text: the kept pieces between the text's offsets
    lengths = (prior[offsets[1:]] - prior[offsets[:-1]]).astype(np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    joined = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(bounds), tokens), b" ")
    keys = [hashlib.sha256(j).hexdigest() for j in joined.to_pylist()]
    coded = tokens.dictionary_encode()
    ids = distinct_token_ids(coded.dictionary.to_pylist())
    at = coded.indices.to_numpy(zero_copy_only=False)
    return Tokens([table[ids][at] for table in token_tables(names)], lengths, keys, line_no, [])


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
    seg = Segments(lengths)
    sh, scounts = shingle_hashes(sim_tok, seg, p.shingle)
    mh, mcounts = shingle_hashes(min_tok, seg, p.minhash_shingle)
    if p.shingle > 1:  # with k = 1 the shingles are the words already
        sh, scounts = with_words(sh, scounts, sim_tok, sample, seg.lengths, units)
    if p.minhash_shingle > 1:
        mh, mcounts = with_words(mh, mcounts, min_tok, sample, seg.lengths, units)
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
        tokens = tokenise(texts[a:b], names)
        (sim_tok, min_tok, weights, sample), lengths = tokens.hashes, tokens.lengths
        units = content_units(weights, lengths)
        sh, scounts, mh, mcounts = document_features(
            sim_tok, min_tok, sample, lengths, units, params
        )
        simhash[a:b] = simhash_segments(sh, scounts, presence=params.weights == "presence")
        sketch[a:b] = sketch_segments(mh, mcounts, params.minhash_size, params.minhash_bits)
        keys += tokens.keys
        numbers[a:b] = number_sketches(tokens.folded, folded=True, units=units)
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
