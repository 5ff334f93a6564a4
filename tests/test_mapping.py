"""``indexer init`` and the collapse_fp mapping, on the real node."""

from __future__ import annotations

from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.cli import main
from indexer.fingerprints import FingerprintParams, fingerprint
from indexer.mapping import FINGERPRINT_FIELD, conflicts, fingerprint_mapping


def _fp(es: Elasticsearch, index: str) -> dict:
    body = es.indices.get_mapping(index=index).body[index]["mappings"]
    return body["properties"][FINGERPRINT_FIELD]["properties"]


def test_init_creates_index_with_fingerprint_fields(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert "created" in result.output
    fp = _fp(es, index_name)
    assert fp["simhash"] == {"type": "long", "index": False}
    assert {f"block_{i}" for i in range(8)} <= set(fp)
    assert all(fp[f"block_{i}"]["type"] == "keyword" for i in range(8))
    assert fp["minhash"]["type"] == "binary"
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
    assert "block_0" in _fp(es, index_name)


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
        assert _fp(es, f"{index_name}-2026")["block_7"]["type"] == "keyword"
    finally:
        es.indices.delete(index=f"{index_name}-2026")


def test_conflicts_detects_block_count() -> None:
    four = fingerprint_mapping(FingerprintParams(blocks=4))
    assert conflicts(four, FingerprintParams(blocks=8))
    assert conflicts(four, FingerprintParams(blocks=4)) == []
    assert conflicts({"type": "keyword"}) == [
        f"{FINGERPRINT_FIELD} is mapped as 'keyword', expected an object"
    ]


def test_unreachable_cluster_fails_fast_with_url() -> None:
    url = "http://127.0.0.1:9"
    result = CliRunner().invoke(main, ["init", "--index", "x", "--es-url", url])
    assert result.exit_code == 3
    assert url in result.output
