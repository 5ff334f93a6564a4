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
    assert out["version"].startswith("sh51-k1-md5-presence-b4-")
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


LISTING = (
    "Apple iPhone 15 Pro {gb} Unlocked, Renewed Premium. Ships free in 2 days with a one year "
    "warranty from the seller."
)
REFORMATTED = (
    "Apple iPhone 15 Pro 128GB (Unlocked) Renewed Premium - ships free in two days, with a "
    "one-year warranty from the seller."
)


def _compare(*args: str) -> dict[str, object]:
    res = CliRunner().invoke(main, ["fingerprint", "--compare", *args])
    assert res.exit_code == 0, res.output
    out: dict[str, object] = json.loads(res.output)
    return out


def test_compare_gives_the_rules_verdict_and_what_decided_it() -> None:
    """The verdict is the grouping rule's at the proxy's defaults: a re-punctuated listing
    folds, the same listing with another capacity does not (its numbers), a five-word text is
    compared by exact key only."""
    original = LISTING.format(gb="128GB")
    copy = _compare("--text", original, "--text", REFORMATTED)
    assert copy["near_duplicate"] is True and copy["numbers_agree"] is True
    assert copy["exact_match"] is False
    other = _compare("--text", original, "--text", LISTING.format(gb="256GB"))
    assert other["near_duplicate"] is False and other["numbers_agree"] is False
    assert "numbers conflict" in str(other["reason"])
    assert float(str(other["similarity"])) >= float(str(other["similarity_needed"]))
    short = _compare(
        "--text",
        "Der schnelle braune Fuchs springt.",
        "--text",
        "Der schnelle braune Fuchs sprang.",
    )
    assert short["near_duplicate"] is False and short["similarity_needed"] is None
    assert "exact key only" in str(short["reason"])
    same = _compare(
        "--text",
        "Der schnelle braune Fuchs springt.",
        "--text",
        "der  SCHNELLE braune Fuchs springt",
    )
    assert same["near_duplicate"] is True and "exact keys" in str(same["reason"])


def test_compare_thresholds_change_the_verdict() -> None:
    original = LISTING.format(gb="128GB")
    strict = _compare("--min-similarity", "0.99", "--text", original, "--text", REFORMATTED)
    assert strict["near_duplicate"] is False and "MinHash similarity" in str(strict["reason"])
    near = _compare("--max-distance", "0", "--text", original, "--text", REFORMATTED)
    assert near["near_duplicate"] is False and "SimHash" in str(near["reason"])
    bad = CliRunner().invoke(
        main, ["fingerprint", "--compare", "--max-distance", "65", "--text", "a", "--text", "b"]
    )
    assert bad.exit_code == 2


def test_the_verdict_is_what_grouping_a_window_of_the_two_does() -> None:
    """``verdict`` and the window's grouping (``indexer.grouping.group``) agree pair by pair."""
    from indexer.fingerprints import fingerprint_batch
    from indexer.grouping import DEFAULT_THRESHOLDS, group
    from indexer.lookup import prints_of, verdict

    texts = [LISTING.format(gb=gb) for gb in ("128GB", "256GB")] + [REFORMATTED, D1, D2]
    texts += [
        "价格 1579 元，包邮，" * 3 + "三天内发货。",
        "价格 1579 元，包邮，" * 3 + "五天内发货。",
    ]
    records = fingerprint_batch(texts)
    for i, a in enumerate(records):
        for b in records[i + 1 :]:
            grouped = group(prints_of([a, b]), DEFAULT_THRESHOLDS)
            assert verdict(a, b).near_duplicate == (int(grouped.rep[1]) == 0)
