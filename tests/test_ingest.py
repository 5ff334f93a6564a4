"""``indexer ingest`` on the real node: sources, rejects, summary, exit codes, HTML, ids."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.cli import main
from indexer.engine import padded_base64
from indexer.fingerprints import FingerprintParams, decode_id, to_unsigned, unpack_many
from indexer.fingerprints.bands import band_keys
from indexer.fingerprints.record import RETIRED_FIELDS
from indexer.hits import FINGERPRINT_FIELD

pytestmark = pytest.mark.opensearch

ID_FIELD = f"{FINGERPRINT_FIELD}.id"
PACKED_FIELD = f"{FINGERPRINT_FIELD}.packed"

WORDS = Path("/usr/share/common-licenses/GPL-3").read_text().split()


def prose(seed: int, n: int = 120) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def read_from_doc_values(
    es: Elasticsearch, index: str, fields: tuple[str, ...] = (ID_FIELD, PACKED_FIELD)
) -> tuple[dict[str, dict[str, Any]], int]:
    """Every document of ``index`` as the proxy's refills read it: ``stored_fields: "_none_"``
    and ``docvalue_fields`` only (no ``_id``, no ``_source``). Returns the documents with a
    ``collapse_fp.id``, by the ``_id`` it decodes to ({field: its single value}), and how many
    hits had none."""
    es.indices.refresh(index=index)
    answer = es.search(
        index=index,
        size=10_000,
        stored_fields="_none_",
        docvalue_fields=list(fields),
        track_total_hits=True,
    ).body
    assert answer["_shards"]["failed"] == 0, answer["_shards"]
    hits = answer["hits"]["hits"]
    assert len(hits) == answer["hits"]["total"]["value"]
    by_id: dict[str, dict[str, Any]] = {}
    without = 0
    for hit in hits:
        assert "_id" not in hit and "_source" not in hit  # nothing but doc values
        values = {name: value for name, (value,) in hit.get("fields", {}).items()}
        if ID_FIELD not in values:
            without += 1
            continue
        doc_id = decode_id(padded_base64(values.pop(ID_FIELD)))  # OpenSearch: unpadded
        assert doc_id not in by_id
        by_id[doc_id] = values
    return by_id, without


def assert_packed_holds(value: str, fp: dict[str, Any]) -> None:
    """``value`` (a ``collapse_fp.packed`` read back) is the stored ``collapse_fp`` object
    ``fp``'s record, and the values beside it are derived from it: simhash, token_count,
    exact key, the sketch's bands."""
    p = FingerprintParams.from_version(fp["version"])
    assert value == fp["packed"]
    got = unpack_many([value], p)
    assert got.present.tolist() == [True]
    assert int(got.simhash[0]) == to_unsigned(fp["simhash"])
    assert int(got.token_count[0]) == fp["token_count"]
    assert got.exact_key_hex(0) == fp["exact_key"]
    assert fp.get("band") == (
        band_keys(got.minhash, p.minhash_bits)[0] if fp["token_count"] else None
    )
    assert all(fp.get(name) is None for name in RETIRED_FIELDS)  # the sketches' one copy


def run(es_url: str, index: str, tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main,
        [
            "ingest",
            "--index",
            index,
            "--es-url",
            es_url,
            "--workers",
            "0",
            "--rejects",
            str(tmp_path / "rejects.jsonl"),
            "--state",
            str(tmp_path / "state.json"),
            *args,
        ],
    )
    return result.exit_code, result.output


def test_good_documents_are_indexed_with_fingerprints(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    src = tmp_path / "docs.jsonl"
    docs = [
        {
            "id": f"d{i}",
            "title": f"Doc {i}",
            "body": prose(i),
            "url": f"https://a.example/{i}",
            "lang": "en",
        }
        for i in range(20)
    ]
    docs.append({"title": "no id", "text": prose(99), "url": "https://a.example/x"})
    src.write_text("\n".join(json.dumps(d) for d in docs) + "\n\n")
    code, out = run(es_url, index_name, tmp_path, str(src))
    assert code == 0, out
    assert "read 21, indexed 21, rejected 0" in out
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == 21
    doc = es.get(index=index_name, id="d3")["_source"]
    assert doc["lang"] == "en" and doc["body"] == docs[3]["body"]
    assert set(doc[FINGERPRINT_FIELD]) >= {
        "simhash",
        "block_0",
        "block_3",
        "exact_key",
        "token_count",
        "version",
        "packed",
        "id",
    }
    assert_packed_holds(doc[FINGERPRINT_FIELD]["packed"], doc[FINGERPRINT_FIELD])
    # the id-less document got a stable content id: ingesting again does not duplicate it
    code, out = run(es_url, index_name, tmp_path, str(src))
    es.indices.refresh(index=index_name)
    assert code == 0 and es.count(index=index_name)["count"] == 21


def test_ingested_documents_carry_their_id_in_doc_values(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """Each document's ``_id`` and packed fingerprint are readable from doc values alone, for
    the learning sample's documents and those after it (the workers' two paths), whatever the
    id; the packed value holds the document's own stored values."""
    ids: list[Any] = ["plain", "dossier/été ☃", "a b?c#d%e", "日本/語", 42, "x" * 300]
    docs = [{"id": doc_id, "body": prose(200 + i)} for i, doc_id in enumerate(ids * 2)]
    for i, d in enumerate(docs[len(ids) :]):
        d["id"] = f"{d['id']}-{i}"
    docs.append({"title": "no id", "body": prose(299), "url": "https://a.example/x"})
    src = tmp_path / "ids.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    code, out = run(es_url, index_name, tmp_path, str(src), "--boilerplate-sample", "4")
    assert code == 0, out
    assert f"indexed {len(docs)}, rejected 0" in out
    es.indices.refresh(index=index_name)
    stored = {
        hit["_id"]: hit["_source"][FINGERPRINT_FIELD]
        for hit in es.search(index=index_name, size=100)["hits"]["hits"]
    }
    assert len(stored) == len(docs) and {"42", "dossier/été ☃", "42-4"} <= set(stored)
    slim, without = read_from_doc_values(es, index_name)
    assert without == 0
    assert set(slim) == set(stored)  # the content id of the id-less document too
    for doc_id, fp in stored.items():
        assert slim[doc_id] == {PACKED_FIELD: fp["packed"]}, doc_id
        assert_packed_holds(slim[doc_id][PACKED_FIELD], fp)


def test_bad_input_goes_to_rejects_and_nothing_is_lost(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"price": {"type": "integer"}}})
    src = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps({"id": "ok1", "body": prose(1)}).encode(),
        b'{"id": "broken", "body": ',  # malformed JSON
        json.dumps({"id": "notext", "title": "only a title"}).encode(),  # no text field
        b'{"id": "latin1", "body": "caf\xe9 ' + prose(2).encode() + b'"}',  # invalid UTF-8
        json.dumps({"id": "huge", "body": "word " * 5000}).encode(),  # over the size limit
        json.dumps({"id": "badprice", "body": prose(3), "price": "cheap"}).encode(),  # ES rejects
        json.dumps({"id": "ok2", "text": prose(4)}).encode(),
        b"[1, 2]",  # not an object
    ]
    src.write_bytes(b"\n".join(lines) + b"\n")
    code, out = run(es_url, index_name, tmp_path, str(src), "--max-doc-bytes", "10000")
    assert code == 1, out
    assert "read 8, indexed 2, rejected 6" in out
    rejects = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    by_line = {r["line"]: r for r in rejects}
    assert set(by_line) == {2, 3, 4, 5, 6, 8}
    assert (
        by_line[2]["reason"].startswith("malformed JSON")
        and by_line[2]["original"] == lines[1].decode()
    )
    assert by_line[3]["reason"].startswith("no text field")
    assert by_line[4]["reason"].startswith("invalid UTF-8")
    import base64

    assert base64.b64decode(by_line[4]["original_base64"]) == lines[3]
    assert "over the limit" in by_line[5]["reason"]
    assert (
        "rejected by Elasticsearch (400)" in by_line[6]["reason"] and by_line[6]["id"] == "badprice"
    )
    assert json.loads(by_line[6]["original"])["price"] == "cheap"
    assert by_line[8]["reason"].startswith("not a JSON object")
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == 2
    # a flag turns the exit status to 0
    code, out = run(
        es_url, index_name, tmp_path, str(src), "--max-doc-bytes", "10000", "--allow-rejects"
    )
    assert code == 0 and "rejected 6" in out


def test_html_folder_main_content_only(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    folder = tmp_path / "site"
    (folder / "news").mkdir(parents=True)
    article = "".join(f"<p>{prose(i, 40)}.</p>" for i in range(5))
    page = f"""<html><head><title>Big story</title>
<link rel="canonical" href="https://news.example/big-story"></head><body>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies</div>
<nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav>
<article><h1>Big story</h1>{article}</article>
<aside class="related"><h2>Related articles</h2><a href="/x">Markets rally as rates fall</a></aside>
<footer>Copyright 2026 Example Media Group. All rights reserved.</footer></body></html>"""
    (folder / "news" / "story.html").write_text(page)
    (folder / "notes.txt").write_text("not html")
    code, out = run(es_url, index_name, tmp_path, str(folder))
    assert code == 0, out
    assert "read 1, indexed 1" in out
    es.indices.refresh(index=index_name)
    hit = es.search(index=index_name)["hits"]["hits"][0]["_source"]
    assert hit["url"] == "https://news.example/big-story"
    assert hit["title"] == "Big story"
    assert prose(2, 40) in hit["body"]
    for furniture in ("cookies", "Sport", "Markets rally", "Copyright"):
        assert furniture not in hit["body"]


def test_unreachable_cluster_fails_fast(tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"body": prose(1)}) + "\n")
    code, out = run("http://127.0.0.1:9", "x", tmp_path, str(src))
    assert code == 3
    assert "http://127.0.0.1:9" in out


def test_usage_errors_exit_2(es_url: str, tmp_path: Path) -> None:
    code, _ = run(es_url, "x", tmp_path, str(tmp_path / "missing.jsonl"))
    assert code == 2
