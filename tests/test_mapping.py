"""``indexer init`` and the collapse_fp mapping, on the real node."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.cli import main
from indexer.documents import DEFAULT_TEXT_FIELDS
from indexer.fingerprints import FingerprintParams, fingerprint
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import (
    META_KEY,
    conflicts,
    ensure_index,
    fingerprint_mapping,
    index_mappings,
)

pytestmark = pytest.mark.opensearch


def _object(es: Elasticsearch, index: str) -> dict:
    body = es.indices.get_mapping(index=index).body[index]["mappings"]
    return body["properties"][FINGERPRINT_FIELD]


def _fp(es: Elasticsearch, index: str) -> dict:
    return _object(es, index)["properties"]


def test_init_creates_index_with_fingerprint_fields(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert "created" in result.output
    fp = _fp(es, index_name)
    assert fp["simhash"] == {"type": "long", "index": False}
    assert not {f"block_{i}" for i in range(8)} & set(fp)  # in _source only
    assert _object(es, index_name)["dynamic"] == "false"
    assert fp["band"] == {"type": "keyword", "doc_values": False}
    # both read by the proxy's refills from doc values (binary has none by default); packed
    # is the sketches' one copy: no other field holds them
    assert fp["packed"] == {"type": "binary", "doc_values": True}
    assert fp["id"] == {"type": "binary", "doc_values": True}
    assert not {"minhash", "numbers"} & set(fp)
    assert fp["exact_key"]["type"] == "keyword"
    assert fp["token_count"]["type"] == "integer"
    assert fp["version"]["type"] == "keyword"
    # a stored record round-trips, and the user's fields are left to dynamic mapping
    rec = fingerprint("the quick brown fox jumps over the lazy dog " * 20)
    es.index(
        index=index_name,
        id="1",
        document={"title": "x", FINGERPRINT_FIELD: rec.to_es()},
        refresh=True,
    )
    assert es.indices.get_mapping(index=index_name).body[index_name]["mappings"]["properties"][
        "title"
    ]
    # running init again is fine
    again = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert again.exit_code == 0 and "compatible" in again.output


def test_init_adds_fields_to_existing_user_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0 and "updated" in result.output
    assert _fp(es, index_name)["band"] == {"type": "keyword", "doc_values": False}
    assert "block_0" not in _fp(es, index_name)


def test_init_refuses_differently_mapped_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    # what dynamic mapping makes of collapse_fp when documents arrive before init
    es.index(
        index=index_name,
        document={FINGERPRINT_FIELD: {"simhash": 5, "block_0": "ab"}},
        refresh=True,
    )
    before = es.indices.get_mapping(index=index_name).body
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 3
    assert "maps the fingerprint fields differently" in result.output
    assert "collapse_fp.block_0" in result.output
    assert es.indices.get_mapping(index=index_name).body == before


def test_init_pattern_creates_template(es: Elasticsearch, es_url: str, index_name: str) -> None:
    result = CliRunner().invoke(main, ["init", "--index", f"{index_name}-*", "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert f"template {index_name}: created" in result.output
    es.indices.create(index=f"{index_name}-2026")
    try:
        assert _fp(es, f"{index_name}-2026") == _fp_created(es, index_name)
    finally:
        es.indices.delete(index=f"{index_name}-2026")


def _fp_created(es: Elasticsearch, index_name: str) -> dict:
    """What ``init`` maps on a new index (created and dropped here)."""
    name = f"{index_name}-fresh"
    ensure_index(es, name)
    try:
        return _fp(es, name)
    finally:
        es.indices.delete(index=name)


def _other_layouts() -> dict[str, dict]:
    """``collapse_fp`` mappings that are not ours: layouts that never shipped (eight indexed
    8-bit blocks beside the bands), and one field each mapped otherwise."""
    ours = fingerprint_mapping()
    layouts = {}
    indexed_blocks = dict(ours, properties=dict(ours["properties"]))
    indexed_blocks["properties"].update({f"block_{i}": {"type": "keyword"} for i in range(8)})
    layouts["indexed blocks"] = indexed_blocks
    for name in ("packed", "id", "band", "fields"):
        props = {k: v for k, v in ours["properties"].items() if k != name}
        layouts[f"no {name}"] = dict(ours, properties=props)
    changed = {
        "band": {"type": "keyword"},
        "id": {"type": "binary"},
        "packed": {"type": "keyword"},
        "simhash": {"type": "long"},
    }
    for name, spec in changed.items():
        layouts[f"{name} {spec}"] = dict(ours, properties={**ours["properties"], name: spec})
    layouts["dynamic"] = {k: v for k, v in ours.items() if k != "dynamic"}
    sketches = {"minhash": {"type": "binary"}, "numbers": {"type": "binary"}}
    layouts["sh5"] = dict(ours, properties={**ours["properties"], **sketches})
    return layouts


def test_conflicts_accept_only_our_layout() -> None:
    assert conflicts(fingerprint_mapping()) == []
    assert conflicts(None) == []  # an index without collapse_fp: init adds it
    assert conflicts(fingerprint_mapping(FingerprintParams(blocks=4))) == []
    blocks = fingerprint_mapping(probe="blocks")
    assert conflicts(blocks) == [] == conflicts(blocks, probe="blocks")
    assert f"{FINGERPRINT_FIELD}.band is missing" in conflicts(blocks, probe="bands")
    for name, layout in _other_layouts().items():
        assert conflicts(layout), name
    assert conflicts({"type": "keyword"}) == [
        f"{FINGERPRINT_FIELD} is mapped as 'keyword', expected an object"
    ]
    assert conflicts(_other_layouts()["no packed"]) == [f"{FINGERPRINT_FIELD}.packed is missing"]
    assert conflicts(_other_layouts()["sh5"]) == [  # the sketches beside packed: a new index
        f"{FINGERPRINT_FIELD}.minhash is not ours",
        f"{FINGERPRINT_FIELD}.numbers is not ours",
    ]
    assert conflicts(_other_layouts()["id {'type': 'binary'}"]) == [
        f"{FINGERPRINT_FIELD}.id is mapped as binary without doc values, "
        "expected binary with doc values"
    ]
    assert f"{FINGERPRINT_FIELD}.block_4 is not ours" in conflicts(
        _other_layouts()["indexed blocks"]
    )


def test_init_refuses_other_layouts_and_says_how_to_rebuild(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """An index of another layout is refused, unchanged (exit 3): a new index is the way."""
    layouts = {"blocks": "indexed blocks", "nopacked": "no packed", "dv": "dynamic"}
    names = {f"{index_name}-{suffix}": _other_layouts()[name] for suffix, name in layouts.items()}
    try:
        for index, fp in names.items():
            es.indices.create(index=index, mappings={"properties": {FINGERPRINT_FIELD: fp}})
            before = es.indices.get_mapping(index=index).body
            result = CliRunner().invoke(main, ["init", "--index", index, "--es-url", es_url])
            assert result.exit_code == 3, result.output
            assert "maps the fingerprint fields differently" in result.output
            assert "create a new index with `indexer init --index NEW`" in result.output
            assert es.indices.get_mapping(index=index).body == before
    finally:
        es.options(ignore_status=404).indices.delete(index=",".join(names))


def test_init_of_another_version_calls_for_backfill(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Same layout, documents of another fingerprint version: init records this version and
    says to run backfill; a second init is quiet."""
    mappings = index_mappings(text_fields=DEFAULT_TEXT_FIELDS)
    mappings["_meta"][META_KEY]["version"] = "simhash-older-version"
    es.indices.create(index=index_name, mappings=mappings)
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert "documents of fingerprint version simhash-older-version" in result.output
    assert f"indexer backfill --index {index_name}" in result.output
    again = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert again.exit_code == 0 and "backfill" not in again.output


def test_new_index_keeps_blocks_in_source_only(es: Elasticsearch, index_name: str) -> None:
    """Blocks are stored but not indexed: a ``terms`` query on them matches nothing and
    fails nowhere; bands are found, and ``exists`` on them works without doc values."""
    assert ensure_index(es, index_name) == "created"
    fp = fingerprint("the quick brown fox jumps over the lazy dog " * 20).to_es()
    es.index(index=index_name, id="1", document={FINGERPRINT_FIELD: fp}, refresh=True)
    stored = es.get(index=index_name, id="1")["_source"][FINGERPRINT_FIELD]
    assert stored == fp and stored["block_0"] == fp["block_0"]
    assert set(_fp(es, index_name)) == {
        "simhash", "packed", "id", "band", "exact_key", "token_count", "version", "fields",
    }  # fmt: skip

    def hits(query: dict) -> list[str]:
        answer = es.search(index=index_name, query=query)
        assert answer["_shards"]["failed"] == 0
        return [h["_id"] for h in answer["hits"]["hits"]]

    assert hits({"terms": {f"{FINGERPRINT_FIELD}.block_0": [fp["block_0"]]}}) == []
    assert hits({"terms": {f"{FINGERPRINT_FIELD}.band": fp["band"][:3]}}) == ["1"]
    assert hits({"exists": {"field": f"{FINGERPRINT_FIELD}.band"}}) == ["1"]
    assert hits({"term": {f"{FINGERPRINT_FIELD}.exact_key": fp["exact_key"]}}) == ["1"]


def test_unreachable_cluster_fails_fast_with_url() -> None:
    url = "http://127.0.0.1:9"
    result = CliRunner().invoke(main, ["init", "--index", "x", "--es-url", url])
    assert result.exit_code == 3
    assert url in result.output
