"""MinHash band keys (``collapse_fp.band``): layout, the three serialisations, and what the real
node stores and finds through them (ingest, the write path, the mapping upgrade, backfill)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

import indexer.backfill as backfill_module
from indexer.boilerplate import fingerprint_excluding
from indexer.cli import main
from indexer.fingerprints import (
    FingerprintParams,
    FingerprintRecord,
    decode_many,
    encode_id,
    fingerprint,
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
from indexer.mapping import conflicts, fingerprint_mapping
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
    """A ``collapse_fp`` as stored before bands existed (nor ``packed``)."""
    return {k: v for k, v in fp.items() if k not in ("band", "packed")}


def old_mapping() -> dict[str, Any]:
    """The mapping of an index created before bands (blocks indexed, no ``band``)."""
    fp = fingerprint_mapping(indexed_blocks=True)
    del fp["properties"]["band"]
    return {"properties": {FINGERPRINT_FIELD: fp, "body": {"type": "text"}}}


#: How ``init`` maps ``band`` (also when it adds it to an index created before bands).
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


def test_to_es_places_band_after_minhash_and_only_with_tokens() -> None:
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
        assert keys[keys.index("minhash") + 1] == "band"
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
    assert FingerprintParams().version == "sh3-k4-blake2b-count-b8-mh128x8k4"
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
        sketch = np.frombuffer(base64.b64decode(fp["minhash"]), dtype=np.uint8)
        assert fp["band"] == reference_keys(sketch.tolist(), 8), doc_id
        assert list(fp).index("band") == list(fp).index("minhash") + 1
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


# --- mapping upgrade --------------------------------------------------------------------------


def test_conflicts_allow_missing_band_only() -> None:
    old = fingerprint_mapping()
    del old["properties"]["band"]
    assert conflicts(old) == []
    del old["properties"]["exact_key"]
    assert conflicts(old) == [f"{FINGERPRINT_FIELD}.exact_key is missing"]
    text = fingerprint_mapping()
    text["properties"]["band"] = {"type": "text"}
    assert conflicts(text) == [f"{FINGERPRINT_FIELD}.band is mapped as text, expected keyword"]


def test_init_adds_band_to_an_index_created_before_bands(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings=old_mapping())
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert f"index {index_name}: updated" in result.output
    props = es.indices.get_mapping(index=index_name).body[index_name]["mappings"]["properties"]
    assert props[FINGERPRINT_FIELD]["properties"]["band"] == BAND_MAPPING
    again = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert again.exit_code == 0 and f"index {index_name}: compatible" in again.output


def test_init_pattern_upgrades_matching_indices(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    concrete = f"{index_name}-old"
    es.indices.create(index=concrete, mappings=old_mapping())
    try:
        result = CliRunner().invoke(
            main, ["init", "--index", f"{index_name}-*", "--es-url", es_url]
        )
        assert result.exit_code == 0, result.output
        props = es.indices.get_mapping(index=concrete).body[concrete]["mappings"]["properties"]
        assert props[FINGERPRINT_FIELD]["properties"]["band"] == BAND_MAPPING
    finally:
        es.indices.delete(index=concrete)


def test_init_still_refuses_a_band_mapped_otherwise(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    # an old index that got band-carrying documents before init: dynamic mapping made it text
    es.indices.create(index=index_name, mappings=old_mapping())
    fp = fingerprint(prose(2)).to_es()
    es.index(index=index_name, id="1", document={FINGERPRINT_FIELD: fp}, refresh=True)
    before = es.indices.get_mapping(index=index_name).body
    assert (
        before[index_name]["mappings"]["properties"][FINGERPRINT_FIELD]["properties"]["band"][
            "type"
        ]
        == "text"
    )
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 3
    assert f"{FINGERPRINT_FIELD}.band is" in result.output
    assert es.indices.get_mapping(index=index_name).body == before


# --- backfill -----------------------------------------------------------------------------------


def _old_index(es: Elasticsearch, index: str, n: int) -> dict[str, dict[str, Any]]:
    """An index with the old mapping holding documents of the current version without bands,
    one empty document, one of an older version and one without a fingerprint."""
    es.indices.create(index=index, mappings=old_mapping())
    expected: dict[str, dict[str, Any]] = {}
    actions = []
    for i in range(n):
        body = prose(500 + i, 80 if i % 5 else 20)  # some short ones
        fp = fingerprint(body).to_es()
        expected[f"d{i}"] = fp
        actions.append(
            {
                "_index": index,
                "_id": f"d{i}",
                "_source": {"body": body, FINGERPRINT_FIELD: old_shape(fp)},
            }
        )
    empty = fingerprint("").to_es()
    assert "band" not in empty
    expected["empty"] = empty
    actions.append(
        {
            "_index": index,
            "_id": "empty",
            "_source": {"body": "", FINGERPRINT_FIELD: old_shape(empty)},
        }
    )
    older = old_shape(fingerprint(prose(7), FingerprintParams(shingle=3)).to_es())
    expected["older"] = fingerprint(prose(7)).to_es()
    actions.append(
        {"_index": index, "_id": "older", "_source": {"body": prose(7), FINGERPRINT_FIELD: older}}
    )
    expected["none"] = fingerprint(prose(8)).to_es()
    actions.append({"_index": index, "_id": "none", "_source": {"body": prose(8)}})
    helpers.bulk(es, actions, refresh=True)
    return expected


def test_backfill_adds_bands_from_the_stored_sketch(
    es: Elasticsearch, es_url: str, index_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _old_index(es, index_name, 130)
    # bands come from the stored sketch alone: no text is read, no boilerplate model loaded
    real = backfill_module.fingerprint_excluding

    def only_stale(texts: list[str], *args: Any, **kwargs: Any) -> Any:
        assert set(texts) <= {prose(7), prose(8)}, "text fingerprinted for a band-only document"
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(backfill_module, "fingerprint_excluding", only_stale)
    result = CliRunner().invoke(
        main, ["backfill", "--index", index_name, "--es-url", es_url, "--page-size", "50"]
    )
    assert result.exit_code == 0, result.output
    # the empty document has no bands to add: only its id
    assert (
        "scanned 133, updated 2, bands added 130, ids added 1, packed added 0, without text 0"
        in result.output
    )
    assert "changed meanwhile 0, failed 0" in result.output
    es.indices.refresh(index=index_name)
    props = es.indices.get_mapping(index=index_name).body[index_name]["mappings"]["properties"]
    assert props[FINGERPRINT_FIELD]["properties"]["band"] == BAND_MAPPING
    for doc_id, fp in expected.items():
        assert es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD] == {
            **old_shape(fp),
            **({"band": fp["band"]} if "band" in fp else {}),
            "packed": fp["packed"],
            "id": encode_id(doc_id),
        }, doc_id
    assert "band" not in es.get(index=index_name, id="empty")["_source"][FINGERPRINT_FIELD]
    found = _terms(es, index_name, expected["d3"]["band"])
    assert "d3" in found
    again = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert again.exit_code == 0, again.output
    assert "scanned 0, updated 0, bands added 0, ids added 0, packed added 0" in again.output


def test_backfill_band_updates_are_guarded(
    es: Elasticsearch, index_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document rewritten between the read and the band update is left alone (409) and
    picked up by the next run."""
    expected = _old_index(es, index_name, 10)
    real_pages = backfill_module._pages
    rewritten: list[str] = []

    def pages(es_: Elasticsearch, index: str, query: dict, *rest: Any) -> Iterator[list[dict]]:
        for hits in real_pages(es_, index, query, *rest):
            if query == backfill_module.incomplete_query(version) and not rewritten:
                victim = hits[0]["_id"]
                source = es.get(index=index, id=victim)["_source"]
                es.index(index=index, id=victim, document={**source, "edited": True})
                rewritten.append(victim)
            yield hits

    version = FingerprintParams().version
    monkeypatch.setattr(backfill_module, "_pages", pages)
    first = backfill_module.backfill(es, index_name)
    assert rewritten and first.conflicts == 1 and first.failed == 0
    assert first.banded == 9 and first.updated == 2
    es.indices.refresh(index=index_name)
    victim = es.get(index=index_name, id=rewritten[0])["_source"]
    assert victim["edited"] is True and "band" not in victim[FINGERPRINT_FIELD]
    monkeypatch.setattr(backfill_module, "_pages", real_pages)
    second = backfill_module.backfill(es, index_name)
    assert (second.scanned, second.banded, second.conflicts) == (1, 1, 0)
    es.indices.refresh(index=index_name)
    victim = es.get(index=index_name, id=rewritten[0])["_source"]
    assert victim[FINGERPRINT_FIELD]["band"] == expected[rewritten[0]]["band"]


def test_backfill_counts_an_unreadable_sketch_as_failed(es: Elasticsearch, index_name: str) -> None:
    es.indices.create(index=index_name, mappings=old_mapping())
    fp = old_shape(fingerprint(prose(9)).to_es())
    fp["minhash"] = base64.b64encode(b"short").decode()
    es.index(index=index_name, id="bad", document={"body": prose(9), FINGERPRINT_FIELD: fp})
    es.indices.refresh(index=index_name)
    s = backfill_module.backfill(es, index_name)
    assert (s.scanned, s.banded, s.failed) == (1, 0, 1)


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_a_hit_read_from_doc_values_is_probed_by_the_bands_the_indexer_stores(bits: int) -> None:
    """Its bands are derived from the decoded sketch, and must be the stored ones."""
    from indexer.fingerprints.bands import band_keys
    from indexer.hits import SLIM_KEY, probe_keys

    rng = np.random.default_rng(bits)
    sketch = rng.integers(0, 2**bits, 128, dtype=np.uint64).astype(f"uint{bits}")
    derived = [key for _, key in probe_keys({SLIM_KEY: "packed"}, 8, sketch, bits)]
    assert derived == band_keys(sketch[None, :], bits)[0]
