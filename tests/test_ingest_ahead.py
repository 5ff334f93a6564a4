"""The batches fingerprinted ahead while the host models are decided, on the real node.

``indexer ingest`` with workers fingerprints the batches after the learning sample as if no
host had a model, sends those whose hosts got none as soon as the models are known (before
the sample itself) and redoes the others with the models. Whatever the order they are sent
in, every document ends in the index with the fingerprint a run without workers gives it
(no batch is fingerprinted ahead there), and the rejects file and the summary are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from tests.test_ingest import prose
from tests.test_parallel_ingest import SITE, fingerprints, forget_models, site_pages

ROOT = Path(__file__).resolve().parent.parent


def _input(path: Path) -> None:
    """The site's first 60 pages (the learning sample), 64 pages of hosts without a model
    (what the workers fingerprint ahead), then such pages and pages of the site with its
    model in runs of 5 across batches of 8, with malformed lines, blank lines and documents
    without text among them, then the site's other 50 pages."""
    pages = site_pages()
    header = pages[0]["body"].split("\n")[0]
    lines = [json.dumps(d) for d in pages[:60]]
    for i in range(120):
        if i < 64 or i % 10 < 5:
            doc: dict[str, Any] = {"id": f"lone-{i}", "url": f"https://lone{i}.example/"}
            doc["body"] = prose(4000 + i, 80)
        else:
            doc = {"id": f"late-{i}", "url": f"https://{SITE}/late/{i}"}
            doc["body"] = f"{header}\n{prose(900, 120)}\n{prose(5000 + i, 70)}"
        lines.append(json.dumps(doc))
        if i % 23 == 4:
            lines.append('{"id": "broken", "body": ')
        if i % 29 == 9:
            lines.append("")
        if i % 31 == 13:
            lines.append(json.dumps({"id": f"empty-{i}", "url": "https://lone.example/"}))
    lines += [json.dumps(d) for d in pages[60:]]
    path.write_text("\n".join(lines) + "\n")


def _ingest(es_url: str, index: str, src: Path, tmp_path: Path, workers: str) -> tuple[str, str]:
    """One ``indexer ingest`` process: its summary line and its rejects file."""
    rejects = tmp_path / f"{index}.rejects.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "indexer",
            "ingest",
            "--index",
            index,
            "--es-url",
            es_url,
            "--workers",
            workers,
            "--boilerplate-sample",
            "60",
            "--batch-size",
            "8",
            "--chunk-size",
            "20",
            "--concurrent-requests",
            "1",  # the node indexes the requests in the order they are sent
            "--rejects",
            str(rejects),
            "--state",
            str(tmp_path / f".{index}.state.json"),
            str(src),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 1, run.stderr  # the malformed lines are rejected
    summary = run.stdout.split(" in ")[0] + run.stdout.split(")", 1)[1]
    return summary, rejects.read_text()


def _seq_no(es: Elasticsearch, index: str, doc_id: str) -> int:
    """The order in which the node indexed the document (its sequence number)."""
    found = es.search(index=index, query={"ids": {"values": [doc_id]}}, seq_no_primary_term=True)
    return int(found.body["hits"]["hits"][0]["_seq_no"])


def test_batches_fingerprinted_ahead_end_as_a_run_without_workers_gives_them(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    src = tmp_path / "in.jsonl"
    _input(src)
    ahead, serial = f"{index_name}-ahead", f"{index_name}-serial"
    try:
        summary, rejects = _ingest(es_url, ahead, src, tmp_path, "2")
        assert (summary, rejects) == _ingest(es_url, serial, src, tmp_path, "0")
        assert "boilerplate models for" in summary
        found = fingerprints(es, ahead)
        assert len(found) == 230
        assert found == fingerprints(es, serial)
        # the pages fingerprinted ahead went in before the sample's first page (the first
        # request held 20 of them); without workers, in input order
        assert _seq_no(es, ahead, "man-0") >= 20
        assert _seq_no(es, serial, "man-0") == 0
        # both kinds after the sample: pages fingerprinted with the site's model, and not
        late = [json.loads(fp) for doc_id, fp in found.items() if doc_id.startswith("late-")]
        lone = [json.loads(fp) for doc_id, fp in found.items() if doc_id.startswith("lone-")]
        assert late and all("model" in fp for fp in late)
        assert lone and not any("model" in fp for fp in lone)
    finally:
        es.options(ignore_status=404).indices.delete(index=[ahead, serial])
        forget_models(es, ahead, serial)
