"""``collapse_fp.packed``: every fingerprint value a search reads, in one binary value.

The stored record: the one copy of the MinHash and number sketches, and what every reader
decodes, from ``_source`` or, for hits read from doc values (``collapse.slim``), from its doc
value (one binary field is cheaper to read than six: docs/proxy.md, "One packed doc value").
The object's other fields (``simhash``, ``band``, ``exact_key``...) are what Elasticsearch
searches or collapses on, derived from the same values (``indexer.fingerprints.record``):

    offset  bytes  value (little-endian)
    0       4      tag: the first 4 bytes of blake2b(version string), :func:`tag_of`
    4       8      simhash, uint64
    12      4      token_count, uint32
    16      32     exact_key, the sha256 digest (its 64 hex digits as bytes)
    48      M      the MinHash sketch, values of ``minhash_bits`` bits (M = size x bits / 8)
    48 + M  183    the number sketch, the name cells and the writing cell
                   (:mod:`~indexer.fingerprints.numbers`, :mod:`~indexer.fingerprints.names`,
                   :mod:`~indexer.fingerprints.writing`): 61 cells of 24 bits, 3 bytes each
    231 + M 1-2    zero bytes: the record is a multiple of 3 bytes

then standard base64. A multiple of 3 bytes has no base64 padding, so the base64 of n records
joined is the base64 of their bytes joined: a batch encodes (:func:`pack_many`) and decodes
(:func:`unpack_many`) in one call each, with no per-document Python beyond slicing.

Guarantees: :func:`unpack_many` gives back exactly what :func:`pack_many` was given (simhash,
token_count, exact key, sketch, number sketch) for every value whose tag is ``params``'
version; any other value (another version, a wrong length, not base64) is marked not
present, never guessed. Its layout is fixed by the fingerprint version (the tag says which).
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple, cast

import numpy as np
from pybase64 import b64decode

from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS, cells_from_bytes, cells_to_bytes
from indexer.fingerprints.params import FingerprintParams

__all__ = [
    "HEADER_BYTES",
    "Unpacked",
    "exact_key_hexes",
    "pack_base64",
    "pack_many",
    "record_bytes",
    "tag_of",
    "unpack_heads",
    "unpack_many",
]

#: Bytes before the sketch: tag, simhash, token_count, exact key.
HEADER_BYTES = 48


@lru_cache(maxsize=64)
def tag_of(version: str) -> bytes:
    """The 4 bytes a packed value starts with for this fingerprint version."""
    return hashlib.blake2b(version.encode("utf-8"), digest_size=4).digest()


def record_bytes(params: FingerprintParams) -> int:
    """Length of one packed record in bytes (a multiple of 3)."""
    raw = _numbers_at(params) + 3 * CELLS
    return -(-raw // 3) * 3


def _numbers_at(params: FingerprintParams) -> int:
    """Offset of the number sketch: right after the MinHash sketch."""
    return HEADER_BYTES + params.minhash_size * params.minhash_bits // 8


@lru_cache(maxsize=64)
def _dtype(params: FingerprintParams) -> np.dtype:
    sketch = np.dtype(value_dtype(params.minhash_bits)).newbyteorder("<")
    return np.dtype(
        {
            "names": ["tag", "simhash", "token_count", "exact_key", "minhash", "numbers"],
            "formats": [
                "V4",
                "<u8",
                "<u4",
                "V32",
                (sketch, (params.minhash_size,)),
                ("u1", (CELLS, 3)),
            ],
            "offsets": [0, 4, 12, 16, HEADER_BYTES, _numbers_at(params)],
            "itemsize": record_bytes(params),
        }
    )


def pack_base64(
    params: FingerprintParams,
    simhash: np.ndarray,
    token_count: np.ndarray,
    exact_keys: Sequence[str],
    minhash: np.ndarray,
    numbers: np.ndarray,
) -> bytes:
    """The packed values of n documents joined: n x ``record_bytes(params) // 3 * 4`` base64
    characters, no separators (the bulk JSON slices it; :func:`pack_many` for strings).

    ``simhash``: (n,) uint64; ``token_count``: (n,); ``exact_keys``: n sha256 hex digests;
    ``minhash``: (n, minhash_size) sketch values of ``minhash_bits`` bits; ``numbers``: (n,
    CELLS) number sketches (:mod:`indexer.fingerprints.numbers`).
    """
    n = len(simhash)
    if n == 0:
        return b""
    records = np.zeros(n, dtype=_dtype(params))
    records["tag"] = np.frombuffer(tag_of(params.version), dtype="V4")[0]
    records["simhash"] = np.asarray(simhash, dtype=np.uint64)
    records["token_count"] = np.asarray(token_count, dtype=np.uint32)
    keys = bytes.fromhex("".join(exact_keys))
    if len(keys) != 32 * n:
        raise ValueError("every exact key must be 64 hex digits")
    records["exact_key"] = np.frombuffer(keys, dtype="V32")
    records["minhash"] = minhash
    records["numbers"] = cells_to_bytes(numbers)
    return binascii.b2a_base64(records.tobytes(), newline=False)


def pack_many(
    params: FingerprintParams,
    simhash: np.ndarray,
    token_count: np.ndarray,
    exact_keys: Sequence[str],
    minhash: np.ndarray,
    numbers: np.ndarray,
) -> list[str]:
    """The ``collapse_fp.packed`` value of each document (base64 strings, one per row;
    arguments as :func:`pack_base64`)."""
    text = pack_base64(params, simhash, token_count, exact_keys, minhash, numbers).decode("ascii")
    width = record_bytes(params) // 3 * 4
    return [text[i : i + width] for i in range(0, len(text), width)]


class Unpacked:
    """Packed values decoded into arrays (rows in the order given)."""

    __slots__ = (
        "_key_codes",
        "exact_key",
        "minhash",
        "numbers",
        "present",
        "simhash",
        "token_count",
    )

    def __init__(
        self,
        simhash: np.ndarray,
        token_count: np.ndarray,
        exact_key: np.ndarray,
        minhash: np.ndarray,
        numbers: np.ndarray,
        present: np.ndarray,
        key_codes: np.ndarray | None = None,
    ) -> None:
        self.simhash = simhash  # (n,) uint64
        self.token_count = token_count  # (n,) int64
        self.exact_key = exact_key  # (n, 32) uint8: the sha256 digests
        self.minhash = minhash  # (n, minhash_size) native unsigned
        self.numbers = numbers  # (n, CELLS) uint32: the number sketches
        self.present = present  # (n,) bool
        self._key_codes = key_codes  # (n,) int64 when read with the records

    def exact_key_hex(self, row: int) -> str:
        """The exact key of one row as stored in ``collapse_fp.exact_key`` ("" if absent)."""
        return self.exact_key[row].tobytes().hex() if self.present[row] else ""

    def exact_key_hexes(self) -> list[str]:
        """Every row's exact key as :meth:`exact_key_hex` gives it, hexed in one call."""
        text = self.exact_key.tobytes().hex()
        return [
            text[i * 64 : (i + 1) * 64] if ok else "" for i, ok in enumerate(self.present.tolist())
        ]

    def key_codes(self) -> np.ndarray:
        """(n,) int64: the first 60 bits of each exact key (-1 where not present), as
        ``indexer.hits.key_code`` reads them from the hex digits."""
        if self._key_codes is not None:
            return self._key_codes
        return _key_codes(self.exact_key, self.present)


#: The header alone (tag, simhash, token_count, exact key, and the key's first 8 bytes again
#: as a big-endian ``key_head``, the key code): :func:`unpack_heads`.
_HEAD = np.dtype(
    {
        "names": ["tag", "simhash", "token_count", "exact_key", "key_head"],
        "formats": ["V4", "<u8", "<u4", "V32", ">u8"],
        "offsets": [0, 4, 12, 16, 16],
        "itemsize": HEADER_BYTES,
    }
)


def _records(values: Sequence[object], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    """Records of ``dtype`` from base64 values of exactly its size, in one joined decode (one
    by one when a bad value spoils it), and which rows were such values (None: all)."""
    n = len(values)
    width = dtype.itemsize // 3 * 4
    try:  # nearly always every value a record: one join, one decode, no per-value Python
        joined = "".join(cast(Sequence[str], values)) if n else ""
        if set(map(len, cast(Sequence[str], values))) == {width}:
            raw = b64decode(joined, validate=True)
            if len(raw) == dtype.itemsize * n:
                return np.frombuffer(raw, dtype=dtype), None
    except (binascii.Error, TypeError, ValueError):
        pass
    fits = [isinstance(v, str) and len(v) == width for v in values]
    good = cast(list[str], [v for v, ok in zip(values, fits, strict=True) if ok])
    records = np.zeros(n, dtype=dtype)
    present = np.array(fits, dtype=bool)
    if good:
        try:
            raw = binascii.a2b_base64("".join(good).encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raw = b""
        if len(raw) == dtype.itemsize * len(good):
            records[present] = np.frombuffer(raw, dtype=dtype)
        else:  # one bad value spoils the joined decode: one by one, then
            for i in np.flatnonzero(present).tolist():
                try:
                    one = binascii.a2b_base64(str(values[i]).encode("ascii"), strict_mode=True)
                except (binascii.Error, UnicodeEncodeError, ValueError):
                    one = b""
                if len(one) == dtype.itemsize:
                    records[i] = np.frombuffer(one, dtype=dtype)[0]
                else:
                    present[i] = False
    return records, present


def _key_codes(exact_key: np.ndarray, present: np.ndarray) -> np.ndarray:
    """(n,) int64: the first 60 bits of each (n, 32) digest, -1 where not present."""
    first = exact_key[:, :8].copy().view(">u8").reshape(-1)
    codes = (first >> np.uint64(4)).astype(np.int64)
    codes[~present] = -1
    return codes


def unpack_many(values: Sequence[object], params: FingerprintParams) -> Unpacked:
    """Decode packed values; rows that are not ``params``' version, of another length or not
    base64 are not present (their other entries are zero)."""
    reading = _reading(params)
    records, present = _read(values, reading)
    codes = (records["key_head"] >> np.uint64(4)).astype(np.int64)
    if np.count_nonzero(present) < len(present):
        records = records.copy()  # the fast read's records are read-only
        records[~present] = np.zeros(1, dtype=reading.dtype)[0]
        codes[~present] = -1
    return Unpacked(
        simhash=records["simhash"].astype(np.uint64),
        token_count=records["token_count"].astype(np.int64),
        exact_key=records["exact_key"],  # a view: hexed for the few callers that want keys
        minhash=records["minhash"].astype(reading.sketch),
        numbers=_cells(records, reading.cells_at),
        present=present,
        key_codes=codes,
    )


def exact_key_hexes(values: Sequence[object], params: FingerprintParams) -> list[str]:
    """Each packed value's exact key as :meth:`Unpacked.exact_key_hex` gives it after
    :func:`unpack_many` ("" where a value is not ``params``' version or not a record): the
    values decoded as there, the keys alone read from them."""
    records, present = _read(values, _reading(params))
    text = records["exact_key"].tobytes().hex()
    return [text[i * 64 : (i + 1) * 64] if ok else "" for i, ok in enumerate(present.tolist())]


class _Reading(NamedTuple):
    """How :func:`unpack_many` reads one version's records (:func:`_reading`)."""

    dtype: np.dtype  # the record: the layout of _dtype, the exact key as 32 bytes and its
    # first 8 bytes again as a big-endian ``key_head`` (the key code)
    tag: np.void  # the version's tag as a record's ``tag`` field holds it
    sketch: np.dtype  # the MinHash values' native dtype
    cells_at: int  # offset of the number cells when a padding byte follows them, else -1


@lru_cache(maxsize=64)
def _reading(params: FingerprintParams) -> _Reading:
    """:class:`_Reading` of ``params``' records, made once."""
    fields = _dtype(params).fields
    assert fields is not None
    names = ["tag", "simhash", "token_count", "minhash", "numbers"]
    dtype = np.dtype(
        {
            "names": [*names, "exact_key", "key_head"],
            "formats": [*(fields[name][0] for name in names), ("u1", (32,)), ">u8"],
            "offsets": [*(fields[name][1] for name in names), 16, 16],
            "itemsize": record_bytes(params),
        }
    )
    at = _numbers_at(params)
    return _Reading(
        dtype=dtype,
        tag=np.frombuffer(tag_of(params.version), dtype="V4")[0],
        sketch=np.dtype(value_dtype(params.minhash_bits)),
        cells_at=at if record_bytes(params) > at + 3 * CELLS else -1,
    )


def _read(values: Sequence[object], reading: _Reading) -> tuple[np.ndarray, np.ndarray]:
    """The records of ``values`` and which rows are records of the version (:func:`_records`,
    then the tag)."""
    records, fits = _records(values, reading.dtype)
    present = records["tag"] == reading.tag
    if fits is not None:
        present &= fits
    return records, present


def _cells(records: np.ndarray, at: int) -> np.ndarray:
    """(n, CELLS) uint32: the number cells of records (:func:`_reading`), as
    :func:`~indexer.fingerprints.numbers.cells_from_bytes` gives them, in two numpy calls:
    each cell's 3 bytes and the byte after them read as one little-endian ``uint32`` (cells 3
    bytes apart), masked to 24 bits. The byte after the last cell is the record's padding:
    the MinHash sketch's bytes (a power of two) are never a multiple of 3, so a record has
    1 or 2 (:func:`record_bytes`); without one (``at`` -1), the cells are copied out first."""
    if at < 0 or len(records) == 0:
        return cells_from_bytes(records["numbers"])
    wide = np.ndarray(
        (len(records), CELLS), dtype="<u4", buffer=records, offset=at, strides=(records.itemsize, 3)
    )
    return wide & np.uint32(0xFFFFFF)


def unpack_heads(values: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """SimHash (n,) uint64 and exact-key codes (n,) int64 (as :meth:`Unpacked.key_codes`) of
    packed values, from their first :data:`HEADER_BYTES` alone: the sketches are not decoded,
    nor the tag checked (a pre-filter's read). 0 and -1 where a value is not packed."""
    width = HEADER_BYTES // 3 * 4
    heads, fits = _records([v[:width] if isinstance(v, str) else None for v in values], _HEAD)
    simhash = heads["simhash"].astype(np.uint64)
    codes = (heads["key_head"] >> np.uint64(4)).astype(np.int64)
    if fits is not None and not fits.all():
        simhash[~fits] = 0
        codes[~fits] = -1
    return simhash, codes
