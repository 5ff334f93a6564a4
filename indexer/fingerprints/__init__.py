"""Document fingerprints for near-duplicate collapsing: SimHash-64, blocks, MinHash, exact key.

Index time: :func:`fingerprint` / :func:`fingerprint_batch` -> :class:`FingerprintRecord`
-> ``to_es()`` (its ``packed`` value: :func:`pack_many`). Query time: :func:`decode_many` (or
:func:`unpack_many` of packed values) -> arrays -> :func:`pairwise_hamming`,
:func:`pairwise_similarity`. A shared block only nominates a candidate pair; the MinHash
similarity (and exact key for short documents) decides.
"""

from indexer.fingerprints.bands import BAND_ROWS, MAX_BANDS, band_count, band_keys
from indexer.fingerprints.bits import hamming, pairwise_hamming, popcount64, to_signed, to_unsigned
from indexer.fingerprints.blocks import split, split_many
from indexer.fingerprints.compute import fingerprint, fingerprint_arrays, fingerprint_batch
from indexer.fingerprints.minhash import pairwise_similarity, similarity
from indexer.fingerprints.packed import Unpacked, pack_many, unpack_many
from indexer.fingerprints.params import HASH_NAMES, FingerprintParams
from indexer.fingerprints.record import (
    FingerprintArrays,
    FingerprintRecord,
    decode_id,
    decode_many,
    encode_id,
)
from indexer.text import jaccard

__all__ = [
    "BAND_ROWS",
    "HASH_NAMES",
    "MAX_BANDS",
    "FingerprintArrays",
    "FingerprintParams",
    "FingerprintRecord",
    "Unpacked",
    "band_count",
    "band_keys",
    "decode_id",
    "decode_many",
    "encode_id",
    "fingerprint",
    "fingerprint_arrays",
    "fingerprint_batch",
    "hamming",
    "jaccard",
    "pack_many",
    "pairwise_hamming",
    "pairwise_similarity",
    "popcount64",
    "similarity",
    "split",
    "split_many",
    "to_signed",
    "to_unsigned",
    "unpack_many",
]
