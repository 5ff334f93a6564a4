"""The parts of ``indexer ingest``'s pipeline, without a cluster: worker pool, batches,
bulk chunking and retries, the settled-documents watermark, the fingerprint's JSON."""

from __future__ import annotations

import base64
import operator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from indexer import workers
from indexer.bulk import BulkConfig, _line_chunks, _send_chunk, send
from indexer.checkpoint import SeqWatermark
from indexer.fingerprints import FingerprintParams, decode_id, fingerprint_arrays
from indexer.lines import LineBatch, action_line
from indexer.prepare import PrepareConfig
from indexer.sources import read_items, read_rows, take
from indexer.workers import Pool


def _batch(seqs: range, size: int = 10) -> LineBatch:
    return LineBatch(list(seqs), [f"d{s}" for s in seqs], [b"x" * size for _ in seqs])


def test_line_chunks_cut_by_count_and_bytes() -> None:
    batches = [_batch(range(0, 7)), _batch(range(7, 12)), _batch(range(12, 13), 100)]
    chunks = list(_line_chunks(batches, size=4, max_bytes=1024))
    assert [c.seqs for c in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12]]
    chunks = list(_line_chunks(batches, size=100, max_bytes=35))  # 3 lines of 10 bytes
    assert [len(c) for c in chunks] == [3, 3, 3, 3, 1]
    assert [s for c in chunks for s in c.seqs] == list(range(13))
    # a line alone over the byte limit still goes (alone)
    assert [c.seqs for c in _line_chunks([_batch(range(3), 50)], 10, 40)] == [[0], [1], [2]]


class _FakeES:
    """``bulk`` answers from a script: one list of item statuses per call."""

    def __init__(self, script: list[list[int]]) -> None:
        self.script = script
        self.bodies: list[bytes] = []

    def bulk(self, index: str, body: bytes, filter_path: str) -> Any:
        self.bodies.append(body)
        statuses = self.script.pop(0)
        items = [
            {"index": {"status": s} if s < 300 else {"status": s, "error": {"type": f"e{s}"}}}
            for s in statuses
        ]

        class _Resp:
            pass

        resp = _Resp()
        resp.body = {"errors": any(s >= 300 for s in statuses), "items": items}  # type: ignore[attr-defined]
        return resp


def test_refused_items_are_retried_and_failures_reported() -> None:
    es = _FakeES([[201, 429, 400], [503], [201]])
    cfg = BulkConfig(initial_backoff=0.001, max_backoff=0.001)
    batch = LineBatch([5, 6, 7], ["a", "b", "c"], [b"A\n", b"B\n", b"C\n"])
    result = _send_chunk(es, "ix", batch, cfg)  # type: ignore[arg-type]
    assert result.seqs == [5, 6, 7]
    assert [(r.seq, r.id, r.ok, r.status) for r in result.failed] == [(7, "c", False, 400)]
    assert result.failed[0].error == "e400: "
    assert es.bodies == [b"A\nB\nC\n", b"B\n", b"B\n"]  # only the refused item, each retry


def test_retries_give_up_after_max_retries() -> None:
    es = _FakeES([[429, 201], [429], [429]])
    cfg = BulkConfig(initial_backoff=0.001, max_backoff=0.001, max_retries=2)
    result = _send_chunk(es, "ix", LineBatch([0, 1], ["a", "b"], [b"A\n", b"B\n"]), cfg)  # type: ignore[arg-type]
    assert [(r.seq, r.status) for r in result.failed] == [(0, 429)]


def test_send_yields_one_result_per_document_in_order() -> None:
    class Doc:
        def __init__(self, seq: int) -> None:
            self.seq, self.id, self.body = seq, f"d{seq}", b"{}"

    es = _FakeES([[201, 400, 201], [201]])
    results = list(send(es, "ix", [Doc(i) for i in range(4)], BulkConfig(chunk_size=3)))  # type: ignore[arg-type]
    assert [(r.seq, r.id, r.ok) for r in results] == [
        (0, "d0", True),
        (1, "d1", False),
        (2, "d2", True),
        (3, "d3", True),
    ]
    assert es.bodies[1] == action_line("d3", b"{}")


def test_watermark_settles_runs_and_stragglers() -> None:
    w = SeqWatermark(10)
    w.settle_many([12, 13])
    assert w.value == 10
    w.settle_many([10, 11])
    assert w.value == 14
    w.settle(15)
    w.settle_many([14])
    assert w.value == 16


def _configured_max_doc_bytes() -> int:
    assert workers._config is not None
    return workers._config.max_doc_bytes


def test_pool_keeps_task_order_and_raises_worker_errors() -> None:
    pool = Pool(2)
    pool.configure(PrepareConfig())
    try:
        tasks = [(None, operator.add, (i, 1)) for i in range(20)] + [(1, operator.mul, (3, 3))]
        assert list(pool.imap(iter(tasks))) == [*range(1, 21), 9]
        with pytest.raises(ZeroDivisionError):
            list(pool.imap(iter([(None, operator.truediv, (1, 0))])))
    finally:
        pool.close()


@pytest.mark.parametrize("workers", [0, 2])
def test_every_worker_takes_the_configuration_given_after_it_started(workers: int) -> None:
    """The workers start (and load their kernels) before the index's fields are known; the
    configuration sent then reaches each before its first task, and its answer is no task's."""
    pool = Pool(workers)
    pool.configure(PrepareConfig(max_doc_bytes=1234))
    try:
        tasks = [(w, _configured_max_doc_bytes, ()) for w in (0, 1, 0, 1)]
        assert list(pool.imap(iter(tasks))) == [1234] * 4
    finally:
        pool.close()


def test_rows_and_batches_match_items(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"a": 1}\n\n  \n{"b": 2}\r\n{"c": 3}\n')
    items = list(read_items([str(src)]))
    rows = read_rows([str(src)])
    batch = take(rows, 2)
    rest = take(rows, 5)
    assert take(rows, 5) is None
    assert batch is not None and rest is not None
    assert batch.items() + rest.items() == items
    assert [i.line for i in items] == [1, 4, 5]
    assert batch.since(1).seqs == [1] and batch.since(0) is batch and not batch.since(9).seqs
    assert batch.find(1) == items[1] and batch.find(2) is None


@pytest.mark.parametrize("blocks", [1, 2, 4, 8, 16])
def test_fingerprint_json_equals_the_dicts(blocks: int) -> None:
    texts = ["", "one", "a b c d e f", " ".join(f"w{i % 37}" for i in range(400))]
    arrays = fingerprint_arrays(texts, FingerprintParams(blocks=blocks))
    assert arrays.to_es_json_many() == [orjson.dumps(d) for d in arrays.to_es_many()]
    ids = ["1", "dossier/été ☃", 'q"uo\\te', "x" * 400]
    docs = arrays.to_es_many(ids)
    assert arrays.to_es_json_many(ids) == [orjson.dumps(d) for d in docs]
    assert docs == [r.to_es(i) for r, i in zip(arrays.records(), ids, strict=True)]
    assert [decode_id(d["id"]) for d in docs] == ids
    assert docs[1]["id"] == base64.b64encode("dossier/été ☃".encode()).decode()
    assert [list(d)[-1] for d in docs] == ["id"] * 4  # after the fields that were there
    assert [d for d in arrays.to_es_many([None, "1", None, None]) if "id" in d] == [
        arrays.record(1).to_es("1")
    ]
    with pytest.raises(ValueError, match="3 ids for 4"):
        arrays.to_es_json_many(ids[:3])


def test_worker_lines_equal_packed_documents() -> None:
    from indexer.boilerplate import HostModel
    from indexer.prepare import finish_lines, pack, prepare_batch, prepare_lines, sample_batch
    from indexer.sources import RawItem

    words = " ".join(f"w{i % 53} x{i % 7}" for i in range(120))
    docs = [
        {"id": 1, "body": f"{words} one", "url": "https://h.example/1"},
        {"body": f"{words} two", "url": "https://h.example/2", "collapse_fp": {"old": 1}},
        {"body": "short"},  # sent with NaN: orjson refuses it, the standard library takes it
        "not an object",
        {"body": f"{words} three", "url": "https://other.example/3", "n": [1, None]},
    ]
    raw = [
        b'{"body": "short", "x": NaN}' if i == 2 else orjson.dumps(d) for i, d in enumerate(docs)
    ]
    items = [RawItem(i, "f", i + 1, "jsonl", data) for i, data in enumerate(raw)]
    cfg = PrepareConfig()
    _, featured = sample_batch(items, cfg)
    hashes = featured.features.sh[:40] if featured.features is not None else None
    assert hashes is not None
    model = HostModel("h.example", 20, np.sort(np.unique(hashes)), np.zeros(0, np.uint64))
    for models in ({}, {"h.example": model}):
        want = pack(prepare_batch(items, cfg, models))
        got = prepare_lines(items, cfg, models)
        assert (got.lines.seqs, got.lines.ids, got.lines.lines) == (
            want.lines.seqs,
            want.lines.ids,
            want.lines.lines,
        )
        assert [r.reason for r in got.rejects] == [r.reason for r in want.rejects]
        _, featured = sample_batch(items, cfg)
        fin = finish_lines(featured, cfg, models)
        assert fin.lines.lines == want.lines.lines


def test_an_id_with_a_lone_surrogate_is_rejected_not_fatal() -> None:
    """It cannot be sent (nor stored as ``collapse_fp.id``): one reject, the batch goes on."""
    from indexer.prepare import prepare_lines
    from indexer.sources import RawItem

    raw = [b'{"id": "a\\ud800b", "body": "hello there"}', b'{"id": "ok", "body": "hello"}']
    items = [RawItem(i, "f", i + 1, "jsonl", data) for i, data in enumerate(raw)]
    got = prepare_lines(items, PrepareConfig(), {})
    assert got.lines.ids == ["ok"]
    assert [r.reason for r in got.rejects] == [
        "id is not valid Unicode (lone surrogate at character 1)"
    ]


def test_arrow_tokenisation_equals_the_python_path() -> None:
    pytest.importorskip("pyarrow")
    import random

    from indexer.boilerplate import features
    from indexer.fingerprints import compute

    rnd = random.Random(7)
    alphabet = [
        *"abc XYZ.,;\n\t\x00\x01é水ß\u00adİﬁ①_-'\r\x0b\x0c\x1c\u2028\u3000",
        "\ud800",
        "word",
        "the",
        "  ",
    ]
    texts = [
        "",
        " ",
        "!!!",
        "a",
        "a b c d",
        "\x00",
        *[
            "".join(rnd.choice(alphabet) for _ in range(rnd.choice([0, 1, 3, 10, 80, 400])))
            for _ in range(300)
        ],
    ]
    params = FingerprintParams()
    was = compute._arrow
    try:
        compute._arrow = None
        want = features(texts, params), fingerprint_arrays(texts, params)
        assert compute.enable_arrow()
        got = features(texts, params), fingerprint_arrays(texts, params)
    finally:
        compute._arrow = was
    for a, b in ((want[0], got[0]),):
        for name in ("sh", "scounts", "mh", "mcounts", "token_count", "line_no", "tokens"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert a.exact_keys == b.exact_keys
    assert np.array_equal(want[1].simhash, got[1].simhash)
    assert np.array_equal(want[1].minhash, got[1].minhash)
    assert want[1].exact_keys == got[1].exact_keys
