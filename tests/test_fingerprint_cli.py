"""`python -m indexer fingerprint`, in-process with click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from indexer.cli import main

D1 = "the crawler fetches each page and follows its links to new pages"
D2 = "the crawler fetches every page and follows its links to other pages"
TEXTBOOK = ["--shingle", "1", "--hash", "md5", "--weights", "presence"]


def test_fingerprint_text_textbook() -> None:
    res = CliRunner().invoke(main, ["fingerprint", *TEXTBOOK, "--text", D1])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["simhash"] == "93264c674404019d"
    assert out["blocks"] == ["019d", "4404", "4c67", "9326"]
    assert out["token_count"] == 12 and len(out["exact_key"]) == 64
    assert out["params"]["hash"] == "md5" and out["params"]["shingle"] == 1
    assert out["version"].startswith("sh6-k1-md5-presence-b4-")
    assert len(out["band"]) == 16 and [k[:2] for k in out["band"][:3]] == ["00", "01", "02"]


def test_fingerprint_reads_stdin_and_file(tmp_path: Path) -> None:
    runner = CliRunner()
    from_stdin = json.loads(runner.invoke(main, ["fingerprint"], input=D2).output)
    f = tmp_path / "d2.txt"
    f.write_text(D2, encoding="utf-8")
    from_file = json.loads(runner.invoke(main, ["fingerprint", str(f)]).output)
    assert from_stdin == from_file
    textbook = json.loads(runner.invoke(main, ["fingerprint", *TEXTBOOK], input=D2).output)
    assert textbook["simhash"] == "91060e274484039d"


def test_compare_two_texts(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["fingerprint", *TEXTBOOK, "--compare", "--text", D1, "--text", D2]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["hamming"] == 7
    assert 0 <= out["shared_bands"] <= 16
    assert out["jaccard"] == round(10 / 14, 4)
    assert 0.0 <= out["similarity"] <= 1.0
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(D1, encoding="utf-8")
    b.write_text(D2, encoding="utf-8")
    files = json.loads(
        CliRunner()
        .invoke(main, ["fingerprint", "--compare", "--shingle", "3", str(a), str(b)])
        .output
    )
    assert files["jaccard"] == round(1 / 3, 4)


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["fingerprint", "--compare", "--text", D1]).exit_code == 2
    assert runner.invoke(main, ["fingerprint", "--hash", "crc32", "--text", D1]).exit_code == 2
    assert runner.invoke(main, ["fingerprint", str(tmp_path / "missing.txt")]).exit_code == 2
