"""MinHash band keys (``collapse_fp.band``): layout, the three serialisations, and what the real
node stores and finds through them (ingest, the write path, the mapping upgrade, backfill)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
import pytest
from elasticsearch import Elasticsearch

from indexer.boilerplate import fingerprint_excluding
from indexer.fingerprints import (
    FingerprintParams,
    FingerprintRecord,
    decode_many,
    fingerprint,
    unpack_many,
)
from indexer.fingerprints.bands import (
    BAND_ROWS,
    MAX_BANDS,
    band_count,
    band_keys,
    packed_band_keys,
)
from indexer.fingerprints.compute import fingerprint_arrays
from indexer.hits import FINGERPRINT_FIELD
from tests.conftest import ServerThread
from tests.test_ingest import prose
from tests.test_ingest import run as ingest

BAND = f"{FINGERPRINT_FIELD}.band"


def reference_keys(values: list[int], bits: int) -> list[str]:
    """The layout spelled out value by value (the slow definition the fast one must equal)."""
    nbytes = bits // 8
    out = []
    for b in range(min(MAX_BANDS, len(values) // BAND_ROWS)):
        digits = "".join(
            v.to_bytes(nbytes, "little").hex() for v in values[b * BAND_ROWS : (b + 1) * BAND_ROWS]
        )
        out.append(f"{b:02x}{digits}")
    return out


def old_shape(fp: dict[str, Any]) -> dict[str, Any]:
    """A ``collapse_fp`` without its bands (a writer that left them out)."""
    return {k: v for k, v in fp.items() if k != "band"}


#: How ``init`` maps ``band``.
BAND_MAPPING = {"type": "keyword", "doc_values": False}


def near_copy(text: str, every: int = 40) -> str:
    words = text.split()
    return " ".join("EDITED" if i % every == 7 else w for i, w in enumerate(words))


# --- layout ---------------------------------------------------------------------------------


def test_worked_example_and_band_count() -> None:
    m = np.zeros((1, 128), dtype=np.uint8)
    m[0, 8:12] = [0x9D, 0x03, 0xFF, 0x10]
    keys = band_keys(m, 8)[0]
    assert keys[2] == "029d03ff10"
    assert len(keys) == 16 and keys[0] == "0000000000" and keys[15] == "0f00000000"
    m16 = np.zeros((1, 64), dtype=np.uint16)
    m16[0, 8:12] = [0x9D, 0x03FF, 0xFFFF, 0x1000]
    assert band_keys(m16, 16)[0][2] == "029d00ff03ffff0010"  # little-endian per value
    assert packed_band_keys(m16.astype("<u2").tobytes(), 16) == band_keys(m16, 16)[0]
    assert band_count(FingerprintParams()) == 16
    assert band_count(FingerprintParams(minhash_size=32)) == 8
    assert band_count(FingerprintParams(minhash_size=1024)) == 16
    assert band_keys(np.zeros((0, 128), dtype=np.uint8), 8) == []


@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("size", [8, 32, 64, 128, 256])
def test_band_keys_equal_the_value_by_value_definition(bits: int, size: int) -> None:
    rng = np.random.default_rng(size * bits)
    dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]
    m = rng.integers(0, 1 << bits, size=(7, size), dtype=np.uint64).astype(dtype)
    fast = band_keys(m, bits)
    assert fast == [reference_keys(row, bits) for row in m.tolist()]
    le = np.dtype(dtype).newbyteorder("<")
    assert [packed_band_keys(np.asarray(row, dtype=le).tobytes(), bits) for row in m] == fast
    assert all(len(k) == 2 + 2 * BAND_ROWS * bits // 8 for row in fast for k in row)


def test_near_copies_share_bands_unrelated_texts_do_not() -> None:
    a = prose(11, 600)
    pairs = [(a, near_copy(a)), (prose(12, 600), near_copy(prose(12, 600), 60))]
    for x, y in pairs:
        bx, by = fingerprint(x).to_es()["band"], fingerprint(y).to_es()["band"]
        assert len(set(bx) & set(by)) >= 4, (bx, by)
        assert bx != by  # the copy differs somewhere
    unrelated = [fingerprint(prose(100 + i, 600)).to_es()["band"] for i in range(20)]
    for i in range(20):
        for j in range(i):
            assert not set(unrelated[i]) & set(unrelated[j])


# --- the stored object ----------------------------------------------------------------------


def test_to_es_places_band_after_the_blocks_and_only_with_tokens() -> None:
    texts = ["", "one two", prose(3, 30), prose(4, 400)]
    p = FingerprintParams()
    arrays = fingerprint_arrays(texts, p)
    docs = arrays.to_es_many()
    assert docs == [r.to_es() for r in arrays.records()]
    assert arrays.to_es_json_many() == [orjson.dumps(d) for d in docs]
    assert "band" not in docs[0]  # empty: no tokens, no key at all
    assert b'"band"' not in arrays.to_es_json_many()[0]
    for d, row in zip(docs[1:], arrays.minhash[1:].tolist(), strict=True):
        keys = list(d)
        assert keys[keys.index(f"block_{p.blocks - 1}") + 1] == "band"
        assert keys[keys.index("band") + 1] == "exact_key"
        assert d["band"] == reference_keys(row, 8)
    assert arrays.short[1]  # a document under min_tokens gets bands too
    # reading ignores bands: with or without them, the same record and arrays
    for d, rec in zip(docs, arrays.records(), strict=True):
        assert FingerprintRecord.from_es(d) == rec == FingerprintRecord.from_es(old_shape(d))
    with_b, without = decode_many(docs), decode_many([old_shape(d) for d in docs])
    assert with_b.present.all() and without.present.all()
    assert (with_b.minhash == without.minhash).all()


@pytest.mark.parametrize(
    "params",
    [
        FingerprintParams(minhash_bits=16, minhash_size=64),
        FingerprintParams(minhash_bits=32, minhash_size=32, blocks=4),
        FingerprintParams(blocks=1, minhash_size=256),
    ],
)
def test_three_serialisations_agree_for_other_widths(params: FingerprintParams) -> None:
    arrays = fingerprint_arrays(["", "x", prose(5, 200)], params)
    docs = arrays.to_es_many()
    assert docs == [r.to_es() for r in arrays.records()]
    assert arrays.to_es_json_many() == [orjson.dumps(d) for d in docs]
    assert len(docs[2]["band"]) == band_count(params)
    assert docs[2]["band"] == reference_keys(arrays.minhash[2].tolist(), params.minhash_bits)


def test_band_changes_no_version() -> None:
    assert FingerprintParams().version == "sh51-k4-blake2b-count-b4-mh128x8k4"
    assert fingerprint(prose(1)).to_es()["version"] == FingerprintParams().version


# --- on the real node -----------------------------------------------------------------------


def _terms(es: Elasticsearch, index: str, keys: list[str]) -> set[str]:
    answer = es.search(index=index, query={"terms": {BAND: keys}}, size=100, _source=False)
    return {h["_id"] for h in answer["hits"]["hits"]}


def test_ingest_stores_bands_the_probe_can_find(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    base = prose(21, 400)
    docs = [
        {"id": "orig", "body": base},
        {"id": "copy", "body": near_copy(base)},
        {"id": "other", "body": prose(22, 400)},
        {"id": "short", "body": "just a few words"},
        {"id": "empty", "body": "!!! ??? ..."},  # text, but no tokens
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    code, out = ingest(es_url, index_name, tmp_path, str(src))
    assert code == 0, out
    es.indices.refresh(index=index_name)
    mapping = es.indices.get_mapping(index=index_name).body[index_name]["mappings"]
    assert mapping["properties"][FINGERPRINT_FIELD]["properties"]["band"] == BAND_MAPPING
    got = {
        d["id"]: es.get(index=index_name, id=d["id"])["_source"][FINGERPRINT_FIELD] for d in docs
    }
    for doc_id in ("orig", "copy", "other", "short"):
        fp = got[doc_id]
        sketch = unpack_many([fp["packed"]], FingerprintParams()).minhash[0]
        assert fp["band"] == reference_keys(sketch.tolist(), 8), doc_id
        assert list(fp).index("band") == list(fp).index("block_3") + 1
    assert got["empty"]["token_count"] == 0 and "band" not in got["empty"]
    found = _terms(es, index_name, got["orig"]["band"])
    assert {"orig", "copy"} <= found and "other" not in found and "empty" not in found


def test_write_path_functions_store_bands(es: Elasticsearch, index_name: str) -> None:
    """What collapse/enrich.py does with indexer's functions: fingerprint_excluding, then
    ``arrays.record(i).to_es()`` into the document."""
    from indexer.mapping import ensure_index

    ensure_index(es, index_name)
    base = prose(31, 300)
    texts = [base, near_copy(base), prose(32, 300)]
    arrays, _ = fingerprint_excluding(texts, FingerprintParams(), [None] * 3)
    for i, text in enumerate(texts):
        fp = arrays.record(i).to_es()
        es.index(index=index_name, id=str(i), document={"body": text, FINGERPRINT_FIELD: fp})
    es.indices.refresh(index=index_name)
    stored = es.get(index=index_name, id="0")["_source"][FINGERPRINT_FIELD]
    assert stored["band"] == fingerprint(base).to_es()["band"]
    assert _terms(es, index_name, stored["band"]) == {"0", "1"}


@pytest.fixture
def proxy(es_url: str) -> Iterator[str]:
    from collapse.app import create_app
    from collapse.settings import Settings

    settings = Settings(es_url=[es_url], write_api_key="bands-key-0123456789")
    with ServerThread(create_app(settings)) as server:
        yield server.url


def test_proxy_write_path_stores_bands(es: Elasticsearch, index_name: str, proxy: str) -> None:
    from indexer.mapping import ensure_index

    ensure_index(es, index_name)
    body = prose(41, 200)
    put = httpx.put(
        f"{proxy}/{index_name}/_doc/1",
        json={"title": "t", "body": body},
        headers={"x-api-key": "bands-key-0123456789"},
        params={"refresh": "true"},
    )
    assert put.status_code == 201, put.text
    fp = es.get(index=index_name, id="1")["_source"][FINGERPRINT_FIELD]
    assert fp["band"] == fingerprint("t\n" + body).to_es()["band"]


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_a_hit_read_from_doc_values_is_probed_by_the_bands_the_indexer_stores(bits: int) -> None:
    """Its bands are derived from the decoded sketch, and must be the stored ones."""
    from indexer.fingerprints.bands import band_keys
    from indexer.hits import probe_keys

    rng = np.random.default_rng(bits)
    sketch = rng.integers(0, 2**bits, 128, dtype=np.uint64).astype(f"uint{bits}")
    params = FingerprintParams(minhash_bits=bits)
    derived = [key for _, key in probe_keys(0, sketch, params, frozenset({"bands"}))]
    assert derived == band_keys(sketch[None, :], bits)[0]
