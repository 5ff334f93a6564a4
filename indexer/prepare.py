"""Worker side of ingestion: raw input -> validated document -> fingerprinted bulk body.

Runs in worker processes (``multiprocessing``), a batch at a time, so parsing, HTML
extraction and fingerprinting use every core. Each raw item becomes a :class:`Ready`
(id + serialized ``_source`` with ``collapse_fp``, whose ``id`` is that id) or a
:class:`~indexer.rejects.Reject`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from pydantic import BaseModel

from indexer.boilerplate import (
    MODEL_KEY,
    Features,
    HostModel,
    PageSets,
    doc_shingle_sets,
    features,
    fingerprint_excluding,
    fingerprint_features,
    model_version,
    shingle_sets,
)
from indexer.documents import (
    DEFAULT_TEXT_FIELDS,
    MAX_ID_BYTES,
    DocumentError,
    TextFields,
    content_id,
    document_text,
)
from indexer.encoding import NotTextError, decode_html
from indexer.fingerprints import FingerprintParams
from indexer.hits import FINGERPRINT_FIELD
from indexer.lines import LineBatch, action_line
from indexer.rejects import Reject
from indexer.sources import UNREADABLE, RawItem

if TYPE_CHECKING:
    from indexer.extract import Extracted

__all__ = [
    "Featured",
    "Parsed",
    "PrepareConfig",
    "Prepared",
    "Ready",
    "finish_batch",
    "finish_lines",
    "learn_batch",
    "pack",
    "parse",
    "prepare_batch",
    "prepare_lines",
    "prepare_unmodelled",
    "sample_batch",
    "tagged",
]


class PrepareConfig(BaseModel):
    """Everything a worker needs besides the items (picklable)."""

    params: FingerprintParams = FingerprintParams()
    text_fields: TextFields = DEFAULT_TEXT_FIELDS
    max_doc_bytes: int = 10 * 1024 * 1024
    max_removed: float = 1.0
    min_remaining: int = 10


@dataclass(slots=True)
class Parsed:
    """A valid document: its ``_source``, text to fingerprint, id and host."""

    seq: int
    id: str
    source: dict[str, Any]
    text: str
    host: str | None


@dataclass(slots=True)
class Ready:
    """A document ready for the bulk request: id and serialized ``_source``."""

    seq: int
    id: str
    body: bytes
    removed: float  # share of shingles left out as host boilerplate

    def __reduce__(self) -> tuple[type[Ready], tuple[int, str, bytes, float]]:
        return Ready, (self.seq, self.id, self.body, self.removed)  # a tuple: cheap to pickle


@dataclass(slots=True)
class Prepared:
    """A batch's outcome as the main process wants it: NDJSON lines to send, and rejects."""

    lines: LineBatch
    rejects: list[Reject]

    def __reduce__(self) -> tuple[type[Prepared], tuple[LineBatch, list[Reject]]]:
        return Prepared, (self.lines, self.rejects)


def pack(outcomes: Sequence[Ready | Reject]) -> Prepared:
    """Outcomes in input order -> the bulk lines of the Ready ones, and the rejects."""
    seqs: list[int] = []
    ids: list[str] = []
    lines: list[bytes] = []
    rejects: list[Reject] = []
    for out in outcomes:
        if isinstance(out, Ready):
            seqs.append(out.seq)
            ids.append(out.id)
            lines.append(action_line(out.id, out.body))
        else:
            rejects.append(out)
    return Prepared(LineBatch(seqs, ids, lines), rejects)


def _page(html: str) -> Extracted:
    from indexer.extract import extract  # the extractor only where HTML is seen

    return extract(html)


def _from_html(html: str, fields: TextFields) -> dict[str, Any]:
    """A page's main text in the first named text field that is not ``title``, its title in
    ``title`` and its canonical URL in the url field (``url`` by default)."""
    page = _page(html)
    doc: dict[str, Any] = {}
    if page.title:
        doc["title"] = page.title
    _put(doc, fields.html_field, page.text)
    if page.canonical_url:
        _put(doc, fields.url, page.canonical_url)
    return doc


def _put(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set the dot path ``path`` of ``doc`` to ``value`` (objects made on the way)."""
    *parents, last = path.split(".")
    for key in parents:
        inner = doc.get(key)
        if not isinstance(inner, dict):
            inner = doc[key] = {}
        doc = inner
    doc[last] = value


def _has_text(doc: dict[str, Any], fields: TextFields) -> bool:
    try:
        document_text(doc, fields)
    except DocumentError:
        return False
    return True


_FAILED: Any = object()


def _fast_json(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _FAILED


def _dumps(source: dict[str, Any]) -> bytes:
    """``_source`` as compact UTF-8 JSON (orjson; the standard library for what it refuses)."""
    try:
        return orjson.dumps(source)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(source, ensure_ascii=False).encode("utf-8", "surrogatepass")


def parse(
    item: RawItem, max_doc_bytes: int, fields: TextFields = DEFAULT_TEXT_FIELDS
) -> Parsed | Reject:
    """Validate one raw item (size, encoding, JSON, text in ``fields``) or say why it is
    rejected."""

    def reject(reason: str) -> Reject:
        return Reject.of(item.seq, item.source, item.line, reason, item.data)

    if item.kind == UNREADABLE:  # the rest of an input that could not be read: why
        return Reject.of(item.seq, item.source, item.line, item.data.decode(), None)
    if len(item.data) > max_doc_bytes:
        return reject(
            f"document is {len(item.data)} bytes, over the limit of {max_doc_bytes}"
            " (--max-doc-bytes)"
        )
    # fast path: orjson validates UTF-8 and parses strictly; whatever it refuses (bad input,
    # but also NaN, lone surrogates, integers over 64 bits) takes the standard library path,
    # which decides and words the reject reason exactly as before.
    doc = _fast_json(item.data) if item.kind == "jsonl" else _FAILED
    if doc is _FAILED:
        try:
            raw = decode_html(item.data) if item.kind == "html" else item.data.decode("utf-8")
        except NotTextError as exc:
            return reject(str(exc))
        except UnicodeDecodeError as exc:
            return reject(f"invalid UTF-8 at byte {exc.start}")
        if item.kind == "html":
            doc = _from_html(raw, fields)
            if fields.url_of(doc) is None:
                _put(doc, fields.url, Path(item.source).resolve().as_uri())
            doc["source_path"] = item.source
        else:
            try:
                doc = json.loads(raw)
            except json.JSONDecodeError as exc:
                return reject(f"malformed JSON: {exc.msg} at column {exc.colno}")
    if item.kind == "jsonl":
        if not isinstance(doc, dict):
            return reject(f"not a JSON object (got {type(doc).__name__})")
        html = doc.get("html")
        if isinstance(html, str) and html.strip() and not _has_text(doc, fields):
            page = _page(html)
            _put(doc, fields.html_field, page.text)
            if "title" not in doc and page.title:
                doc["title"] = page.title
    try:
        text = document_text(doc, fields)
    except DocumentError as exc:
        return reject(str(exc))
    raw_id = doc.get("id")
    if raw_id is None or raw_id == "":
        doc_id = content_id(text, fields.url_of(doc))
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
        doc_id = str(raw_id)
    else:
        return reject(f"field 'id' must be a string or an integer, got {type(raw_id).__name__}")
    try:
        id_bytes = len(doc_id.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800" escaped in the JSON)
        return reject(f"id is not valid Unicode (lone surrogate at character {exc.start})")
    if id_bytes > MAX_ID_BYTES:
        return reject(f"id is longer than {MAX_ID_BYTES} bytes")
    return Parsed(item.seq, doc_id, doc, text, fields.host_of(doc))


def _prepare(
    items: Sequence[RawItem], config: PrepareConfig, models: Mapping[str, HostModel]
) -> tuple[list[Any], list[Parsed], list[bytes], list[float]]:
    """Parse and fingerprint a batch: outcomes in order (Parsed or Reject), the Parsed ones,
    their ``collapse_fp`` JSON (with ``id``: each one's ``_id``) and the share of shingles
    removed as boilerplate."""
    out: list[Any] = [parse(it, config.max_doc_bytes, config.text_fields) for it in items]
    good = [o for o in out if isinstance(o, Parsed)]
    if not good:
        return out, good, [], []
    used = [models.get(g.host) if g.host else None for g in good]
    arrays, removed = fingerprint_excluding(
        [g.text for g in good],
        config.params,
        used,
        config.max_removed,
        config.min_remaining,
    )
    fps = tagged(arrays.to_es_json_many([g.id for g in good]), config.text_fields, used)
    return out, good, fps, removed.tolist()


def prepare_batch(
    items: Sequence[RawItem], config: PrepareConfig, models: Mapping[str, HostModel]
) -> list[Ready | Reject]:
    """Parse, fingerprint (minus host boilerplate) and serialize a batch, in input order."""
    out, good, fps, shares = _prepare(items, config, models)
    return _serialise(out, good, fps, shares) if good else out


def prepare_lines(
    items: Sequence[RawItem], config: PrepareConfig, models: Mapping[str, HostModel]
) -> Prepared:
    """``pack(prepare_batch(...))`` without the intermediate objects (the workers' form)."""
    out, good, fps, _ = _prepare(items, config, models)
    return _lines(out, good, fps)


def prepare_unmodelled(
    items: Sequence[RawItem], config: PrepareConfig
) -> tuple[Prepared, set[str]]:
    """``prepare_lines`` with no host model, and the hosts of the batch's documents.

    The lines are those ``prepare_lines`` gives with any models that hold none of those
    hosts: ingest fingerprints ahead this way while the host models are still being decided.
    """
    out, good, fps, _ = _prepare(items, config, {})
    return _lines(out, good, fps), {g.host for g in good if g.host}


def tagged(
    fps: list[bytes], fields: TextFields, models: Sequence[HostModel | None] | None = None
) -> list[bytes]:
    """Compact ``collapse_fp`` JSON objects with ``"fields"`` added when ``fields`` are not
    the defaults (:attr:`~indexer.documents.TextFields.stored_tag`): the text fields a
    fingerprint was computed from, so that ``indexer backfill`` redoes the others; then
    ``"model"``, the version of the host model each was fingerprinted with (``models``, one
    per fingerprint; none: no key)."""
    tag = fields.stored_tag
    if tag is not None:
        tail = b',"fields":' + orjson.dumps(tag) + b"}"
        fps = [fp[:-1] + tail for fp in fps]
    if models is None or not any(m is not None for m in models):
        return fps
    return [
        fp if m is None else fp[:-1] + _MODEL_KEY + model_version(m).encode("ascii") + b'"}'
        for fp, m in zip(fps, models, strict=True)
    ]


_MODEL_KEY = b',"' + MODEL_KEY.encode("ascii") + b'":"'


_FP_KEY = b',"' + FINGERPRINT_FIELD.encode("ascii") + b'":'


def _bodies(good: list[Parsed], fps: list[bytes]) -> list[bytes]:
    """Each good document's ``_source`` with ``collapse_fp`` (``fps``: its compact JSON).

    The bytes are those of serialising the document with ``collapse_fp`` added as its last
    key; the fingerprint's JSON is spliced in rather than re-serialised. Documents that carry
    a ``collapse_fp`` of their own (replaced in place) or that orjson refuses take the dict
    path.
    """
    out: list[bytes] = []
    for g, fp in zip(good, fps, strict=True):
        source = _source_json(g)
        out.append(_slow_body(g, fp) if source is None else source[:-1] + _FP_KEY + fp + b"}")
    return out


def _source_json(g: Parsed) -> bytes | None:
    """The document's ``_source`` as orjson writes it, when ``collapse_fp`` can be spliced in
    (None: the document has its own, or orjson refuses it)."""
    if FINGERPRINT_FIELD in g.source:
        return None
    try:
        return orjson.dumps(g.source)
    except (orjson.JSONEncodeError, TypeError):
        return None


def _slow_body(g: Parsed, fp: bytes) -> bytes:
    g.source[FINGERPRINT_FIELD] = orjson.loads(fp)
    return _dumps(g.source)


def _action_lines(good: list[Parsed], fps: list[bytes]) -> list[bytes]:
    """``action_line(g.id, body)`` of each of :func:`_bodies`, each spliced in one copy."""
    out: list[bytes] = []
    for g, fp in zip(good, fps, strict=True):
        source = _source_json(g)
        if source is None:
            out.append(action_line(g.id, _slow_body(g, fp)))
        else:
            head = orjson.dumps(g.id)
            out.append(
                b"".join((_ACTION, head, _SOURCE, memoryview(source)[:-1], _FP_KEY, fp, _END))
            )
    return out


_ACTION, _SOURCE, _END = b'{"index":{"_id":', b"}}\n", b"}\n"  # action_line's pieces


def _serialise(
    out: list[Any], good: list[Parsed], fps: list[bytes], shares: list[float]
) -> list[Ready | Reject]:
    ready = {
        g.seq: Ready(g.seq, g.id, body, share)
        for g, body, share in zip(good, _bodies(good, fps), shares, strict=True)
    }
    return [ready[o.seq] if isinstance(o, Parsed) else o for o in out]


def _lines(out: list[Any], good: list[Parsed], fps: list[bytes]) -> Prepared:
    ids = [g.id for g in good]
    return Prepared(
        LineBatch(
            [g.seq for g in good],
            ids,
            _action_lines(good, fps),
        ),
        [o for o in out if not isinstance(o, Parsed)],
    )


@dataclass(slots=True)
class Featured:
    """A batch of the learning sample, parsed and featurised, waiting for the host models.

    ``out``: in input order, a Reject or a Parsed (text dropped) for every item at or after
    the resume point; ``good``: the Parsed of ``out``, whose features are ``features``.
    """

    out: list[Any]
    good: list[Parsed]
    features: Features | None


def sample_batch(
    items: Sequence[RawItem], config: PrepareConfig, start: int = 0
) -> tuple[list[tuple[str, PageSets]], Featured]:
    """One batch of the learning sample, parsed and tokenised once for both uses.

    Returns what :func:`learn_batch` returns (for every page with a host, also those before
    ``start``, already settled by an earlier run) and the items at or after ``start`` ready
    for :func:`finish_batch` once the models are known.
    """
    parsed = [parse(it, config.max_doc_bytes, config.text_fields) for it in items]
    good = [p for p in parsed if isinstance(p, Parsed)]
    feats = features([g.text for g in good], config.params) if good else None
    learn: list[tuple[str, PageSets]] = []
    if feats is not None:
        for g, sets in zip(good, shingle_sets(feats), strict=True):
            if g.host:
                learn.append((g.host, sets))
        if start > 0:  # keep the features of the documents still to index only
            keep = np.fromiter((g.seq >= start for g in good), dtype=bool, count=len(good))
            if not keep.all():
                feats = feats.take(keep)
                good = [g for g in good if g.seq >= start]
    for g in good:
        g.text = ""  # not needed any more; smaller to send back
    out = [o for o in parsed if o.seq >= start]
    return learn, Featured(out, good, feats if good else None)


def _finish(
    batch: Featured, config: PrepareConfig, models: Mapping[str, HostModel]
) -> tuple[list[bytes], list[float]]:
    """The ``collapse_fp`` JSON of a featurised batch's documents and the share removed."""
    assert batch.features is not None
    used = [models.get(g.host) if g.host else None for g in batch.good]
    arrays, removed = fingerprint_features(
        batch.features,
        config.params,
        used,
        config.max_removed,
        config.min_remaining,
    )
    fps = tagged(arrays.to_es_json_many([g.id for g in batch.good]), config.text_fields, used)
    return fps, removed.tolist()


def finish_batch(
    batch: Featured, config: PrepareConfig, models: Mapping[str, HostModel]
) -> list[Ready | Reject]:
    """:func:`prepare_batch` of a :func:`sample_batch` result (same output, no second parse)."""
    if not batch.good or batch.features is None:
        return batch.out
    return _serialise(batch.out, batch.good, *_finish(batch, config, models))


def finish_lines(
    batch: Featured, config: PrepareConfig, models: Mapping[str, HostModel]
) -> Prepared:
    """``pack(finish_batch(...))`` without the intermediate objects (the workers' form)."""
    if not batch.good or batch.features is None:
        return _lines(batch.out, [], [])
    return _lines(batch.out, batch.good, _finish(batch, config, models)[0])


def learn_batch(items: Sequence[RawItem], config: PrepareConfig) -> list[tuple[str, PageSets]]:
    """For the learning pass: (host, what the page teaches its model) per page."""
    outcomes = (parse(it, config.max_doc_bytes, config.text_fields) for it in items)
    parsed = [p for p in outcomes if isinstance(p, Parsed)]
    hosted = [p for p in parsed if p.host]
    sets = doc_shingle_sets([p.text for p in hosted], config.params)
    return [(p.host, s) for p, s in zip(hosted, sets, strict=True)]  # type: ignore[misc]
