""" "Content seen?": ``indexer lookup`` and ``POST /{index}/_collapse/lookup`` on the real node."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from collapse.settings import Settings
from indexer.cli import main
from indexer.commands.lookup import lookup_command
from tests.test_boilerplate import corpus, template
from tests.test_ingest import prose, run

pytestmark = pytest.mark.opensearch


def _ingest(es: Elasticsearch, es_url: str, index: str, tmp_path: Path) -> str:
    src = tmp_path / "d.jsonl"
    docs = [{"id": f"d{i}", "title": f"T{i}", "body": prose(i, 200)} for i in range(50)]
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    code, output = run(es_url, index, tmp_path, str(src))
    assert code == 0, output
    es.indices.refresh(index=index)
    # a near-duplicate of d7: its title and body with a few words changed
    words = ("T7\n" + prose(7, 200)).split()
    words[30], words[90] = "changed", "edited"
    return " ".join(words)


def test_cli_lookup_finds_near_duplicate(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    text = _ingest(es, es_url, index_name, tmp_path)
    r = CliRunner().invoke(
        main, ["lookup", "--index", index_name, "--es-url", es_url, "--text", text]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert [m["id"] for m in out["matches"]] == ["d7"]
    assert out["matches"][0]["hamming"] <= 7 and out["matches"][0]["similarity"] > 0.7
    assert out["candidates"] < 50  # found through the band keys (terms lookups), not a scan
    unseen = CliRunner().invoke(
        main, ["lookup", "--index", index_name, "--es-url", es_url, "--text", prose(999, 200)]
    )
    assert json.loads(unseen.output)["matches"] == []


def test_proxy_lookup(
    es: Elasticsearch, es_url: str, proxy_url: str, index_name: str, tmp_path: Path
) -> None:
    text = _ingest(es, es_url, index_name, tmp_path)
    r = httpx.post(f"{proxy_url}/{index_name}/_collapse/lookup", json={"doc": {"body": text}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [m["_id"] for m in body["matches"]] == ["d7"]
    assert {"hamming", "similarity", "exact"} <= set(body["matches"][0])
    bad = httpx.post(f"{proxy_url}/{index_name}/_collapse/lookup", json={"doc": {"title": "only"}})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "illegal_argument_exception"


def test_cli_and_proxy_lookup_share_the_model_and_the_defaults(
    es: Elasticsearch, es_url: str, proxy_url: str, index_name: str, tmp_path: Path
) -> None:
    """A page inside a learned site template: both lookups leave the host's template out (the
    stored model), so only the page with the same content matches, with the same figures."""
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in corpus()))
    try:
        code, output = run(es_url, index_name, tmp_path, str(src))
        assert code == 0, output
        es.indices.refresh(index=index_name)
        head, foot = template("alpha.example", 1000)
        words = prose(1, 150).split()
        words[40] = "changed"
        doc = {"body": f"{head}\n{' '.join(words)}\n{foot}", "url": "https://alpha.example/new"}
        (tmp_path / "doc.json").write_text(json.dumps(doc))
        cli = CliRunner().invoke(
            main,
            [
                "lookup",
                "--index",
                index_name,
                "--es-url",
                es_url,
                "--doc",
                str(tmp_path / "doc.json"),
            ],
        )
        assert cli.exit_code == 0, cli.output
        r = httpx.post(f"{proxy_url}/{index_name}/_collapse/lookup", json={"doc": doc})
        assert r.status_code == 200, r.text
        proxy = r.json()
        from_cli = [
            (m["id"], m["hamming"], m["similarity"]) for m in json.loads(cli.output)["matches"]
        ]
        from_proxy = [(m["_id"], m["hamming"], m["similarity"]) for m in proxy["matches"]]
        assert [m[0] for m in from_cli] == ["alpha.example-1"]  # not the template's other pages
        assert from_proxy == from_cli
        assert proxy["fingerprint"]["simhash"] == json.loads(cli.output)["simhash"]
    finally:
        found = es.options(ignore_status=404).search(
            index="collapse-boilerplate", query={"term": {"index": index_name}}, size=100
        )
        for hit in found.body.get("hits", {}).get("hits", []):
            es.delete(index="collapse-boilerplate", id=hit["_id"], refresh=True)


def test_lookup_defaults_are_the_proxys() -> None:
    options = {p.name: p.default for p in lookup_command.params}
    settings = Settings()
    assert options["max_distance"] == settings.collapse_max_distance
    assert options["min_similarity"] == settings.collapse_min_similarity
