"""Helpers for the proxy tests: indices with the fingerprint mapping, texts, fingerprints.

Texts are drawn from a fixed vocabulary with a seeded generator, so every run indexes the same
documents; fingerprints are computed by the indexer (``fingerprint_batch``) or, where a test
needs exact distances, built by hand in the stored shape (``synthetic_fp``).
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch, helpers

from indexer.fingerprints import FingerprintParams, fingerprint_batch, split, to_signed
from indexer.fingerprints.blocks import block_hex
from indexer.fingerprints.minhash import value_dtype
from indexer.fingerprints.numbers import CELLS
from indexer.fingerprints.packed import pack_many
from indexer.fingerprints.record import encode_id
from indexer.mapping import index_mappings

PARAMS = FingerprintParams()
_VOCABULARY = (
    "market council river energy station report policy minister company shares storm coast "
    "village school hospital budget election court judge police officer museum festival "
    "bridge railway airport harbour factory worker union strike price growth farmer harvest "
    "drought flood rescue team season match player coach league stadium record science "
    "research study university climate ocean forest mountain valley desert island city "
    "mayor plan housing rent traffic cyclist engine battery solar wind turbine grid network "
    "software update security breach data privacy court appeal ruling law vote senate "
    "governor treaty border trade export import tariff currency bank interest inflation "
    "retail store online delivery parcel winter summer spring autumn morning evening night "
    "garden library concert theatre gallery painter author novel poet history archive"
)
_WORDS = _VOCABULARY.split()


def create_index(es: Elasticsearch, name: str, **properties: Any) -> None:
    """An index with one shard (stable scores), the fingerprint mapping and ``properties``."""
    mappings = index_mappings(PARAMS)
    mappings["properties"].update(
        {"title": {"type": "text"}, "body": {"type": "text"}, "n": {"type": "integer"}}
    )
    mappings["properties"].update(properties)
    es.indices.create(
        index=name,
        mappings=mappings,
        settings={"number_of_shards": 1, "number_of_replicas": 0},
    )


def text(rng: random.Random, words: int, topic: str = "") -> str:
    """A text of random vocabulary words (unrelated texts share few shingles)."""
    out = [rng.choice(_WORDS) for _ in range(words)]
    if topic:
        for i in range(0, words, 7):
            out[i] = topic
    return " ".join(out)


_OUTLETS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def variants(base: str, n: int, rng: random.Random, changes: int = 3) -> list[str]:
    """``n`` syndicated copies of ``base``: an outlet header and footer, a few words changed."""
    words = base.split()
    out = []
    for k in range(n):
        copy = list(words)
        for _ in range(changes):
            copy[rng.randrange(len(copy))] = rng.choice(_WORDS)
        # outlets by name: a number in the same frame words on every copy would make the
        # copies documents of their own (indexer.grouping: numbers keep their meaning)
        name = _OUTLETS[k % len(_OUTLETS)] + "x" * (k // len(_OUTLETS))
        out.append(f"Outlet {name} news desk. " + " ".join(copy) + f" Copyright outlet {name}.")
    return out


def fingerprints(texts: list[str]) -> list[dict[str, Any]]:
    """The stored ``collapse_fp`` objects of texts, computed by the indexer."""
    return [record.to_es() for record in fingerprint_batch(texts, PARAMS)]


def synthetic_fp(
    simhash: int,
    minhash: np.ndarray,
    *,
    token_count: int = 200,
    exact_key: str | None = None,
    numbers: np.ndarray | None = None,
) -> dict[str, Any]:
    """A ``collapse_fp`` with chosen values (exact distances for tests of the grouping rule;
    no numbers unless ``numbers`` is given)."""
    doc: dict[str, Any] = {"version": PARAMS.version, "simhash": to_signed(simhash)}
    for i, block in enumerate(split(simhash, PARAMS.blocks)):
        doc[f"block_{i}"] = block_hex(block, PARAMS.blocks)
    doc["exact_key"] = exact_key or format(simhash, "064x")
    doc["token_count"] = token_count
    cells = np.zeros(CELLS, dtype=np.uint32) if numbers is None else numbers
    doc["packed"] = pack_many(
        PARAMS,
        np.array([simhash], dtype=np.uint64),
        np.array([token_count]),
        [doc["exact_key"]],
        np.asarray(minhash, dtype=value_dtype(PARAMS.minhash_bits))[None, :],
        np.asarray(cells, dtype=np.uint32)[None, :],
    )[0]
    return doc


def flip(simhash: int, bits: list[int]) -> int:
    """``simhash`` with the given bit positions flipped."""
    for b in bits:
        simhash ^= 1 << b
    return simhash


def index_docs(es: Elasticsearch, index: str, docs: list[dict[str, Any]]) -> None:
    """Bulk-load documents (each with its ``_id``) and make them searchable. Their fingerprint
    gets ``id`` as the indexer's writers store it (what reads from doc values use)."""
    actions = []
    for doc in docs:
        fp = doc.get("collapse_fp")
        if isinstance(fp, dict) and "_id" in doc and "id" not in fp:
            fp = {**fp, "id": encode_id(str(doc["_id"]))}
        if fp is not doc.get("collapse_fp"):
            doc = {**doc, "collapse_fp": fp}
        actions.append({"_index": index, **doc})
    ok, errors = helpers.bulk(es, actions, refresh="wait_for")
    assert (ok, errors) == (len(docs), [])


def index_texts(es: Elasticsearch, index: str, texts: dict[str, str]) -> None:
    """A new index holding one document per text (``_id`` its key, ``body`` the text, ``n`` its
    place in ``texts`` to sort on), fingerprinted by the indexer."""
    create_index(es, index)
    fps = fingerprints(list(texts.values()))
    docs = [
        {"_id": i, "n": k, "body": t, "collapse_fp": fp}
        for k, ((i, t), fp) in enumerate(zip(texts.items(), fps, strict=True))
    ]
    index_docs(es, index, docs)


def without_took(body: bytes | str) -> dict[str, Any]:
    """A search answer's JSON without its timings (``took``, ``collapse.took_ms``, also of
    each ``_msearch`` response): what two answers to one search share."""
    out = json.loads(body)
    out.pop("took", None)
    out.get("collapse", {}).pop("took_ms", None)
    for item in out.get("responses", []):
        item.pop("took", None)
        item.get("collapse", {}).pop("took_ms", None)
    return dict(out)
