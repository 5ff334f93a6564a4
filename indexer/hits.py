"""Fingerprints read back from hits: the ``collapse_fp`` object (docs/CONTRACTS.md) to arrays,
and the keys a hit's copies are looked up by.

Decoding is the indexer's: every hit's ``collapse_fp.packed`` value, from ``_source`` or doc
values alike, by :func:`indexer.fingerprints.unpack_many` (one call per page), so the stored
layout has one reader. A window may mix fingerprint versions (an index being rebuilt): the
most common version is decoded, hits of any other version (or without ``collapse_fp``) become
singletons.

Probe schemes (an index records its own, ``indexer init --probe``): ``bands``, the MinHash
band keys ``collapse_fp.band``; ``blocks``, the SimHash blocks ``collapse_fp.block_0`` ..
``block_{B-1}`` (four of 16 bits). A block match guarantees every copy within B−1 bits (3)
shares a key and promises nothing further; a band match finds a copy of MinHash similarity J
with probability 1 − (1 − J⁴)¹⁶. Either only nominates candidates: the rule verifies them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any, Literal, cast

import numpy as np

from indexer import grouping
from indexer.fingerprints import packed
from indexer.fingerprints.bands import packed_band_keys
from indexer.fingerprints.blocks import block_hex, split
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS
from indexer.fingerprints.packed import exact_key_hexes, unpack_heads, unpack_many
from indexer.fingerprints.params import FingerprintParams
from indexer.grouping import Prints

__all__ = [
    "BAND_FIELD",
    "DEFAULT_PROBE",
    "DEFAULT_VERSION",
    "FINGERPRINT_FIELD",
    "META_KEY",
    "PROBES",
    "SLIM_KEY",
    "VERIFY_SOURCE",
    "Decoded",
    "Hit",
    "Probe",
    "block_field",
    "decode",
    "exact_keys_of",
    "fp_of",
    "key_code",
    "probe_in",
    "probe_keys",
    "probe_keys_many",
    "simhash_and_keys",
    "use_compiled",
]

#: The object field holding the fingerprints: the one definition of its name.
FINGERPRINT_FIELD = "collapse_fp"
#: The MinHash band keys (``indexer.fingerprints.bands``): the ``bands`` probe's keys.
BAND_FIELD = f"{FINGERPRINT_FIELD}.band"
#: How an index finds candidates beyond the window (recorded in its mapping's ``_meta``).
Probe = Literal["bands", "blocks"]
PROBES: tuple[Probe, ...] = ("bands", "blocks")
#: The scheme of an index that records none, and ``indexer init``'s default.
DEFAULT_PROBE: Probe = "bands"
#: Key of our entry in an index mapping's ``_meta``: ``{"text_fields", "version", "probe"}``
#: (written by ``indexer.mapping``, read by every writer and the proxy).
META_KEY = "collapse_fp"
#: The ``collapse_fp`` sub-fields the grouping rule reads from a hit's ``_source`` (probes,
#: ``collapse_total``): every value :func:`decode` needs, not the blocks or bands.
VERIFY_SOURCE = [f"{FINGERPRINT_FIELD}.{name}" for name in ("version", "exact_key", "packed")]
#: Where a hit read from doc values (``collapse.slim``) keeps its ``collapse_fp.packed`` value
#: ("" when it has none): never answered.
SLIM_KEY = "_collapse_fp"
#: The version a window read from doc values alone is decoded as (no version string there).
DEFAULT_VERSION = FingerprintParams().version

Hit = dict[str, Any]
_slim_value = itemgetter(SLIM_KEY)


@dataclass(frozen=True)
class Decoded:
    """Fingerprints of some hits plus the version decoded (None: no hit had one)."""

    prints: Prints
    params: FingerprintParams | None


@lru_cache(maxsize=64)
def _params(version: str, min_tokens: int) -> FingerprintParams | None:
    try:
        return FingerprintParams.from_version(version, min_tokens=min_tokens)
    except ValueError:
        return None


def fp_of(hit: Hit) -> dict[str, Any] | None:
    """The ``collapse_fp`` object of a hit, if it has one."""
    slim = hit.get(SLIM_KEY)
    if slim is not None:
        return slim if isinstance(slim, dict) else None
    source = hit.get("_source")
    fp = source.get(FINGERPRINT_FIELD) if isinstance(source, dict) else None
    return fp if isinstance(fp, dict) else None


def key_code(key: object) -> int:
    """An exact key as a non-negative int64 (its first 60 bits; -1 when missing)."""
    if not isinstance(key, str) or len(key) < 15:
        return -1
    try:
        return int(key[:15], 16)
    except ValueError:
        return -1


def _read_alike(hits: list[Hit]) -> tuple[list[Any], list[Any] | None] | None:
    """The packed values of hits all read alike, with their versions (None: all read from doc
    values, which carry no version), in a few passes of C; None when they are mixed, empty or
    one lacks a ``collapse_fp`` object (:func:`decode` then looks at each hit)."""
    if not hits:
        return None
    try:
        return list(map(_slim_value, hits)), None
    except KeyError:
        pass
    try:
        fps = [h["_source"][FINGERPRINT_FIELD] for h in hits]
        # dict.get refuses anything but a dict (TypeError), as fp_of does
        return list(map(dict.get, fps, repeat("packed"))), list(
            map(dict.get, fps, repeat("version"))
        )
    except (KeyError, TypeError):
        return None


def _values_of(hits: list[Hit], version: str | None) -> tuple[list[Any], str | None]:
    """The packed value to decode for each hit (None: not of the version decoded) and that
    version (see :func:`decode`)."""
    alike = _read_alike(hits)
    if alike is not None:
        values, versions = alike
        if versions is None:
            return values, DEFAULT_VERSION if version is None else version
        if version is None:
            version = versions[0]  # nearly always every hit's
            if versions.count(version) != len(versions):
                version = Counter(versions).most_common(1)[0][0]
        if versions.count(version) != len(versions):
            values = [
                v if got == version else None for v, got in zip(values, versions, strict=True)
            ]
        return values, version
    fps = [None if SLIM_KEY in h else fp_of(h) for h in hits]
    if version is None:
        counts = Counter(fp.get("version") for fp in fps if fp is not None)
        version = counts.most_common(1)[0][0] if counts else None
        if version is None and any(SLIM_KEY in h for h in hits):
            version = DEFAULT_VERSION
    values = [
        hit[SLIM_KEY]
        if fp is None and SLIM_KEY in hit
        else fp.get("packed")
        if fp is not None and fp.get("version") == version
        else None
        for hit, fp in zip(hits, fps, strict=True)
    ]
    return values, version


def decode(hits: list[Hit], min_tokens: int, version: str | None = None) -> Decoded:
    """Decode the fingerprints of hits (in their order); ``version`` forces one version.

    Hits read in full carry their ``collapse_fp`` object, hits read from doc values its
    ``packed`` value alone (:mod:`indexer.fingerprints.packed`): the packed values of all are
    decoded in one call. Without ``version``, the most common one among the full hits is
    decoded (:data:`DEFAULT_VERSION` when all were read from doc values)."""
    n = len(hits)
    values, version = _values_of(hits, version)
    params = _params(str(version), min_tokens) if version else None
    if params is None:
        empty = Prints(
            np.zeros(n, np.uint64),
            np.zeros((n, 1), np.uint16),
            np.full(n, -1, np.int64),
            np.zeros(n, np.int64),
            np.zeros(n, bool),
            np.zeros((n, CELLS), np.uint32),
        )
        return Decoded(empty, None)
    got = unpack_many(values, params)
    prints = Prints(
        got.simhash, got.minhash, got.key_codes(), got.token_count, got.present, got.numbers
    )
    return Decoded(prints, params)


def use_compiled() -> bool:
    """Decode hits' packed values and group them with the compiled passes from now on in this
    process (:func:`indexer.fingerprints.packed.use_compiled`,
    :func:`indexer.grouping.use_compiled`: the same values and groups as numpy, less CPU);
    False without numba. The proxy calls it at start-up (``COLLAPSE_COMPILED``)."""
    return packed.use_compiled() and grouping.use_compiled()


def exact_keys_of(hits: list[Hit], params: FingerprintParams | None) -> list[str]:
    """Each hit's exact key as stored in ``collapse_fp.exact_key`` ("" when it has none); the
    packed values of hits read from doc values are decoded in one call."""
    keys = [str((fp_of(hit) or {}).get("exact_key") or "") for hit in hits]
    slim_rows = [i for i, hit in enumerate(hits) if SLIM_KEY in hit]
    if slim_rows:
        if params is None:
            for i in slim_rows:
                keys[i] = ""
        else:
            hexes = exact_key_hexes([hits[i][SLIM_KEY] for i in slim_rows], params)
            for i, key in zip(slim_rows, hexes, strict=True):
                keys[i] = key
    return keys


def simhash_and_keys(hits: list[Hit]) -> tuple[np.ndarray, np.ndarray]:
    """SimHash (uint64) and exact-key codes of hits, read from the head of their ``packed``
    values without decoding the sketches: the cheap pre-filter before :func:`decode` (0 and
    -1 where a hit has none)."""
    values = [
        hit[SLIM_KEY] if SLIM_KEY in hit else (fp_of(hit) or {}).get("packed") for hit in hits
    ]
    return unpack_heads(values)


def probe_in(meta: Any) -> Probe:
    """The probe scheme a mapping's ``_meta`` records (:data:`DEFAULT_PROBE` when none)."""
    entry = meta.get(META_KEY) if isinstance(meta, dict) else None
    probe = entry.get("probe") if isinstance(entry, dict) else None
    return cast(Probe, probe) if probe in PROBES else DEFAULT_PROBE


def block_field(i: int) -> str:
    """The field of SimHash block ``i`` (block 0 = the least significant bits)."""
    return f"{FINGERPRINT_FIELD}.block_{i}"


def probe_keys(
    simhash: int, minhash: np.ndarray, params: FingerprintParams, probes: frozenset[str]
) -> list[tuple[str, str]]:
    """(field, value) of the keys a document's copies are looked up by, for each scheme in
    ``probes``: derived from its decoded values exactly as the writers store them (band keys
    of the sketch, hex blocks of the SimHash), so hits read in full or from doc values alike."""
    out: list[tuple[str, str]] = []
    if "bands" in probes:
        packed = np.ascontiguousarray(minhash, dtype=_little(params.minhash_bits)).tobytes()
        out += zip(repeat(BAND_FIELD), packed_band_keys(packed, params.minhash_bits))
    if "blocks" in probes:
        out += [
            (block_field(i), block_hex(b, params.blocks))
            for i, b in enumerate(split(simhash, params.blocks))
        ]
    return out


def probe_keys_many(
    simhash: np.ndarray, minhash: np.ndarray, params: FingerprintParams, probes: frozenset[str]
) -> list[list[tuple[str, str]]]:
    """:func:`probe_keys` of several documents (``simhash`` (n,), ``minhash`` (n, size)): their
    sketches packed by one numpy call, each row's band keys sliced from it."""
    n = len(simhash)
    out: list[list[tuple[str, str]]] = [[] for _ in range(n)]
    if "bands" in probes and n:
        bits = params.minhash_bits
        packed = np.ascontiguousarray(minhash, dtype=_little(bits)).tobytes()
        step = len(packed) // n
        for r, keys in enumerate(out):
            keys += zip(
                repeat(BAND_FIELD), packed_band_keys(packed[r * step : (r + 1) * step], bits)
            )
    if "blocks" in probes:
        for keys, value in zip(out, simhash.tolist(), strict=True):
            keys += [
                (block_field(i), block_hex(b, params.blocks))
                for i, b in enumerate(split(value, params.blocks))
            ]
    return out


@lru_cache(maxsize=8)
def _little(bits: int) -> np.dtype:
    """The stored (little-endian) dtype of sketch values of ``bits`` bits."""
    return np.dtype(value_dtype(bits)).newbyteorder("<")
