"""Feature hashes: tokens to stable 64-bit values, then word shingles by a vectorised chain.

Definitions (stable across processes, machines and Python versions; never ``hash()``):

* Token hash ``H(t)``: the named hash of the token's UTF-8 bytes, first 8 digest bytes read
  **big-endian** as an unsigned 64-bit integer (xxh64/xxh3: their canonical big-endian
  digest, i.e. ``intdigest``). ``md5`` is there to reproduce the textbook example.
* Shingle hash of tokens ``t1..tL`` (L = min(k, token count)): ``h = H(t1)``, then for each
  further token ``h = fmix64(h * PHI + H(tj)) mod 2**64`` (murmur3's 64-bit finaliser).
  For k=1 the feature hash is exactly ``H(word)``.
* The MinHash side uses its own family: xxh3-64 seeded with :data:`MINHASH_SEED`, chained the
  same way, so its collisions are unrelated to the SimHash feature hash.

Hashing each distinct token once (memoised per process in :class:`_Vocabulary`) and mixing
shingles in numpy avoids one Python-level hash call per shingle, the dominant cost otherwise.
The same memo holds each token's content weight (:data:`WEIGHT`, ``indexer.text.token_weight``),
from which :func:`content_units` counts a document's words without a loop over its tokens.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import re
from collections.abc import Callable, Sequence
from itertools import repeat

import numpy as np
import xxhash

from indexer.text import WEIGHT_UNIT, token_weight, token_weights

__all__ = [
    "ALL_WORDS",
    "DIGITS",
    "MINHASH_SEED",
    "NO_WORDS",
    "SAMPLE",
    "WEIGHT",
    "Segments",
    "TokenTables",
    "content_units",
    "distinct_token_ids",
    "fmix64",
    "separated_token_hashes",
    "shingle_hashes",
    "token_hash",
    "token_hash_arrays",
    "token_tables",
    "with_words",
    "word_share",
]

MINHASH_SEED = 0x6E65617264757031  # b"neardup1"
PHI = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_VOCAB_LIMIT = 4_000_000


def _digest8(fn: Callable[[bytes], bytes]) -> Callable[[bytes], int]:
    return lambda b: int.from_bytes(fn(b)[:8], "big")


_TOKEN_HASHES: dict[str, Callable[[bytes], int]] = {
    "blake2b": lambda b: int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "big"),
    "md5": _digest8(lambda b: hashlib.md5(b, usedforsecurity=False).digest()),
    "sha1": _digest8(lambda b: hashlib.sha1(b, usedforsecurity=False).digest()),
    "xxh64": xxhash.xxh64_intdigest,
    "xxh3": xxhash.xxh3_64_intdigest,
    "minhash": lambda b: xxhash.xxh3_64_intdigest(b, MINHASH_SEED),
}


#: The per-token table of content weights (a name like a hash's for the tables below).
WEIGHT = "weight"
#: The per-token table that decides which words a short document adds (:func:`with_words`).
SAMPLE = "sample"
SAMPLE_SEED = 0x6E65617264757732  # b"neardupw"
#: The per-token table of 1 for a token holding a decimal digit of any script, else 0.
DIGITS = "digits"
_ASCII_DIGIT = re.compile(rb"\d")
_DIGIT = re.compile(r"\d")


def _has_digit(token: bytes) -> int:
    if token.isascii():
        return int(_ASCII_DIGIT.search(token) is not None)
    return int(_DIGIT.search(token.decode("utf-8", "replace")) is not None)


_PER_TOKEN: dict[str, Callable[[bytes], int]] = {
    **_TOKEN_HASHES,
    WEIGHT: token_weight,
    SAMPLE: lambda b: xxhash.xxh64_intdigest(b, SAMPLE_SEED),
    DIGITS: _has_digit,
}


def _per_token(name: str, tokens: list[bytes]) -> np.ndarray:
    """``[_PER_TOKEN[name](t) for t in tokens]`` as uint64 (what the vocabulary stores), with
    no Python-level call per token where the table allows (the tokens that the vocabulary
    meets for the first time are hashed here)."""
    many = _MANY.get(name)
    if many is not None:
        try:
            return many(tokens)
        except IndexError:  # an empty token (the first-byte test): the definition below
            pass
    return np.fromiter(map(_PER_TOKEN[name], tokens), dtype=np.uint64, count=len(tokens))


class TokenTables:
    """A vocabulary's per-token tables: for each table ``name`` (a token hash, :data:`WEIGHT`,
    :data:`SAMPLE` or :data:`DIGITS`), the uint64 value of every id known so far.

    Kept in buffers grown by doubling, so new tokens cost their values only (not a copy of
    the whole table per batch).
    """

    def __init__(self) -> None:
        self._have: dict[str, np.ndarray] = {}
        self._done: dict[str, int] = {}  # per name: ids whose values are known

    def values(
        self,
        name: str,
        n: int,
        tokens: Callable[[int, int], list[bytes]],
        compute: Callable[[int, int], np.ndarray] | None = None,
    ) -> np.ndarray:
        """Values of ``name`` for ids ``0..n-1``; ``tokens(a, b)``: the tokens of ids
        ``a..b-1``, asked for the ids not computed yet; ``compute(a, b)``, when given, their
        values of ``name`` computed otherwise (the same values)."""
        have = self._have.get(name)
        done = self._done.get(name, 0)
        if have is not None and done == n:
            return have[:n]
        if have is None or len(have) < n:
            grown = np.empty(max(n, 2 * done, 1024), dtype=np.uint64)
            if have is not None:
                grown[:done] = have[:done]
            have = self._have[name] = grown
        have[done:n] = _per_token(name, tokens(done, n)) if compute is None else compute(done, n)
        self._done[name] = n
        return have[:n]


_DIGEST = operator.methodcaller("digest")
_BLAKE2B_8 = functools.partial(hashlib.blake2b, digest_size=8)
_FIRST_BYTE = operator.itemgetter(0)


def _weights(tokens: list[bytes]) -> np.ndarray:
    """:func:`~indexer.text.token_weight` of each token: a word's weight where the first byte
    is ASCII, the definition for the others."""
    out = np.full(len(tokens), WEIGHT_UNIT, dtype=np.uint64)
    first = np.frombuffer(bytes(map(_FIRST_BYTE, tokens)), dtype=np.uint8)
    other = np.flatnonzero(first >= 0x80).tolist()
    if other:
        out[other] = token_weights(list(map(tokens.__getitem__, other)))
    return out


def _digits(tokens: list[bytes]) -> np.ndarray:
    """:func:`_has_digit` of each token: an ASCII digit found in the tokens' bytes joined (one
    translation), the definition for the tokens holding a non-ASCII byte (digits of other
    scripts)."""
    lengths = np.fromiter(map(len, tokens), np.int64, count=len(tokens))
    joined = b"".join(tokens)
    ends = np.cumsum(lengths)
    digit = np.r_[0, np.cumsum(np.frombuffer(joined.translate(_DIGIT_BYTE), np.uint8))]
    out = (digit[ends] > digit[ends - lengths]).astype(np.uint64)
    if not joined.isascii():
        high = np.r_[0, np.cumsum(np.frombuffer(joined, np.uint8) >= 0x80)]
        for i in np.flatnonzero(high[ends] > high[ends - lengths]).tolist():
            out[i] = _has_digit(tokens[i])
    return out


_DIGIT_BYTE = bytes(int(48 <= c <= 57) for c in range(256))  # 1 for an ASCII digit


_MANY: dict[str, Callable[[list[bytes]], np.ndarray]] = {
    "blake2b": lambda ts: np.frombuffer(
        b"".join(map(_DIGEST, map(_BLAKE2B_8, ts))), dtype=">u8"
    ).astype(np.uint64),
    "xxh64": lambda ts: np.fromiter(map(xxhash.xxh64_intdigest, ts), np.uint64, len(ts)),
    "xxh3": lambda ts: np.fromiter(map(xxhash.xxh3_64_intdigest, ts), np.uint64, len(ts)),
    "minhash": lambda ts: np.fromiter(
        map(xxhash.xxh3_64_intdigest, ts, repeat(MINHASH_SEED)), np.uint64, len(ts)
    ),
    SAMPLE: lambda ts: np.fromiter(
        map(xxhash.xxh64_intdigest, ts, repeat(SAMPLE_SEED)), np.uint64, len(ts)
    ),
    WEIGHT: _weights,
    DIGITS: _digits,
}

#: Content (words) up to which a document adds all its words to its shingles ...
ALL_WORDS = 20
#: ... and from which it adds none (between the two: a share falling linearly to 0).
NO_WORDS = 50


def token_hash(name: str, token: bytes) -> int:
    """Return the 64-bit token hash ``H(token)`` for hash ``name`` (see module docstring)."""
    return _TOKEN_HASHES[name](token)


def fmix64(x: np.ndarray) -> np.ndarray:
    """Murmur3 64-bit finaliser over a uint64 array (a bijection with full avalanche)."""
    x = x ^ (x >> _S33)
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


class _Vocabulary(dict[bytes, int]):
    """Process-local memo: token -> id, and per hash name an array of token hashes by id.

    Pure cache: results never depend on its contents. Reset when it grows past a limit.
    """

    def __init__(self) -> None:
        super().__init__()
        self.tokens: list[bytes] = []
        self.tables = TokenTables()

    def __missing__(self, key: bytes) -> int:
        i = len(self.tokens)
        self[key] = i
        self.tokens.append(key)
        return i

    def ids(self, tokens: Sequence[bytes]) -> np.ndarray:
        """Each token's id (new tokens get the next ids, in order): one ``itemgetter`` call
        for all of them rather than a method call per token."""
        if len(tokens) < 2:  # itemgetter of one key returns its value, of none fails
            return np.fromiter(map(self.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        got = operator.itemgetter(*tokens)(self)
        return np.fromiter(got, dtype=np.int64, count=len(tokens))

    def table(self, name: str) -> np.ndarray:
        """Token hashes (or weights: :data:`WEIGHT`) for every known id (computes the ones
        not yet known)."""
        return self.tables.values(name, len(self.tokens), lambda a, b: self.tokens[a:b])


_vocab = _Vocabulary()


def token_hash_arrays(tokens: Sequence[bytes], names: Sequence[str]) -> list[np.ndarray]:
    """Return, per hash name, the uint64 token hashes of ``tokens`` (memoised by token)."""
    global _vocab
    if len(_vocab) > _VOCAB_LIMIT:
        _vocab = _Vocabulary()
    ids = _vocab.ids(tokens)
    return [_vocab.table(name)[ids] for name in names]


def distinct_token_ids(tokens: Sequence[bytes]) -> np.ndarray:
    """Vocabulary ids of ``tokens`` (for :func:`token_tables`; ids are per process)."""
    global _vocab
    if len(_vocab) > _VOCAB_LIMIT:
        _vocab = _Vocabulary()
    return _vocab.ids(tokens)


def token_tables(names: Sequence[str]) -> list[np.ndarray]:
    """Per hash name, the token hashes indexed by vocabulary id (valid until the next
    :func:`distinct_token_ids`, which may reset the vocabulary)."""
    return [_vocab.table(name) for name in names]


def separated_token_hashes(
    tokens: Sequence[bytes], sep: bytes, names: Sequence[str], line: bytes | None = None
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """:func:`token_hash_arrays` of several documents' tokens separated by ``sep`` tokens.

    Returns the hashes without the separators (nor ``line`` tokens, which mark line breaks),
    each document's token count, and per token its line in its document (the ``line``
    tokens before it there).
    """
    global _vocab
    if len(_vocab) > _VOCAB_LIMIT:
        _vocab = _Vocabulary()
    ids = _vocab.ids(tokens)
    is_sep = ids == _vocab[sep]
    real = ~is_sep
    marks = np.zeros(len(ids), dtype=bool) if line is None else ids == _vocab[line]
    real &= ~marks
    doc = np.cumsum(is_sep)
    lengths = np.bincount(doc[real], minlength=int(doc[-1]) + 1 if len(doc) else 1)
    counted = np.cumsum(marks | is_sep)
    base = np.concatenate(([0], counted[is_sep]))  # at each document's start
    line_no = (counted - base[doc])[real].astype(np.int32)
    ids = ids[real]
    return [_vocab.table(name)[ids] for name in names], lengths.astype(np.int64), line_no


def content_units(weights: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each document's content in words: its tokens' :data:`WEIGHT` values (concatenated,
    ``lengths[d]`` per document) summed and rounded up to whole words (a document with
    tokens has at least 1, one without 0)."""
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    total = np.concatenate(([0], np.cumsum(weights, dtype=np.int64)))
    sums = total[ends] - total[ends - lengths]
    return (sums + (WEIGHT_UNIT - 1)) // WEIGHT_UNIT


def word_share(units: np.ndarray) -> np.ndarray:
    """Share of its words a document of ``units`` words adds to its shingles (float64): 1 up
    to :data:`ALL_WORDS`, falling linearly to 0 at :data:`NO_WORDS`."""
    u = np.asarray(units, dtype=np.float64)
    return np.clip((NO_WORDS - u) / (NO_WORDS - ALL_WORDS), 0.0, 1.0)


def with_words(
    shingles: np.ndarray,
    counts: np.ndarray,
    words: np.ndarray,
    sample: np.ndarray,
    lengths: np.ndarray,
    units: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Short documents' features: their shingle hashes plus some of their token hashes.

    A document of ``units`` words adds each token whose :data:`SAMPLE` value falls below
    :func:`word_share` of the 64-bit range (every occurrence of it): all tokens up to
    :data:`ALL_WORDS`, none from :data:`NO_WORDS`. Which tokens is a function of the token
    alone, so two documents of similar length add nearly the same subset of their common
    words, and the features of a long document are its shingles alone. One changed word
    breaks ``k`` shingles but one word: the words keep short near-duplicates similar.
    Returns the features and their count per document (each document's shingles first).
    """
    share = word_share(units)
    short = np.flatnonzero(share > 0)
    if not len(short):
        return shingles, counts
    # the tokens of the documents that add words (the others add none)
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    n = lengths[short]
    doc = np.repeat(short, n)
    at = np.repeat(starts[short] - (np.cumsum(n) - n), n) + np.arange(len(doc))
    # compare the top 53 bits (exact in float64) with the share of 2**53
    take = (sample[at] >> np.uint64(11)).astype(np.float64) < share[doc] * float(1 << 53)
    at, doc = at[take], doc[take]
    added = np.bincount(doc, minlength=len(lengths))
    if not len(at):
        return shingles, counts
    # each document's shingles, then its added words (both in their order): placed directly
    total = counts + added
    out_start = np.cumsum(total) - total
    out = np.empty(int(total.sum()), dtype=np.uint64)
    out[np.repeat(out_start - (np.cumsum(counts) - counts), counts) + np.arange(len(shingles))] = (
        shingles
    )
    first_added = np.cumsum(added) - added
    out[out_start[doc] + counts[doc] + np.arange(len(at)) - first_added[doc]] = words[at]
    return out, total


class Segments:
    """Token counts of consecutive documents in one concatenated token array."""

    def __init__(self, lengths: np.ndarray) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def __len__(self) -> int:
        return len(self.lengths)

    def shingle_counts(self, k: int) -> np.ndarray:
        """Shingles per document: n-k+1, or 1 if 0 < n < k, or 0 if empty."""
        n = self.lengths
        return np.where(n >= k, n - k + 1, np.minimum(n, 1))


def _fmix64_(x: np.ndarray, tmp: np.ndarray) -> None:
    """:func:`fmix64` in place (``tmp``: scratch of the same shape; no temporaries)."""
    np.right_shift(x, _S33, out=tmp)
    x ^= tmp
    x *= _C1
    np.right_shift(x, _S33, out=tmp)
    x ^= tmp
    x *= _C2
    np.right_shift(x, _S33, out=tmp)
    x ^= tmp


def _chained(token_hashes: np.ndarray, starts: np.ndarray, spans: np.ndarray, k: int) -> np.ndarray:
    """Shingle hash of the ``spans[i]`` (<= k) tokens from ``starts[i]``, for every i (gathers)."""
    acc = token_hashes[starts]
    last = max(len(token_hashes) - 1, 0)
    for j in range(1, k):
        nxt = token_hashes[np.minimum(starts + j, last)]
        acc = np.where(j < spans, fmix64(acc * PHI + nxt), acc)
    return acc


def shingle_hashes(
    token_hashes: np.ndarray, seg: Segments, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Chain token hashes into k-shingle hashes for every document at once.

    Returns the concatenated shingle hashes and the number of shingles per document.
    The full k-token chain is computed at every position of the concatenated tokens with
    contiguous slices (in place, no gathers), then each document's positions are picked;
    documents shorter than ``k`` (one shingle of all their tokens) are chained apart.
    """
    counts = seg.shingle_counts(k)
    if k == 1:
        return token_hashes, counts
    total = int(counts.sum())
    n = len(token_hashes)
    m = n - k + 1  # positions where a full window fits in the concatenation
    out = np.empty(total, dtype=np.uint64)
    if total == 0:
        return out, counts
    cstarts = np.cumsum(counts) - counts
    full = seg.lengths >= k
    if m > 0 and full.any():
        acc = np.array(token_hashes[:m], dtype=np.uint64)
        tmp = np.empty_like(acc)
        for j in range(1, k):
            acc *= PHI
            acc += token_hashes[j : j + m]
            _fmix64_(acc, tmp)
        fcounts = np.where(full, counts, 0)
        # output slot -> window position: document start + offset within the document
        shift = np.repeat(seg.starts - cstarts, fcounts)
        slots = np.flatnonzero(np.repeat(full, counts)) if not full.all() else None
        if slots is None:
            out[:] = acc[np.arange(total, dtype=np.int64) + shift]
        else:
            out[slots] = acc[slots + shift]
    short = ~full & (seg.lengths > 0)
    if short.any():  # fewer than k tokens: a single shingle of all of them
        out[cstarts[short]] = _chained(token_hashes, seg.starts[short], seg.lengths[short], k)
    return out, counts
