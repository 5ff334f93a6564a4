"""The learning sample (``indexer.sample``): which of the window's pages teach the host models.

A host's model is learnt from its first ``--boilerplate-host-pages`` pages of the window; its
other pages wait for the model, and pages without a url host are fingerprinted and sent at
once, while the sample is learnt. ``learn`` learns what ``ingest`` would, and the output does
not depend on the number of workers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from hypothesis import given
from hypothesis import strategies as st

from indexer.boilerplate_store import MODEL_KEY, load_models, model_version
from indexer.cli import main
from indexer.prepare import Parsed, PrepareConfig, parse
from indexer.sample import WindowSplit, host_hint
from indexer.sources import RawBatch, RawItem, take
from tests.test_ingest import prose
from tests.test_parallel_ingest import SITE, fingerprints, forget_models, learnt_from, site_pages

LIMIT = PrepareConfig().max_doc_bytes

LINES = [
    b'{"id": "a", "url": "https://www.Example.org/x", "body": "some words here"}',
    b'{"id": "b", "url": "http://example.org:8080?q=1", "body": "more words"}',
    b'{"id": "c", "body": "no url at all"}',
    b'{"id": "d", "url": "/relative/path", "body": "a url without a host"}',
    b'{"id": "e", "url": 12, "body": "a url that is not a string"}',
    b'{"id": "f", "url": "https://example.org/", "body": ""}',  # rejected: no text
    b'{"id": "g", "url": "https://example.org/", "body": NaN}',  # orjson refuses NaN
    b'["not", "an", "object"]',
    b'{"id": "h", "url": "https://example.org/", "body": ',  # malformed
    b'{"id": "i", "url": " https://example.org/", "body": "a url with a leading space"}',
]


@pytest.mark.parametrize("data", LINES)
def test_host_hint_is_the_host_the_parse_gives_or_unknown(data: bytes) -> None:
    known, host = host_hint("jsonl", data, LIMIT)
    parsed = parse(RawItem(0, "in.jsonl", 1, "jsonl", data), LIMIT)
    if isinstance(parsed, Parsed):
        assert not known or host == parsed.host
    if known:
        assert host is None or host == "example.org"


def test_host_hint_leaves_html_and_oversized_items_to_the_parse() -> None:
    page = b"<html><head><link rel=canonical href='https://example.org/'></head></html>"
    assert host_hint("html", page, LIMIT) == (False, None)
    assert host_hint("jsonl", LINES[0], len(LINES[0]) - 1) == (False, None)
    assert host_hint("jsonl", LINES[0], len(LINES[0])) == (True, "example.org")


def _batch(docs: list[bytes], first: int = 0) -> RawBatch:
    return RawBatch(
        list(range(first, first + len(docs))),
        ["in.jsonl"] * len(docs),
        list(range(first + 1, first + len(docs) + 1)),
        ["jsonl"] * len(docs),
        docs,
    )


@given(
    hosts=st.lists(st.sampled_from(["a.example", "b.example", None, "?"]), max_size=60),
    cap=st.integers(1, 6),
    size=st.integers(1, 9),
)
def test_the_split_keeps_each_hosts_first_pages_in_input_order(
    hosts: list[str | None], cap: int, size: int
) -> None:
    """Every item lands in exactly one part, in input order; a host's first ``cap`` pages
    (over all batches) are learnt from, its later ones wait, pages without a host are final,
    and lines only the parse can read are learnt from."""
    docs = []
    for i, host in enumerate(hosts):
        if host == "?":
            docs.append(b'{"id": "broken", ')
        else:
            doc: dict[str, Any] = {"id": str(i), "body": "words"}
            if host is not None:
                doc["url"] = f"https://{host}/{i}"
            docs.append(json.dumps(doc).encode())
    window = WindowSplit(cap, LIMIT)
    rows = _batch(docs).rows()
    learn: list[int] = []
    final: list[int] = []
    later: list[int] = []
    while (batch := take(rows, size)) is not None:
        split = window.split(batch)
        for part, into in ((split.learn, learn), (split.final, final), (split.later, later)):
            assert part.seqs == sorted(part.seqs)
            assert all(part.datas[j] == docs[seq] for j, seq in enumerate(part.seqs))
            into += part.seqs
    assert sorted(learn + final + later) == list(range(len(docs)))
    seen: dict[str, int] = {}
    for i, host in enumerate(hosts):
        if host == "?":
            assert i in learn
        elif host is None:
            assert i in final
        else:
            seen[host] = seen.get(host, 0) + 1
            assert (i in learn) == (seen[host] <= cap)
            assert (i in later) == (seen[host] > cap)


def test_a_subset_batch_finds_its_items_and_gives_its_rows_back() -> None:
    batch = _batch([f'{{"id": "{i}"}}'.encode() for i in range(10)], first=100)
    part = batch.subset([1, 4, 5, 9])
    assert part.seqs == [101, 104, 105, 109]
    found = part.find(105)
    assert found is not None and found.data == b'{"id": "5"}'
    assert part.find(102) is None and part.find(99) is None and part.find(110) is None
    assert take(part.rows(), 10) == part
    assert part.since(105).seqs == [105, 109]


# --- on the real node --------------------------------------------------------------------


def _input(path: Path) -> list[dict[str, Any]]:
    """The site's pages (80 of man.example, 30 of doc.example) with pages without a url
    among them, a page of the site without text and a malformed line; returns the
    documents in input order (the malformed line left out)."""
    docs: list[dict[str, Any]] = []
    for i, page in enumerate(site_pages()):
        docs.append(page)
        if i % 7 == 3:
            docs.append({"id": f"bare-{i}", "body": prose(7000 + i, 60)})
    docs.insert(41, {"id": "empty", "url": f"https://{SITE}/empty"})
    lines = [json.dumps(d) for d in docs]
    lines.insert(20, '{"id": "broken", "body": ')
    path.write_text("\n".join(lines) + "\n")
    return docs


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_a_host_learns_from_its_first_pages_and_learn_learns_what_ingest_does(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    src = tmp_path / "in.jsonl"
    docs = _input(src)
    site = [d for d in docs if d.get("url", "").startswith(f"https://{SITE}/")]
    # its first 50 lines, one without text: the model of 49 pages
    expected = learnt_from(site[:50])
    assert expected != learnt_from(site)  # the cap makes a difference here
    version = PrepareConfig().params.version
    common = ["--es-url", es_url, "--boilerplate-host-pages", "50"]
    learnt, serial, parallel = (f"{index_name}-{k}" for k in ("learn", "serial", "parallel"))
    try:
        out = _run(["learn", *common, "--index", learnt, "--workers", "2", str(src)])
        assert f"{SITE}: model {expected} from 49 pages" in out
        assert model_version(load_models(es, learnt, version, [SITE])[SITE]) == expected
        outputs = {}
        for index, workers in ((serial, "0"), (parallel, "2")):
            rejects = tmp_path / f"{index}.rejects.jsonl"
            flags = ["--index", index, "--workers", workers, "--batch-size", "8"]
            flags += ["--chunk-size", "10"]
            flags += ["--rejects", str(rejects), "--state", str(tmp_path / f".{index}")]
            out = _run(["ingest", *common, *flags, str(src)])
            stored = load_models(es, index, version, [SITE])[SITE]
            assert model_version(stored) == expected
            outputs[index] = (out.split(" in ")[0], rejects.read_text())
        assert outputs[serial] == outputs[parallel]
        assert "rejected 2" in outputs[serial][0]
        found = fingerprints(es, parallel)
        assert found == fingerprints(es, serial)
        assert len(found) == len(docs) - 1  # "empty" and "broken" rejected, nothing lost
        site_fps = [json.loads(fp) for i, fp in found.items() if i.startswith("man-")]
        assert len(site_fps) == 80 and all(fp[MODEL_KEY] == expected for fp in site_fps)
        assert not any(MODEL_KEY in json.loads(fp) for i, fp in found.items() if "bare" in i)
    finally:
        forget_models(es, learnt, serial, parallel)
        es.options(ignore_status=404).indices.delete(index=[learnt, serial, parallel])


def test_pages_without_a_host_go_in_before_the_models_are_learnt(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """Without workers, in input order but for the pages without a host: those are sent
    while the sample is learnt, so the node indexes them before the sample's first page."""
    src = tmp_path / "in.jsonl"
    _input(src)
    flags = ["--es-url", es_url, "--index", index_name, "--workers", "0", "--batch-size", "8"]
    flags += ["--chunk-size", "5", "--concurrent-requests", "1"]
    flags += ["--rejects", str(tmp_path / "r"), "--state", str(tmp_path / "s")]
    try:
        _run(["ingest", *flags, str(src)])
        es.indices.refresh(index=index_name)
        hits = es.search(index=index_name, size=1000, seq_no_primary_term=True, source=False)
        order = {h["_id"]: h["_seq_no"] for h in hits.body["hits"]["hits"]}
        bare = [seq for doc_id, seq in order.items() if doc_id.startswith("bare-")]
        assert len(bare) == 16 and max(bare) < order["man-0"]
    finally:
        forget_models(es, index_name)
