"""``indexer backfill`` on an index populated without fingerprints."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

import indexer.backfill as backfill_module
from indexer.backfill import backfill
from indexer.cli import main
from indexer.fingerprints import (
    FingerprintParams,
    decode_id,
    encode_id,
    fingerprint,
    unpack_many,
)
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index, index_mappings
from tests.test_ingest import (
    ID_FIELD,
    PACKED_FIELD,
    assert_packed_holds,
    prose,
    read_from_doc_values,
)


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
    assert (
        "scanned 1202, updated 1201, bands added 0, ids added 0, packed added 0, without text 1"
        in result.output
    )
    es.indices.refresh(index=index_name)
    got = es.get(index=index_name, id="d5")["_source"]
    assert got[FINGERPRINT_FIELD] == fingerprint(got["title"] + "\n" + got["body"]).to_es("d5")
    assert (
        es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]["version"]
        == FingerprintParams().version
    )
    # a second run finds nothing left to do (what makes it resumable)
    again = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert (
        "scanned 1, updated 0, bands added 0, ids added 0, packed added 0, without text 1"
        in again.output
    )
    slim, without = read_from_doc_values(es, index_name)
    assert without == 1  # the document without text has no fingerprint at all
    assert set(slim) == {f"d{i}" for i in range(1200)} | {"old"}
    assert slim["d5"] == {PACKED_FIELD: got[FINGERPRINT_FIELD]["packed"]}
    # the older version's fingerprint (and packed value, of its own tag) was replaced
    refingerprinted = es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]
    assert slim["old"] == {PACKED_FIELD: refingerprinted["packed"]}
    assert_packed_holds(slim["old"][PACKED_FIELD], refingerprinted)


def without(fp: dict[str, Any], *names: str) -> dict[str, Any]:
    """A ``collapse_fp`` as a writer of before ``names`` existed stored it."""
    return {k: v for k, v in fp.items() if k not in names}


def test_backfill_adds_the_missing_ids(es: Elasticsearch, index_name: str) -> None:
    """Current fingerprints without ``id`` get it from their ``_id``, without reading text:
    written before ``id`` existed (or with a generated id), with no tokens, or with ``id`` in
    ``_source`` only (written before ``init`` mapped it: ``dynamic: false`` kept it out of the
    index; the update must not be a no-op). Bands and ``packed`` still missing come in the
    same update."""
    mappings = index_mappings()  # as init created indices before id (and packed)
    fp_mapping = mappings["properties"][FINGERPRINT_FIELD]["properties"]
    del fp_mapping["id"], fp_mapping["packed"]
    es.indices.create(index=index_name, mappings=mappings)
    ids = ["plain", "dossier/été ☃", "ahead", "unbanded"]
    docs = {doc_id: prose(300 + i) for i, doc_id in enumerate(ids)}
    fps = {doc_id: without(fingerprint(body).to_es(), "packed") for doc_id, body in docs.items()}
    fps["ahead"] = fingerprint(docs["ahead"]).to_es("ahead")  # id, packed in _source only
    del fps["unbanded"]["band"]
    docs["empty"] = "!!! ???"
    fps["empty"] = without(fingerprint(docs["empty"]).to_es(), "packed")
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
    assert (summary.packed_added, summary.no_text, summary.conflicts, summary.failed) == (
        0, 0, 0, 0
    )  # fmt: skip
    slim, none = read_from_doc_values(es, index_name)
    assert none == 0 and set(slim) == set(fps)
    for doc_id, body in docs.items():
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == fingerprint(body).to_es(doc_id), doc_id
        assert stored["id"] == encode_id(doc_id)
        assert slim[doc_id] == {PACKED_FIELD: stored["packed"]}, doc_id
    again = backfill(es, index_name)
    assert (again.scanned, again.ids_added, again.packed_added) == (0, 0, 0)


@pytest.mark.parametrize(
    "params",
    [FingerprintParams(), FingerprintParams(minhash_size=64, minhash_bits=16)],
    ids=["default", "64x16"],
)
def test_backfill_adds_packed_from_the_stored_values(
    es: Elasticsearch, index_name: str, params: FingerprintParams, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index created with the mapping of before ``packed`` (``minhash`` and ``id`` with doc
    values) whose documents were written without it: backfill maps ``packed`` and writes it,
    derived from the stored values alone (no text read), in the update that adds whatever
    else is missing; read back from doc values it decodes to each document's own values.
    One written by a newer writer before ``init`` mapped it (in ``_source`` only) is written
    again; one whose stored values cannot be read fails and is left alone."""
    mappings = index_mappings(params)  # the mapping init created before packed
    fp_mapping = mappings["properties"][FINGERPRINT_FIELD]["properties"]
    fp_mapping["minhash"] = {"type": "binary", "doc_values": True}
    del fp_mapping["packed"]
    es.indices.create(index=index_name, mappings=mappings)
    bodies = {f"d{i}": prose(400 + i, 30 if i % 4 == 0 else 120) for i in range(30)}
    bodies |= {"no-id": prose(450), "unbanded": prose(451), "empty": "!!! ???"}
    bodies |= {"ahead": prose(452), "bad-key": prose(453), "stale": prose(454)}
    records = {doc_id: fingerprint(body, params) for doc_id, body in bodies.items()}
    fps = {doc_id: without(r.to_es(doc_id), "packed") for doc_id, r in records.items()}
    fps["no-id"] = without(fps["no-id"], "id")
    del fps["unbanded"]["band"]
    assert fps["empty"]["token_count"] == 0
    fps["ahead"] = records["ahead"].to_es("ahead")
    fps["bad-key"]["exact_key"] = "not-a-digest"
    fps["stale"] = fingerprint(bodies["stale"], params.model_copy(update={"shingle": 3})).to_es()
    helpers.bulk(
        es,
        (
            {"_index": index_name, "_id": i, "_source": {"body": bodies[i], FINGERPRINT_FIELD: fp}}
            for i, fp in fps.items()
        ),
        refresh=True,
    )
    assert ensure_index(es, index_name, params) == "updated"  # packed mapped from here on
    bodies["complete"] = prose(455)
    records["complete"] = fingerprint(bodies["complete"], params)
    complete = {
        "body": bodies["complete"],
        FINGERPRINT_FIELD: records["complete"].to_es("complete"),
    }
    es.index(index=index_name, id="complete", document=complete, refresh=True)

    def fingerprinted(texts: list[str], *args: Any, **kwargs: Any) -> Any:
        assert texts == [bodies["stale"]], "text fingerprinted for a document of the version"
        return real(texts, *args, **kwargs)

    real = backfill_module.fingerprint_excluding
    monkeypatch.setattr(backfill_module, "fingerprint_excluding", fingerprinted)
    summary = backfill(es, index_name, params, page_size=10)
    monkeypatch.undo()
    # 30 + empty + ahead: packed only; no-id: id and packed; unbanded: bands and packed
    assert (summary.scanned, summary.updated, summary.banded) == (36, 1, 1)
    assert (summary.ids_added, summary.packed_added, summary.failed) == (1, 32, 1)
    assert (summary.no_text, summary.conflicts) == (0, 0)

    es.indices.refresh(index=index_name)
    answer = es.search(
        index=index_name,
        size=100,
        stored_fields="_none_",
        docvalue_fields=[PACKED_FIELD, ID_FIELD],
    ).body
    assert answer["_shards"]["failed"] == 0
    read = {
        decode_id(h["fields"][ID_FIELD][0]): h["fields"].get(PACKED_FIELD, [None])[0]
        for h in answer["hits"]["hits"]
    }
    assert read.pop("bad-key") is None  # failed: left as it was
    assert set(read) == set(records) - {"bad-key"}
    names = sorted(read)
    got = unpack_many([read[n] for n in names], params)
    assert got.present.all()
    assert got.simhash.tolist() == [records[n].simhash for n in names]
    assert got.token_count.tolist() == [records[n].token_count for n in names]
    assert [got.exact_key_hex(i) for i in range(len(names))] == [
        records[n].exact_key for n in names
    ]
    assert got.minhash.tolist() == [records[n].minhash for n in names]
    for doc_id in names:  # the whole object as a writer of today would store it
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == records[doc_id].to_es(doc_id), doc_id
    again = backfill(es, index_name, params)
    assert (again.scanned, again.failed, again.packed_added, again.ids_added) == (1, 1, 0, 0)


def test_backfill_verify_rewrites_stale_ids_packed_and_bands(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Complete documents whose ``id``, ``packed`` or ``band`` disagree with the rest: a copy
    stored under a new ``_id`` by a reindex that kept ``collapse_fp.id``, and values left by
    partial updates from writers that predate ``packed`` and ``band``. A plain run does not
    look at complete documents; ``--verify`` reads them all and rewrites exactly those."""
    ensure_index(es, index_name)
    bodies = {f"d{i}": prose(500 + i) for i in range(6)}
    fps = {doc_id: fingerprint(body).to_es(doc_id) for doc_id, body in bodies.items()}
    bodies["copy"], fps["copy"] = bodies["d0"], dict(fps["d0"])  # id still says d0
    fps["d1"]["packed"] = fps["d2"]["packed"]  # another document's values
    fps["d3"]["band"] = fps["d4"]["band"]
    helpers.bulk(
        es,
        (
            {"_index": index_name, "_id": i, "_source": {"body": bodies[i], FINGERPRINT_FIELD: fp}}
            for i, fp in fps.items()
        ),
        refresh=True,
    )
    plain = backfill(es, index_name)
    assert (plain.scanned, plain.corrected, plain.verified) == (0, 0, 0)

    def run() -> str:
        result = CliRunner().invoke(
            main, ["backfill", "--index", index_name, "--es-url", es_url, "--verify"]
        )
        assert result.exit_code == 0, result.output
        return result.output

    out = run()
    assert "scanned 7, updated 0, bands added 0, ids added 0, packed added 0" in out
    assert "failed 0, stale values rewritten 3, found right 4" in out
    slim, none = read_from_doc_values(es, index_name)
    assert none == 0 and set(slim) == set(bodies)  # every id decodes to its own _id
    for doc_id, body in bodies.items():
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == fingerprint(body).to_es(doc_id), doc_id
        assert_packed_holds(slim[doc_id][PACKED_FIELD], stored)
    assert "stale values rewritten 0, found right 7" in run()
