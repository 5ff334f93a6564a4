"""``indexer backfill`` on an index populated without fingerprints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

import indexer.backfill as backfill_module
from indexer.backfill import backfill
from indexer.boilerplate_store import MODEL_KEY, load_models
from indexer.cli import main
from indexer.fingerprints import (
    FingerprintParams,
    encode_id,
    fingerprint,
)
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index
from tests.test_ingest import (
    ID_FIELD,
    PACKED_FIELD,
    assert_packed_holds,
    prose,
    read_from_doc_values,
)
from tests.test_parallel_ingest import SITE, fingerprints, forget_models, learnt_from, site_pages

pytestmark = pytest.mark.opensearch


def test_backfill_adds_missing_and_outdated_fingerprints(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    old = fingerprint(prose(7), FingerprintParams(shingle=3)).to_es()  # an older algorithm version
    old.update(minhash="AAAA", numbers="AAAA")  # sketches an earlier generation stored beside
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
    assert "scanned 1202, updated 1201, ids added 0, without text 1" in result.output
    es.indices.refresh(index=index_name)
    got = es.get(index=index_name, id="d5")["_source"]
    assert got[FINGERPRINT_FIELD] == fingerprint(got["title"] + "\n" + got["body"]).to_es("d5")
    assert (
        es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]["version"]
        == FingerprintParams().version
    )
    # a second run finds nothing left to do (what makes it resumable)
    again = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert "scanned 1, updated 0, ids added 0, without text 1" in again.output
    slim, without = read_from_doc_values(es, index_name)
    assert without == 1  # the document without text has no fingerprint at all
    assert set(slim) == {f"d{i}" for i in range(1200)} | {"old"}
    assert slim["d5"] == {PACKED_FIELD: got[FINGERPRINT_FIELD]["packed"]}
    # the older version's fingerprint (and packed value, of its own tag) was replaced
    refingerprinted = es.get(index=index_name, id="old")["_source"][FINGERPRINT_FIELD]
    assert slim["old"] == {PACKED_FIELD: refingerprinted["packed"]}
    assert_packed_holds(slim["old"][PACKED_FIELD], refingerprinted)
    assert refingerprinted["minhash"] is None and refingerprinted["numbers"] is None


def without(fp: dict[str, Any], *names: str) -> dict[str, Any]:
    """A ``collapse_fp`` stored without ``names``."""
    return {k: v for k, v in fp.items() if k not in names}


def test_backfill_adds_the_missing_ids(es: Elasticsearch, index_name: str) -> None:
    """Current fingerprints without ``id`` (written with an id Elasticsearch generated) get it
    from their ``_id``, without reading text, with tokens or without."""
    ensure_index(es, index_name)
    docs = {"plain": prose(300), "dossier/été ☃": prose(301), "empty": "!!! ???"}
    fps = {doc_id: fingerprint(body).to_es() for doc_id, body in docs.items()}
    assert "id" not in fps["plain"] and fps["empty"]["token_count"] == 0
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
    assert (summary.scanned, summary.updated, summary.ids_added) == (3, 0, 3)
    assert (summary.corrected, summary.no_text, summary.conflicts, summary.failed) == (0, 0, 0, 0)
    slim, none = read_from_doc_values(es, index_name)
    assert none == 0 and set(slim) == set(fps)
    for doc_id, body in docs.items():
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == fingerprint(body).to_es(doc_id), doc_id
        assert stored["id"] == encode_id(doc_id)
        assert slim[doc_id] == {PACKED_FIELD: stored["packed"]}, doc_id
    again = backfill(es, index_name)
    assert (again.scanned, again.ids_added) == (0, 0)


def test_backfill_verify_rewrites_stale_ids_and_values_beside_packed(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Complete documents whose ``id`` or values beside ``packed`` (the record) disagree with
    it: a copy stored under a new ``_id`` by a reindex that kept ``collapse_fp.id``, and
    values left by partial updates of other writers. A plain run does not look at complete
    documents; ``--verify`` reads them all and rewrites exactly those from ``packed`` (and
    adds a missing ``id``); a document whose ``packed`` is unreadable fails."""
    ensure_index(es, index_name)
    bodies = {f"d{i}": prose(500 + i) for i in range(6)}
    fps = {doc_id: fingerprint(body).to_es(doc_id) for doc_id, body in bodies.items()}
    bodies["no-id"] = prose(510)
    fps["no-id"] = fingerprint(bodies["no-id"]).to_es()
    bodies["copy"], fps["copy"] = bodies["d0"], dict(fps["d0"])  # id still says d0
    for name in ("simhash", "exact_key", "token_count"):  # another document's values
        fps["d1"][name] = fps["d2"][name]
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
    assert (plain.scanned, plain.ids_added, plain.corrected, plain.verified) == (1, 1, 0, 0)
    es.indices.refresh(index=index_name)

    def run() -> str:
        result = CliRunner().invoke(
            main, ["backfill", "--index", index_name, "--es-url", es_url, "--verify"]
        )
        assert result.exit_code == 0, result.output
        return result.output

    out = run()
    assert "scanned 8, updated 0, ids added 0" in out
    assert "failed 0, stale values rewritten 3, found right 5" in out
    slim, none = read_from_doc_values(es, index_name)
    assert none == 0 and set(slim) == set(bodies)  # every id decodes to its own _id
    for doc_id, body in bodies.items():
        stored = es.get(index=index_name, id=doc_id)["_source"][FINGERPRINT_FIELD]
        assert stored == fingerprint(body).to_es(doc_id), doc_id
        assert_packed_holds(slim[doc_id][PACKED_FIELD], stored)
    assert "stale values rewritten 0, found right 8" in run()
    unreadable = dict(fps["d5"], packed=fps["d5"]["packed"][:-4])  # base64, but too short
    es.index(index=index_name, id="d5", document={FINGERPRINT_FIELD: unreadable}, refresh=True)
    failed = backfill(es, index_name, verify=True)
    assert (failed.scanned, failed.failed, failed.verified) == (8, 1, 7)


def test_backfill_updates_are_guarded(
    es: Elasticsearch, index_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document rewritten between the read and the update is left alone (409) and picked
    up by the next run."""
    ensure_index(es, index_name)
    older = FingerprintParams(shingle=3)
    bodies = {f"d{i}": prose(600 + i) for i in range(10)}
    helpers.bulk(
        es,
        (
            {
                "_index": index_name,
                "_id": doc_id,
                "_source": {"body": body, FINGERPRINT_FIELD: fingerprint(body, older).to_es()},
            }
            for doc_id, body in bodies.items()
        ),
        refresh=True,
    )
    real_pages = backfill_module._pages
    rewritten: list[str] = []

    def pages(es_: Elasticsearch, index: str, *rest: Any) -> Iterator[list[dict[str, Any]]]:
        for hits in real_pages(es_, index, *rest):
            if not rewritten:
                victim = hits[0]["_id"]
                source = es.get(index=index, id=victim)["_source"]
                es.index(index=index, id=victim, document={**source, "edited": True})
                rewritten.append(victim)
            yield hits

    monkeypatch.setattr(backfill_module, "_pages", pages)
    first = backfill(es, index_name)
    assert (first.updated, first.conflicts, first.failed) == (9, 1, 0)
    es.indices.refresh(index=index_name)
    victim = es.get(index=index_name, id=rewritten[0])["_source"]
    assert victim["edited"] is True and victim[FINGERPRINT_FIELD]["version"] == older.version
    monkeypatch.setattr(backfill_module, "_pages", real_pages)
    second = backfill(es, index_name)
    assert (second.scanned, second.updated, second.conflicts) == (1, 1, 0)
    victim = es.get(index=index_name, id=rewritten[0])["_source"]
    assert victim[FINGERPRINT_FIELD] == fingerprint(bodies[rewritten[0]]).to_es(rewritten[0])


def test_learn_from_the_index_then_backfill_all_fingerprints_as_ingest_does(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """Documents written by another loader have no host model until ``learn`` (without
    inputs) learns it from the index's own documents; ``backfill --all`` then gives every
    document the fingerprint ``ingest`` gives it from the same documents."""
    docs = site_pages()
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    ingested, loaded = f"{index_name}-ingested", f"{index_name}-loaded"
    common = ["--es-url", es_url]
    try:
        state = ["--rejects", str(tmp_path / "r.jsonl"), "--state", str(tmp_path / "s")]
        _cli(["ingest", *common, "--index", ingested, *state, str(src)])
        helpers.bulk(es, ({"_index": loaded, "_id": d["id"], "_source": d} for d in docs))
        es.indices.refresh(index=loaded)
        assert "updated 110" in _cli(["backfill", *common, "--index", loaded])

        def by_id(index: str) -> dict[str, dict[str, Any]]:
            return {i: json.loads(fp) for i, fp in fingerprints(es, index).items()}

        want = by_id(ingested)
        before = by_id(loaded)
        assert len(want) == len(before) == len(docs)
        assert not any(MODEL_KEY in fp for fp in before.values())  # no model stored yet
        assert before != want
        out = _cli(["learn", *common, "--index", loaded])
        site = learnt_from([d for d in docs if d["url"].startswith(f"https://{SITE}/")])
        assert f"read {len(docs)}," in out and f"{SITE}: model {site} from 80 pages" in out
        assert "updated 0" in _cli(["backfill", *common, "--index", loaded])  # all current
        assert "updated 110" in _cli(["backfill", *common, "--index", loaded, "--all"])
        assert by_id(loaded) == want
    finally:
        forget_models(es, ingested, loaded)
        es.options(ignore_status=404).indices.delete(index=[ingested, loaded])


def test_learn_without_inputs_needs_the_index(es_url: str, index_name: str) -> None:
    result = CliRunner().invoke(main, ["learn", "--es-url", es_url, "--index", index_name])
    assert result.exit_code != 0
    assert f"no index {index_name} to learn from" in result.output


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_learn_from_an_alias_stores_under_its_index_and_refuses_several(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """Models are stored and read under a concrete index's name: ``learn`` from an alias
    stores them under the index it names (where ``backfill`` finds them), and refuses a
    pattern that names several indices."""
    docs = site_pages()
    a, b, alias = f"{index_name}-a", f"{index_name}-b", f"{index_name}-alias"
    try:
        helpers.bulk(es, ({"_index": a, "_id": d["id"], "_source": d} for d in docs))
        es.indices.create(index=b)
        es.indices.refresh(index=a)
        es.indices.put_alias(index=a, name=alias)
        out = _cli(["learn", "--es-url", es_url, "--index", alias])
        assert f"(index {a}," in out
        assert SITE in load_models(es, a, FingerprintParams().version, [SITE])
        several = ["learn", "--es-url", es_url, "--index", f"{index_name}-*"]
        result = CliRunner().invoke(main, several)
        assert result.exit_code != 0
        assert f"names 2 indices ({a}, {b}): learn from one at a time" in result.output
        assert "updated 110" in _cli(["backfill", "--es-url", es_url, "--index", alias])
        assert all(fp.get(MODEL_KEY) for i, fp in _fps(es, a).items() if i.startswith("man-"))
    finally:
        forget_models(es, a)
        es.options(ignore_status=404).indices.delete(index=[a, b])


def _fps(es: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    return {i: json.loads(fp) for i, fp in fingerprints(es, index).items()}


def test_a_url_field_of_the_users_own_names_the_host_for_every_writer(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """An index whose documents keep their URL in ``page.link`` (``init --url-field``): host
    models are learnt and applied from it by ``ingest``, ``learn`` from the index, ``backfill``
    and the proxy's write path, giving the fingerprints that ``url`` gives in a default index
    (tagged with the url field); without the setting, the same index gets no model."""
    from collapse.app import create_app
    from collapse.settings import Settings
    from tests.conftest import ServerThread

    docs = site_pages()
    linked = []
    for d in docs:
        moved = {k: v for k, v in d.items() if k != "url"}
        moved["page"] = {"link": d["url"], "lang": "en"}
        linked.append(moved)
    names = {w: f"{index_name}-{w}" for w in ("plain", "ingest", "loaded", "proxy")}
    common = ["--es-url", es_url]
    try:
        for w in ("plain", "ingest"):
            src = tmp_path / f"{w}.jsonl"
            rows = docs if w == "plain" else linked
            src.write_text("".join(json.dumps(d) + "\n" for d in rows))
            state = ["--rejects", str(tmp_path / f"{w}.r"), "--state", str(tmp_path / f"{w}.s")]
            field = ["--url-field", "page.link"] if w == "ingest" else []
            out = _cli(["ingest", *common, "--index", names[w], *field, *state, str(src)])
            assert "records other" not in out
        want = _fps(es, names["plain"])
        got = _fps(es, names["ingest"])
        assert {i: fp.pop("fields") for i, fp in got.items()} == dict.fromkeys(
            want, "title,body,text;url=page.link"
        )
        assert got == want  # the same host models, from the other field
        assert any(fp.get(MODEL_KEY) for fp in want.values())

        loaded = names["loaded"]
        helpers.bulk(es, ({"_index": loaded, "_id": d["id"], "_source": d} for d in linked))
        es.indices.refresh(index=loaded)
        assert "url field: page.link" in _cli(
            ["init", *common, "--index", loaded, "--url-field", "page.link"]
        )
        out = _cli(["learn", *common, "--index", loaded])
        assert f"{SITE}: model" in out
        assert "updated 110" in _cli(["backfill", *common, "--index", loaded])
        assert _fps(es, loaded) == _fps(es, names["ingest"])

        # the proxy's write path reads the url field the index records
        key = "url-field-key-0123456789"
        _cli(["init", *common, "--index", names["proxy"], "--url-field", "page.link"])
        _cli(["learn", *common, "--index", names["proxy"], str(tmp_path / "ingest.jsonl")])
        doc = linked[5]
        with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=key))) as server:
            answer = httpx.put(
                f"{server.url}/{names['proxy']}/_doc/{doc['id']}",
                json={k: v for k, v in doc.items() if k != "id"},
                headers={"x-api-key": key},
            )
        assert answer.status_code == 201, answer.text
        assert _fps(es, names["proxy"])[doc["id"]] == _fps(es, names["ingest"])[doc["id"]]
        assert _fps(es, names["proxy"])[doc["id"]].get(MODEL_KEY)

        # the same documents read with the default url field: no host, no model
        out = _cli(["init", *common, "--index", loaded, "--url-field", "url"])
        assert "; url field" not in out and "(were title, body, text, url field: page.link)" in out
        assert "updated 110" in _cli(["backfill", *common, "--index", loaded])
        assert not any(fp.get(MODEL_KEY) or fp.get("fields") for fp in _fps(es, loaded).values())
    finally:
        forget_models(es, *names.values())
        es.options(ignore_status=404).indices.delete(index=list(names.values()))


def test_a_url_field_is_checked_like_a_text_field() -> None:
    from indexer.documents import TextFields

    fields = TextFields.of(["headline"], "meta.link")
    assert fields.host_of({"meta": {"link": "https://www.news.example/a"}}) == "news.example"
    assert fields.host_of({"url": "https://other.example/"}) is None
    assert TextFields.from_tag(fields.tag) == fields and fields.roots == {"headline", "meta"}
    assert TextFields.of(None, "url") is TextFields.of(None)
    for bad in ("", " link", "a..b", "a,b", "a;b"):
        result = CliRunner().invoke(main, ["init", "--index", "x", "--url-field", bad])
        assert result.exit_code == 2 and "--url-field" in result.output
