"""``collapse_fp.packed``: the layout, its decoding of bad values, the three writers, and what
the real node stores and returns from doc values."""

from __future__ import annotations

import base64
import hashlib
import struct

import numpy as np
import orjson
import pytest
from elasticsearch import Elasticsearch, helpers
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import (
    FingerprintArrays,
    FingerprintParams,
    FingerprintRecord,
    Unpacked,
    decode_id,
    decode_many,
    fingerprint_arrays,
    pack_many,
    unpack_many,
)
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS
from indexer.fingerprints.packed import (
    HEADER_BYTES,
    MAP_BYTES,
    exact_key_hexes,
    fixed_bytes,
    pack_base64,
    record_bytes,
    tag_of,
    unpack_heads,
)
from indexer.hits import FINGERPRINT_FIELD, key_code
from indexer.mapping import ensure_index
from tests.test_ingest import ID_FIELD, PACKED_FIELD, prose

PARAMS = [
    FingerprintParams(),
    FingerprintParams(minhash_size=64, minhash_bits=16),
    FingerprintParams(minhash_size=32, minhash_bits=32),
    FingerprintParams(minhash_size=256, minhash_bits=16, blocks=4),
    FingerprintParams(minhash_size=8, minhash_bits=8, blocks=16, shingle=2),
]
IDS = [p.version for p in PARAMS]
TEXTS = ["", "one", "a b c d e f", prose(1, 30), prose(2, 200), prose(3, 600)]


def reference(
    p: FingerprintParams,
    simhash: int,
    token_count: int,
    key: str,
    sketch: list[int],
    numbers: list[int],
) -> bytes:
    """One record spelled out field by field (the layout table of ``packed.py``)."""
    fmt = {8: "B", 16: "H", 32: "I"}[p.minhash_bits]
    cell_map = sum(1 << c for c, v in enumerate(numbers) if v)
    fixed = (
        hashlib.blake2b(p.version.encode(), digest_size=4).digest()
        + struct.pack("<QI", simhash, token_count)
        + bytes.fromhex(key)
        + struct.pack(f"<{len(sketch)}{fmt}", *sketch)
        + cell_map.to_bytes(MAP_BYTES, "little")
    )
    fixed += b"\0" * (-len(fixed) % 3)
    return fixed + b"".join(v.to_bytes(3, "little") for v in numbers if v)


def arrays_of(p: FingerprintParams, texts: list[str] = TEXTS) -> FingerprintArrays:
    return fingerprint_arrays(texts, p)


def assert_same(got: Unpacked, arrays: FingerprintArrays, rows: list[int] | None = None) -> None:
    """The decoded rows ``rows`` (all by default) hold exactly ``arrays``' values."""
    rows = list(range(len(arrays))) if rows is None else rows
    assert got.present[rows].all()
    assert got.simhash[rows].tolist() == arrays.simhash.tolist()
    assert got.token_count[rows].tolist() == arrays.token_count.tolist()
    assert [got.exact_key_hex(i) for i in rows] == arrays.exact_keys
    assert got.minhash[rows].tolist() == arrays.minhash.tolist()
    assert got.minhash.dtype == value_dtype(arrays.params.minhash_bits)
    assert got.numbers[rows].tolist() == arrays.numbers.tolist()


# --- layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_round_trip_and_layout(p: FingerprintParams) -> None:
    arrays = arrays_of(p)
    values = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    size = fixed_bytes(p)
    assert size % 3 == 0 and HEADER_BYTES + p.minhash_size * p.minhash_bits // 8 < size
    stored = np.count_nonzero(arrays.numbers, axis=1).tolist()
    assert [len(v) for v in values] == [record_bytes(p, k) // 3 * 4 for k in stored]
    assert min(stored) == 0 < max(stored) < CELLS  # the texts give records of several lengths
    assert not any("=" in v for v in values)  # no padding: values join into one base64 text
    for i, value in enumerate(values):
        row = (
            int(arrays.simhash[i]),
            int(arrays.token_count[i]),
            arrays.exact_keys[i],
            arrays.minhash[i].tolist(),
            arrays.numbers[i].tolist(),
        )
        assert base64.b64decode(value) == reference(p, *row)
    packed = pack_base64(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    assert [packed.value(i).decode("ascii") for i in range(len(values))] == values
    assert (
        packed.fixed + packed.cells
        == b"".join(  # every fixed part, then every cell
            [base64.b64encode(base64.b64decode(v)[:size]) for v in values]
            + [base64.b64encode(base64.b64decode(v)[size:]) for v in values]
        )
    )
    assert_same(unpack_many(values, p), arrays)
    assert (
        pack_many(
            p,
            arrays.simhash[:0],
            arrays.token_count[:0],
            [],
            arrays.minhash[:0],
            arrays.numbers[:0],
        )
        == []
    )
    assert unpack_many([], p).present.shape == (0,)


def test_default_size_and_worked_example() -> None:
    p = FingerprintParams()
    assert (fixed_bytes(p), record_bytes(p), record_bytes(p, 0)) == (201, 738, 201) and tag_of(
        p.version
    ) == hashlib.blake2b(b"sh51-k4-blake2b-count-b4-mh128x8k4", digest_size=4).digest()
    key = "0123456789abcdef" * 4
    sketch = np.arange(128, dtype=np.uint8)[None, :]
    numbers = np.zeros((1, CELLS), dtype=np.uint32)
    numbers[0, [1, 2, 126]] = [0x010203, 0xFFFFFF, 7]
    (value,) = pack_many(
        p, np.array([2**64 - 1], dtype=np.uint64), np.array([600]), [key], sketch, numbers
    )
    raw = base64.b64decode(value)
    assert CELLS == 179 and len(value) == (201 + 9) // 3 * 4 and raw[:4] == tag_of(p.version)
    assert raw[4:12] == b"\xff" * 8 and raw[12:16] == (600).to_bytes(4, "little")
    assert raw[16:48] == bytes.fromhex(key) and raw[48:176] == bytes(range(128))
    # cells 1, 2, 126: a map of 23 bytes, then 2 bytes of padding to a multiple of 3
    assert raw[176:201] == bytes([0b110, *[0] * 14, 0b1000000, *[0] * 9])
    assert raw[201:] == b"\x03\x02\x01" + b"\xff\xff\xff" + b"\x07\0\0"
    empty = pack_many(p, np.array([1], np.uint64), np.array([9]), [key], sketch, numbers * 0)
    assert len(empty[0]) == 268 and unpack_many(empty, p).numbers.tolist() == [[0] * CELLS]


def test_exact_keys_must_be_digests() -> None:
    p = FingerprintParams()
    arrays = arrays_of(p, ["a b c"])
    for key in ("abcd", "abc", "", "zz" * 32):
        with pytest.raises(ValueError):
            pack_many(p, arrays.simhash, arrays.token_count, [key], arrays.minhash, arrays.numbers)


sketch_params = st.builds(
    FingerprintParams,
    minhash_size=st.sampled_from([8, 16, 64, 128]),
    minhash_bits=st.sampled_from([8, 16, 32]),
)


@st.composite
def batches(draw: st.DrawFn) -> tuple[FingerprintParams, tuple[np.ndarray, ...], list[str]]:
    p = draw(sketch_params)
    n = draw(st.integers(0, 12))
    simhash = draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n))
    counts = draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n))
    keys = [draw(st.binary(min_size=32, max_size=32)).hex() for _ in range(n)]
    top = (1 << p.minhash_bits) - 1
    flat = draw(
        st.lists(st.integers(0, top), min_size=n * p.minhash_size, max_size=n * p.minhash_size)
    )
    sketch = np.array(flat, dtype=value_dtype(p.minhash_bits)).reshape(n, p.minhash_size)
    cells = draw(st.lists(st.integers(0, 2**24 - 1), min_size=n * CELLS, max_size=n * CELLS))
    numbers = np.array(cells, dtype=np.uint32).reshape(n, CELLS)
    arrays = (np.array(simhash, dtype=np.uint64), np.array(counts, dtype=np.int64), sketch, numbers)
    return p, arrays, keys


@settings(max_examples=150, deadline=None)
@given(batches())
def test_any_values_round_trip(batch: tuple[FingerprintParams, tuple, list[str]]) -> None:
    p, (simhash, counts, sketch, numbers), keys = batch
    got = unpack_many(pack_many(p, simhash, counts, keys, sketch, numbers), p)
    assert got.present.all()
    assert got.simhash.tolist() == simhash.tolist()
    assert got.token_count.tolist() == counts.tolist()
    assert [got.exact_key_hex(i) for i in range(len(keys))] == keys
    assert got.minhash.tolist() == sketch.tolist()
    assert got.numbers.tolist() == numbers.tolist()
    assert got.key_codes().tolist() == [key_code(k) for k in keys]


# --- values that are not ours -----------------------------------------------------------------


def bad_values(p: FingerprintParams) -> list[object]:
    """Values a reader may meet that are not a packed fingerprint of ``p``."""
    cells = np.full((1, CELLS), 5, dtype=np.uint32)
    good = pack_many(
        p,
        np.array([7], dtype=np.uint64),
        np.array([9]),
        ["ab" * 32],
        np.ones((1, p.minhash_size)),
        cells,
    )[0]
    other = p.model_copy(update={"shingle": p.shingle + 1})  # same length, another tag
    (foreign,) = pack_many(
        other,
        np.array([7], dtype=np.uint64),
        np.array([9]),
        ["ab" * 32],
        np.ones((1, p.minhash_size)),
        cells,
    )
    assert len(foreign) == len(good) and foreign != good
    return [
        foreign,
        good[:-4],  # a record short
        good + "AAAA",  # a record long
        "*" + good[1:],  # not base64, right length
        good[:-8] + "AA==AAAA",  # padding inside
        "é" * len(good),  # not ASCII
        "",
        None,
        5,
        good.encode("ascii"),  # bytes, not the string doc values return
    ]


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_bad_values_are_not_present_and_spoil_nothing(p: FingerprintParams) -> None:
    arrays = arrays_of(p)
    values = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    bad = bad_values(p)
    for one in bad:  # each alone, then each among good rows
        alone = unpack_many([one], p)
        assert alone.present.tolist() == [False], one
        mixed = [*values[:2], one, *values[2:]]
        got = unpack_many(mixed, p)
        rows = [0, 1, *range(3, len(mixed))]
        assert_same(got, arrays, rows)
        assert not got.present[2] and got.simhash[2] == 0 and got.token_count[2] == 0
        assert not got.minhash[2].any() and got.exact_key_hex(2) == ""
        assert got.key_codes()[2] == -1
    everything = [*bad, *values]
    got = unpack_many(everything, p)
    assert got.present.tolist() == [False] * len(bad) + [True] * len(values)
    assert_same(got, arrays, list(range(len(bad), len(everything))))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_good_rows_survive_any_mix(data: st.DataObject) -> None:
    p = data.draw(st.sampled_from(PARAMS))
    arrays = arrays_of(p, TEXTS[:4])
    good = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    bad = bad_values(p)
    picks = data.draw(st.lists(st.integers(0, len(good) + len(bad) - 1), max_size=20))
    values = [good[i] if i < len(good) else bad[i - len(good)] for i in picks]
    got = unpack_many(values, p)
    assert got.present.tolist() == [i < len(good) for i in picks]
    assert exact_key_hexes(values, p) == [got.exact_key_hex(row) for row in range(len(values))]
    for row, i in enumerate(picks):
        if i < len(good):
            assert int(got.simhash[row]) == int(arrays.simhash[i])
            assert got.exact_key_hex(row) == arrays.exact_keys[i]
            assert got.minhash[row].tolist() == arrays.minhash[i].tolist()
        else:
            assert got.simhash[row] == 0 and not got.minhash[row].any()


def test_key_codes_are_the_proxys() -> None:
    p = FingerprintParams()
    arrays = arrays_of(p)
    values = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    got = unpack_many([*values, None], p)
    assert got.key_codes().tolist() == [key_code(k) for k in arrays.exact_keys] + [-1]
    assert got.key_codes().dtype == np.int64


# --- the writers ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_three_writers_agree_and_hold_the_records_values(p: FingerprintParams) -> None:
    arrays = arrays_of(p)
    ids = [f"doc-{i}" for i in range(len(arrays))]
    single = [r.to_es(i) for r, i in zip(arrays.records(), ids, strict=True)]
    many = arrays.to_es_many(ids)
    assert many == single
    assert arrays.to_es_json_many(ids) == [orjson.dumps(d) for d in many]
    assert arrays.to_es_json_many() == [orjson.dumps(d) for d in arrays.to_es_many()]
    for doc in many:
        keys = list(doc)
        assert keys[keys.index("token_count") + 1 :] == ["packed", "id"]
    assert [d["packed"] for d in arrays.to_es_many()] == [d["packed"] for d in many]  # no id in it
    assert_same(unpack_many([d["packed"] for d in many], p), arrays)
    # readers read it, and it alone: the record
    for record, doc in zip(arrays.records(), many, strict=True):
        assert FingerprintRecord.from_es(doc, min_tokens=p.min_tokens) == record
    assert not {"minhash", "numbers"} & set(many[0])
    got = decode_many(many, p)
    assert got.present.all()
    for name in ("simhash", "minhash", "numbers", "token_count"):
        assert getattr(got, name).tolist() == getattr(arrays, name).tolist()
    assert got.exact_keys == arrays.exact_keys
    alone = decode_many([{"version": p.version, "packed": d["packed"]} for d in many], p)
    assert alone.present.all() and alone.minhash.tolist() == arrays.minhash.tolist()
    without = decode_many([{k: v for k, v in d.items() if k != "packed"} for d in many], p)
    assert not without.present.any()


def test_one_record_packs_as_its_batch() -> None:
    """``to_es`` packs one row: the same bytes as the batch, wherever the row stands."""
    p = FingerprintParams(minhash_size=64, minhash_bits=16)
    arrays = arrays_of(p)
    batch = arrays.to_es_many()
    for i in range(len(arrays)):
        record = arrays.record(i)
        assert record.to_es()["packed"] == batch[i]["packed"]
        alone = fingerprint_arrays([TEXTS[i]], p).to_es_many()[0]["packed"]
        assert alone == batch[i]["packed"]


# --- on the real node -------------------------------------------------------------------------


@pytest.mark.parametrize("p", PARAMS[:3], ids=IDS[:3])
def test_doc_values_return_the_written_value(
    es: Elasticsearch, index_name: str, p: FingerprintParams
) -> None:
    """What ``init`` maps stores ``packed`` with doc values; a doc-values-only read returns
    the very strings written (the base64 Elasticsearch re-encodes is the same), which decode
    to the documents' own values."""
    assert ensure_index(es, index_name, p) == "created"
    arrays = arrays_of(p)
    ids = [f"d{i}" for i in range(len(arrays))]
    docs = arrays.to_es_many(ids)
    helpers.bulk(
        es,
        (
            {"_index": index_name, "_id": i, "_source": {FINGERPRINT_FIELD: d}}
            for i, d in zip(ids, docs, strict=True)
        ),
        refresh=True,
    )
    answer = es.search(
        index=index_name,
        size=len(ids),
        stored_fields="_none_",
        docvalue_fields=[PACKED_FIELD, ID_FIELD],
    ).body
    assert answer["_shards"]["failed"] == 0
    read = {
        decode_id(h["fields"][ID_FIELD][0]): h["fields"][PACKED_FIELD][0]
        for h in answer["hits"]["hits"]
    }
    assert read == {i: d["packed"] for i, d in zip(ids, docs, strict=True)}
    assert_same(unpack_many([read[i] for i in ids], p), arrays)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_heads_are_the_records_heads(data: st.DataObject) -> None:
    """The pre-filter's read of the header alone gives each record's SimHash and key code as
    the full read does, 0 and -1 for what is not a packed value."""
    p = data.draw(st.sampled_from(PARAMS))
    arrays = arrays_of(p, TEXTS[:4])
    good = pack_many(
        p, arrays.simhash, arrays.token_count, arrays.exact_keys, arrays.minhash, arrays.numbers
    )
    bad: list[object] = [None, 5, "", "*" + good[0][1:], "é" * len(good[0])]
    picks = data.draw(st.lists(st.integers(0, len(good) + len(bad) - 1), max_size=20))
    values = [good[i] if i < len(good) else bad[i - len(good)] for i in picks]
    simhash, codes = unpack_heads(values)
    full = unpack_many(good, p)
    assert simhash.dtype == np.uint64 and codes.dtype == np.int64
    assert simhash.tolist() == [int(full.simhash[i]) if i < len(good) else 0 for i in picks]
    assert codes.tolist() == [int(full.key_codes()[i]) if i < len(good) else -1 for i in picks]
