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
    48 + M  12     the cell map: bit c (least significant first) set when cell c is not zero
    60 + M  0-2    zero bytes: this fixed part is a multiple of 3 bytes (:func:`fixed_bytes`)
    F       3 k    the k cells that are not zero, in cell order, 3 bytes each: of the number
                   sketch, the name cells and the writing cell (:data:`CELLS` in all;
                   :mod:`~indexer.fingerprints.numbers`, :mod:`~indexer.fingerprints.names`,
                   :mod:`~indexer.fingerprints.writing`)

then standard base64. Most cells of most documents are empty, and a refill reads hundreds of
these values: only the cells that hold something are stored (why: docs/proxy.md, "A packed
value without its empty cells"). Every part is a multiple of 3 bytes and has no base64
padding, so the base64 of n records joined is the base64 of their bytes joined, and so are
their fixed parts' and their cells': a batch encodes (:func:`pack_base64`) and decodes
(:func:`unpack_many`) in a few calls, with no per-document Python beyond slicing.

Guarantees: :func:`unpack_many` gives back exactly what :func:`pack_many` was given (simhash,
token_count, exact key, sketch, the cells' 24 bits) for every value whose tag is ``params``'
version; any other value (another version, a length its map does not tell, not base64) is
marked not present, never guessed. Its layout is fixed by the fingerprint version (the tag
says which).
"""

from __future__ import annotations

import binascii
import hashlib
import operator
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import ModuleType
from typing import NamedTuple, cast

import numpy as np
from pybase64 import b64decode

from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS
from indexer.fingerprints.params import FingerprintParams

__all__ = [
    "HEADER_BYTES",
    "MAP_BYTES",
    "Packed",
    "Unpacked",
    "exact_key_hexes",
    "fixed_bytes",
    "pack_base64",
    "pack_many",
    "record_bytes",
    "tag_of",
    "unpack_heads",
    "unpack_many",
]

#: Bytes before the sketch: tag, simhash, token_count, exact key.
HEADER_BYTES = 48
#: Bytes of the cell map: one bit per cell.
MAP_BYTES = -(-CELLS // 8)
#: Base64 characters of one stored cell (3 bytes).
_CELL_CHARS = 4
#: A cell's 24 bits.
_CELL_MASK = 0xFFFFFF


@lru_cache(maxsize=64)
def tag_of(version: str) -> bytes:
    """The 4 bytes a packed value starts with for this fingerprint version."""
    return hashlib.blake2b(version.encode("utf-8"), digest_size=4).digest()


def fixed_bytes(params: FingerprintParams) -> int:
    """Length in bytes of a record's fixed part: header, sketch, cell map (a multiple of 3)."""
    raw = HEADER_BYTES + params.minhash_size * params.minhash_bits // 8 + MAP_BYTES
    return -(-raw // 3) * 3


def record_bytes(params: FingerprintParams, cells: int = CELLS) -> int:
    """Length in bytes of a record with ``cells`` cells that are not zero (by default all: the
    longest); a multiple of 3."""
    return fixed_bytes(params) + 3 * cells


@lru_cache(maxsize=64)
def _dtype(params: FingerprintParams) -> np.dtype:
    """The fixed part of a record."""
    sketch = np.dtype(value_dtype(params.minhash_bits)).newbyteorder("<")
    at = HEADER_BYTES + params.minhash_size * params.minhash_bits // 8
    return np.dtype(
        {
            "names": ["tag", "simhash", "token_count", "exact_key", "minhash", "map"],
            "formats": [
                "V4",
                "<u8",
                "<u4",
                "V32",
                (sketch, (params.minhash_size,)),
                ("u1", (MAP_BYTES,)),
            ],
            "offsets": [0, 4, 12, 16, HEADER_BYTES, at],
            "itemsize": fixed_bytes(params),
        }
    )


class Packed(NamedTuple):
    """n packed values as three pieces: value i is ``fixed[i * w : (i + 1) * w]`` (w =
    :attr:`width`) followed by ``cells[ends[i - 1] : ends[i]]`` (0 before the first): base64
    text, ASCII."""

    fixed: bytes
    cells: bytes
    ends: list[int]
    width: int

    def value(self, i: int) -> bytes:
        """Value ``i``, whole."""
        lo = self.ends[i - 1] if i else 0
        return self.fixed[i * self.width : (i + 1) * self.width] + self.cells[lo : self.ends[i]]


def pack_base64(
    params: FingerprintParams,
    simhash: np.ndarray,
    token_count: np.ndarray,
    exact_keys: Sequence[str],
    minhash: np.ndarray,
    numbers: np.ndarray,
) -> Packed:
    """The packed values of n documents, in two base64 calls (:class:`Packed`; the bulk JSON
    slices it, :func:`pack_many` for strings).

    ``simhash``: (n,) uint64; ``token_count``: (n,); ``exact_keys``: n sha256 hex digests;
    ``minhash``: (n, minhash_size) sketch values of ``minhash_bits`` bits; ``numbers``: (n,
    CELLS) cells of 24 bits (:mod:`indexer.fingerprints.numbers`).
    """
    n = len(simhash)
    width = fixed_bytes(params) // 3 * 4
    if n == 0:
        return Packed(b"", b"", [], width)
    records = np.zeros(n, dtype=_dtype(params))
    records["tag"] = np.frombuffer(tag_of(params.version), dtype="V4")[0]
    records["simhash"] = np.asarray(simhash, dtype=np.uint64)
    records["token_count"] = np.asarray(token_count, dtype=np.uint32)
    keys = bytes.fromhex("".join(exact_keys))
    if len(keys) != 32 * n:
        raise ValueError("every exact key must be 64 hex digits")
    records["exact_key"] = np.frombuffer(keys, dtype="V32")
    records["minhash"] = minhash
    cells = np.asarray(numbers, dtype="<u4") & np.uint32(_CELL_MASK)  # the 24 bits kept
    if cells.shape != (n, CELLS):
        raise ValueError(f"numbers must be {n} rows of {CELLS} cells")
    full = cells != 0
    records["map"] = np.packbits(full, axis=1, bitorder="little")
    held = cells[full].view(np.uint8).reshape(-1, 4)[:, :3]  # each cell's 3 low bytes
    ends = np.cumsum(np.count_nonzero(full, axis=1)) * _CELL_CHARS
    return Packed(
        binascii.b2a_base64(records.tobytes(), newline=False),
        binascii.b2a_base64(held.tobytes(), newline=False),
        ends.tolist(),
        width,
    )


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
    packed = pack_base64(params, simhash, token_count, exact_keys, minhash, numbers)
    fixed, cells, width = packed.fixed.decode("ascii"), packed.cells.decode("ascii"), packed.width
    starts = [0, *packed.ends[:-1]] if packed.ends else []
    return [
        fixed[i * width : (i + 1) * width] + cells[lo:hi]
        for i, lo, hi in zip(range(len(starts)), starts, packed.ends, strict=True)
    ]


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
                records[i], present[i] = _one(values[i], dtype)
    return records, present


def _one(value: object, dtype: np.dtype) -> tuple[np.void, bool]:
    """One record of ``dtype`` from one base64 value, and whether it was one."""
    try:
        raw = binascii.a2b_base64(str(value).encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raw = b""
    if len(raw) != dtype.itemsize:
        return np.zeros(1, dtype=dtype)[0], False
    return np.frombuffer(raw, dtype=dtype)[0], True


def _key_codes(exact_key: np.ndarray, present: np.ndarray) -> np.ndarray:
    """(n,) int64: the first 60 bits of each (n, 32) digest, -1 where not present."""
    first = exact_key[:, :8].copy().view(">u8").reshape(-1)
    codes = (first >> np.uint64(4)).astype(np.int64)
    codes[~present] = -1
    return codes


def unpack_many(values: Sequence[object], params: FingerprintParams) -> Unpacked:
    """Decode packed values; rows that are not ``params``' version, whose length their cell map
    does not tell, or not base64 are not present (their entries are zero)."""
    reading = _reading(params)
    if _compiled is not None:
        got = _unpack_compiled(values, reading)
        if got is not None:
            return got
    records, cells, present = _read(values, reading)
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
        numbers=cells,
        present=present,
        key_codes=codes,
    )


#: :mod:`.packed_kernel` once :func:`use_compiled` has loaded it (None: numpy only).
_compiled: ModuleType | None = None


def use_compiled() -> bool:
    """Decode with the compiled pass (:mod:`.packed_kernel`) from now on in this process,
    loading it now (from numba's cache, or compiling it once); False, and nothing changes,
    without numba. The same arrays as the numpy path (tested); the proxy calls it at start-up."""
    global _compiled
    if _compiled is None:
        try:
            import indexer.fingerprints.packed_kernel as kernel
        except ImportError:
            return False
        _compiled = kernel
    return True


def _unpack_compiled(values: Sequence[object], reading: _Reading) -> Unpacked | None:
    """:func:`unpack_many` of values that are all text, as the fast numpy read takes them, by
    the compiled pass; None (the numpy path decides) for anything else: a value not text or
    not base64, a length its map does not tell, a MinHash type not compiled for."""
    assert _compiled is not None
    n = len(values)
    texts = cast(Sequence[str], values)
    try:
        fixed_text = "".join(map(reading.head, texts))
        if not n or len(fixed_text) != reading.width * n:
            return None
        fixed = b64decode(fixed_text, validate=True)
        raw = b64decode("".join(map(reading.tail, texts)), validate=True)
    except (binascii.Error, TypeError, ValueError):
        return None
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    simhash = np.zeros(n, dtype=np.uint64)
    token_count = np.zeros(n, dtype=np.int64)
    minhash = np.zeros((n, reading.minhash_size), dtype=reading.sketch)
    cells = np.zeros((n, CELLS), dtype=np.uint32)
    present = np.zeros(n, dtype=bool)
    codes = np.zeros(n, dtype=np.int64)
    args = (np.frombuffer(fixed, dtype=np.uint8), np.frombuffer(raw, dtype=np.uint8), lengths)
    outs = (simhash, token_count, minhash, cells, present, codes)
    try:
        ok = _compiled.read(*args, reading.layout, reading.tag_bytes, *outs)
    except TypeError:  # a MinHash type the pass is not compiled for
        return None
    if not ok:
        return None
    exact_key = np.frombuffer(fixed, dtype=reading.dtype)["exact_key"]
    if np.count_nonzero(present) < n:
        exact_key = exact_key.copy()
        exact_key[~present] = 0
    return Unpacked(simhash, token_count, exact_key, minhash, cells, present, codes)


def exact_key_hexes(values: Sequence[object], params: FingerprintParams) -> list[str]:
    """Each packed value's exact key as :meth:`Unpacked.exact_key_hex` gives it after
    :func:`unpack_many` ("" where a value is not ``params``' version or not a record): the
    values decoded as there, the keys alone read from them."""
    records, _, present = _read(values, _reading(params))
    text = records["exact_key"].tobytes().hex()
    return [text[i * 64 : (i + 1) * 64] if ok else "" for i, ok in enumerate(present.tolist())]


class _Reading(NamedTuple):
    """How :func:`unpack_many` reads one version's records (:func:`_reading`)."""

    dtype: np.dtype  # the fixed part: the layout of _dtype, the exact key as 32 bytes and its
    # first 8 bytes again as a big-endian ``key_head`` (the key code)
    tag: np.void  # the version's tag as a record's ``tag`` field holds it
    sketch: np.dtype  # the MinHash values' native dtype
    width: int  # base64 characters of the fixed part
    head: Callable[[str], str]  # a value's fixed part (a C-level slice: no bytecode per value)
    tail: Callable[[str], str]  # a value's cells
    minhash_size: int  # values per MinHash sketch
    layout: np.ndarray  # the layout as the compiled pass takes it (.packed_kernel.read)
    tag_bytes: np.ndarray  # the version's tag, (4,) uint8


@lru_cache(maxsize=64)
def _reading(params: FingerprintParams) -> _Reading:
    """:class:`_Reading` of ``params``' records, made once."""
    fields = _dtype(params).fields
    assert fields is not None
    names = ["tag", "simhash", "token_count", "minhash", "map"]
    dtype = np.dtype(
        {
            "names": [*names, "exact_key", "key_head"],
            "formats": [*(fields[name][0] for name in names), ("u1", (32,)), ">u8"],
            "offsets": [*(fields[name][1] for name in names), 16, 16],
            "itemsize": fixed_bytes(params),
        }
    )
    width = fixed_bytes(params) // 3 * 4
    sketch = np.dtype(value_dtype(params.minhash_bits))
    layout = np.array(
        [
            fixed_bytes(params),
            fields["minhash"][1],
            fields["map"][1],
            MAP_BYTES,
            CELLS,
            width,
            _CELL_CHARS,
            sketch.itemsize,
        ],
        dtype=np.int64,
    )
    tag_bytes = np.frombuffer(tag_of(params.version), dtype=np.uint8)
    layout.flags.writeable = False
    return _Reading(
        dtype=dtype,
        tag=np.frombuffer(tag_of(params.version), dtype="V4")[0],
        sketch=sketch,
        width=width,
        head=operator.itemgetter(slice(None, width)),
        tail=operator.itemgetter(slice(width, None)),
        minhash_size=params.minhash_size,
        layout=layout,
        tag_bytes=tag_bytes,
    )


def _read(values: Sequence[object], reading: _Reading) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed parts of ``values`` (of ``reading.dtype``), their cells ((n, CELLS) uint32)
    and which rows are records of the version; other rows' cells are zero."""
    n = len(values)
    width = reading.width
    fixed, bits, raw, fits = None, None, b"", None
    try:  # nearly always every value a record: two joins, two decodes, no per-value Python
        texts = cast(Sequence[str], values)  # else: TypeError on joining
        fixed_text = "".join(map(reading.head, texts))
        if len(fixed_text) == width * n:
            fixed = np.frombuffer(b64decode(fixed_text, validate=True), dtype=reading.dtype)
            bits = _bits(fixed["map"])
            lengths = (np.count_nonzero(bits, axis=1) * _CELL_CHARS + width).tolist()
            if lengths == list(map(len, texts)) and not np.count_nonzero(bits[:, CELLS:]):
                raw = b64decode("".join(map(reading.tail, texts)), validate=True)
            else:
                fixed = None  # some length its map does not tell: one by one
    except (binascii.Error, TypeError, ValueError):
        fixed = None
    if fixed is None or bits is None:
        fixed, raw, fits = _one_by_one(values, reading)
        bits = _bits(fixed["map"])
    # each cell's 3 bytes and the next byte read as one little-endian uint32, masked to 24 bits
    held = np.ndarray((len(raw) // 3,), dtype="<u4", buffer=raw + b"\0", strides=(3,))
    wide = np.zeros(bits.shape, dtype=np.uint32)  # a record's spare bits are zero
    wide.reshape(-1)[np.flatnonzero(bits)] = held & np.uint32(_CELL_MASK)
    cells = wide[:, :CELLS]
    present = fixed["tag"] == reading.tag
    if fits is not None:
        present &= fits
    if np.count_nonzero(present) < n:
        cells[~present] = 0
    return fixed, cells, present


def _bits(maps: np.ndarray) -> np.ndarray:
    """(n, 8 x MAP_BYTES) bool: the bits of (n, MAP_BYTES) cell maps, cell 0 first."""
    return np.unpackbits(maps, axis=1, bitorder="little").view(bool)


def _stored(maps: np.ndarray) -> int:
    """How many cells one MAP_BYTES map says are stored; -1 for a map with a bit set beyond the
    last cell (no record has such a map)."""
    bits = _bits(maps[None, :])[0]
    return -1 if bits[CELLS:].any() else int(np.count_nonzero(bits))


def _one_by_one(
    values: Sequence[object], reading: _Reading
) -> tuple[np.ndarray, bytes, np.ndarray]:
    """:func:`_read`'s values one at a time: fixed parts (zero where a value is not a record),
    the records' cells joined (bytes), and which values are records."""
    n, width = len(values), reading.width
    fixed = np.zeros(n, dtype=reading.dtype)
    fits = np.zeros(n, dtype=bool)
    tails: list[bytes] = []
    for i, value in enumerate(values):
        if not isinstance(value, str) or len(value) < width:
            continue
        head, ok = _one(value[:width], reading.dtype)
        tail = value[width:]
        if not ok or len(tail) != _stored(head["map"]) * _CELL_CHARS:
            continue
        try:
            cells = binascii.a2b_base64(tail.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            continue
        fixed[i], fits[i] = head, True
        tails.append(cells)
    return fixed, b"".join(tails), fits


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
