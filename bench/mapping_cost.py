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
from typing import Any, cast

import numpy as np
import orjson
from elasticsearch import Elasticsearch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from corpus import CACHE
from load import WORDS  # the words of load.py's corpus (its queries are pairs of them)

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


def band_int(key: str) -> int:
    """A 32-bit mix of the band number and its 4 packed 8-bit values, as a signed int (equal
    values of different bands can collide: 2**-32 per pair of keys)."""
    v = (int(key[2:], 16) ^ (int(key[:2], 16) * 0x9E3779B1)) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def to_int(fp: Fp) -> None:
    if "band" in fp:
        fp["band"] = [band_int(k) for k in fp["band"]]


def to_text(fp: Fp) -> None:
    """The keys as one string, split by a ``whitespace`` analyzer: one field value, 16 tokens."""
    if "band" in fp:
        fp["band"] = " ".join(fp["band"])


def first_bands(n: int) -> Callable[[Fp], None]:
    def fn(fp: Fp) -> None:
        if "band" in fp:
            fp["band"] = fp["band"][:n]

    return fn


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


BAND_TEXT = {"type": "text", "analyzer": "whitespace", "index_options": "docs", "norms": False}
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
        # the band keys in other layouts (issue 18, Elasticsearch's side): points of the band
        # number and the 4 values (64-bit; 32-bit mixed), one string of 16 tokens, 8 keys
        "new-band-long": ({**NEW, "band": {"type": "long", "doc_values": False}}, to_long),
        "new-band-int": ({**NEW, "band": {"type": "integer", "doc_values": False}}, to_int),
        "new-band-text": ({**NEW, "band": BAND_TEXT}, to_text),
        "new-band-8": ({**NEW}, first_bands(8)),
        "new-band-long-dv": ({**NEW, "band": {"type": "long"}}, to_long),
    }
)
#: Query values of a variant whose stored transform is not one per key.
QUERY_KEYS: dict[str, Callable[[list[str]], list[Any]]] = {"new-band-text": lambda keys: keys}


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


def encode_keys(name: str, keys: list[str]) -> list[Any]:
    """The band keys (hex strings) as a variant stores them: the values its probe sends."""
    if name in QUERY_KEYS:
        return QUERY_KEYS[name](keys)
    _, fn = VARIANTS[name]
    if fn is None:
        return keys
    fp: Fp = {"band": list(keys)}
    fn(fp)
    return list(fp.get("band", []))


def query_bench(
    es: Elasticsearch,
    names: list[str],
    docs: list[tuple[str, bytes]],
    n: int,
    seed: int = 7,
    reps: int = 10,
    size: int = 30,
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[frozenset[str]]]]:
    """The probe's shape on each variant's index, interleaved: the user's query (a ``match``
    on ``body`` when the documents have one, else ``match_all``) filtered by a ``terms`` of the
    band keys of ``reps`` random documents, ``size`` hits (the proxy's ``probe_size``), no
    ``_source``. Per query and variant: Elasticsearch's ``took`` (ms), the round trip (ms) and,
    by a second untimed search, the ids of every document the keys match."""
    rnd = random.Random(seed)
    srcs = [orjson.loads(b) for _, b in rnd.sample(docs, 4000)]
    words = [w for s in srcs[:500] for w in str(s.get("body", "")).split() if w.isalpha()]
    words = [w.lower() for w in words if 4 <= len(w) <= 12]
    with_band = [s for s in srcs if "band" in s[FINGERPRINT_FIELD]]
    took: dict[str, list[float]] = {k: [] for k in names}
    wall: dict[str, list[float]] = {k: [] for k in names}
    found: dict[str, list[frozenset[str]]] = {k: [] for k in names}
    for _ in range(n):
        chosen = rnd.sample(with_band, reps)
        keys = sorted({k for s in chosen for k in s[FINGERPRINT_FIELD]["band"]})
        must = [{"match": {"body": rnd.choice(words)}}] if words else [{"match_all": {}}]
        for name in names:
            terms = {"terms": {f"{FINGERPRINT_FIELD}.band": encode_keys(name, keys)}}
            query = {"bool": {"must": must, "filter": [terms]}}
            body = {"query": query, "size": size, "_source": False, "track_total_hits": size + 1}
            t0 = time.perf_counter()
            answer = es.search(index=PREFIX + name, body=body, request_cache=False)
            wall[name].append((time.perf_counter() - t0) * 1000)
            took[name].append(answer["took"])
            every = {"query": {"bool": {"filter": [terms]}}, "size": 10_000, "_source": False}
            hits = es.search(index=PREFIX + name, body=every)["hits"]["hits"]
            found[name].append(frozenset(h["_id"] for h in hits))
    return took, wall, found


#: ``--probe-from``: the layouts of ``band`` the source index is copied into (None: as it is).
PROBE_LAYOUTS: dict[str, dict[str, Any] | None] = {
    "kw": None,
    "long": {"type": "long", "doc_values": False},
    "long-dv": {"type": "long"},
}


def copy_index(es: Elasticsearch, source: str, target: str, band: dict[str, Any] | None) -> None:
    """``source`` (e.g. the proxy benchmark's ``bench-proxy``) copied (scan + bulk) into
    ``target`` with its mapping (``band`` mapped as ``band`` and its keys sent as
    :func:`band_long` when given), one shard, no replica, forcemerged to one segment."""
    mappings = es.indices.get_mapping(index=source)[source]["mappings"]
    if band is not None:
        mappings["properties"][FINGERPRINT_FIELD]["properties"]["band"] = band
    es.options(ignore_status=404).indices.delete(index=target)
    es.indices.create(
        index=target,
        mappings=mappings,
        settings={"number_of_shards": 1, "number_of_replicas": 0},
    )
    from elasticsearch.helpers import bulk, scan

    def actions() -> Any:
        for hit in scan(es, index=source, size=2000, preserve_order=False):
            src = hit["_source"]
            fp = src.get(FINGERPRINT_FIELD)
            if band is not None and isinstance(fp, dict) and "band" in fp:
                fp["band"] = [band_long(k) for k in fp["band"]]
            yield {"_index": target, "_id": hit["_id"], "_source": src}

    bulk(es.options(request_timeout=600), actions(), chunk_size=1000)
    es.indices.refresh(index=target)
    es.options(request_timeout=1800).indices.forcemerge(index=target, max_num_segments=1)


def query_ms(es: Elasticsearch, index: str) -> tuple[float, int]:
    """The index's query phase so far: milliseconds and searches (its search stats)."""
    st = es.indices.stats(index=index, metric="search")["_all"]["primaries"]["search"]
    return float(st["query_time_in_millis"]), int(st["query_total"])


Probes = tuple[
    dict[str, list[float]],
    dict[str, list[float]],
    dict[str, list[frozenset[str]]],
    dict[str, float],
]


def proxy_probes(es: Elasticsearch, layouts: dict[str, bool], n: int, seed: int = 3) -> Probes:
    """The proxy's probe (``collapse.probe.probe_body``: the query as ``must``, the band and
    exact keys of the window's first 10 hits, those hits excluded, ``probe_size`` 30) after a
    window of a ``match`` on ``body`` (1–2 words of the corpus), on every index of ``layouts``
    (name -> whether its keys are integers) interleaved, each first in turn: ``took``, the
    round trip, the query phase's mean (ms per search, from the index's search stats: finer
    than ``took``), and the ids every key matches (untimed, size 10,000)."""
    from collapse.probe import probe_body

    names = list(layouts)
    rnd = random.Random(seed)
    bodies: list[dict[str, dict[str, Any]]] = []
    for _ in range(n):
        words = " ".join(rnd.sample(WORDS, rnd.choice((1, 2))))
        user = {"query": {"match": {"body": words}}}
        source = [f"{FINGERPRINT_FIELD}.band", f"{FINGERPRINT_FIELD}.exact_key"]
        window = es.search(index=names[0], body={**user, "size": 10, "_source": source})
        fps = [h["_source"].get(FINGERPRINT_FIELD, {}) for h in window["hits"]["hits"]]
        seen = [h["_id"] for h in window["hits"]["hits"]]
        exact = [str(fp.get("exact_key", "")) for fp in fps]
        one: dict[str, dict[str, Any]] = {}
        for index, ints in layouts.items():
            terms = [
                [
                    (f"{FINGERPRINT_FIELD}.band", band_long(k) if ints else k)
                    for k in fp.get("band", [])
                ]
                for fp in fps
            ]
            body = probe_body(user, cast(Any, terms), exact, [(index, i) for i in seen], 30)
            body["_source"] = False
            one[index] = body
        bodies.append(one)
    took: dict[str, list[float]] = {k: [] for k in names}
    wall: dict[str, list[float]] = {k: [] for k in names}
    before = {index: query_ms(es, index) for index in names}
    for q, one in enumerate(bodies):
        order = names[q % len(names) :] + names[: q % len(names)]
        for index in order:
            t0 = time.perf_counter()
            answer = es.search(index=index, body=one[index], request_cache=False)
            wall[index].append((time.perf_counter() - t0) * 1000)
            took[index].append(answer["took"])
    phase = {}
    for index in names:
        ms, count = query_ms(es, index)
        phase[index] = (ms - before[index][0]) / max(1, count - before[index][1])
    found: dict[str, list[frozenset[str]]] = {k: [] for k in names}
    for one in bodies:
        for index, body in one.items():
            every = {**body, "size": 10_000, "track_total_hits": True}
            hits = es.search(index=index, body=every)["hits"]["hits"]
            found[index].append(frozenset(h["_id"] for h in hits))
    return took, wall, found, phase


def probe_report(es: Elasticsearch, source: str, n: int, rebuild: bool, which: list[str]) -> None:
    """``--probe-from``: the proxy's probe on ``source`` copied with ``band`` in each layout of
    ``which`` (:data:`PROBE_LAYOUTS`)."""
    layouts = {f"{PREFIX}probe-{name}": PROBE_LAYOUTS[name] is not None for name in which}
    for name in which:
        index = f"{PREFIX}probe-{name}"
        if rebuild or not es.indices.exists(index=index):
            c0 = proc_cpu(es_pid(es))
            copy_index(es, source, index, PROBE_LAYOUTS[name])
            print(f"{index}: copied from {source} in {proc_cpu(es_pid(es)) - c0:.1f} ES cpu-s")
    for index in layouts:
        st = es.indices.stats(index=index, metric="docs,store")["_all"]["primaries"]
        print(
            f"{index}: {st['docs']['count']} documents, {st['store']['size_in_bytes'] / 1e6:.1f} MB"
        )
    proxy_probes(es, layouts, 30, seed=1)  # warm-up
    for run in range(3):
        probe_run(es, layouts, n, seed=3 + run)


def probe_run(es: Elasticsearch, layouts: dict[str, bool], n: int, seed: int) -> None:
    """One run of ``n`` probes on every index, printed."""
    took, wall, found, phase = proxy_probes(es, layouts, n, seed)
    print(f"\nthe proxy's probe after a window of 10, {n} queries, load {os.getloadavg()[0]:.1f}")
    ref = found[next(iter(layouts))]
    for index in layouts:
        t, w = took[index], wall[index]
        same = sum(a == b for a, b in zip(found[index], ref, strict=True))
        print(
            f"{index:28s} query phase {phase[index]:5.3f} ms"
            f"  took mean {statistics.mean(t):5.2f} ms median {statistics.median(t):4.1f}"
            f" p95 {statistics.quantiles(t, n=20)[18]:4.1f}  round trip mean"
            f" {statistics.mean(w):5.2f} ms median {statistics.median(w):5.2f}"
            f"  documents found {sum(len(a) for a in found[index])}"
            f" (same set as the first in {same}/{n} queries)"
        )


def main() -> None:
    global PREFIX
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    ap.add_argument("--queries", type=int, default=0, help="probe-shaped queries per variant")
    ap.add_argument("--query-variants", default="new,new-band-long")
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
    ap.add_argument(
        "--probe-from",
        default="",
        help="instead of the loads: copy this index (e.g. bench-proxy) with band keyword and "
        "long, then time the proxy's probe on both (--queries, default 300)",
    )
    ap.add_argument("--rebuild", action="store_true", help="--probe-from: copy again")
    ap.add_argument(
        "--probe-layouts", default="kw,long", help=f"--probe-from: of {','.join(PROBE_LAYOUTS)}"
    )
    ap.add_argument("--es-url", default=os.environ.get("ES_URL", "http://127.0.0.1:9200"))
    args = ap.parse_args()
    PREFIX = args.prefix
    assert mapping_of(VARIANTS["new"][0]) == index_mappings(), "variant new is not init's"
    es = Elasticsearch(args.es_url, request_timeout=300)
    if args.probe_from:
        which = [v for v in args.probe_layouts.split(",") if v]
        probe_report(es, args.probe_from, args.queries or 300, args.rebuild, which)
        return
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
            load_s, cpu, cpu_end, own = load(es, pid, name, ready, args.no_merges)
            size = es.indices.stats(index=PREFIX + name, metric="store")["_all"]["primaries"]
            mb = size["store"]["size_in_bytes"] / 1e6
            rows[name].append((load_s, cpu, cpu_end, own))
            print(
                f"round {r + 1} {name:36s} {load_s:5.2f} s  ES cpu {cpu:5.2f} s"
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
        for reps in (10, 50):
            query_bench(es, qnames, docs, 20, reps=reps)  # warm-up
            took, wall, found = query_bench(es, qnames, docs, args.queries, seed=11, reps=reps)
            print(
                f"\nprobe-shaped query ({'match on body' if not args.fp_only else 'match_all'}"
                f" + terms of the band keys of {reps} documents, size 30), {args.queries} queries,"
                f" load {os.getloadavg()[0]:.1f}"
            )
            ref = found[qnames[0]]
            for name in qnames:
                t, w = took[name], wall[name]
                same = sum(a == b for a, b in zip(found[name], ref, strict=True))
                extra = sum(len(a - b) for a, b in zip(found[name], ref, strict=True))
                lost = sum(len(b - a) for a, b in zip(found[name], ref, strict=True))
                print(
                    f"{name:28s} took mean {statistics.mean(t):5.2f} ms"
                    f" p95 {statistics.quantiles(t, n=20)[18]:4.1f}"
                    f"  round trip mean {statistics.mean(w):5.2f} ms"
                    f" median {statistics.median(w):5.2f}"
                    f"  documents found {sum(len(a) for a in found[name])}"
                    f" (same set as {qnames[0]} in {same}/{len(ref)} queries,"
                    f" +{extra} -{lost})"
                )
        for q in qnames:
            es.indices.delete(index=PREFIX + q)


if __name__ == "__main__":
    main()
