"""The user's own schema: the fields whose text is fingerprinted are named once per index
(``indexer init --text-field``), and every writer and lookup reads them from the index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.settings import Settings
from indexer.cli import main
from indexer.documents import (
    DEFAULT_TEXT_FIELDS,
    DocumentError,
    NoText,
    TextFields,
    document_text,
    string_fields,
)
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import META_KEY
from tests.conftest import ServerThread
from tests.test_ingest import prose

KEY = "text-fields-key-0123456789"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def ingest(es_url: str, index: str, tmp_path: Path, src: Path, *extra: str) -> tuple[int, str]:
    return cli(
        "ingest", "--index", index, "--es-url", es_url, "--workers", "0",
        "--rejects", str(tmp_path / f"{index}.rejects.jsonl"),
        "--state", str(tmp_path / f"{index}.state.json"),
        *extra, str(src),
    )  # fmt: skip


def story_copies(n: int) -> list[str]:
    """``n`` near-duplicate copies of one story: each with one word of its own changed."""
    words = prose(1, 160).split()
    out = []
    for i in range(n):
        copy = list(words)
        copy[10 + 13 * i] = f"changed{i}"
        out.append(" ".join(copy))
    return out


def news_documents() -> list[dict[str, Any]]:
    """Ten copies of one story and ten other articles, text in ``headline`` and ``content``."""
    docs = [
        {"id": f"copy-{i}", "headline": "Storm closes the harbour", "content": text}
        for i, text in enumerate(story_copies(10))
    ]
    docs += [
        {"id": f"other-{i}", "headline": f"Article {i}", "content": prose(100 + i, 160)}
        for i in range(10)
    ]
    return docs


def put_plain(es: Elasticsearch, index: str, docs: list[dict[str, Any]]) -> None:
    """The user's index as it is: their documents, no fingerprints."""
    for doc in docs:
        body = {k: v for k, v in doc.items() if k != "id"}
        es.index(index=index, id=doc["id"], document=body)
    es.indices.refresh(index=index)


def fingerprints(es: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=100)["hits"]["hits"]
    return {h["_id"]: h["_source"].get(FINGERPRINT_FIELD) for h in hits}


# --- the rules, without a node --------------------------------------------------------------


def test_named_fields_read_dot_paths_arrays_and_several_fields_in_order() -> None:
    fields = TextFields.of(["headline", "article.body", "tags"])
    doc = {
        "headline": "Big news",
        "article": {"body": "First part.", "author": "x"},
        "tags": ["one", "", "two"],
    }
    assert document_text(doc, fields) == "Big news\nFirst part.\none\ntwo"
    # an array of objects along the path, and a flattened dotted key, are followed too
    assert document_text({"article": [{"body": "a"}, {"body": "b"}]}, fields) == "a\nb"
    assert document_text({"article.body": "flat"}, fields) == "flat"
    # any one named field with text is a document; none is not
    assert document_text({"tags": ["only tags"]}, fields) == "only tags"
    with pytest.raises(NoText, match=r"'headline' or 'article\.body' or 'tags'"):
        document_text({"article": {"author": "x"}, "title": "t"}, fields)
    with pytest.raises(DocumentError, match=r"'article\.body' must be a string, got int"):
        document_text({"article": {"body": 3}}, fields)


def test_defaults_keep_their_rule_and_bad_names_are_refused() -> None:
    assert TextFields.of(None) == TextFields.of(["title", "body", "text"]) == DEFAULT_TEXT_FIELDS
    assert DEFAULT_TEXT_FIELDS.stored_tag is None
    assert TextFields.of(["content"]).stored_tag == "content"
    with pytest.raises(NoText):  # a title alone is not a document under the defaults
        document_text({"title": "only a title"})
    for bad in (["a,b"], [" a"], ["a..b"], [""], ["a", "a"]):
        with pytest.raises(ValueError):
            TextFields.of(bad)
    assert TextFields.of(["x", "title"]).html_field == "x"
    assert TextFields.of(["title", "content"]).html_field == "content"


def test_string_fields_names_what_documents_hold_most_often() -> None:
    docs = [{"headline": "h", "content": "c", "n": 3, "meta": {"by": "x"}} for _ in range(3)]
    docs.append({"headline": "h", "extra": ""})
    assert string_fields(docs)[:3] == ["headline", "content", "meta.by"]
    assert "n" not in string_fields(docs) and "extra" not in string_fields(docs)
    assert "meta.by" in string_fields(docs)


# --- on the real node ----------------------------------------------------------------------


@pytest.mark.es
def test_an_existing_index_named_fields_backfill_and_the_proxy_folds(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    docs = news_documents()
    put_plain(es, index_name, docs)
    code, out = cli(
        "init", "--index", index_name, "--es-url", es_url,
        "--text-field", "headline", "--text-field", "content",
    )  # fmt: skip
    assert code == 0, out
    assert "text fields: headline, content" in out
    meta = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["_meta"]
    assert meta[META_KEY]["text_fields"] == ["headline", "content"]

    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 0, out
    assert "scanned 20, updated 20" in out
    stored = fingerprints(es, index_name)
    assert all(fp and fp["fields"] == "headline,content" for fp in stored.values())
    # a second run finds nothing left to do
    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 0 and "scanned 0" in out, out

    with ServerThread(create_app(Settings(es_url=[es_url]))) as server:
        answer = httpx.post(
            f"{server.url}/{index_name}/_search",
            json={"query": {"match_all": {}}, "size": 20},
        ).json()
    hits = answer["hits"]["hits"]
    copies = [h for h in hits if h["_id"].startswith("copy-")]
    assert len(hits) == 11 and len(copies) == 1
    assert copies[0]["_collapse"]["folded"] == 9
    assert answer["hits"]["total"]["value"] == 20


@pytest.mark.es
def test_every_writer_fingerprints_the_same_text(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """``ingest``, the proxy's write path and ``backfill`` store byte-identical ``collapse_fp``
    for the same document in indices that name the same fields (a nested one among them)."""
    fields = ("--text-field", "headline", "--text-field", "article.body")
    doc = {
        "id": "same",
        "headline": "Harbour reopens",
        "article": {"body": prose(5, 140), "author": "A. Writer"},
        "body": "not one of the named fields: never fingerprinted",
    }
    names = {w: f"{index_name}-{w}" for w in ("ingest", "proxy", "backfill")}
    try:
        for name in names.values():
            code, out = cli("init", "--index", name, "--es-url", es_url, *fields)
            assert code == 0, out
        src = tmp_path / "doc.jsonl"
        src.write_text(json.dumps(doc) + "\n")
        code, out = ingest(es_url, names["ingest"], tmp_path, src)
        assert code == 0, out

        body = {k: v for k, v in doc.items() if k != "id"}
        settings = Settings(es_url=[es_url], write_api_key=KEY)
        with ServerThread(create_app(settings)) as server:
            answer = httpx.put(
                f"{server.url}/{names['proxy']}/_doc/same", json=body, headers={"x-api-key": KEY}
            )
        assert answer.status_code == 201, answer.text
        assert answer.headers["X-Collapse-Fingerprinted"] == "1"

        put_plain(es, names["backfill"], [doc])
        code, out = cli("backfill", "--index", names["backfill"], "--es-url", es_url)
        assert code == 0, out

        got = {w: fingerprints(es, name)["same"] for w, name in names.items()}
        assert got["ingest"] == got["proxy"] == got["backfill"]
        assert got["ingest"]["fields"] == "headline,article.body"
        # and it is the fingerprint of exactly those fields' text
        from indexer.fingerprints import fingerprint

        want = fingerprint(f"{doc['headline']}\n{doc['article']['body']}").to_es("same")
        assert {k: v for k, v in got["ingest"].items() if k != "fields"} == want
    finally:
        es.options(ignore_status=404).indices.delete(index=",".join(names.values()))


@pytest.mark.es
def test_a_run_that_finds_no_text_fails_and_names_the_fields(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    docs = news_documents()
    put_plain(es, index_name, docs)
    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 4, out
    assert "20 of 20 documents have no text in the fields fingerprinted (title, body, text)" in out
    assert "the documents have most often: " in out
    assert "headline" in out and "content" in out
    assert f"indexer init --index {index_name} --text-field" in out

    src = tmp_path / "news.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    fresh = f"{index_name}-ingest"
    try:
        code, out = ingest(es_url, fresh, tmp_path, src)
        assert code == 4, out
        assert "20 of 20 documents have no text" in out and "headline" in out
    finally:
        es.options(ignore_status=404).indices.delete(index=fresh)


@pytest.mark.es
def test_a_writer_given_other_fields_refuses_naming_both(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    code, out = cli("init", "--index", index_name, "--es-url", es_url, "--text-field", "content")
    assert code == 0, out
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"id": "1", "body": prose(1), "content": prose(2)}) + "\n")
    code, out = ingest(es_url, index_name, tmp_path, src, "--text-field", "body")
    assert code == 3, out
    assert "records the text fields content, but body were given" in out
    assert es.count(index=index_name)["count"] == 0
    # the same fields as recorded, or none, are accepted
    code, out = ingest(es_url, index_name, tmp_path, src, "--text-field", "content")
    assert code == 0, out


@pytest.mark.es
def test_ingest_names_the_fields_of_a_new_index_and_html_fills_the_first(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    pages = tmp_path / "site"
    pages.mkdir()
    text = prose(8, 150)
    (pages / "a.html").write_text(
        f"<html><head><title>Page A</title></head><body><article><p>{text}</p>"
        "</article></body></html>"
    )
    code, out = ingest(
        es_url, index_name, tmp_path, pages, "--text-field", "title", "--text-field", "page.main"
    )
    assert code == 0, out
    meta = es.indices.get_mapping(index=index_name)[index_name]["mappings"]["_meta"]
    assert meta[META_KEY]["text_fields"] == ["title", "page.main"]
    es.indices.refresh(index=index_name)
    (hit,) = es.search(index=index_name)["hits"]["hits"]
    assert hit["_source"]["page"]["main"].strip() == text
    assert hit["_source"]["title"] == "Page A"
    assert hit["_source"][FINGERPRINT_FIELD]["fields"] == "title,page.main"


@pytest.mark.es
def test_changing_the_fields_refingerprints_on_backfill(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    docs = [{"id": str(i), "body": prose(i, 100), "summary": prose(50 + i, 100)} for i in range(6)]
    src = tmp_path / "d.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    code, out = ingest(es_url, index_name, tmp_path, src)
    assert code == 0, out
    before = fingerprints(es, index_name)
    assert all("fields" not in fp for fp in before.values())  # the defaults: no tag

    code, out = cli("init", "--index", index_name, "--es-url", es_url, "--text-field", "summary")
    assert code == 0, out
    assert "text fields changed (were title, body, text)" in out
    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 0 and "scanned 6, updated 6" in out, out
    after = fingerprints(es, index_name)
    assert all(after[k]["simhash"] != before[k]["simhash"] for k in before)
    assert all(fp["fields"] == "summary" for fp in after.values())

    # and back to the defaults: the tag is cleared, not left behind
    code, out = cli(
        "init", "--index", index_name, "--es-url", es_url,
        "--text-field", "title", "--text-field", "body", "--text-field", "text",
    )  # fmt: skip
    assert code == 0, out
    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 0 and "scanned 6, updated 6" in out, out
    again = fingerprints(es, index_name)
    assert all(again[k]["simhash"] == before[k]["simhash"] for k in before)
    assert all(fp.get("fields") is None for fp in again.values())
    code, out = cli("backfill", "--index", index_name, "--es-url", es_url)
    assert code == 0 and "scanned 0" in out, out


@pytest.mark.es
def test_lookup_reads_the_documents_fields(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    docs = news_documents()
    put_plain(es, index_name, docs)
    cli("init", "--index", index_name, "--es-url", es_url,
        "--text-field", "headline", "--text-field", "content")  # fmt: skip
    assert cli("backfill", "--index", index_name, "--es-url", es_url)[0] == 0
    es.indices.refresh(index=index_name)
    probe = {"headline": docs[0]["headline"], "content": story_copies(12)[11]}
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(probe))
    code, out = cli("lookup", "--index", index_name, "--es-url", es_url, "--doc", str(path))
    assert code == 0, out
    found = {m["id"] for m in json.loads(out)["matches"]}
    assert found == {f"copy-{i}" for i in range(10)}

    with ServerThread(create_app(Settings(es_url=[es_url]))) as server:
        answer = httpx.post(f"{server.url}/{index_name}/_collapse/lookup", json={"doc": probe})
    assert answer.status_code == 200, answer.text
    assert {m["_id"] for m in answer.json()["matches"]} == found
