"""``indexer backfill`` on an index populated without fingerprints."""

from __future__ import annotations

from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

from indexer.backfill import backfill
from indexer.cli import main
from indexer.fingerprints import FingerprintParams, encode_id, fingerprint
from indexer.mapping import FINGERPRINT_FIELD, index_mappings
from tests.test_ingest import ID_FIELD, MINHASH_FIELD, prose, read_from_doc_values


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
    assert "scanned 1202, updated 1201, bands added 0, ids added 0, without text 1" in result.output
    es.indices.refresh(index=index_name)
    got = es.get(index=index_name, id="d5")["_source"]
    assert got[FINGERPRINT_FIELD] == fingerprint(got["title"] + "\n" + got["body"]).to_es("d5")
    assert (
        es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]["version"]
        == FingerprintParams().version
    )
    # a second run finds nothing left to do (what makes it resumable)
    again = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert "scanned 1, updated 0, bands added 0, ids added 0, without text 1" in again.output
    slim, without = read_from_doc_values(es, index_name)
    assert without == 1  # the document without text has no fingerprint at all
    assert set(slim) == {f"d{i}" for i in range(1200)} | {"old"}
    assert slim["d5"] == {MINHASH_FIELD: got[FINGERPRINT_FIELD]["minhash"]}


def test_backfill_adds_the_missing_ids(es: Elasticsearch, index_name: str) -> None:
    """Current fingerprints without ``id`` get it from their ``_id``, without reading text:
    written before ``id`` existed (or with a generated id), with no tokens, or with ``id`` in
    ``_source`` only (written before ``init`` mapped it: ``dynamic: false`` kept it out of the
    index; the update must not be a no-op). Bands still missing come in the same update."""
    mappings = index_mappings()  # as init created indices before id
    fp_mapping = mappings["properties"][FINGERPRINT_FIELD]["properties"]
    fp_mapping["minhash"] = {"type": "binary"}
    del fp_mapping["id"]
    es.indices.create(index=index_name, mappings=mappings)
    ids = ["plain", "dossier/été ☃", "ahead", "unbanded"]
    docs = {doc_id: prose(300 + i) for i, doc_id in enumerate(ids)}
    fps = {doc_id: fingerprint(body).to_es() for doc_id, body in docs.items()}
    fps["ahead"] = fingerprint(docs["ahead"]).to_es("ahead")  # id in _source, not indexed
    del fps["unbanded"]["band"]
    docs["empty"] = "!!! ???"
    fps["empty"] = fingerprint(docs["empty"]).to_es()
    assert fps["empty"]["token_count"] == 0
    helpers.bulk(
        es,
        (
            {"_index": index_name, "_id": i, "_source": {"body": docs[i], FINGERPRINT_FIELD: fp}}
            for i, fp in fps.items()
        ),
        refresh=True,
    )
    assert es.count(index=index_name, query={"exists": {"field": ID_FIELD}})["count"] == 0

    summary = backfill(es, index_name)
    assert (summary.scanned, summary.updated, summary.banded, summary.ids_added) == (5, 0, 1, 4)
    assert (summary.no_text, summary.conflicts, summary.failed) == (0, 0, 0)
    slim, without = read_from_doc_values(es, index_name, (ID_FIELD,))
    assert without == 0 and set(slim) == set(fps)
    for doc_id, body in docs.items():
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == fingerprint(body).to_es(doc_id), doc_id
        assert stored["id"] == encode_id(doc_id)
    again = backfill(es, index_name)
    assert (again.scanned, again.ids_added) == (0, 0)
