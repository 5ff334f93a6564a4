"""Parallel ingestion on the real node: ingesters of one index share each host's stored model,
so parts of one input fingerprint as one run on the whole; ingesters starting together on a
missing index all proceed."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.boilerplate import BoilerplateConfig, Learner
from indexer.boilerplate_store import (
    DEFAULT_STORE,
    MODEL_KEY,
    ensure_store,
    load_models,
    model_version,
)
from indexer.checkpoint import held
from indexer.cli import main
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import ensure_index
from indexer.prepare import PrepareConfig, learn_batch
from indexer.sources import RawItem
from tests.test_ingest import prose

ROOT = Path(__file__).resolve().parent.parent
SITE = "man.example"
#: The two ingesters of a test, run as real processes, end within this (seconds).
BOUND = 240


def site_pages() -> list[dict[str, Any]]:
    """80 pages of one site (a shared header and footer, a 'related pages' line on some, a
    footer line on the later ones, each page's own text), 30 of another, interleaved."""
    rng = random.Random(16)
    header = f"{SITE} | Manuals | Search | About\n" + prose(900, 120)
    footer = prose(901, 60) + " Copyright 2026 the manual project"
    # a newer footer line, on the later pages only: furniture of the whole (42 of 80 pages),
    # not of the first half
    later = prose(902, 30) + "\n"
    docs: list[dict[str, Any]] = []
    for i in range(80):
        related = (
            f"Related pages: {prose(2000 + i, 4)}, {prose(3000 + i, 3)}\n"
            if rng.random() < 0.4
            else ""
        )
        docs.append(
            {
                "id": f"man-{i}",
                "url": f"https://{SITE}/page/{i}",
                "title": f"Page {i}",
                "body": f"{header}\n{related}{prose(i, 40 + 3 * i)}\n{later if i >= 38 else ''}"
                f"{footer}",
            }
        )
    other = prose(950, 150)
    for i in range(30):
        docs.insert(
            3 * i + 1,
            {
                "id": f"doc-{i}",
                "url": f"https://doc.example/{i}",
                "body": f"{other}\n{prose(500 + i, 60)}",
            },
        )
    return docs


def write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def ingesters(es_url: str, index: str, tmp_path: Path, parts: list[Path]) -> list[str]:
    """One ``indexer ingest`` process per part, started together; their outputs (all exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
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
                "1",
                "--rejects",
                str(tmp_path / f"{part.stem}.rejects.jsonl"),
                "--state",
                str(tmp_path / f".{part.stem}.state.json"),
                str(part),
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for part in parts
    ]
    outputs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=BOUND)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        assert proc.returncode == 0, out
        outputs.append(out)
    return outputs


def fingerprints(es: Elasticsearch, index: str) -> dict[str, str]:
    """Every document's ``collapse_fp`` as the JSON text Elasticsearch returns (keys in order)."""
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, source=[FINGERPRINT_FIELD]).body["hits"]["hits"]
    return {h["_id"]: json.dumps(h["_source"][FINGERPRINT_FIELD]) for h in hits}


def forget_models(es: Elasticsearch, *indices: str) -> None:
    """Remove the test indices' models from the shared store."""
    found = es.options(ignore_status=404).search(
        index=DEFAULT_STORE, query={"terms": {"index": list(indices)}}, size=1000
    )
    for hit in found.body.get("hits", {}).get("hits", []):
        es.delete(index=DEFAULT_STORE, id=hit["_id"], refresh=True)


def learnt_from(docs: list[dict[str, Any]]) -> str:
    """The version of the site's model learnt in-process from ``docs``."""
    config = PrepareConfig()
    items = [RawItem(i, "t", i + 1, "jsonl", json.dumps(d).encode()) for i, d in enumerate(docs)]
    learner = Learner(BoilerplateConfig())  # the CLI's defaults
    for host, sets in learn_batch(items, config):
        learner.add(host, sets)
    return model_version(learner.models()[SITE])


def test_two_ingesters_on_halves_after_learn_equal_one_ingester_on_the_whole(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    docs = site_pages()
    whole = write(tmp_path / "all.jsonl", docs)
    halves = [write(tmp_path / "a.jsonl", docs[:55]), write(tmp_path / "b.jsonl", docs[55:])]
    # what made the issue: each half on its own learns another model than the whole
    assert learnt_from(docs[:55]) != learnt_from(docs)
    one, parallel = f"{index_name}-one", index_name
    common = ["--es-url", es_url, "--workers", "0"]
    try:
        single = CliRunner().invoke(
            main,
            [
                "ingest",
                "--index",
                one,
                *common,
                "--rejects",
                str(tmp_path / "r"),
                "--state",
                str(tmp_path / "s"),
                str(whole),
            ],
        )
        assert single.exit_code == 0, single.output
        learnt = CliRunner().invoke(main, ["learn", "--index", parallel, *common, str(whole)])
        assert learnt.exit_code == 0, learnt.output
        version = learnt_from(docs)
        assert f"{SITE}: model {version} from 80 pages" in learnt.output
        outputs = ingesters(es_url, parallel, tmp_path, halves)
        assert all("stored before" in out for out in outputs), outputs
        got, want = fingerprints(es, parallel), fingerprints(es, one)
        assert len(want) == len(docs)
        assert got == want  # byte for byte, keys in the same order
        models = {json.loads(fp).get(MODEL_KEY) for i, fp in got.items() if i.startswith("man-")}
        assert models == {version}  # each document names the model it was fingerprinted with
    finally:
        es.options(ignore_status=404).indices.delete(index=one)
        forget_models(es, one, parallel)


def test_ingesters_starting_together_on_a_missing_index_share_one_model(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """No `learn` first: both create the index at once, and the first model stored for the
    site is the one both use (each learnt its own from its half)."""
    docs = site_pages()
    halves = [write(tmp_path / "a.jsonl", docs[::2]), write(tmp_path / "b.jsonl", docs[1::2])]
    try:
        outputs = ingesters(es_url, index_name, tmp_path, halves)
        assert all("indexed 55, rejected 0" in out for out in outputs), outputs
        got = fingerprints(es, index_name)
        assert len(got) == len(docs)
        version = PrepareConfig().params.version
        (stored,) = load_models(es, index_name, version, [SITE]).values()
        models = {json.loads(fp).get(MODEL_KEY) for i, fp in got.items() if i.startswith("man-")}
        assert models == {model_version(stored)}
        assert sum("stored before" in out for out in outputs) <= 1
    finally:
        forget_models(es, index_name)


def test_creating_what_another_creates_at_the_same_moment_is_success(
    es: Elasticsearch, index_name: str
) -> None:
    store = f"{index_name}-models"
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def create() -> None:
        try:
            start.wait(timeout=30)
            ensure_index(es, index_name)
            ensure_store(es, store)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors
        assert es.indices.exists(index=f"{index_name},{store}")
    finally:
        es.options(ignore_status=404).indices.delete(index=store)


def test_default_keeps_the_stored_model_and_relearn_replaces_it(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    docs = site_pages()
    whole, half = write(tmp_path / "all.jsonl", docs), write(tmp_path / "a.jsonl", docs[:55])
    common = ["--es-url", es_url, "--workers", "0", "--index", index_name]
    common += ["--rejects", str(tmp_path / "r"), "--state", str(tmp_path / "s")]
    version = PrepareConfig().params.version
    try:
        for path, flags in ((whole, []), (half, []), (half, ["--relearn"])):
            result = CliRunner().invoke(main, ["ingest", *common, *flags, str(path)])
            assert result.exit_code == 0, result.output
            stored = load_models(es, index_name, version, [SITE])[SITE]
            expected = learnt_from(docs if path == whole or not flags else docs[:55])
            assert model_version(stored) == expected, (path, flags)
            fp = json.loads(fingerprints(es, index_name)["man-3"])
            assert fp[MODEL_KEY] == expected
    finally:
        forget_models(es, index_name)


def test_an_ingester_refuses_a_state_file_another_run_holds(
    es_url: str, index_name: str, tmp_path: Path
) -> None:
    state = tmp_path / ".state.json"
    src = write(tmp_path / "a.jsonl", site_pages()[:3])
    with held(state):
        result = CliRunner().invoke(
            main,
            [
                "ingest",
                "--index",
                index_name,
                "--es-url",
                es_url,
                "--state",
                str(state),
                "--rejects",
                str(tmp_path / "r"),
                str(src),
            ],
        )
    assert result.exit_code == 2, result.output
    assert "own --state and --rejects" in result.output
    assert not (tmp_path / ".state.json.lock").exists()
