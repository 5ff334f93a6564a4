"""What each mapping/encoding of ``collapse_fp`` costs Elasticsearch at ingest, and at query.

The documents of ``bench/ingest_speed.py`` (``~/.cache/neardup/ingest_100k.jsonl``) are
fingerprinted once as ``indexer ingest`` would send them (cached beside it), then bulk-loaded
with our bulk path (``indexer.bulk.send``: chunks of 500, 2 in flight) into fresh scratch
indices ``mapcost-<variant>`` (1 shard, default settings, only ``collapse_fp`` mapped, like
``indexer init``), one variant after the other in interleaved rounds. Variants (``VARIANTS``)
are changes to the mapping of 6d28171 (``kw``: blocks and ``band`` keyword with doc values)
and, for some, to the stored values; ``new`` is what ``init`` creates now (``packed`` and
``id`` with doc values, no field for the sketches), ``sh5`` what it created before sh6
(``minhash`` and ``numbers`` mapped and stored beside ``packed``), ``dv-six`` what it created
before ``packed`` (``minhash`` and ``id`` with doc values, the documents without ``packed``);
``packed-lean`` is ``new`` without ``simhash`` and ``token_count`` (mapping and documents).
A variant that maps ``minhash`` or ``numbers`` gets documents with them, decoded from
``packed`` as the writers before sh6 stored them. Each row: wall
time of the load, Elasticsearch CPU seconds over it (``/proc/<pid>/stat`` of the local
node), the CPU it spent to the end of a final refresh, flush and the merges then running
(the whole cost), and the time the index's own threads report (indexing, refresh, flush,
merges: untouched by other indices' work). ``--no-merges`` keeps every flushed segment during
the load and forcemerges after it (last column: the forcemerge's CPU).

Expect noise: on the 2-core machine the same mapping loaded twice in one run differed by up to
2.5 ES cpu-s (of ~15); compare medians of many interleaved rounds.

``--queries N`` then keeps the last round's indices of the variants in ``--query-variants``
and times the proxy probe's shape on each: a ``match`` on ``body`` (a word drawn from the
corpus) AND a ``terms`` of the 160 band values of 10 random documents (Elasticsearch's
``took``, the same queries on every variant, interleaved).

    flock /tmp/neardup-bench.lock .venv/bin/python bench/mapping_cost.py --rounds 6 \
        --variants no-band,kw,kw-nodv,new --queries 300 --query-variants kw,new
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from elasticsearch import Elasticsearch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from corpus import CACHE

from indexer.bulk import send
from indexer.fingerprints import FingerprintParams, unpack_many
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import cells_to_bytes
from indexer.fingerprints.record import RETIRED_FIELDS
from indexer.hits import FINGERPRINT_FIELD
from indexer.mapping import index_mappings

Fp = dict[str, Any]
PREFIX = "mapcost-"


def es_pid(es: Elasticsearch) -> int:
    node = next(iter(es.nodes.info(node_id="_local", metric="process")["nodes"].values()))
    return int(node["process"]["id"])


def proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prefingerprinted(path: Path) -> list[tuple[str, bytes]]:
    """(id, _source bytes) of every document as ``indexer ingest`` sends it (cached; made
    again when the cached ``collapse_fp`` lacks a field today's writers store)."""
    from indexer.prepare import PrepareConfig, Ready, prepare_batch
    from indexer.sources import read_rows, take

    cache = path.with_suffix(".prefp.ndjson")
    if cache.exists():
        with cache.open("rb") as f:
            f.readline()
            cached = orjson.loads(f.readline())[FINGERPRINT_FIELD]
        batch = take(read_rows([str(path)]), 1)
        assert batch is not None
        (now,) = prepare_batch(batch.items(), PrepareConfig(), {})
        if isinstance(now, Ready) and set(orjson.loads(now.body)[FINGERPRINT_FIELD]) != set(cached):
            print(f"{cache.name}: written by an older indexer, made again", flush=True)
            cache.unlink()
    if not cache.exists():
        rows = read_rows([str(path)])
        with cache.open("wb") as out:
            while (batch := take(rows, 256)) is not None:
                for r in prepare_batch(batch.items(), PrepareConfig(), {}):
                    if isinstance(r, Ready):
                        out.write(orjson.dumps(r.id) + b"\n" + r.body + b"\n")
    lines = cache.read_bytes().split(b"\n")
    return [(orjson.loads(lines[i]), lines[i + 1]) for i in range(0, len(lines) - 1, 2)]


# --- encodings of the band keys (hex keyword "bbhhhhhhhh" -> something else) -------------


def band_long(key: str) -> int:
    """Band number in bits 32..39, the 4 packed 8-bit values below."""
    return int(key[:2], 16) << 32 | int(key[2:], 16)


def band_b64(key: str) -> str:
    """base64url of the 5 bytes (band number + 4 values), unpadded: 7 characters."""
    return base64.urlsafe_b64encode(bytes.fromhex(key)).rstrip(b"=").decode("ascii")


def no_band(fp: Fp) -> None:
    fp.pop("band", None)


def to_long(fp: Fp) -> None:
    if "band" in fp:
        fp["band"] = [band_long(k) for k in fp["band"]]


def to_long_str(fp: Fp) -> None:
    if "band" in fp:
        fp["band"] = [str(band_long(k)) for k in fp["band"]]


def to_b64(fp: Fp) -> None:
    if "band" in fp:
        fp["band"] = [band_b64(k) for k in fp["band"]]


def no_blocks(fp: Fp) -> None:
    for name in [k for k in fp if k.startswith("block_")]:
        del fp[name]


# --- variants: (mapping changes of collapse_fp, transform of the stored object) -------------

OFF = {"index": False, "doc_values": False}
BLOCKS_OFF = {f"block_{i}": {"type": "keyword", **OFF} for i in range(8)}
LONG_BAND = {"band": {"type": "long", "doc_values": False}}
LEAN = {
    "simhash": {"type": "long", "index": False, "doc_values": False},
    "token_count": {"type": "integer", "index": False, "doc_values": False},
    "minhash": {"type": "binary", "doc_values": False},
}

UNMAPPED: dict[str, Any] = {"__dynamic__": False, **{f"block_{i}": None for i in range(8)}}
SIMHASH_NODV = {"type": "long", "index": False, "doc_values": False}
#: What refills from doc values read: every value packed in one field, and the document's id.
DOC_VALUE_REFILLS = {
    "minhash": {"type": "binary"},
    "packed": {"type": "binary", "doc_values": True},
    "id": {"type": "binary", "doc_values": True},
    "fields": {"type": "keyword", "doc_values": False},  # in no document here
}
#: What they read before ``packed`` (2026-11-30): the sketch and the id (with four fields
#: that have doc values by default).
SIX_FIELD_REFILLS = {
    "minhash": {"type": "binary", "doc_values": True},
    "id": {"type": "binary", "doc_values": True},
}


def packed_lean(fp: Fp) -> None:
    """``packed`` the only copy of the SimHash and the token count too."""
    fp.pop("simhash", None)
    fp.pop("token_count", None)


#: What ``init`` maps since sh6: no field for the sketches (``packed`` is their one copy).
SH6 = {"minhash": None, "numbers": None}
PACKED_LEAN = {**SH6, "simhash": None, "token_count": None}

Variant = tuple[dict[str, Any], Callable[[Fp], None] | None]
VARIANTS: dict[str, Variant] = {
    "no-band": ({"band": None}, no_band),
    "kw": ({}, None),  # the mapping of 6d28171
    "new": (
        {"band": {"type": "keyword", "doc_values": False}, **UNMAPPED, **DOC_VALUE_REFILLS, **SH6},
        None,
    ),  # what init makes
    "sh5": (
        {"band": {"type": "keyword", "doc_values": False}, **UNMAPPED, **DOC_VALUE_REFILLS},
        None,
    ),  # what init made before sh6 (documents with minhash and numbers: RETIRED_FIELDS)
    "packed-lean": (
        {
            "band": {"type": "keyword", "doc_values": False},
            **UNMAPPED,
            **DOC_VALUE_REFILLS,
            **PACKED_LEAN,
        },
        packed_lean,
    ),  # new, and simhash and token_count only in packed too
    "dv-six": (
        {"band": {"type": "keyword", "doc_values": False}, **UNMAPPED, **SIX_FIELD_REFILLS},
        None,
    ),  # what init made before packed (documents without it: NEWER_FIELDS)
    "kw-nodv": ({"band": {"type": "keyword", "doc_values": False}}, None),
    "kw-nodv-b64": ({"band": {"type": "keyword", "doc_values": False}}, to_b64),
    "long": ({"band": {"type": "long"}}, to_long),
    "long-nodv": (LONG_BAND, to_long),
    "long-nodv-str": (LONG_BAND, to_long_str),
    "kw-nodv+blocks-off": ({"band": {"type": "keyword", "doc_values": False}, **BLOCKS_OFF}, None),
    "long-nodv+blocks-off": ({**LONG_BAND, **BLOCKS_OFF}, to_long),
    "long-nodv+blocks-off+lean": ({**LONG_BAND, **BLOCKS_OFF, **LEAN}, to_long),
    "no-band+blocks-off": ({"band": None, **BLOCKS_OFF}, no_band),
    "no-blocks-field": ({**{f"block_{i}": None for i in range(8)}}, no_blocks),
    "kw-eager": ({"band": {"type": "keyword", "eager_global_ordinals": True}}, None),
    # blocks kept in _source but not mapped at all (collapse_fp ``dynamic: false``)
    "kw-nodv+blocks-unmapped": (
        {"band": {"type": "keyword", "doc_values": False}, **UNMAPPED},
        None,
    ),
    "kw-nodv+blocks-unmapped+simhash-nodv": (
        {"band": {"type": "keyword", "doc_values": False}, **UNMAPPED, "simhash": SIMHASH_NODV},
        None,
    ),
    "long-nodv+blocks-unmapped": ({**LONG_BAND, **UNMAPPED}, to_long),
    "new-b64": ({"band": {"type": "keyword", "doc_values": False}, **UNMAPPED}, to_b64),
}


def _drop(*names: str) -> Callable[[Fp], None]:
    def fn(fp: Fp) -> None:
        for name in names:
            fp.pop(name, None)

    return fn


def _drop_blocks_simhash(fp: Fp) -> None:
    no_blocks(fp)
    fp.pop("simhash", None)


def _drop_all(fp: Fp) -> None:
    fp.clear()


#: What ``init`` maps today (the variant ``new``), as changes of the 6d28171 base.
NEW: dict[str, Any] = {
    "band": {"type": "keyword", "doc_values": False},
    **UNMAPPED,
    **DOC_VALUE_REFILLS,
    **SH6,
}
#: Changes of ``new``, one field (or group) at a time: what each costs Elasticsearch.
VARIANTS.update(
    {
        "new-no-band": ({**NEW, "band": None}, no_band),
        "new-exact-nodv": ({**NEW, "exact_key": {"type": "keyword", "doc_values": False}}, None),
        "new-no-exact": ({**NEW, "exact_key": None}, _drop("exact_key")),
        "new-packed-nodv": ({**NEW, "packed": {"type": "binary"}}, None),
        "new-no-packed": ({**NEW, "packed": None}, _drop("packed")),
        "new-no-id": ({**NEW, "id": None}, _drop("id")),
        # the blocks and simhash neither mapped nor stored (``packed`` holds the SimHash)
        "new-no-blocks-simhash": ({**NEW, "simhash": None}, _drop_blocks_simhash),
        "new-no-tc-version": (
            {**NEW, "token_count": None, "version": None},
            _drop("token_count", "version"),
        ),
        # no collapse_fp at all: the documents' own cost (with --fp-only: empty documents)
        "none": ({**NEW}, _drop_all),
    }
)


def _layout_6d28171() -> dict[str, Any]:
    """The ``collapse_fp`` mapping ``init`` created at 6d28171: blocks and ``band`` keyword
    with doc values, no ``packed``, ``id`` or ``fields``, dynamic mapping on."""
    props: dict[str, Any] = {"simhash": {"type": "long", "index": False}}
    props.update({f"block_{i}": {"type": "keyword"} for i in range(FingerprintParams().blocks)})
    props["minhash"] = {"type": "binary"}
    props["numbers"] = {"type": "binary"}
    props["band"] = {"type": "keyword"}
    props["exact_key"] = {"type": "keyword"}
    props["token_count"] = {"type": "integer"}
    props["version"] = {"type": "keyword"}
    return {"type": "object", "properties": props}


def mapping_of(changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` applied to the mapping of 6d28171 (blocks and ``band`` keyword, doc values):
    the variants' base, whatever ``init`` creates today."""
    fp = _layout_6d28171()
    for name, spec in changes.items():
        if name == "__dynamic__":
            fp["dynamic"] = spec
        elif spec is None:
            fp["properties"].pop(name, None)
        else:
            fp["properties"][name] = spec
    return {"properties": {FINGERPRINT_FIELD: fp}}


#: Fields today's writers store that the 6d28171 layout (the variants' base) predates: a
#: variant whose mapping does not map them gets documents without them (its dynamic
#: mapping would make them ``text``), as the writers of its time stored them.
NEWER_FIELDS = ("id", "packed")


def with_sketches(fp: Fp, names: list[str]) -> Fp:
    """``fp`` with the retired fields in ``names`` (``minhash``, ``numbers``) decoded from its
    ``packed`` value, where the writers before sh6 put them (``minhash`` after the blocks,
    ``numbers`` after ``token_count``)."""
    p = FingerprintParams.from_version(fp["version"])
    got = unpack_many([fp["packed"]], p)
    le = np.dtype(value_dtype(p.minhash_bits)).newbyteorder("<")
    values = {
        "minhash": base64.b64encode(got.minhash[0].astype(le).tobytes()).decode("ascii"),
        "numbers": base64.b64encode(cells_to_bytes(got.numbers).tobytes()).decode("ascii"),
    }
    before = {"minhash": "band" if "band" in fp else "exact_key", "numbers": "packed"}
    out: Fp = {}
    for key, value in fp.items():
        out.update({name: values[name] for name in names if before[name] == key})
        out[key] = value
    return out


def bodies(docs: list[tuple[str, bytes]], name: str, fp_only: bool = False) -> list[Any]:
    changes, fn = VARIANTS[name]
    mapped = mapping_of(changes)["properties"][FINGERPRINT_FIELD]["properties"]
    drop = [field for field in NEWER_FIELDS if field not in mapped]
    restore = [field for field in RETIRED_FIELDS if field in mapped]

    class Doc:
        __slots__ = ("body", "id", "seq")

        def __init__(self, seq: int, doc_id: str, body: bytes) -> None:
            self.seq, self.id, self.body = seq, doc_id, body

    out = []
    for seq, (doc_id, body) in enumerate(docs):
        if fn is not None or fp_only or drop or restore:
            src = orjson.loads(body)
            if restore:
                src[FINGERPRINT_FIELD] = with_sketches(src[FINGERPRINT_FIELD], restore)
            for field in drop:
                src[FINGERPRINT_FIELD].pop(field, None)
            if fn is not None:
                fn(src[FINGERPRINT_FIELD])
            if fp_only:
                src = {FINGERPRINT_FIELD: src[FINGERPRINT_FIELD]}
            if not src[FINGERPRINT_FIELD]:  # variant ``none``: no object at all
                del src[FINGERPRINT_FIELD]
            body = orjson.dumps(src)
        out.append(Doc(seq, doc_id, body))
    return out


def index_ms(es: Elasticsearch, index: str) -> float:
    """Seconds Elasticsearch's threads spent on this index alone: indexing, refresh, flush and
    merges (less merge throttling): unlike the node's CPU, untouched by other indices' work."""
    st = es.indices.stats(index=index, metric="indexing,refresh,flush,merge")["_all"]["primaries"]
    merges = st["merges"]
    return (
        st["indexing"]["index_time_in_millis"]
        + st["refresh"]["total_time_in_millis"]
        + st["flush"]["total_time_in_millis"]
        + merges["total_time_in_millis"]
        - merges["total_throttled_time_in_millis"]
    ) / 1000


#: ``--no-merges``: no background merges during the load (every flushed segment kept), so the
#: load measures indexing + flushes only and the forcemerge after it the merging, each far
#: less at the mercy of when a merge happens to start than with the default policy.
NO_MERGES = {
    "index.merge.policy.segments_per_tier": 200,
    "index.merge.policy.max_merge_at_once": 200,
}


def load(
    es: Elasticsearch, pid: int, name: str, docs: list[Any], no_merges: bool = False
) -> tuple[float, float, float, float]:
    index = PREFIX + name
    changes, _ = VARIANTS[name]
    es.indices.create(
        index=index, mappings=mapping_of(changes), settings=NO_MERGES if no_merges else None
    )
    c0 = proc_cpu(pid)
    t0 = time.perf_counter()
    for r in send(es, index, docs):
        assert r.ok, r
    wall = time.perf_counter() - t0
    c1 = proc_cpu(pid)
    es.indices.refresh(index=index)
    es.indices.flush(index=index)
    while True:  # to the end of the merges this load started
        merges = es.indices.stats(index=index, metric="merge")["_all"]["primaries"]["merges"]
        if not merges["current"]:
            break
        time.sleep(0.2)
    if no_merges:  # then every flushed segment into one: the merge cost of this load
        c1b = proc_cpu(pid)
        segments = es.indices.segments(index=index)["indices"][index]["shards"]["0"][0]
        es.options(request_timeout=900).indices.forcemerge(index=index, max_num_segments=1)
        c2 = proc_cpu(pid)
        print(
            f"    {name}: {segments['num_search_segments']} segments flushed,"
            f" refresh+flush {c1b - c1:.2f} cpu-s, forcemerge {c2 - c1b:.2f} cpu-s",
            flush=True,
        )
        return wall, c1 - c0, c2 - c0, c2 - c1b
    c2 = proc_cpu(pid)
    return wall, c1 - c0, c2 - c0, index_ms(es, index)


def query_bench(
    es: Elasticsearch, names: list[str], docs: list[tuple[str, bytes]], n: int, seed: int = 7
) -> dict[str, list[int]]:
    rnd = random.Random(seed)
    srcs = [orjson.loads(b) for _, b in rnd.sample(docs, 4000)]
    words = [w for s in srcs[:500] for w in str(s.get("body", "")).split() if w.isalpha()]
    words = [w.lower() for w in words if 4 <= len(w) <= 12]
    with_band = [s for s in srcs if "band" in s[FINGERPRINT_FIELD]]
    took: dict[str, list[int]] = {k: [] for k in names}
    for _ in range(n):
        reps = rnd.sample(with_band, 10)
        keys = sorted({k for s in reps for k in s[FINGERPRINT_FIELD]["band"]})
        word = rnd.choice(words)
        for name in names:
            _, fn = VARIANTS[name]
            values: list[Any] = keys
            if fn is not None:
                fp = {"band": keys}
                fn(fp)
                values = fp["band"]
            body = {
                "query": {
                    "bool": {
                        "must": [{"match": {"body": word}}],
                        "filter": [{"terms": {f"{FINGERPRINT_FIELD}.band": values}}],
                    }
                },
                "size": 50,
                "_source": [f"{FINGERPRINT_FIELD}.minhash"],
                "track_total_hits": 51,
            }
            took[name].append(
                es.search(index=PREFIX + name, body=body, request_cache=False)["took"]
            )
    return took


def main() -> None:
    global PREFIX
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    ap.add_argument("--queries", type=int, default=0, help="probe-shaped queries per variant")
    ap.add_argument("--query-variants", default="kw,kw-nodv,long-nodv")
    ap.add_argument(
        "--no-merges",
        action="store_true",
        help="no merges during the load, then forcemerge: last column = its cpu-s",
    )
    ap.add_argument(
        "--fp-only",
        action="store_true",
        help="documents with collapse_fp alone (the fields' cost without the text's noise)",
    )
    ap.add_argument("--prefix", default=PREFIX, help="scratch index names start with this")
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    args = ap.parse_args()
    PREFIX = args.prefix
    assert mapping_of(VARIANTS["new"][0]) == index_mappings(), "variant new is not init's"
    es = Elasticsearch(args.es_url, request_timeout=300)
    pid = es_pid(es)
    path = CACHE / f"ingest_{args.docs // 1000}k.jsonl"
    docs = prefingerprinted(path)
    names = [v for v in args.variants.split(",") if v]
    qnames = [v for v in args.query_variants.split(",") if v] if args.queries else []
    print(f"{len(docs)} documents, {os.cpu_count()} cores, Elasticsearch pid {pid}", flush=True)
    rows: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in names}
    for r in range(args.rounds):
        for name in names:
            ready = bodies(docs, name, args.fp_only)
            es.options(ignore_status=404).indices.delete(index=PREFIX + name)
            time.sleep(3)  # let the node settle after the previous load and delete
            wall, cpu, cpu_end, own = load(es, pid, name, ready, args.no_merges)
            size = es.indices.stats(index=PREFIX + name, metric="store")["_all"]["primaries"]
            mb = size["store"]["size_in_bytes"] / 1e6
            rows[name].append((wall, cpu, cpu_end, own))
            print(
                f"round {r + 1} {name:36s} {wall:5.2f} s  ES cpu {cpu:5.2f} s"
                f"  (to merged {cpu_end:5.2f} s)  index threads {own:5.2f} s  {mb:6.1f} MB"
                f"  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            if not (r == args.rounds - 1 and name in qnames):
                es.indices.delete(index=PREFIX + name)
    head = ("variant", "wall s", "ES cpu s", "to merged", "index thr")
    print(f"\n{head[0]:36s} {head[1]:>7s} {head[2]:>9s} {head[3]:>9s} {head[4]:>9s}  median (min)")
    for name, vals in rows.items():
        med = [statistics.median(x) for x in zip(*vals, strict=True)]
        low = [min(x) for x in zip(*vals, strict=True)]
        print(
            f"{name:36s} {med[0]:7.2f} {med[1]:9.2f} {med[2]:9.2f} {med[3]:9.2f}"
            f"  ({' '.join(f'{v:.2f}' for v in low)})"
        )
    if qnames:
        es.indices.forcemerge(index=",".join(PREFIX + q for q in qnames), max_num_segments=1)
        query_bench(es, qnames, docs, 20)  # warm-up
        took = query_bench(es, qnames, docs, args.queries, seed=11)
        print(f"\nprobe-shaped query (match + terms of ~160 bands), {args.queries} queries")
        for name, t in took.items():
            q = statistics.quantiles(t, n=20)
            print(
                f"{name:28s} mean {statistics.mean(t):6.2f} ms  median {statistics.median(t):5.1f}"
                f"  p95 {q[18]:5.1f}  total {sum(t)} ms"
            )
        for q in qnames:
            es.indices.delete(index=PREFIX + q)


if __name__ == "__main__":
    main()
