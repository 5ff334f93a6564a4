"""Host boilerplate models persisted in Elasticsearch: learnt once per host, shared by every
writer (parallel ingesters, the proxy's write path, backfill, lookup).

One document per (target index, fingerprint version, host) in the index
``collapse-boilerplate`` (configurable): the two shingle hash sets and the template slots'
line heads as ES ``binary`` (sorted little-endian uint64, base64), never indexed; ``index``,
``host``, ``version`` and ``model`` as keywords. ``model`` is the model's own version
(:func:`model_version`, a hash of what it cuts): a document fingerprinted with a host model
carries it as ``collapse_fp.model`` (:data:`MODEL_KEY`), so one can tell which model made a
fingerprint.

``save_models(..., replace=False)`` stores a model only where its host has none: ingesters
learning the same host at the same moment all end up with the first one stored.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import numpy as np
from elasticsearch import BadRequestError, Elasticsearch, helpers

from indexer.boilerplate import MODEL_KEY, HostModel, model_version

__all__ = [
    "DEFAULT_STORE",
    "MODEL_KEY",
    "STORE_MAPPINGS",
    "ensure_store",
    "load_models",
    "model_id",
    "model_version",
    "save_models",
]

DEFAULT_STORE = "collapse-boilerplate"
_PROPERTIES: dict[str, dict[str, str]] = {
    "index": {"type": "keyword"},
    "host": {"type": "keyword"},
    "version": {"type": "keyword"},
    "model": {"type": "keyword"},
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


def ensure_store(es: Elasticsearch, store: str = DEFAULT_STORE) -> None:
    """Create the store index, or add fields it lacks (adding a field is always allowed).

    A store that another writer creates at the same moment counts as created."""
    if es.indices.exists(index=store).body:
        es.indices.put_mapping(index=store, properties=_PROPERTIES)
        return
    try:
        es.indices.create(index=store, mappings=STORE_MAPPINGS)
    except BadRequestError as exc:
        if exc.error != "resource_already_exists_exception":
            raise


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
    *,
    replace: bool = True,
) -> int:
    """Store the models of ``index``; returns how many were written.

    ``replace`` False: a host that has a stored model keeps it (the first writer wins), and
    its model here is not written."""
    ensure_store(es, store)
    now = datetime.now(UTC).isoformat()
    actions = (
        {
            "_op_type": "index" if replace else "create",
            "_index": store,
            "_id": model_id(index, version, m.host),
            "_source": {
                "index": index,
                "host": m.host,
                "version": version,
                "model": model_version(m),
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
    written = 0
    for ok, item in helpers.streaming_bulk(es, actions, chunk_size=200, raise_on_error=False):
        if ok:
            written += 1
        elif replace or item.get("create", {}).get("status") != 409:
            raise helpers.BulkIndexError("a boilerplate model was not stored", [item])
    return written


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
