"""The Elasticsearch mapping of the fingerprint object ``collapse_fp``, and ``init``.

Field by field (shape in ``docs/CONTRACTS.md``), as ``init`` creates them::

    simhash      long, index: false      never searched (read from _source or doc values)
    minhash      binary                  the second hash, stored in _source only
    packed       binary, doc values      every value a search reads, packed (``packed.py``)
    id           binary, doc values      the document's own _id (base64 of its UTF-8 bytes)
    band         keyword, no doc values  MinHash band keys (multi-valued): the proxy's probe
                                         (``terms``); ``exists`` works through _field_names
    exact_key    keyword                 so Elasticsearch's own ``collapse`` can use it too
    token_count  integer
    version      keyword                 algorithm + parameters
    fields       keyword, no doc values  the text fields fingerprinted, when not the defaults
    block_0..    not mapped              SimHash blocks: in _source only (``dynamic: false``)

The index also records which of its fields hold the text to fingerprint, in its mapping's
``_meta`` (:data:`META_KEY`: ``{"text_fields": [...], "version": ...}``): ``init`` writes it,
every writer reads it (:func:`text_fields_for`).

``packed`` and ``id`` have doc values so that the proxy can fetch hits beyond its first
window with ``stored_fields: "_none_"`` and ``docvalue_fields`` of these two alone (every
value the rule reads and the hit's ``_id``; no stored fields loaded: ``docs/indexer.md``,
"Doc values for refills"). Binary doc values have no ordinals: the cheapest kind. Indices
created between ``id`` and ``packed`` have doc values on ``minhash`` too (read as six fields
before ``packed``); they stay compatible, and ``init`` adds ``packed`` to them.

The SimHash blocks stay in every stored ``collapse_fp`` but are not indexed in indices
created now: the probe looks copies up by band (``docs/indexer.md``, "Mapping cost"). A
``terms`` query on them there matches nothing, without error (the field is unmapped), so a
search may still send the block fallback to every index of a pattern. Indices created
before this kept their mapping: ``block_0..block_{B-1}`` keyword (searched for documents
without bands), ``band`` keyword with doc values (created between bands and this change),
``minhash`` without doc values, no ``id`` and no ``packed``; they are compatible
(:func:`conflicts`), and :func:`fingerprint_mapping` with ``indexed_blocks=True`` gives that
older layout (tests and tools that model such an index). Doc values cannot be added to an
existing field, but a new field may have them: ``packed``, added by ``init`` and written by
``indexer backfill``, gives such an index the doc-value reads too.

Only ``collapse_fp`` is ours: the user's own fields stay with their mapping or dynamic
mapping. An existing index whose ``collapse_fp`` is mapped otherwise is refused
(:class:`MappingConflict`), never changed. The one exception: fields added to ``collapse_fp``
after indices were created with it (:data:`ADDED_FIELDS`: ``band``, ``id``, ``packed``) may be
missing; ``ensure_index`` adds them (``put_mapping``, action "updated"), and nothing else.
"""

from __future__ import annotations

from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError
from pydantic import BaseModel

from indexer.documents import DEFAULT_TEXT_FIELDS, TextFields
from indexer.fingerprints import FingerprintParams
from indexer.hits import FINGERPRINT_FIELD

__all__ = [
    "ADDED_FIELDS",
    "META_KEY",
    "FieldsConflict",
    "InitResult",
    "MappingConflict",
    "conflicts",
    "ensure_index",
    "fingerprint_mapping",
    "index_mappings",
    "init",
    "missing_added",
    "recorded_fields",
    "text_fields_for",
]

#: Sub-fields of ``collapse_fp`` newer than the first mapping: an index lacking them is
#: upgraded in place, not refused (adding a field never changes the existing ones).
ADDED_FIELDS: tuple[str, ...] = ("band", "id", "packed", "fields", "numbers")


class MappingConflict(Exception):
    """An existing index maps ``collapse_fp`` differently; the message lists each difference."""


class FieldsConflict(MappingConflict):
    """A writer was given other text fields than the index records (or indices disagree)."""


#: Key of our entry in the index mapping's ``_meta``: ``{"text_fields": [...], "version": ...}``.
META_KEY = "collapse_fp"


class InitResult(BaseModel):
    """What ``init`` did: ``created`` an index or template, or found it ``compatible``."""

    kind: str  # "index" | "template"
    name: str
    action: str  # "created" | "updated" | "compatible"
    text_fields: list[str] = []
    #: the fields recorded before, when this init changed them (then: run ``backfill``)
    fields_before: list[str] | None = None


#: ``band``: only ``terms`` lookups of exact values; no sorting or aggregating on it. Its
#: nearly unique values made doc values the costliest part of the field (merges).
_NO_DV = {"doc_values": False}
#: ``packed``, ``id``: read from doc values by the proxy's refills (binary: off by default).
_DV = {"doc_values": True}
#: Sub-fields that exist to be read from doc values: refused without them.
_DV_REQUIRED = ("id", "packed")


def fingerprint_mapping(
    params: FingerprintParams | None = None, *, indexed_blocks: bool = False
) -> dict[str, Any]:
    """The mapping of the ``collapse_fp`` object, as ``init`` creates it.

    ``indexed_blocks=True``: the layout of indices created before the blocks were left
    unindexed (``block_0..block_{B-1}`` keyword, for the parameters' block count; ``band``
    keyword with doc values; ``minhash`` without doc values; no ``id``, no ``packed``), for
    modelling such an index. Both are accepted by :func:`conflicts`.
    """
    p = params or FingerprintParams()
    props: dict[str, Any] = {"simhash": {"type": "long", "index": False}}
    if indexed_blocks:
        for i in range(p.blocks):
            props[f"block_{i}"] = {"type": "keyword"}
    props["minhash"] = {"type": "binary"}
    props["numbers"] = {"type": "binary"}  # the number sketch: in _source, read with the rest
    if not indexed_blocks:
        props["packed"] = {"type": "binary", **_DV}
        props["id"] = {"type": "binary", **_DV}
    props["band"] = {"type": "keyword"} if indexed_blocks else {"type": "keyword", **_NO_DV}
    props["exact_key"] = {"type": "keyword"}
    props["token_count"] = {"type": "integer"}
    props["version"] = {"type": "keyword"}
    if not indexed_blocks:
        props["fields"] = {"type": "keyword", **_NO_DV}
    if indexed_blocks:
        return {"type": "object", "properties": props}
    # dynamic false: the block fields (and anything else unmapped) stay in _source only
    return {"type": "object", "dynamic": False, "properties": props}


def index_mappings(
    params: FingerprintParams | None = None,
    *,
    indexed_blocks: bool = False,
    text_fields: TextFields | None = None,
) -> dict[str, Any]:
    """Index ``mappings`` holding only the fingerprint object (see :func:`fingerprint_mapping`)
    and, with ``text_fields``, the ``_meta`` entry that records them."""
    out: dict[str, Any] = {
        "properties": {
            FINGERPRINT_FIELD: fingerprint_mapping(params, indexed_blocks=indexed_blocks)
        }
    }
    if text_fields is not None:
        out["_meta"] = {META_KEY: _meta_entry(text_fields, params)}
    return out


def _meta_entry(fields: TextFields, params: FingerprintParams | None) -> dict[str, Any]:
    return {
        "text_fields": list(fields.names),
        "version": (params or FingerprintParams()).version,
    }


def _fields_in(meta: Any) -> TextFields | None:
    """The text fields a mapping's ``_meta`` records (None: none recorded, or unreadable)."""
    entry = meta.get(META_KEY) if isinstance(meta, dict) else None
    names = entry.get("text_fields") if isinstance(entry, dict) else None
    if not isinstance(names, list) or not names:
        return None
    try:
        return TextFields.of(names)
    except ValueError:
        return None


def recorded_fields(es: Elasticsearch, index: str) -> dict[str, TextFields | None]:
    """Per concrete index matching ``index``: the text fields its mapping records (None if
    none: such an index is read with the defaults)."""
    try:
        answer = es.indices.get_mapping(index=index, allow_no_indices=True)
    except NotFoundError:
        return {}
    return {
        name: _fields_in(body.get("mappings", {}).get("_meta"))
        for name, body in answer.body.items()
    }


def text_fields_for(es: Elasticsearch, index: str, given: TextFields | None = None) -> TextFields:
    """The text fields a writer of ``index`` uses: those the index records (the defaults when
    it records none, or does not exist yet and none are ``given``).

    Raises :class:`FieldsConflict` when ``given`` differs from what the index records, or when
    the indices ``index`` matches record different fields, naming both.
    """
    recorded = {
        name: fields or DEFAULT_TEXT_FIELDS for name, fields in recorded_fields(es, index).items()
    }
    if not recorded:
        return given or DEFAULT_TEXT_FIELDS
    distinct = sorted({f.tag for f in recorded.values()})
    if len(distinct) > 1:
        by = {tag: sorted(n for n, f in recorded.items() if f.tag == tag) for tag in distinct}
        raise FieldsConflict(
            f"the indices of {index!r} record different text fields ("
            + "; ".join(f"{', '.join(names)}: {tag}" for tag, names in by.items())
            + "): run the command per index"
        )
    have = next(iter(recorded.values()))
    if given is not None and given != have:
        raise FieldsConflict(
            f"index {index!r} records the text fields {have}, but {given} were given. "
            f"To fingerprint other fields, run `indexer init --index {index}"
            + "".join(f" --text-field {n}" for n in given.names)
            + f"`, then `indexer backfill --index {index}`; or leave the fields out"
        )
    return have


def _record_fields(
    es: Elasticsearch, index: str, fields: TextFields, params: FingerprintParams | None
) -> tuple[bool, TextFields | None]:
    """Record ``fields`` in the ``_meta`` of every index ``index`` names (their other
    ``_meta`` entries kept). Returns whether anything was written, and the fields recorded
    before where they differ from ``fields`` (None when none did)."""
    answer = es.indices.get_mapping(index=index).body
    wrote = False
    before: TextFields | None = None
    want = _meta_entry(fields, params)
    for name, body in answer.items():
        meta = dict(body.get("mappings", {}).get("_meta") or {})
        if meta.get(META_KEY) == want:
            continue
        have = _fields_in(meta) or DEFAULT_TEXT_FIELDS
        if have != fields:
            before = have
        meta[META_KEY] = want
        es.indices.put_mapping(index=name, meta=meta)
        wrote = True
    return wrote, before


def _normalise(name: str, field: dict[str, Any]) -> dict[str, Any]:
    """The parts of a field mapping that matter to us: type, whether ``simhash`` is indexed,
    whether ``id`` and ``packed`` have doc values (they exist for them; ``minhash`` may have
    them or not: indices created between ``id`` and ``packed`` have them)."""
    kind = field.get("type", "object" if "properties" in field else None)
    out: dict[str, Any] = {"type": kind}
    if kind == "long":
        out["index"] = str(field.get("index", True)).lower() == "true"
    if name in _DV_REQUIRED and kind != "text":  # text has no doc values to speak of
        out["doc_values"] = str(field.get("doc_values", kind != "binary")).lower() == "true"
    return out


def _describe(field: dict[str, Any]) -> str:
    """A normalised field mapping in words: ``binary with doc values``, ``long (not indexed)``."""
    words = [str(field["type"])]
    if "index" in field:
        words.append("(indexed)" if field["index"] else "(not indexed)")
    if "doc_values" in field:
        words.append("with doc values" if field["doc_values"] else "without doc values")
    return " ".join(words)


def conflicts(
    existing: dict[str, Any] | None, params: FingerprintParams | None = None
) -> list[str]:
    """Differences between an existing ``collapse_fp`` mapping and ours ([] if compatible).

    ``existing`` is the mapping of the ``collapse_fp`` property, None when it is not mapped.
    A missing object is compatible (it will be added), and so are missing
    :data:`ADDED_FIELDS` (they will be added, see :func:`missing_added`); other missing
    sub-fields are not (a dynamic mapping got there first, or another block count). The
    block fields are either all absent (unindexed: the layout ``init`` creates) or all
    ``keyword`` for the parameters' block count (an index created before that); ``band``
    and ``minhash`` may have doc values or not; ``id`` and ``packed``, when there, must be
    ``binary`` with doc values.
    """
    if existing is None:
        return []
    p = params or FingerprintParams()
    want = fingerprint_mapping(p)
    kind = existing.get("type", "object" if "properties" in existing else None)
    if kind != "object":
        return [f"{FINGERPRINT_FIELD} is mapped as {kind!r}, expected an object"]
    have = existing.get("properties", {})
    expected = dict(want["properties"])
    if any(name.startswith("block_") for name in have):  # an index with indexed blocks
        older = fingerprint_mapping(p, indexed_blocks=True)["properties"]
        # fields added since are mapped as init adds them (see _complete)
        expected = {**older, **{n: expected[n] for n in ADDED_FIELDS if n not in older}}
    problems = []
    for name, spec in expected.items():
        if name not in have:
            if name in ADDED_FIELDS:
                continue
            problems.append(f"{FINGERPRINT_FIELD}.{name} is missing")
            continue
        got, exp = _normalise(name, have[name]), _normalise(name, spec)
        if got != exp:
            problems.append(
                f"{FINGERPRINT_FIELD}.{name} is mapped as {_describe(got)}, "
                f"expected {_describe(exp)}"
            )
    for name in sorted(set(have) - set(expected)):
        problems.append(f"{FINGERPRINT_FIELD}.{name} is not ours (another block count?)")
    return problems


def missing_added(existing: dict[str, Any] | None) -> list[str]:
    """The :data:`ADDED_FIELDS` an existing (compatible) ``collapse_fp`` mapping lacks."""
    if existing is None:
        return []
    have = existing.get("properties", {})
    return [name for name in ADDED_FIELDS if name not in have]


def _existing_fp(es: Elasticsearch, index: str) -> dict[str, dict[str, Any] | None]:
    """Per concrete index matching ``index``: its ``collapse_fp`` mapping, or None."""
    try:
        answer = es.indices.get_mapping(index=index, allow_no_indices=True)
    except NotFoundError:
        return {}
    return {
        name: body.get("mappings", {}).get("properties", {}).get(FINGERPRINT_FIELD)
        for name, body in answer.body.items()
    }


def _refuse_conflicts(
    es: Elasticsearch, index: str, params: FingerprintParams | None
) -> dict[str, dict[str, Any] | None]:
    existing = _existing_fp(es, index)
    for name, fp in existing.items():
        problems = conflicts(fp, params)
        if problems:
            raise MappingConflict(
                f"index {name!r} maps the fingerprint fields differently: "
                + "; ".join(problems)
                + ". Use another index (or delete this one) and run `init` again."
            )
    return existing


def ensure_index(
    es: Elasticsearch,
    index: str,
    params: FingerprintParams | None = None,
    text_fields: TextFields | None = None,
) -> str:
    """Create ``index`` with the fingerprint mapping, or add it to an existing index.

    A created index records ``text_fields`` (default: the defaults); an existing one keeps
    what it records. Returns "created", "updated" (``collapse_fp`` added, or the
    :data:`ADDED_FIELDS` it lacked) or "compatible" (already there). Raises
    :class:`MappingConflict` when the existing mapping differs otherwise. An index that
    another process creates at the same moment counts as existing.
    """
    existing = _refuse_conflicts(es, index, params)
    if not existing:
        try:
            es.indices.create(
                index=index,
                mappings=index_mappings(params, text_fields=text_fields or DEFAULT_TEXT_FIELDS),
            )
            return "created"
        except BadRequestError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
        existing = _refuse_conflicts(es, index, params)
    changed = [_complete(es, name, fp, params) for name, fp in existing.items()]
    return "updated" if any(changed) else "compatible"


def _complete(
    es: Elasticsearch, index: str, existing: dict[str, Any] | None, params: FingerprintParams | None
) -> bool:
    """Add ``collapse_fp`` to a (compatible) concrete index lacking it, or the
    :data:`ADDED_FIELDS` it lacks, and nothing else (its other fields keep their mapping);
    whether anything was added."""
    if existing is None:
        es.indices.put_mapping(index=index, properties=index_mappings(params)["properties"])
        return True
    missing = missing_added(existing)
    if missing:
        props = fingerprint_mapping(params)["properties"]
        added = {FINGERPRINT_FIELD: {"properties": {name: props[name] for name in missing}}}
        es.indices.put_mapping(index=index, properties=added)
    return bool(missing)


def template_name_for(pattern: str) -> str:
    """Default index template name for a pattern: ``logs-*`` -> ``logs``."""
    stem = pattern.replace("*", "").strip("-_.,") or "collapse-fp"
    return stem


def init(
    es: Elasticsearch,
    name: str,
    params: FingerprintParams | None = None,
    *,
    text_fields: TextFields | None = None,
    template_name: str | None = None,
    priority: int = 200,
) -> InitResult:
    """Create the index ``name``, or for a pattern (``*``) an index template, recording the
    text fields to fingerprint (``text_fields``; None: keep what is recorded, else the
    defaults).

    ``init`` is where the fields change: given other fields than an existing index records,
    it records the new ones and reports the old (``fields_before``): ``indexer backfill`` then
    re-fingerprints the documents. The template carries only ``collapse_fp`` and the record;
    existing indices matching the pattern are checked (and recorded) too, so a conflict shows
    now rather than at the first write, and those lacking only :data:`ADDED_FIELDS` get them.
    """
    if "*" not in name:
        action = ensure_index(es, name, params, text_fields)
        fields = text_fields or text_fields_for(es, name)
        wrote, before = _record_fields(es, name, fields, params)
        if wrote and action == "compatible":
            action = "updated"
        return InitResult(
            kind="index",
            name=name,
            action=action,
            text_fields=list(fields.names),
            fields_before=list(before.names) if before is not None else None,
        )
    tname = template_name or template_name_for(name)
    exists = es.indices.exists_index_template(name=tname).body
    if text_fields is None and exists:
        templates = es.indices.get_index_template(name=tname).body["index_templates"]
        mappings = templates[0]["index_template"].get("template", {}).get("mappings", {})
        text_fields = _fields_in(mappings.get("_meta"))
    fields = text_fields or DEFAULT_TEXT_FIELDS
    before = None
    for index, fp in _refuse_conflicts(es, name, params).items():
        if missing_added(fp):
            _complete(es, index, fp, params)
        before = _record_fields(es, index, fields, params)[1] or before
    es.indices.put_index_template(
        name=tname,
        index_patterns=[name],
        priority=priority,
        template={"mappings": index_mappings(params, text_fields=fields)},
        meta={
            "managed_by": "neardup-collapse",
            "fingerprint_version": (params or FingerprintParams()).version,
        },
    )
    return InitResult(
        kind="template",
        name=tname,
        action="updated" if exists else "created",
        text_fields=list(fields.names),
        fields_before=list(before.names) if before is not None else None,
    )
