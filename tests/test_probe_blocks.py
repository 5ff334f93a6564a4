"""``indexer init --probe blocks``: the design card's four 16-bit SimHash block fields, indexed
and probed by the proxy beyond its window, on the real node."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.cli import main
from indexer.fingerprints import FingerprintParams, fingerprint
from indexer.fingerprints.bits import hamming
from indexer.hits import BAND_FIELD, FINGERPRINT_FIELD, block_field, probe_keys
from indexer.mapping import META_KEY
from tests.proxy_support import text, variants
from tests.test_ingest import run

pytestmark = [pytest.mark.es, pytest.mark.opensearch]

BLOCKS = frozenset({"blocks"})


def init(es_url: str, index: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["init", "--index", index, "--es-url", es_url, *args])
    return result.exit_code, result.output


def test_block_keys_are_the_stored_block_fields() -> None:
    """The probe derives a document's keys from its decoded SimHash: the values the writers
    store in ``block_0..3`` (4 hex digits each), under the fields the blocks index maps."""
    params = FingerprintParams()
    rec = fingerprint("the quick brown fox jumps over the lazy dog " * 20)
    stored = rec.to_es()
    sketch = np.array(rec.minhash, dtype=np.uint8)
    keys = probe_keys(rec.simhash, sketch, params, BLOCKS)
    assert keys == [(block_field(i), stored[f"block_{i}"]) for i in range(4)]
    assert all(len(v) == 4 for _, v in keys)
    both = probe_keys(rec.simhash, sketch, params, frozenset({"bands", "blocks"}))
    assert both == [(BAND_FIELD, b) for b in stored["band"]] + keys


def test_init_probe_blocks_maps_the_blocks_and_records_the_scheme(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    code, out = init(es_url, index_name, "--probe", "blocks")
    assert code == 0, out
    assert "probe: blocks" in out
    mapping = es.indices.get_mapping(index=index_name).body[index_name]["mappings"]
    props = mapping["properties"][FINGERPRINT_FIELD]["properties"]
    for i in range(4):
        assert props[f"block_{i}"] == {"type": "keyword", "doc_values": False}
    assert "block_4" not in props and "band" not in props  # band keys stay in _source
    assert mapping["_meta"][META_KEY]["probe"] == "blocks"
    # init again keeps the scheme; another scheme is refused and says how to rebuild
    code, out = init(es_url, index_name)
    assert code == 0 and "compatible" in out and "probe: blocks" in out
    code, out = init(es_url, index_name, "--probe", "bands")
    assert code == 3
    assert "probes blocks" in out and "--probe bands" in out


def _corpus(tmp_path: Path) -> tuple[Path, list[str]]:
    """A story (n=0), 30 unrelated documents on its topic (n=1..30), then 8 syndicated copies
    (n=31..38): with a window of 10 sorted by n, every copy lies beyond the window."""
    rng = random.Random(21)
    base = text(rng, 300, "earthquake")
    copies = variants(base, 8, rng, changes=1)
    docs: list[dict[str, Any]] = [{"id": "orig", "n": 0, "body": base}]
    docs += [{"id": f"u{i}", "n": 1 + i, "body": text(rng, 200, "earthquake")} for i in range(30)]
    docs += [{"id": f"c{i}", "n": 31 + i, "body": t} for i, t in enumerate(copies)]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return src, [f"c{i}" for i in range(8)]


def test_ingested_blocks_index_folds_copies_beyond_the_window_through_the_blocks(
    es: Elasticsearch, es_url: str, proxy_url: str, index_name: str, tmp_path: Path
) -> None:
    code, out = init(es_url, index_name, "--probe", "blocks")
    assert code == 0, out
    src, copies = _corpus(tmp_path)
    code, out = run(es_url, index_name, tmp_path, str(src))
    assert code == 0, out
    es.indices.refresh(index=index_name)

    stored = {
        h["_id"]: h["_source"][FINGERPRINT_FIELD]
        for h in es.search(index=index_name, size=100)["hits"]["hits"]
    }
    orig = stored["orig"]
    # Only the blocks find the copies here: the band field is not indexed in this index, and
    # every copy has its own exact key (so a probe by bands alone would find nothing).
    assert all(stored[c]["exact_key"] != orig["exact_key"] for c in copies)
    by_band = es.search(index=index_name, query={"terms": {BAND_FIELD: orig["band"]}})
    assert by_band["hits"]["total"]["value"] == 0
    should = [{"term": {block_field(i): orig[f"block_{i}"]}} for i in range(4)]
    by_block = es.search(
        index=index_name, query={"bool": {"should": should}}, size=100, source=False
    )
    assert {h["_id"] for h in by_block["hits"]["hits"]} >= {"orig", *copies}
    assert all(
        hamming(int(stored[c]["simhash"]) % (1 << 64), int(orig["simhash"]) % (1 << 64)) <= 24
        for c in copies
    )

    body = {"query": {"match": {"body": "earthquake"}}, "sort": [{"n": "asc"}], "size": 3}
    answer = httpx.post(
        f"{proxy_url}/{index_name}/_search",
        json=body,
        params={"collapse_window": 10, "collapse_members": 50, "collapse_explain": "true"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    out_body = answer.json()
    assert out_body["collapse"]["window"] == 10
    rep = out_body["hits"]["hits"][0]
    assert rep["_id"] == "orig"
    beyond = [m for m in rep["_collapse"]["members"] if m["found"] == "probe"]
    assert sorted(m["_id"] for m in beyond) == sorted(copies)
    assert rep["_collapse"]["folded"] == len(copies)
    assert all(m["block"] is not None and 0 <= m["block"] < 4 for m in beyond)

    # "content seen?" looks copies up by the same blocks, in the CLI and through the proxy
    copy_text = json.loads(src.read_text().splitlines()[-1])["body"]
    cli = CliRunner().invoke(
        main, ["lookup", "--index", index_name, "--es-url", es_url, "--text", copy_text]
    )
    assert cli.exit_code == 0, cli.output
    assert {"orig", *copies} <= {m["id"] for m in json.loads(cli.output)["matches"]}
    proxied = httpx.post(
        f"{proxy_url}/{index_name}/_collapse/lookup", json={"text": copy_text}, timeout=30
    )
    assert proxied.status_code == 200, proxied.text
    assert {"orig", *copies} <= {m["_id"] for m in proxied.json()["matches"]}


def test_backfill_writes_the_block_fields_of_a_blocks_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """A document indexed without fingerprints gets searchable block fields from backfill."""
    code, out = init(es_url, index_name, "--probe", "blocks")
    assert code == 0, out
    body = text(random.Random(3), 200, "harbour")
    es.index(index=index_name, id="1", document={"body": body}, refresh=True)
    result = CliRunner().invoke(main, ["backfill", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    es.indices.refresh(index=index_name)
    rec = fingerprint(body)
    found = es.search(
        index=index_name, query={"term": {block_field(2): rec.to_es()["block_2"]}}, source=False
    )
    assert [h["_id"] for h in found["hits"]["hits"]] == ["1"]


def test_the_proxy_write_path_writes_the_block_fields_of_a_blocks_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """A document indexed through the proxy's write path is found by its blocks."""
    from collapse.app import create_app
    from collapse.settings import Settings
    from tests.conftest import ServerThread

    code, out = init(es_url, index_name, "--probe", "blocks")
    assert code == 0, out
    body = text(random.Random(4), 200, "harbour")
    key = "probe-blocks-write-key-0123"
    with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=key))) as server:
        put = httpx.put(
            f"{server.url}/{index_name}/_doc/1",
            json={"body": body},
            params={"refresh": "true"},
            headers={"x-api-key": key},
            timeout=30,
        )
    assert put.status_code == 201, put.text
    block = fingerprint(body).to_es()["block_1"]
    found = es.search(index=index_name, query={"term": {block_field(1): block}}, source=False)
    assert [h["_id"] for h in found["hits"]["hits"]] == ["1"]
