"""Documents Elasticsearch refuses, whichever process posts them: the rejects file names each
with its line and original, the counts add up, and the index holds the others once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from tests.test_ingest import prose

N = 230


def _input(path: Path) -> tuple[set[int], set[int]]:
    """N documents (some refused by the mapping, some malformed) with blank lines between;
    the line numbers of the refused and of the malformed ones."""
    lines: list[str] = []
    refused: set[int] = set()
    malformed: set[int] = set()
    for i in range(N):
        if i % 31 == 5:
            lines.append("")  # not a document
        if i % 17 == 3:
            lines.append(f'{{"id": "broken-{i}", "body": ')
            malformed.add(len(lines))
            continue
        doc = {"id": f"d{i}", "body": prose(i, 60), "url": f"https://h{i % 3}.example/{i}"}
        if i % 13 == 7:
            doc["price"] = "cheap"
            refused.add(len(lines) + 1)
        lines.append(json.dumps(doc))
    path.write_text("\n".join(lines) + "\n")
    return refused, malformed


@pytest.mark.parametrize("workers", ["0", "2"])
def test_refused_documents_are_rejects_in_every_phase(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path, workers: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"price": {"type": "integer"}}})
    src = tmp_path / "in.jsonl"
    refused, malformed = _input(src)
    rejects_path = tmp_path / "rejects.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "indexer",
            "ingest",
            "--index",
            index_name,
            "--es-url",
            es_url,
            "--workers",
            workers,
            "--no-progress",
            "--rejects",
            str(rejects_path),
            "--state",
            str(tmp_path / "state.json"),
            # the learning sample, the batches after it, chunks that straddle tasks
            "--boilerplate-sample",
            "40",
            "--batch-size",
            "16",
            "--chunk-size",
            "24",
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    good = N - len(refused) - len(malformed)
    assert run.returncode == 1, run.stderr
    assert f"read {N}, indexed {good}, rejected {N - good}" in run.stdout
    rejects = [json.loads(line) for line in rejects_path.read_text().splitlines()]
    by_line = {r["line"]: r for r in rejects}
    assert len(by_line) == len(rejects) == N - good
    assert {n for n, r in by_line.items() if r["reason"].startswith("malformed JSON")} == malformed
    refused_seen = {
        n for n, r in by_line.items() if r["reason"].startswith("rejected by Elasticsearch (400)")
    }
    assert refused_seen == refused
    lines = src.read_text().splitlines()
    for n in refused:
        assert by_line[n]["original"] == lines[n - 1]
        assert by_line[n]["id"] == json.loads(lines[n - 1])["id"]
        assert by_line[n]["source"] == str(src)
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == good
    assert not (tmp_path / "state.json").exists()
