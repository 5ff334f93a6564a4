"""An ingestion killed part-way and run again with --resume indexes every document once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.checkpoint import Checkpoint, held
from indexer.cli import main
from tests.test_ingest import prose

ROOT = Path(__file__).resolve().parent.parent
N = 20_000  # enough that the run outlasts its first checkpoint saves (every 0.5 s)


def test_killed_then_resumed_indexes_each_document_once(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    src = tmp_path / "docs.jsonl"
    # no ids: the stable id is a hash of content and url
    src.write_text(
        "".join(
            json.dumps({"body": prose(i, 60), "url": f"https://r.example/{i}"}) + "\n"
            for i in range(N)
        )
    )
    state, rejects = tmp_path / "state.json", tmp_path / "rejects.jsonl"
    args = [
        "ingest",
        "--index",
        index_name,
        "--es-url",
        es_url,
        "--state",
        str(state),
        "--rejects",
        str(rejects),
        "--no-boilerplate",
        "--chunk-size",
        "20",
        "--workers",
        "1",
        str(src),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "indexer", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            cp = Checkpoint.load(state) if state.exists() else None
            if cp is not None and cp.done >= 300:
                break
            time.sleep(0.005)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_at = Checkpoint.load(state)
    assert killed_at is not None and 300 <= killed_at.done < N and not killed_at.finished
    result = CliRunner().invoke(main, [*args, "--resume"])
    assert result.exit_code == 0, result.output
    assert "settled by the earlier run" in result.output
    es.indices.refresh(index=index_name)
    assert es.count(index=index_name)["count"] == N
    assert not state.exists()  # a finished run leaves no state behind
    # read in the resumed run + settled earlier == all documents
    read = int(result.output.split("read ")[1].split(",")[0])
    assert read + killed_at.done >= N >= read


def test_resume_refuses_changed_inputs(es_url: str, index_name: str, tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"body": prose(1)}) + "\n")
    state = tmp_path / "state.json"
    Checkpoint(index=index_name, inputs=[], done=1).save(state)
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
            "--resume",
            "--workers",
            "0",
            str(src),
        ],
    )
    assert result.exit_code == 2
    assert "differ from the interrupted run" in result.output


def test_a_finished_run_leaves_no_state_in_the_current_folder(
    es_url: str, index_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"body": prose(i)}) + "\n" for i in range(20)))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(
        main, ["ingest", "--index", index_name, "--es-url", es_url, "--workers", "0", str(src)]
    )
    assert result.exit_code == 0, result.output
    assert [p.name for p in cwd.iterdir() if "state" in p.name] == []


def test_a_state_file_released_a_moment_later_is_taken(tmp_path: Path) -> None:
    """A killed run's workers may hold the state file's lock a moment longer: the next run
    waits for them instead of refusing (it refuses a run that keeps it: test_parallel_ingest)."""
    state = tmp_path / "state.json"
    taken = threading.Event()

    def brief() -> None:
        with held(state):
            taken.set()
            time.sleep(0.5)

    holder = threading.Thread(target=brief)
    holder.start()
    assert taken.wait(5)
    with held(state):  # would raise StateInUse without the wait
        pass
    holder.join()


def test_a_state_path_that_is_not_a_file_is_refused_and_left_as_it_is(
    es_url: str, index_name: str, tmp_path: Path
) -> None:
    """A device or a folder given as ``--state`` (``/dev/null``, say) would be replaced by the
    state file and then removed: refused before anything is read or written."""
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "body": prose(1, 60)}) + "\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    command = ["ingest", "--index", index_name, "--es-url", es_url, "--workers", "0"]
    for state in (fifo, folder):
        result = CliRunner().invoke(
            main, [*command, "--rejects", str(tmp_path / "r"), "--state", str(state), str(src)]
        )
        assert result.exit_code == 2, result.output
        assert "is not a regular file" in result.output or "is a directory" in result.output
    assert fifo.is_fifo() and folder.is_dir() and not list(folder.iterdir())
    assert not (tmp_path / "fifo.lock").exists()
