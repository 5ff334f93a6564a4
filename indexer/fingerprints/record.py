"""The versioned fingerprint record and its Elasticsearch object (field ``collapse_fp``).

Stored shape, produced by :meth:`FingerprintRecord.to_es`::

    {"version": "sh51-k4-blake2b-count-b4-mh128x8k4",
     "simhash": <int64>,          # ES long: the 64 bits read as signed two's complement
     "block_0": "9d3f", ..., "block_{B-1}": "0a93",   # lowercase hex, block 0 = low bits
     "band": ["00<hex>", ..., "0f<hex>"],   # keyword, MinHash band keys (see ``bands``)
     "exact_key": "<sha256 hex>",
     "token_count": 1234,
     "packed": "<base64>",        # ES binary with doc values: every value the rule reads
     "id": "<base64>"}            # ES binary with doc values: the document's own _id

``packed`` (:mod:`~indexer.fingerprints.packed`: tag of the version, simhash, token_count,
exact key, the MinHash sketch, the number sketch; 476 characters by default) is the record:
the one copy of the two sketches, and what every reader decodes (:meth:`FingerprintRecord.
from_es`, :func:`decode_many`, ``indexer.hits``). The other fields are what Elasticsearch
searches or collapses on, derived from it and written with it:
``simhash``: unsigned ``u`` is stored as ``u - 2**64`` when ``u >= 2**63`` (see ``bits``).
``block_i``: the SimHash split into B blocks (:mod:`~indexer.fingerprints.blocks`; default four
of 16 bits, 4 hex digits), in every record; only an index that probes blocks maps them
(``indexer.mapping``), elsewhere they stay in ``_source``.
``band``: :func:`~indexer.fingerprints.bands.band_keys` of the sketch (16 keys of 10
characters by default), absent when ``token_count == 0``.
``exact_key``: a keyword, so that Elasticsearch's own ``collapse`` can use it.
``id``: :func:`encode_id` of the document's ``_id`` (standard padded base64 of its UTF-8
bytes), present only when the writer knew the ``_id`` (``to_es(doc_id)``,
``to_es_many(ids)``, ``to_es_json_many(ids)``); it lets a search read each hit's ``_id``
from doc values alone. Not part of the version, ignored when reading.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, model_validator

from indexer.fingerprints.bands import band_chars, band_keys, packed_band_keys
from indexer.fingerprints.bits import to_signed
from indexer.fingerprints.blocks import block_hex, split, split_many
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS
from indexer.fingerprints.packed import pack_base64, pack_many, unpack_many
from indexer.fingerprints.params import FingerprintParams

__all__ = [
    "RETIRED_FIELDS",
    "FingerprintArrays",
    "FingerprintRecord",
    "decode_id",
    "decode_many",
    "encode_id",
    "pack_minhash",
]

#: ``collapse_fp`` fields earlier generations stored beside ``packed`` (its values, twice).
#: A writer that merges a new record into a stored object (a partial update) sets those the
#: object holds to null, as nothing else would remove them.
RETIRED_FIELDS = ("minhash", "numbers")


def _le(bits: int) -> np.dtype:
    """Little-endian dtype of stored sketch values."""
    return np.dtype(value_dtype(bits)).newbyteorder("<")


def pack_minhash(values: np.ndarray | Sequence[int], bits: int) -> str:
    """Sketch -> base64 of its little-endian packed values."""
    return base64.b64encode(np.asarray(values, dtype=_le(bits)).tobytes()).decode("ascii")


def encode_id(doc_id: str) -> str:
    """``collapse_fp.id`` of a document: standard padded base64 of its ``_id``'s UTF-8 bytes
    (what Elasticsearch's ``docvalue_fields`` returns for the binary field, unchanged)."""
    return base64.b64encode(doc_id.encode("utf-8")).decode("ascii")


def decode_id(value: str) -> str:
    """The ``_id`` a ``collapse_fp.id`` value stands for (inverse of :func:`encode_id`)."""
    # binascii takes the ASCII str itself (anything else: TypeError; non-ASCII: ValueError)
    return binascii.a2b_base64(value, strict_mode=True).decode("utf-8")


class FingerprintRecord(BaseModel):
    """All fingerprint values of one document, with the parameters that produced them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    simhash: int = Field(ge=0, lt=1 << 64, description="unsigned SimHash-64")
    blocks: list[int] = Field(description="SimHash blocks, block 0 = least significant bits")
    minhash: list[int] = Field(description="b-bit MinHash sketch")
    numbers: list[int] = Field(description="number sketch: CELLS values of 24 bits")
    exact_key: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the token sequence")
    token_count: int = Field(ge=0)
    version: str
    params: FingerprintParams

    @model_validator(mode="after")
    def _consistent(self) -> FingerprintRecord:
        p = self.params
        if self.version != p.version:
            raise ValueError(f"version {self.version!r} does not match params {p.version!r}")
        if self.blocks != split(self.simhash, p.blocks):
            raise ValueError("blocks do not match simhash")
        if len(self.minhash) != p.minhash_size:
            raise ValueError(f"minhash has {len(self.minhash)} values, expected {p.minhash_size}")
        if any(not 0 <= v < 1 << p.minhash_bits for v in self.minhash):
            raise ValueError(f"minhash values must fit in {p.minhash_bits} bits")
        if len(self.numbers) != CELLS or any(not 0 <= v < 1 << 24 for v in self.numbers):
            raise ValueError(f"numbers must be {CELLS} values of 24 bits")
        return self

    @property
    def simhash_hex(self) -> str:
        """SimHash as 16 lowercase hex digits."""
        return format(self.simhash, "016x")

    @property
    def short(self) -> bool:
        """Too few tokens for a stable SimHash: group by exact key only (never if empty)."""
        return self.token_count < self.params.min_tokens

    def to_es(self, doc_id: str | None = None) -> dict[str, Any]:
        """The ``collapse_fp`` object stored in Elasticsearch (shape in the module docstring);
        with ``id`` when the document's ``_id`` is given."""
        doc: dict[str, Any] = {"version": self.version, "simhash": to_signed(self.simhash)}
        for i, b in enumerate(self.blocks):
            doc[f"block_{i}"] = block_hex(b, self.params.blocks)
        bits = self.params.minhash_bits
        if self.token_count > 0:
            sketch = np.asarray(self.minhash, dtype=_le(bits)).tobytes()
            doc["band"] = packed_band_keys(sketch, bits)
        doc["exact_key"] = self.exact_key
        doc["token_count"] = self.token_count
        doc["packed"] = pack_many(
            self.params,
            np.array([self.simhash], dtype=np.uint64),
            np.array([self.token_count]),
            [self.exact_key],
            np.array([self.minhash], dtype=value_dtype(bits)),
            np.array([self.numbers], dtype=np.uint32),
        )[0]
        if doc_id is not None:
            doc["id"] = encode_id(doc_id)
        return doc

    @classmethod
    def from_es(cls, doc: dict[str, Any], *, min_tokens: int = 9) -> FingerprintRecord:
        """Rebuild a record from a stored ``collapse_fp`` object: its ``packed`` value, checked
        against the fields derived from it that the object holds (``band`` aside); ValueError
        if malformed or they disagree."""
        params = FingerprintParams.from_version(doc["version"], min_tokens=min_tokens)
        got = unpack_many([doc.get("packed")], params)
        if not got.present[0]:
            raise ValueError("stored packed value is not a fingerprint of its version")
        simhash = int(got.simhash[0])
        record = cls(
            simhash=simhash,
            blocks=split(simhash, params.blocks),
            minhash=got.minhash[0].tolist(),
            numbers=got.numbers[0].tolist(),
            exact_key=got.exact_key_hex(0),
            token_count=int(got.token_count[0]),
            version=doc["version"],
            params=params,
        )
        derived = record.to_es()
        for name in derived.keys() & doc.keys() - {"band", "packed"}:
            if doc[name] != derived[name]:
                raise ValueError(f"stored {name} does not match the stored packed value")
        return record


@dataclass(frozen=True)
class FingerprintArrays:
    """Fingerprints of n documents as arrays, for batch indexing and query-time grouping.

    ``present`` is False for documents lacking a usable fingerprint (no ``collapse_fp``, or
    another version); their other entries are zero/empty and must be ignored.
    """

    params: FingerprintParams
    simhash: np.ndarray  # (n,) uint64
    minhash: np.ndarray  # (n, minhash_size) uint8 | uint16 | uint32
    numbers: np.ndarray  # (n, CELLS) uint32: number sketches
    exact_keys: list[str]  # n hex strings ("" when not present)
    token_count: np.ndarray  # (n,) int64
    present: np.ndarray  # (n,) bool

    def __len__(self) -> int:
        return len(self.simhash)

    @property
    def short(self) -> np.ndarray:
        """(n,) bool: below ``min_tokens``, group by exact key only."""
        return self.token_count < self.params.min_tokens

    @property
    def empty(self) -> np.ndarray:
        """(n,) bool: no tokens at all; such documents group with nothing."""
        return self.token_count == 0

    @property
    def blocks(self) -> np.ndarray:
        """(n, B) uint64 SimHash blocks."""
        return split_many(self.simhash, self.params.blocks)

    def record(self, i: int) -> FingerprintRecord:
        """Record of document ``i`` (built without re-validation: values are ours)."""
        p = self.params
        simhash = int(self.simhash[i])
        return FingerprintRecord.model_construct(
            simhash=simhash,
            blocks=split(simhash, p.blocks),
            minhash=self.minhash[i].tolist(),
            numbers=self.numbers[i].tolist(),
            exact_key=self.exact_keys[i],
            token_count=int(self.token_count[i]),
            version=p.version,
            params=p,
        )

    def records(self) -> list[FingerprintRecord]:
        """All records, in order."""
        return [self.record(i) for i in range(len(self))]

    def to_es_many(self, ids: Sequence[str | None] | None = None) -> list[dict[str, Any]]:
        """``[self.record(i).to_es(ids[i]) for i in range(n)]`` built straight from the arrays
        (``ids``: each document's ``_id``, None where unknown; no ``id`` at all without it).

        The bulk path's form: no per-document record, blocks and sketches encoded for the
        whole batch at once. Same values, same key order as :meth:`FingerprintRecord.to_es`.
        """
        p = self.params
        n = len(self)
        version = p.version
        signed = self.simhash.view(np.int64).tolist()
        names = [f"block_{i}" for i in range(p.blocks)]
        table = _hex_table(p.block_bits)
        blocks = split_many(self.simhash, p.blocks)
        if table is not None:
            hexes = [[table[b] for b in row] for row in blocks.tolist()]
        else:
            hexes = [[block_hex(b, p.blocks) for b in row] for row in blocks.tolist()]
        keys = self.exact_keys
        counts = self.token_count.tolist()
        bands = band_keys(self.minhash, p.minhash_bits)
        packed = pack_many(p, self.simhash, self.token_count, keys, self.minhash, self.numbers)
        if ids is not None and len(ids) != n:
            raise ValueError(f"{len(ids)} ids for {n} fingerprints")
        out: list[dict[str, Any]] = []
        for i in range(n):
            doc: dict[str, Any] = {"version": version, "simhash": signed[i]}
            doc.update(zip(names, hexes[i], strict=True))
            if counts[i] > 0:
                doc["band"] = bands[i]
            doc["exact_key"] = keys[i]
            doc["token_count"] = counts[i]
            doc["packed"] = packed[i]
            doc_id = ids[i] if ids is not None else None
            if doc_id is not None:
                doc["id"] = encode_id(doc_id)
            out.append(doc)
        return out

    def to_es_json_many(self, ids: Sequence[str] | None = None) -> list[bytes]:
        """``[orjson.dumps(d) for d in self.to_es_many(ids)]`` (compact JSON, same bytes),
        built without the dicts: the block fields of every document come from one table
        gather, the ``band`` fields from one array of fixed-width pieces (:func:`_band_json`),
        the ``packed`` values from two base64 calls (:func:`pack_base64`: ASCII, sliced).
        ``ids``: every document's ``_id`` (the bulk path knows them all), or None."""
        p = self.params
        n = len(self)
        if ids is not None and len(ids) != n:
            raise ValueError(f"{len(ids)} ids for {n} fingerprints")
        table = _block_json_table(p.blocks, p.block_bits)
        if table is None or n == 0:
            return [orjson.dumps(d) for d in self.to_es_many(ids)]
        blocks = split_many(self.simhash, p.blocks)  # (n, B), values < 2**block_bits
        rows = table[np.arange(p.blocks) * (1 << p.block_bits) + blocks.astype(np.int64)]
        packed = rows.reshape(n, -1).tobytes()  # each row: ',"block_0":"9d",...' (fixed width)
        w = len(packed) // n
        bands = _band_json(self.minhash, p.minhash_bits)
        bw = len(bands) // n
        packs = pack_base64(
            p, self.simhash, self.token_count, self.exact_keys, self.minhash, self.numbers
        )
        fixed, cells, pw = packs.fixed, packs.cells, packs.width
        ends = packs.ends
        starts = [0, *ends[:-1]] if ends else []
        head = b'{"version":' + orjson.dumps(p.version) + b',"simhash":%d%b%b'
        signed = self.simhash.view(np.int64).tolist()
        counts = self.token_count.tolist()
        keys = self.exact_keys
        tail = b',"exact_key":"%b","token_count":%d,"packed":"%b%b"'
        if ids is None:  # the last %b is then empty
            fmt = head + tail + b"%b}"
            last = [b""] * n
        else:
            fmt = head + tail + b',"id":"%b"}'
            last = [encode_id(doc_id).encode("ascii") for doc_id in ids]
        return [
            fmt
            % (
                signed[i],
                packed[i * w : (i + 1) * w],
                bands[i * bw : (i + 1) * bw] if counts[i] > 0 else b"",
                keys[i].encode("ascii"),
                counts[i],
                fixed[i * pw : (i + 1) * pw],
                cells[starts[i] : ends[i]],
                last[i],
            )
            for i in range(n)
        ]


_BAND_KEY = b',"band":'


def _band_json(minhash: np.ndarray, bits: int) -> bytes:
    """``,"band":["00..","01..",...]`` of every row, concatenated (each row the same width)."""
    chars = band_chars(minhash, bits)  # (n, nb, L)
    n, nb, width = chars.shape
    head = len(_BAND_KEY)
    seg = width + 3  # ,"<key>"
    out = np.empty((n, head + nb * seg + 1), dtype=np.uint8)
    out[:, :head] = np.frombuffer(_BAND_KEY, dtype=np.uint8)
    pieces = out[:, head : head + nb * seg].reshape(n, nb, seg)
    pieces[:, :, 0] = ord(",")
    pieces[:, 0, 0] = ord("[")
    pieces[:, :, 1] = pieces[:, :, -1] = ord('"')
    pieces[:, :, 2:-1] = chars
    out[:, -1] = ord("]")
    return out.tobytes()


_HEX_TABLES: dict[int, list[str]] = {}
_BLOCK_JSON: dict[tuple[int, int], np.ndarray] = {}


def _block_json_table(blocks: int, bits: int) -> np.ndarray | None:
    """(blocks * 2**bits, width) uint8: row ``j * 2**bits + v`` is ``,"block_j":"<hex v>"``
    padded to the same width per block (hex is zero-padded, so rows of one block are equal
    in length; blocks differ only by the digits of ``j``). None when not table-sized."""
    if bits > 16:
        return None
    key = (blocks, bits)
    table = _BLOCK_JSON.get(key)
    if table is None:
        heads = [f',"block_{j}":"'.encode("ascii") for j in range(blocks)]
        if len({len(x) for x in heads}) != 1:  # not one width (>= 10 blocks): no table
            return None
        digits = max(bits // 4, 1)  # as _hex_table pads them
        if (1 << bits) > 16**digits:  # rows of two widths
            return None
        values = np.arange(1 << bits, dtype=np.int64)
        shifts = 4 * np.arange(digits - 1, -1, -1, dtype=np.int64)
        hexes = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[(values[:, None] >> shifts) & 15]
        head = len(heads[0])
        table = np.empty((blocks, 1 << bits, head + digits + 1), dtype=np.uint8)
        table[:, :, :head] = np.frombuffer(b"".join(heads), dtype=np.uint8).reshape(blocks, 1, head)
        table[:, :, head:-1] = hexes
        table[:, :, -1] = ord('"')
        table = table.reshape(blocks << bits, -1)
        _BLOCK_JSON[key] = table
    return table


def _hex_table(bits: int) -> list[str] | None:
    """Zero-padded hex of every block value, for block widths up to 16 bits."""
    if bits > 16:
        return None
    table = _HEX_TABLES.get(bits)
    if table is None:
        table = _HEX_TABLES[bits] = [format(v, f"0{bits // 4}x") for v in range(1 << bits)]
    return table


def decode_many(
    docs: Sequence[dict[str, Any] | None], params: FingerprintParams | None = None
) -> FingerprintArrays:
    """Decode a page of stored ``collapse_fp`` objects into arrays: their ``packed`` values, in
    one :func:`~indexer.fingerprints.packed.unpack_many` call.

    Entries that are None, of a version other than ``params.version`` (default params if
    not given), or whose ``packed`` is missing or malformed are marked not present.
    """
    p = params or FingerprintParams()
    version = p.version
    got = unpack_many(
        [doc.get("packed") if doc and doc.get("version") == version else None for doc in docs],
        p,
    )
    return FingerprintArrays(
        params=p,
        simhash=got.simhash,
        minhash=got.minhash,
        numbers=got.numbers,
        exact_keys=got.exact_key_hexes(),
        token_count=got.token_count,
        present=got.present,
    )
