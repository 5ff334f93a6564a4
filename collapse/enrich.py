"""Write-path enrichment: documents on their way to Elasticsearch get ``collapse_fp`` added.

The fingerprint is the one ``indexer ingest`` stores for the same document: the text of the
fields the target index records (``indexer.documents.document_text``; ``EnrichRules.fields``,
read by ``collapse.index_fields``), the host of the URL in the url field it records
(``TextFields.host_of``) and that host's boilerplate model stored by the indexer, all
fingerprinted as one batch by ``indexer.boilerplate.fingerprint_excluding`` with the indexer's
``PrepareConfig`` defaults. Documents without text (no non-empty body field) are forwarded as
they are, without a fingerprint, and counted.

The functions here do no I/O and are CPU work: the route runs them in a thread. Loading
boilerplate models (``ModelCache``) is the one async part, through the pooled ``Upstream``.

The fingerprint carries ``id`` (the document's ``_id``, base64: ``docs/CONTRACTS.md``) whenever
the ``_id`` is known before Elasticsearch sees the write: an explicit id in the URL or a bulk
item's ``_id`` (a string), and updates (their ``_id`` is required). A document whose id
Elasticsearch generates (``POST /{index}/_doc``, bulk ``index`` without ``_id``) gets none:
generating ids here would cost Elasticsearch its append-only optimisation; searches read such
documents the slower way.

Bulk items (NDJSON action/source pairs):

* ``index`` / ``create``: the source is fingerprinted;
* ``update`` with ``doc``: when ``doc`` sets a text field (or an object holding one) or ``url``,
  the stored document is read (one ``_mget`` for all such items), ``doc`` is merged over it
  (objects merged recursively, as Elasticsearch does) and the merged text's fingerprint is
  added to ``doc`` (with null over the fields an earlier fingerprint generation stored
  beside ``packed``, ``indexer.fingerprints.record.RETIRED_FIELDS``); a merged
  document without text gets ``collapse_fp: null`` (its old fingerprint no longer describes it).
  Such an update is sent conditional on the version read (``if_seq_no``/``if_primary_term``,
  :func:`guard_updates`), unless the client set its own; the route retries a refused one.
  A missing document with ``doc_as_upsert`` is fingerprinted from ``doc`` alone; an ``upsert``
  object is fingerprinted as a whole document. ``script`` updates are forwarded unchanged;
* ``delete``: forwarded unchanged.

Lines not changed are forwarded byte for byte; changed sources are re-serialised (compact JSON).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from collapse import jsonio
from collapse.credentials import Refused, is_refusal
from collapse.errors import BadRequest, UpstreamUnavailable
from collapse.upstream import Upstream
from indexer.boilerplate import HostModel, fingerprint_excluding
from indexer.boilerplate_store import (
    DEFAULT_STORE,
    MODEL_KEY,
    from_source,
    model_id,
    model_version,
)
from indexer.documents import DEFAULT_TEXT_FIELDS, DocumentError, TextFields, document_text
from indexer.fingerprints import FingerprintParams
from indexer.fingerprints.record import RETIRED_FIELDS
from indexer.hits import FINGERPRINT_FIELD
from indexer.prepare import PrepareConfig

__all__ = [
    "ACTIONS",
    "BulkItem",
    "EnrichRules",
    "ModelCache",
    "enrich",
    "merge_partial",
    "parse_bulk",
    "parse_document",
    "render_bulk",
]

ACTIONS = frozenset({"index", "create", "update", "delete"})
Doc = dict[str, Any]


class EnrichRules(BaseModel):
    """What to fingerprint and how: per target index, the text fields it records (the
    defaults for the others), fingerprinted with the indexer's defaults."""

    model_config = ConfigDict(frozen=True)

    fields: dict[str, TextFields] = {}
    prepare: PrepareConfig = PrepareConfig()

    @property
    def params(self) -> FingerprintParams:
        return self.prepare.params

    def fields_for(self, index: str | None) -> TextFields:
        """The text fields of the index a document goes to."""
        return self.fields.get(index, DEFAULT_TEXT_FIELDS) if index else DEFAULT_TEXT_FIELDS

    def touches_text(self, partial: Mapping[str, Any], index: str | None) -> bool:
        """True when a partial document changes what the fingerprint depends on."""
        return not self.fields_for(index).roots.isdisjoint(partial)


@dataclass(slots=True)
class BulkItem:
    """One bulk operation: its action line and, except for ``delete``, its source line."""

    action: str
    meta: Doc
    action_line: bytes
    source_line: bytes | None = None
    source: Doc | None = None
    changed: bool = False

    def target(self, default_index: str | None) -> str | None:
        index = self.meta.get("_index", default_index)
        return index if isinstance(index, str) else None

    def doc_id(self) -> str | None:
        """The ``_id`` this item names, when it is a non-empty string (None otherwise: an id
        Elasticsearch generates, or one it would read differently, such as a number)."""
        doc_id = self.meta.get("_id")
        return doc_id if isinstance(doc_id, str) and doc_id else None


@dataclass(slots=True)
class Target:
    """A document to fingerprint: where to put the result, and the text it stands for."""

    doc: Doc  # the text comes from here (a merged document for updates)
    index: str | None
    put_into: Doc  # collapse_fp is written into this object
    clear_without_text: bool = False  # updates: null the old fingerprint when text is gone
    owner: BulkItem | None = None  # marked changed when collapse_fp is written
    doc_id: str | None = None  # the document's _id when known (collapse_fp.id)

    def put(self, value: Doc | None) -> None:
        self.put_into[FINGERPRINT_FIELD] = value
        if self.owner is not None:
            self.owner.changed = True


@dataclass(slots=True)
class Outcome:
    """How many documents got a fingerprint and how many could not."""

    fingerprinted: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)


def parse_document(body: bytes) -> Doc:
    """A single document's body: a JSON object (BadRequest otherwise)."""
    return _object(body, "document")


def _object(line: bytes, what: str) -> Doc:
    try:
        value = jsonio.loads(line)
    except Exception as exc:  # orjson or json decode errors
        raise BadRequest(f"Malformed {what}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise BadRequest(f"Malformed {what}: expected a JSON object, got {type(value).__name__}")
    return value


def parse_bulk(body: bytes) -> list[BulkItem]:
    """The operations of a ``_bulk`` body; BadRequest (400) for any malformed line.

    Parsing is strict so that a malformed body reaches nothing: every action line must be an
    object with one known action, followed (except ``delete``) by a JSON object source line.
    """
    lines = [line for line in body.split(b"\n") if line.strip()]
    items: list[BulkItem] = []
    i = 0
    while i < len(lines):
        number = i + 1
        action_obj = _object(lines[i], f"action line {number}")
        if len(action_obj) != 1:
            raise BadRequest(
                f"Malformed action/metadata line [{number}], expected one action, "
                f"got {sorted(action_obj)}"
            )
        ((action, meta),) = action_obj.items()
        if action not in ACTIONS:
            raise BadRequest(
                f"Malformed action/metadata line [{number}], expected one of "
                f"{sorted(ACTIONS)} but found [{action}]"
            )
        if not isinstance(meta, dict):
            raise BadRequest(f"Malformed action/metadata line [{number}]: metadata not an object")
        item = BulkItem(action, meta, lines[i])
        i += 1
        if action != "delete":
            if i >= len(lines):
                raise BadRequest(f"Missing source line after action line [{number}] ({action})")
            item.source_line = lines[i]
            item.source = _object(lines[i], f"source line {i + 1}")
            i += 1
        items.append(item)
    return items


#: Concurrency controls of an update: when the client set one, the proxy adds none of its own.
CONCURRENCY_KEYS = frozenset(
    {"if_seq_no", "if_primary_term", "version", "version_type", "retry_on_conflict"}
)


def guard_updates(items: Sequence[BulkItem], versions: Mapping[int, tuple[int, int]]) -> list[int]:
    """Make each update fingerprinted from a stored document conditional on that document.

    The fingerprint of an update that touches the text is computed from the stored document
    read by ``_mget`` (``versions``: its ``_seq_no`` and ``_primary_term`` by position). A
    write landing in between would leave a fingerprint of text that is no longer stored: with
    ``if_seq_no``/``if_primary_term`` Elasticsearch refuses the update instead (409), and the
    write path reads again and retries. Updates carrying the client's own concurrency control
    are left as they are. Returns the positions guarded.
    """
    guarded = []
    for pos, (seq_no, primary_term) in versions.items():
        item = items[pos]
        if not item.changed or CONCURRENCY_KEYS & item.meta.keys():
            continue
        item.meta["if_seq_no"] = seq_no
        item.meta["if_primary_term"] = primary_term
        item.action_line = jsonio.dumps({item.action: item.meta})
        guarded.append(pos)
    return guarded


def is_version_conflict(result: Mapping[str, Any]) -> bool:
    """Whether one bulk item's (or an update's) answer is a refused conditional write."""
    error = result.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    return result.get("status") == 409 and kind == "version_conflict_engine_exception"


def render_bulk(items: Iterable[BulkItem]) -> bytes:
    """The NDJSON body to forward: unchanged lines as they came, changed sources re-serialised."""
    out: list[bytes] = []
    for item in items:
        out.append(item.action_line)
        if item.source is not None:
            out.append(jsonio.dumps(item.source) if item.changed else item.source_line or b"{}")
    return b"\n".join(out) + b"\n"


#: Read with an update's stored text: a model named there is cleared when none applies now,
#: and so are the fields earlier generations stored beside ``packed``.
_STORED_FP = [f"{FINGERPRINT_FIELD}.{name}" for name in (MODEL_KEY, *RETIRED_FIELDS)]


def update_lookups(
    items: Sequence[BulkItem],
    default_index: str | None,
    default_routing: str | None,
    rules: EnrichRules,
) -> list[tuple[int, Doc]]:
    """(item position, ``_mget`` entry) of the updates whose partial doc touches the text."""
    out = []
    for pos, item in enumerate(items):
        if item.action != "update" or item.source is None:
            continue
        doc = item.source.get("doc")
        index, doc_id = item.target(default_index), item.meta.get("_id")
        if not isinstance(doc, dict) or not index or not doc_id:
            continue
        if not rules.touches_text(doc, index):
            continue
        entry: Doc = {
            "_index": index,
            "_id": str(doc_id),
            "_source": [*rules.fields_for(index).names, rules.fields_for(index).url, *_STORED_FP],
        }
        routing = item.meta.get("routing", default_routing)
        if routing is not None:
            entry["routing"] = str(routing)
        out.append((pos, entry))
    return out


def targets(
    items: Sequence[BulkItem],
    default_index: str | None,
    stored: Mapping[int, Doc | None],
    rules: EnrichRules,
) -> tuple[list[Target], int]:
    """What to fingerprint in a bulk, and how many operations are left without a fingerprint.

    ``stored`` maps an update's position to the stored source read by ``_mget`` (None: the
    document does not exist).
    """
    out: list[Target] = []
    skipped = 0
    for pos, item in enumerate(items):
        src, index, doc_id = item.source, item.target(default_index), item.doc_id()
        if src is None:
            continue  # delete
        if item.action in ("index", "create"):
            out.append(Target(src, index, src, owner=item, doc_id=doc_id))
            continue
        upsert = src.get("upsert")
        if isinstance(upsert, dict):
            out.append(Target(upsert, index, upsert, owner=item, doc_id=doc_id))
        doc = src.get("doc")
        if not isinstance(doc, dict):
            skipped += 1  # script update: its result is not known here
            continue
        if pos not in stored:
            continue  # the partial doc leaves text and url alone: the fingerprint still holds
        base = stored[pos]
        if base is None:
            if src.get("doc_as_upsert") is True:
                out.append(Target(doc, index, doc, owner=item, doc_id=doc_id))
            continue  # Elasticsearch answers document_missing (or applies the upsert)
        merged = merge_partial(base, doc)
        out.append(Target(merged, index, doc, clear_without_text=True, owner=item, doc_id=doc_id))
    return out, skipped


def merge_partial(stored: Doc, partial: Doc) -> Doc:
    """A partial update's ``doc`` merged over the stored source as Elasticsearch merges it:
    objects key by key, recursively; any other value replaced."""
    out = dict(stored)
    for key, value in partial.items():
        have = out.get(key)
        out[key] = (
            merge_partial(have, value)
            if isinstance(have, dict) and isinstance(value, dict)
            else value
        )
    return out


def enrich(
    targets_: Sequence[Target], models: Mapping[tuple[str, str], HostModel], rules: EnrichRules
) -> Outcome:
    """Fingerprint every target as one batch and write ``collapse_fp`` into it (CPU work)."""
    outcome = Outcome()
    texts: list[str] = []
    chosen: list[Target] = []
    for target in targets_:
        try:
            texts.append(document_text(target.doc, rules.fields_for(target.index)))
        except DocumentError as exc:
            outcome.skipped += 1
            outcome.reasons.append(str(exc))
            if target.clear_without_text:
                target.put(None)
            continue
        chosen.append(target)
    if not chosen:
        return outcome
    host_models = [
        models.get((t.index, host))
        if t.index and (host := rules.fields_for(t.index).host_of(t.doc))
        else None
        for t in chosen
    ]
    arrays, _ = fingerprint_excluding(
        texts,
        rules.params,
        host_models,
        rules.prepare.max_removed,
        rules.prepare.min_remaining,
    )
    for i, target in enumerate(chosen):
        fp = arrays.record(i).to_es(target.doc_id)
        tag = rules.fields_for(target.index).stored_tag
        if tag is not None:
            fp["fields"] = tag
        model = host_models[i]
        had = target.doc.get(FINGERPRINT_FIELD) or {}
        if model is not None:
            fp[MODEL_KEY] = model_version(model)
        elif had.get(MODEL_KEY) is not None:
            fp[MODEL_KEY] = None  # an update's stored one would stay (objects are merged)
        fp.update({name: None for name in RETIRED_FIELDS if had.get(name) is not None})
        target.put(fp)
    outcome.fingerprinted = len(chosen)
    return outcome


def hosts_needed(targets_: Iterable[Target], rules: EnrichRules) -> set[tuple[str, str]]:
    """The (index, host) pairs whose boilerplate models the targets may need."""
    out = set()
    for target in targets_:
        if not target.index:
            continue
        host = rules.fields_for(target.index).host_of(target.doc)
        if host:
            out.add((target.index, host))
    return out


class ModelCache:
    """Host boilerplate models read from the indexer's store, cached for ``ttl`` seconds.

    Misses of one request are loaded with one ``_mget``; absent models are cached too (most
    hosts have none). A missing store index means no models at all.
    """

    def __init__(
        self,
        upstream: Upstream,
        version: str,
        store: str = DEFAULT_STORE,
        ttl: float = 60.0,
        max_entries: int = 50_000,
    ) -> None:
        self.upstream = upstream
        self.version = version
        self.store = store
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: dict[tuple[str, str], tuple[float, HostModel | None]] = {}

    async def get(
        self, keys: Iterable[tuple[str, str]], headers: Mapping[str, str] | None = None
    ) -> dict[tuple[str, str], HostModel]:
        """The models of the (index, host) pairs that have one; misses are read with
        ``headers`` (the client's credentials, ``collapse.credentials``)."""
        now = time.monotonic()
        out: dict[tuple[str, str], HostModel] = {}
        missing: list[tuple[str, str]] = []
        for key in keys:
            entry = self._entries.get(key)
            if entry is None or entry[0] < now:
                missing.append(key)
            elif entry[1] is not None:
                out[key] = entry[1]
        if missing:
            loaded = await self._load(missing, headers or {})
            if len(self._entries) + len(missing) > self.max_entries:
                self._entries.clear()
            for key in missing:
                model = loaded.get(key)
                self._entries[key] = (now + self.ttl, model)
                if model is not None:
                    out[key] = model
        return out

    async def _load(
        self, keys: Sequence[tuple[str, str]], headers: Mapping[str, str]
    ) -> dict[tuple[str, str], HostModel]:
        by_id = {model_id(index, self.version, host): (index, host) for index, host in keys}
        answer = await self.upstream.request(
            "POST",
            f"/{self.store}/_mget",
            content=jsonio.dumps({"ids": sorted(by_id)}),
            headers={**headers, "content-type": "application/json"},
        )
        if answer.status_code == 404:
            return {}
        if is_refusal(answer):
            raise Refused(answer)
        if answer.status_code >= 300:
            raise UpstreamUnavailable(
                f"could not read the boilerplate models from {self.store!r} "
                f"(Elasticsearch answered {answer.status_code})"
            )
        out = {}
        for doc in jsonio.loads(answer.content).get("docs", []):
            key = by_id.get(doc.get("_id"))
            if key is not None and doc.get("found"):
                out[key] = from_source(doc["_source"])
        return out
