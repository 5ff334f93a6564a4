"""``scripts/load-demo`` against the real node: a demo index left by an older checkout (another
fingerprint version, which this code reads as not fingerprinted) is loaded afresh, a current one
is kept, and an index recording no version is never deleted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from elasticsearch import Elasticsearch

from indexer.fingerprints import FingerprintParams
from indexer.hits import META_KEY

ROOT = Path(__file__).resolve().parent.parent
DEMO_DOCS = sum(
    1 for f in (ROOT / "data" / "demo").glob("*.jsonl") for line in f.open() if line.strip()
)


def load_demo(es_url: str, index: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ES_URL": es_url, "DEMO_INDEX": index, "PYTHON": sys.executable}
    return subprocess.run(
        [str(ROOT / "scripts" / "load-demo")], env=env, capture_output=True, text=True, timeout=300
    )


def recorded_version(es: Elasticsearch, index: str) -> str | None:
    meta = es.indices.get_mapping(index=index)[index]["mappings"].get("_meta", {})
    return meta.get(META_KEY, {}).get("version")


def test_a_stale_demo_index_is_loaded_afresh_and_a_current_one_kept(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(
        index=index_name,
        mappings={"_meta": {META_KEY: {"text_fields": ["title", "body"], "version": "sh0-old"}}},
    )
    es.index(index=index_name, id="left-over", document={"body": "an old demo document"})
    first = load_demo(es_url, index_name)
    assert first.returncode == 0, first.stderr
    assert "sh0-old" in first.stderr and "deleting it" in first.stderr
    assert recorded_version(es, index_name) == FingerprintParams().version
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == DEMO_DOCS
    assert not es.exists(index=index_name, id="left-over")

    again = load_demo(es_url, index_name)
    assert again.returncode == 0, again.stderr
    assert "already has" in again.stdout and "deleting" not in again.stderr


def test_an_index_recording_no_version_is_not_deleted(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.index(index=index_name, id="theirs", document={"body": "a document of someone else"})
    es.indices.refresh(index=index_name)
    result = load_demo(es_url, index_name)
    assert "deleting" not in result.stderr
    assert es.exists(index=index_name, id="theirs")
