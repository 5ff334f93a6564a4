"""The Elasticsearch mapping of the fingerprint object ``collapse_fp``, and ``init``.

Field by field (shape in ``docs/CONTRACTS.md``), as ``init`` creates them::

    simhash      long, index: false      never searched
    packed       binary, doc values      the record: every value a search reads, the two
                                         sketches' one copy (``packed.py``); read from
                                         _source or doc values
    id           binary, doc values      the document's own _id (base64 of its UTF-8 bytes)
    band         keyword, no doc values  ``bands`` indices: MinHash band keys (multi-valued),
                                         the probe's ``terms``; ``exists`` via _field_names
    block_0..3   keyword, no doc values  ``blocks`` indices: the four 16-bit SimHash blocks,
                                         the probe's ``terms`` (elsewhere in _source only)
    exact_key    keyword                 so Elasticsearch's own ``collapse`` can use it too
    token_count  integer
    version      keyword                 algorithm + parameters
    fields       keyword, no doc values  the text fields fingerprinted, when not the defaults

Every record carries both kinds of probe key; the index's probe scheme (``init --probe``:
:data:`~indexer.hits.PROBES`) maps one of them, the other stays in ``_source``
(``dynamic: false``). The index also records which of its fields hold the text to
fingerprint and its scheme, in its mapping's ``_meta`` (:data:`META_KEY`: ``{"text_fields":
[...], "version": ..., "probe": ...}``): ``init`` writes it, every writer reads the fields
(:func:`text_fields_for`), the proxy and ``lookup`` the scheme (:func:`probe_in`).

``packed`` and ``id`` have doc values so that the proxy can fetch hits beyond its first
window with ``stored_fields: "_none_"`` and ``docvalue_fields`` of these two alone (every
value the rule reads and the hit's ``_id``; no stored fields loaded). Binary doc values have
no ordinals: the cheapest kind.

Only ``collapse_fp`` is ours: the user's own fields stay with their mapping or dynamic
mapping, and an index without ``collapse_fp`` gets it added. ``init`` accepts exactly the
layout above; an index whose ``collapse_fp`` is mapped otherwise (another fingerprint
version's layout, a dynamic mapping that got there first) is refused
(:class:`MappingConflict`), never changed: a mapping cannot be changed in place, so such
documents go into a new index. Documents of another fingerprint version in an index of this
layout are re-fingerprinted in place by ``indexer backfill``.
"""

from __future__ import annotations

from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError
from pydantic import BaseModel

from indexer.documents import DEFAULT_TEXT_FIELDS, TextFields
from indexer.fingerprints import FingerprintParams
from indexer.hits import DEFAULT_PROBE, FINGERPRINT_FIELD, META_KEY, Probe, probe_in

__all__ = [
    "META_KEY",
    "FieldsConflict",
    "InitResult",
    "MappingConflict",
    "conflicts",
    "ensure_index",
    "fingerprint_mapping",
    "index_mappings",
    "init",
    "layout_of",
    "probe_in",
    "recorded_fields",
    "recorded_probes",
    "text_fields_for",
    "with_url_field",
]


class MappingConflict(Exception):
    """An existing index maps ``collapse_fp`` differently; the message lists each difference."""


class FieldsConflict(MappingConflict):
    """A writer was given other text fields than the index records (or indices disagree)."""


class InitResult(BaseModel):
    """What ``init`` did: ``created`` an index or template, or found it ``compatible``."""

    kind: str  # "index" | "template"
    name: str
    action: str  # "created" | "updated" | "compatible"
    text_fields: list[str] = []
    #: the field whose URL gives a document's host
    url_field: str = "url"
    probe: str = DEFAULT_PROBE
    #: the fields recorded before, when this init changed them (then: run ``backfill``): the
    #: text fields, then ``url field: NAME`` when the url field changed
    fields_before: list[str] | None = None
    #: the fingerprint version recorded before, when another (then: run ``backfill``)
    version_before: str | None = None


#: ``band``, ``block_i``: only ``terms`` lookups of exact values; no sorting or aggregating on
#: them. The bands' nearly unique values made doc values the costliest part (merges).
_NO_DV = {"doc_values": False}
#: ``packed``, ``id``: read from doc values by the proxy's refills (binary: off by default).
_DV = {"doc_values": True}


def fingerprint_mapping(
    params: FingerprintParams | None = None, probe: Probe = DEFAULT_PROBE
) -> dict[str, Any]:
    """The mapping of the ``collapse_fp`` object, as ``init`` creates it for ``probe``: the
    band field, or one field per SimHash block (``params.blocks``)."""
    if probe == "blocks":
        n = (params or FingerprintParams()).blocks
        keys = {f"block_{i}": {"type": "keyword", **_NO_DV} for i in range(n)}
    else:
        keys = {"band": {"type": "keyword", **_NO_DV}}
    props: dict[str, Any] = {
        "simhash": {"type": "long", "index": False},
        "packed": {"type": "binary", **_DV},
        "id": {"type": "binary", **_DV},
        **keys,
        "exact_key": {"type": "keyword"},
        "token_count": {"type": "integer"},
        "version": {"type": "keyword"},
        "fields": {"type": "keyword", **_NO_DV},
    }
    # dynamic false: the other scheme's keys (and anything else unmapped) stay in _source only
    return {"type": "object", "dynamic": False, "properties": props}


def index_mappings(
    params: FingerprintParams | None = None,
    *,
    text_fields: TextFields | None = None,
    probe: Probe = DEFAULT_PROBE,
) -> dict[str, Any]:
    """Index ``mappings`` holding only the fingerprint object (see :func:`fingerprint_mapping`)
    and, with ``text_fields``, the ``_meta`` entry that records them and ``probe``."""
    out: dict[str, Any] = {"properties": {FINGERPRINT_FIELD: fingerprint_mapping(params, probe)}}
    if text_fields is not None:
        out["_meta"] = {META_KEY: _meta_entry(text_fields, params, probe)}
    return out


def _meta_entry(
    fields: TextFields, params: FingerprintParams | None, probe: Probe
) -> dict[str, Any]:
    return {
        **fields.meta,
        "version": (params or FingerprintParams()).version,
        "probe": probe,
    }


def layout_of(existing: dict[str, Any] | None) -> Probe | None:
    """The scheme whose keys a ``collapse_fp`` mapping indexes (None: not mapped)."""
    if existing is None:
        return None
    return "blocks" if "block_0" in existing.get("properties", {}) else "bands"


def recorded_probes(es: Elasticsearch, index: str) -> dict[str, Probe]:
    """Per concrete index matching ``index``: the probe scheme its mapping records."""
    try:
        answer = es.indices.get_mapping(index=index, allow_no_indices=True)
    except NotFoundError:
        return {}
    return {
        name: probe_in(body.get("mappings", {}).get("_meta")) for name, body in answer.body.items()
    }


def _fields_in(meta: Any) -> TextFields | None:
    """The text fields a mapping's ``_meta`` records (None: none recorded, or unreadable)."""
    return TextFields.recorded(meta.get(META_KEY) if isinstance(meta, dict) else None)


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


def _before(before: TextFields | None, now: TextFields) -> list[str] | None:
    """:attr:`InitResult.fields_before` of the fields recorded before (None: unchanged)."""
    if before is None:
        return None
    return [*before.names, *([f"url field: {before.url}"] if before.url != now.url else [])]


def with_url_field(es: Elasticsearch, index: str, url: str) -> TextFields:
    """The text fields ``index`` records (the defaults when it records none) with ``url`` as
    the url field: what ``--url-field`` alone asks for."""
    recorded = [f for f in recorded_fields(es, index).values() if f is not None]
    return TextFields.of((recorded[0] if recorded else DEFAULT_TEXT_FIELDS).names, url)


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
            + (f" --url-field {given.url}" if given.url != "url" else "")
            + f"`, then `indexer backfill --index {index}`; or leave the fields out"
        )
    return have


def _record_fields(
    es: Elasticsearch, index: str, fields: TextFields, params: FingerprintParams | None
) -> tuple[bool, TextFields | None, str | None]:
    """Record ``fields`` and the fingerprint version in the ``_meta`` of every index ``index``
    names (their other ``_meta`` entries kept). Returns whether anything was written, the
    fields recorded before where they differ from ``fields`` and the version recorded before
    where it differs (None when none did)."""
    answer = es.indices.get_mapping(index=index).body
    wrote = False
    before: TextFields | None = None
    version_before: str | None = None
    for name, body in answer.items():
        mappings = body.get("mappings", {})
        layout = layout_of(mappings.get("properties", {}).get(FINGERPRINT_FIELD))
        want = _meta_entry(fields, params, layout or DEFAULT_PROBE)
        meta = dict(mappings.get("_meta") or {})
        if meta.get(META_KEY) == want:
            continue
        have = _fields_in(meta) or DEFAULT_TEXT_FIELDS
        if have != fields:
            before = have
        entry = meta.get(META_KEY)
        version = entry.get("version") if isinstance(entry, dict) else None
        if isinstance(version, str) and version != want["version"]:
            version_before = version
        meta[META_KEY] = want
        es.indices.put_mapping(index=name, meta=meta)
        wrote = True
    return wrote, before, version_before


def _normalise(field: dict[str, Any]) -> dict[str, Any]:
    """The parts of a field mapping that matter to us: type, whether a ``long`` is indexed,
    whether it has doc values (Elasticsearch's default when not said: none for ``binary``)."""
    kind = field.get("type", "object" if "properties" in field else None)
    out: dict[str, Any] = {"type": kind}
    if kind == "long":
        out["index"] = str(field.get("index", True)).lower() == "true"
    if kind in ("binary", "keyword", "long", "integer"):
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
    existing: dict[str, Any] | None,
    params: FingerprintParams | None = None,
    probe: Probe | None = None,
) -> list[str]:
    """Differences between an existing ``collapse_fp`` mapping and ours for ``probe`` ([] if
    the same; ``probe`` None: the scheme whose keys it maps).

    ``existing`` is the mapping of the ``collapse_fp`` property, None when it is not mapped: a
    missing object is compatible (``init`` adds it). Otherwise every sub-field must be there
    and mapped as ours, with nothing else indexed (``dynamic: false``)."""
    if existing is None:
        return []
    kind = existing.get("type", "object" if "properties" in existing else None)
    if kind != "object":
        return [f"{FINGERPRINT_FIELD} is mapped as {kind!r}, expected an object"]
    have = existing.get("properties", {})
    expected = fingerprint_mapping(params, probe or layout_of(existing) or DEFAULT_PROBE)
    expected = expected["properties"]
    problems = []
    if str(existing.get("dynamic", True)).lower() != "false":
        problems.append(f"{FINGERPRINT_FIELD} maps new sub-fields (expected dynamic: false)")
    for name, spec in expected.items():
        if name not in have:
            problems.append(f"{FINGERPRINT_FIELD}.{name} is missing")
            continue
        got, exp = _normalise(have[name]), _normalise(spec)
        if got != exp:
            problems.append(
                f"{FINGERPRINT_FIELD}.{name} is mapped as {_describe(got)}, "
                f"expected {_describe(exp)}"
            )
    for name in sorted(set(have) - set(expected)):
        problems.append(f"{FINGERPRINT_FIELD}.{name} is not ours")
    return problems


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
    es: Elasticsearch, index: str, params: FingerprintParams | None, probe: Probe | None = None
) -> dict[str, dict[str, Any] | None]:
    existing = _existing_fp(es, index)
    for name, fp in existing.items():
        layout = layout_of(fp)
        if probe is not None and layout is not None and layout != probe:
            raise MappingConflict(
                f"index {name!r} probes {layout} (its fingerprint fields index them), not "
                f"{probe}. A mapping cannot be changed in place: create a new index with "
                f"`indexer init --index NEW --probe {probe}` and ingest the documents into it "
                "(or copy them there and run `indexer backfill --index NEW`)."
            )
        problems = conflicts(fp, params)
        if problems:
            raise MappingConflict(
                f"index {name!r} maps the fingerprint fields differently (another fingerprint "
                "version's layout?): "
                + "; ".join(problems)
                + ". A mapping cannot be changed in place: create a new index with `indexer "
                "init --index NEW` and ingest the documents into it (or copy them there and "
                "run `indexer backfill --index NEW`)."
            )
    return existing


def ensure_index(
    es: Elasticsearch,
    index: str,
    params: FingerprintParams | None = None,
    text_fields: TextFields | None = None,
    probe: Probe | None = None,
) -> str:
    """Create ``index`` with the fingerprint mapping, or add it to an existing index.

    A created index records ``text_fields`` (default: the defaults) and probes by ``probe``
    (default :data:`DEFAULT_PROBE`); an existing one keeps what it records and maps, and one
    mapped for another scheme than a ``probe`` given is refused. Returns "created", "updated"
    (``collapse_fp`` added to an index without it) or "compatible" (already there). Raises
    :class:`MappingConflict` when the existing mapping differs otherwise. An index that
    another process creates at the same moment counts as existing.
    """
    existing = _refuse_conflicts(es, index, params, probe)
    if not existing:
        try:
            es.indices.create(
                index=index,
                mappings=index_mappings(
                    params,
                    text_fields=text_fields or DEFAULT_TEXT_FIELDS,
                    probe=probe or DEFAULT_PROBE,
                ),
            )
            return "created"
        except BadRequestError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
        existing = _refuse_conflicts(es, index, params, probe)
    changed = [_complete(es, name, fp, params, probe) for name, fp in existing.items()]
    return "updated" if any(changed) else "compatible"


def _complete(
    es: Elasticsearch,
    index: str,
    existing: dict[str, Any] | None,
    params: FingerprintParams | None,
    probe: Probe | None = None,
) -> bool:
    """Add ``collapse_fp`` (for ``probe``) to a concrete index lacking it (its other fields
    keep their mapping); whether anything was added."""
    if existing is not None:
        return False
    mappings = index_mappings(params, probe=probe or DEFAULT_PROBE)
    es.indices.put_mapping(index=index, properties=mappings["properties"])
    return True


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
    probe: Probe | None = None,
    template_name: str | None = None,
    priority: int = 200,
) -> InitResult:
    """Create the index ``name``, or for a pattern (``*``) an index template, recording the
    text fields to fingerprint (``text_fields``; None: keep what is recorded, else the
    defaults) and the probe scheme (``probe``; None: keep what the index maps, else
    :data:`DEFAULT_PROBE`; another than an existing index maps is refused).

    ``init`` is where the fields change: given other fields than an existing index records,
    it records the new ones and reports the old (``fields_before``): ``indexer backfill`` then
    re-fingerprints the documents. The template carries only ``collapse_fp`` and the record;
    existing indices matching the pattern are checked (and recorded) too, so a conflict shows
    now rather than at the first write, and those without ``collapse_fp`` get it.
    ``version_before``: the fingerprint version the index (or template) recorded before, when
    another: ``indexer backfill`` then re-fingerprints its documents.
    """
    if "*" not in name:
        action = ensure_index(es, name, params, text_fields, probe)
        fields = text_fields or text_fields_for(es, name)
        wrote, before, version_before = _record_fields(es, name, fields, params)
        if wrote and action == "compatible":
            action = "updated"
        probes = set(recorded_probes(es, name).values())
        return InitResult(
            kind="index",
            name=name,
            action=action,
            text_fields=list(fields.names),
            url_field=fields.url,
            probe=probes.pop() if len(probes) == 1 else probe or DEFAULT_PROBE,
            fields_before=_before(before, fields),
            version_before=version_before,
        )
    tname = template_name or template_name_for(name)
    exists = es.indices.exists_index_template(name=tname).body
    if exists and (text_fields is None or probe is None):
        templates = es.indices.get_index_template(name=tname).body["index_templates"]
        mappings = templates[0]["index_template"].get("template", {}).get("mappings", {})
        text_fields = text_fields or _fields_in(mappings.get("_meta"))
        probe = probe or probe_in(mappings.get("_meta"))
    fields = text_fields or DEFAULT_TEXT_FIELDS
    probe = probe or DEFAULT_PROBE
    before = None
    version_before = None
    for index, fp in _refuse_conflicts(es, name, params, probe).items():
        _complete(es, index, fp, params, probe)
        _, fields_then, version_then = _record_fields(es, index, fields, params)
        before = fields_then or before
        version_before = version_then or version_before
    es.indices.put_index_template(
        name=tname,
        index_patterns=[name],
        priority=priority,
        template={"mappings": index_mappings(params, text_fields=fields, probe=probe)},
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
        url_field=fields.url,
        probe=probe,
        fields_before=_before(before, fields),
        version_before=version_before,
    )
