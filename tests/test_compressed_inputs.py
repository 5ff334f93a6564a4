"""JSON Lines inputs compressed with gzip, bzip2 or xz (told by their first bytes, on a file
or on stdin) are ingested as the plain file is; a compressed input cut short or damaged keeps
every line before the damage and is reported as a reject, and the other inputs go in. A file
that a Windows tool wrote (a byte order mark, CRLF line ends) is read as the same lines."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from indexer.hits import FINGERPRINT_FIELD
from indexer.sources import UNREADABLE, read_rows
from tests.test_ingest import prose, run

pytestmark = pytest.mark.es

ROOT = Path(__file__).resolve().parent.parent


def lines(n: int, seed: int = 0) -> bytes:
    docs = [
        {"id": f"d{seed}-{i}", "title": f"Story {i}", "body": prose(seed + i, 60)} for i in range(n)
    ]
    return "".join(json.dumps(d) + "\n" for d in docs).encode()


def stored(es: Elasticsearch, index: str) -> dict[str, Any]:
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, sort=["_doc"])["hits"]["hits"]
    return {h["_id"]: h["_source"][FINGERPRINT_FIELD]["packed"] for h in hits}


@pytest.mark.parametrize(
    "suffix, pack",
    [
        (".jsonl", lambda b: b),
        (".jsonl.gz", gzip.compress),
        (".gz.concatenated", lambda b: gzip.compress(b[:1000]) + gzip.compress(b[1000:])),
        (".jsonl.bz2", bz2.compress),
        (".jsonl.xz", lzma.compress),
        (".data", gzip.compress),  # the first bytes decide, not the name
        (".windows.jsonl", lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n")),
        (".windows.jsonl.gz", lambda b: gzip.compress(b"\xef\xbb\xbf" + b)),
    ],
)
def test_a_compressed_file_is_ingested_as_the_plain_one(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path, suffix: str, pack: Any
) -> None:
    src = tmp_path / f"docs{suffix}"
    src.write_bytes(pack(lines(30)))
    code, out = run(es_url, index_name, tmp_path, str(src))
    assert code == 0, out
    assert "read 30, indexed 30, rejected 0" in out
    got = stored(es, index_name)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(lines(30))
    es.indices.delete(index=index_name)
    assert run(es_url, index_name, tmp_path, str(plain))[0] == 0
    assert got == stored(es, index_name)  # the same documents, the same fingerprints


def test_gzip_on_stdin_is_ingested(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "indexer", "ingest", "--index", index_name]
    files = ["--rejects", str(tmp_path / "r.jsonl"), "--state", str(tmp_path / "s.json")]
    answer = subprocess.run(
        [*command, "--es-url", es_url, "--no-progress", *files, "-"],
        input=gzip.compress(lines(12)),
        capture_output=True,
        cwd=ROOT,
        timeout=300,
    )
    assert answer.returncode == 0, answer.stderr
    assert len(stored(es, index_name)) == 12


def test_a_cut_gzip_keeps_every_line_before_the_cut_and_rejects_the_rest(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    whole = gzip.compress(lines(400))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    after = tmp_path / "after.jsonl"
    after.write_bytes(lines(5, seed=1000))
    readable = _readable(cut.read_bytes())
    assert 0 < readable < 400
    code, out = run(es_url, index_name, tmp_path, str(cut), str(after))
    assert code == 1, out  # a reject: exit 1
    assert f"indexed {readable + 5}, rejected 1" in out
    (reject,) = [json.loads(x) for x in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert reject["source"] == str(cut) and reject["line"] == readable + 1
    assert f"read up to line {readable} only" in reject["reason"]
    assert len(stored(es, index_name)) == readable + 5  # the next input went in too


def test_a_zstd_file_without_its_package_is_one_reject_naming_the_package(
    tmp_path: Path,
) -> None:
    try:
        import zstandard  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the zstandard package is installed: such a file is read")
    src = tmp_path / "docs.jsonl.zst"
    src.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    (row,) = list(read_rows([str(src)]))
    assert row[3] == UNREADABLE and b"install the zstandard package" in row[4]


class _Cut:
    """A file object over ``data`` whose reads stop quietly at its end: the lines a reader
    gets before gzip notices the cut."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, n: int = -1) -> bytes:
        end = len(self.data) if n < 0 else self.at + n
        out, self.at = self.data[self.at : end], min(end, len(self.data))
        return out


def _readable(data: bytes) -> int:
    count = 0
    try:
        for _ in gzip.GzipFile(fileobj=_Cut(data)):  # type: ignore[arg-type]
            count += 1
    except EOFError:
        pass
    return count


def test_a_json_array_export_is_read_as_its_documents(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """``mongoexport --jsonArray`` or ``json_agg`` output, pretty-printed and gzipped: one
    document per element, the same fingerprints as the JSON Lines of the same documents; an
    element that is no object is a reject at its position."""
    docs = [json.loads(x) for x in lines(20).splitlines()]
    export = tmp_path / "export.json.gz"
    export.write_bytes(
        gzip.compress(json.dumps([*docs[:7], "no object", *docs[7:]], indent=2).encode())
    )
    code, out = run(es_url, index_name, tmp_path, str(export))
    assert code == 1, out
    assert "read 21, indexed 20, rejected 1" in out
    (reject,) = [json.loads(x) for x in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert reject["line"] == 8 and "not a JSON object" in reject["reason"]
    got = stored(es, index_name)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(lines(20))
    es.indices.delete(index=index_name)
    assert run(es_url, index_name, tmp_path, str(plain))[0] == 0
    assert got == stored(es, index_name)


def test_json_lines_whose_first_line_is_an_array_stay_json_lines(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_bytes(b"[1, 2]\n" + lines(3))
    rows = list(read_rows([str(src)]))
    assert [(r[2], r[4][:1]) for r in rows] == [(1, b"["), (2, b"{"), (3, b"{"), (4, b"{")]


def test_a_folder_of_shards_and_pages_is_read_in_path_order(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """A dump's folder (``part-00000.json.gz``, ``part-00001.jsonl``, a ``_SUCCESS`` marker,
    a page in a subfolder): every shard and page, nothing else; an empty one is refused."""
    dump = tmp_path / "dump"
    (dump / "pages").mkdir(parents=True)
    (dump / "part-00000.json.gz").write_bytes(gzip.compress(lines(6)))
    (dump / "part-00001.jsonl").write_bytes(lines(4, seed=100))
    (dump / "_SUCCESS").write_bytes(b"")
    (dump / "README.txt").write_text("not a document")
    page = f"<html><head><title>Page</title></head><body><p>{prose(7, 80)}</p></body></html>"
    (dump / "pages" / "a.html").write_text(page)
    sources = [r[1].removeprefix(str(dump)) for r in read_rows([str(dump)])]
    assert sources == ["/pages/a.html"] + ["/part-00000.json.gz"] * 6 + ["/part-00001.jsonl"] * 4
    code, out = run(es_url, index_name, tmp_path, str(dump))
    assert code == 0, out
    assert "read 11, indexed 11, rejected 0" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "_SUCCESS").write_bytes(b"")
    code, out = run(es_url, index_name, tmp_path, str(empty))
    assert code == 2 and "holds no file to ingest" in out
