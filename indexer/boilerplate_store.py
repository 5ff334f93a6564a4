"""Host boilerplate models persisted in Elasticsearch, so single-document writes use them too.

One document per (target index, fingerprint version, host) in the index
``collapse-boilerplate`` (configurable): the two shingle hash sets and the template slots'
line heads as ES ``binary`` (sorted little-endian uint64, base64), never indexed; ``index``,
``host`` and ``version`` as keywords.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import numpy as np
from elasticsearch import Elasticsearch, helpers

from indexer.boilerplate import HostModel

__all__ = ["DEFAULT_STORE", "STORE_MAPPINGS", "load_models", "model_id", "save_models"]

DEFAULT_STORE = "collapse-boilerplate"
_PROPERTIES: dict[str, dict[str, str]] = {
    "index": {"type": "keyword"},
    "host": {"type": "keyword"},
    "version": {"type": "keyword"},
    "pages": {"type": "integer"},
    "simhash_hashes": {"type": "binary"},
    "minhash_hashes": {"type": "binary"},
    "slot_heads": {"type": "binary"},
    "learned_at": {"type": "date"},
}
STORE_MAPPINGS = {"dynamic": "strict", "properties": _PROPERTIES}


def model_id(index: str, version: str, host: str) -> str:
    """Document id of one host's model."""
    return f"{index}|{version}|{host}"


def _pack(a: np.ndarray) -> str:
    return base64.b64encode(np.asarray(a, dtype="<u8").tobytes()).decode("ascii")


def _unpack(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype="<u8").astype(np.uint64)


def save_models(
    es: Elasticsearch,
    index: str,
    version: str,
    models: Iterable[HostModel],
    store: str = DEFAULT_STORE,
) -> int:
    """Store (replace) the models of ``index``; returns how many were written."""
    if not es.indices.exists(index=store).body:
        es.options(ignore_status=400).indices.create(index=store, mappings=STORE_MAPPINGS)
    else:  # a store made before a field was added gains it (adding a field is always allowed)
        es.indices.put_mapping(index=store, properties=_PROPERTIES)
    now = datetime.now(UTC).isoformat()
    actions = (
        {
            "_index": store,
            "_id": model_id(index, version, m.host),
            "_source": {
                "index": index,
                "host": m.host,
                "version": version,
                "pages": m.pages,
                "simhash_hashes": _pack(m.simhash_hashes),
                "minhash_hashes": _pack(m.minhash_hashes),
                "slot_heads": _pack(m.slot_heads),
                "learned_at": now,
            },
        }
        for m in models
    )
    # no refresh: every reader (``load_models``, the proxy's ``ModelCache``) uses ``_mget``,
    # which is real-time, so waiting for a refresh only delayed ingestion (up to 1 s).
    ok, _ = helpers.bulk(es, actions, chunk_size=200)
    return int(ok)


def from_source(source: Mapping[str, object]) -> HostModel:
    """A model from its stored document."""
    return HostModel(
        host=str(source["host"]),
        pages=int(source["pages"]),  # type: ignore[call-overload]
        simhash_hashes=_unpack(str(source["simhash_hashes"])),
        minhash_hashes=_unpack(str(source["minhash_hashes"])),
        slot_heads=_unpack(str(source.get("slot_heads", ""))),
    )


def load_models(
    es: Elasticsearch, index: str, version: str, hosts: Iterable[str], store: str = DEFAULT_STORE
) -> dict[str, HostModel]:
    """The stored models of ``hosts`` for ``index`` (missing hosts or store: none)."""
    ids = sorted({model_id(index, version, h) for h in hosts})
    out: dict[str, HostModel] = {}
    for start in range(0, len(ids), 1000):
        answer = es.options(ignore_status=404).mget(index=store, ids=ids[start : start + 1000])
        for doc in answer.body.get("docs", []):
            if doc.get("found"):
                model = from_source(doc["_source"])
                out[model.host] = model
    return out
