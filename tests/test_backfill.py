"""``indexer backfill`` on an index populated without fingerprints."""

from __future__ import annotations

from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

from indexer.cli import main
from indexer.fingerprints import FingerprintParams, fingerprint
from indexer.mapping import FINGERPRINT_FIELD
from tests.test_ingest import prose


def test_backfill_adds_missing_and_outdated_fingerprints(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    old = fingerprint(prose(7), FingerprintParams(shingle=3)).to_es()  # an older algorithm version
    docs = [
        {"_index": index_name, "_id": f"d{i}", "_source": {"body": prose(i), "title": f"t{i}"}}
        for i in range(1200)
    ]
    docs.append(
        {"_index": index_name, "_id": "old", "_source": {"body": prose(7), FINGERPRINT_FIELD: old}}
    )
    docs.append({"_index": index_name, "_id": "empty", "_source": {"title": "no body"}})
    assert (
        CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url]).exit_code == 0
    )
    helpers.bulk(es, docs, refresh=True)
    result = CliRunner().invoke(
        main, ["backfill", "--index", index_name, "--es-url", es_url, "--page-size", "250"]
    )
    assert result.exit_code == 0, result.output
    assert "scanned 1202, updated 1201, bands added 0, without text 1" in result.output
    es.indices.refresh(index=index_name)
    got = es.get(index=index_name, id="d5")["_source"]
    assert got[FINGERPRINT_FIELD] == fingerprint(got["title"] + "\n" + got["body"]).to_es()
    assert (
        es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]["version"]
        == FingerprintParams().version
    )
    # a second run finds nothing left to do (what makes it resumable)
    again = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert "scanned 1, updated 0, bands added 0, without text 1" in again.output
