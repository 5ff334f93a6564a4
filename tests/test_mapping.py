"""``indexer init`` and the collapse_fp mapping, on the real node."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from elasticsearch import BadRequestError, Elasticsearch

from indexer.cli import main
from indexer.fingerprints import FingerprintParams, fingerprint
from indexer.mapping import (
    FINGERPRINT_FIELD,
    conflicts,
    ensure_index,
    fingerprint_mapping,
    index_mappings,
    missing_added,
)


def _object(es: Elasticsearch, index: str) -> dict:
    body = es.indices.get_mapping(index=index).body[index]["mappings"]
    return body["properties"][FINGERPRINT_FIELD]


def _fp(es: Elasticsearch, index: str) -> dict:
    return _object(es, index)["properties"]


def test_init_creates_index_with_fingerprint_fields(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert "created" in result.output
    fp = _fp(es, index_name)
    assert fp["simhash"] == {"type": "long", "index": False}
    assert not {f"block_{i}" for i in range(8)} & set(fp)  # in _source only
    assert _object(es, index_name)["dynamic"] == "false"
    assert fp["band"] == {"type": "keyword", "doc_values": False}
    # both read by the proxy's refills from doc values (binary has none by default); the
    # sketch is in packed, so minhash itself is in _source only
    assert fp["packed"] == {"type": "binary", "doc_values": True}
    assert fp["id"] == {"type": "binary", "doc_values": True}
    assert fp["minhash"] == {"type": "binary"}
    assert fp["exact_key"]["type"] == "keyword"
    assert fp["token_count"]["type"] == "integer"
    assert fp["version"]["type"] == "keyword"
    # a stored record round-trips, and the user's fields are left to dynamic mapping
    rec = fingerprint("the quick brown fox jumps over the lazy dog " * 20)
    es.index(
        index=index_name,
        id="1",
        document={"title": "x", FINGERPRINT_FIELD: rec.to_es()},
        refresh=True,
    )
    assert es.indices.get_mapping(index=index_name).body[index_name]["mappings"]["properties"][
        "title"
    ]
    # running init again is fine
    again = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert again.exit_code == 0 and "compatible" in again.output


def test_init_adds_fields_to_existing_user_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 0 and "updated" in result.output
    assert _fp(es, index_name)["band"] == {"type": "keyword", "doc_values": False}
    assert "block_0" not in _fp(es, index_name)


def test_init_refuses_differently_mapped_index(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    # what dynamic mapping makes of collapse_fp when documents arrive before init
    es.index(
        index=index_name,
        document={FINGERPRINT_FIELD: {"simhash": 5, "block_0": "ab"}},
        refresh=True,
    )
    before = es.indices.get_mapping(index=index_name).body
    result = CliRunner().invoke(main, ["init", "--index", index_name, "--es-url", es_url])
    assert result.exit_code == 3
    assert "maps the fingerprint fields differently" in result.output
    assert "collapse_fp.block_0" in result.output
    assert es.indices.get_mapping(index=index_name).body == before


def test_init_pattern_creates_template(es: Elasticsearch, es_url: str, index_name: str) -> None:
    result = CliRunner().invoke(main, ["init", "--index", f"{index_name}-*", "--es-url", es_url])
    assert result.exit_code == 0, result.output
    assert f"template {index_name}: created" in result.output
    es.indices.create(index=f"{index_name}-2026")
    try:
        assert _fp(es, f"{index_name}-2026") == _fp_created(es, index_name)
    finally:
        es.indices.delete(index=f"{index_name}-2026")


def _fp_created(es: Elasticsearch, index_name: str) -> dict:
    """What ``init`` maps on a new index (created and dropped here)."""
    name = f"{index_name}-fresh"
    ensure_index(es, name)
    try:
        return _fp(es, name)
    finally:
        es.indices.delete(index=name)


def test_conflicts_detects_block_count() -> None:
    four = fingerprint_mapping(FingerprintParams(blocks=4), indexed_blocks=True)
    assert conflicts(four, FingerprintParams(blocks=8))
    assert conflicts(four, FingerprintParams(blocks=4)) == []
    assert conflicts({"type": "keyword"}) == [
        f"{FINGERPRINT_FIELD} is mapped as 'keyword', expected an object"
    ]


def test_conflicts_accept_both_block_layouts() -> None:
    """Indices created before the blocks were left unindexed keep them mapped (keyword), and
    ``band`` with doc values: compatible, as are the new layout and one before bands."""
    assert conflicts(fingerprint_mapping()) == []
    old = fingerprint_mapping(indexed_blocks=True)
    assert old["properties"]["band"] == {"type": "keyword"} and "dynamic" not in old
    assert conflicts(old) == []
    old["properties"]["band"] = {"type": "keyword", "doc_values": False}  # band added later
    assert conflicts(old) == []
    del old["properties"]["band"]  # created before bands
    assert conflicts(old) == []
    del old["properties"]["block_3"]
    assert conflicts(old) == [f"{FINGERPRINT_FIELD}.block_3 is missing"]
    old["properties"]["block_3"] = {"type": "text"}
    assert conflicts(old) == [f"{FINGERPRINT_FIELD}.block_3 is mapped as text, expected keyword"]
    stray = fingerprint_mapping()
    stray["properties"]["block_9"] = {"type": "keyword"}
    assert f"{FINGERPRINT_FIELD}.block_9 is not ours (another block count?)" in conflicts(stray)


def test_conflicts_accept_minhash_without_doc_values_and_a_missing_id() -> None:
    """Indices created before ``collapse_fp.id``: ``minhash`` without doc values (they cannot
    be added to an existing field: such an index keeps the slower refills) and no ``id``
    (``init`` adds it). An ``id`` mapped otherwise than binary with doc values is refused."""
    old = fingerprint_mapping(indexed_blocks=True)
    assert old["properties"]["minhash"] == {"type": "binary"} and "id" not in old["properties"]
    assert conflicts(old) == []
    old["properties"]["id"] = {"type": "binary", "doc_values": True}  # as init adds it
    assert conflicts(old) == []
    assert conflicts(before_id()) == []  # the layout init created before id (dynamic: false)
    for mapped in (fingerprint_mapping(), old):
        mapped["properties"]["id"] = {"type": "binary"}
        assert conflicts(mapped) == [
            f"{FINGERPRINT_FIELD}.id is mapped as binary without doc values, "
            "expected binary with doc values"
        ]
        mapped["properties"]["id"] = {"type": "text", "fields": {"keyword": {"type": "keyword"}}}
        assert conflicts(mapped)[0] == (
            f"{FINGERPRINT_FIELD}.id is mapped as text, expected binary with doc values"
        )


def before_packed() -> dict:
    """The ``collapse_fp`` mapping ``init`` created between ``id`` and ``packed``: ``minhash``
    with doc values (refills read it), no ``packed``."""
    fp = fingerprint_mapping()
    fp["properties"]["minhash"] = {"type": "binary", "doc_values": True}
    del fp["properties"]["packed"]
    return fp


def before_id() -> dict:
    """The ``collapse_fp`` mapping ``init`` created between unindexed blocks and ``id``."""
    fp = before_packed()
    fp["properties"]["minhash"] = {"type": "binary"}
    del fp["properties"]["id"]
    return fp


def test_conflicts_accept_the_layouts_before_packed() -> None:
    """Indices created before ``packed`` (with or without doc values on ``minhash``) are
    compatible and lack only ``packed`` (and ``id``); a ``packed`` mapped otherwise than
    binary with doc values is refused, in any layout."""
    old = fingerprint_mapping(indexed_blocks=True)
    for layout, lacking in (
        (before_packed(), ["packed"]),
        (before_id(), ["id", "packed"]),
        (old, ["id", "packed", "fields"]),
    ):
        assert conflicts(layout) == [] and missing_added(layout) == lacking
    assert missing_added(fingerprint_mapping()) == []
    for mapped in (fingerprint_mapping(), before_packed(), old):
        mapped["properties"]["packed"] = {"type": "binary"}
        assert conflicts(mapped) == [
            f"{FINGERPRINT_FIELD}.packed is mapped as binary without doc values, "
            "expected binary with doc values"
        ]
        mapped["properties"]["packed"] = {"type": "keyword"}
        assert conflicts(mapped)[0].startswith(f"{FINGERPRINT_FIELD}.packed is mapped as keyword")


def test_init_adds_id_and_packed_to_older_indices(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """``init`` adds ``collapse_fp.id`` and ``collapse_fp.packed`` (binary, doc values) to
    indices created before them (the oldest layout, with indexed blocks; the one before
    ``id``; the one before ``packed``, whose ``minhash`` has doc values) and changes nothing
    else: ``minhash`` keeps its mapping, with or without doc values."""
    dv = {"type": "binary", "doc_values": True}
    tag = {"type": "keyword", "doc_values": False}
    layouts = {
        f"{index_name}-old": (
            fingerprint_mapping(indexed_blocks=True),
            {"id": dv, "packed": dv, "fields": tag},
        ),
        f"{index_name}-before-id": (before_id(), {"id": dv, "packed": dv}),
        f"{index_name}-before-packed": (before_packed(), {"packed": dv}),
    }
    try:
        for index, (fp, added) in layouts.items():
            es.indices.create(index=index, mappings={"properties": {FINGERPRINT_FIELD: fp}})
            before = _fp(es, index)
            result = CliRunner().invoke(main, ["init", "--index", index, "--es-url", es_url])
            assert result.exit_code == 0, result.output
            assert f"index {index}: updated" in result.output
            after = _fp(es, index)
            assert after == {**before, **added}
            assert after["minhash"] == fp["properties"]["minhash"]
            assert conflicts(_object(es, index)) == []
            again = CliRunner().invoke(main, ["init", "--index", index, "--es-url", es_url])
            assert again.exit_code == 0 and f"index {index}: compatible" in again.output
    finally:
        es.options(ignore_status=404).indices.delete(index=",".join(layouts))


def test_init_pattern_adds_packed_to_matching_indices(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """``init`` of a pattern adds ``packed`` to the matching indices created before it."""
    index = f"{index_name}-2026"
    es.indices.create(index=index, mappings={"properties": {FINGERPRINT_FIELD: before_packed()}})
    try:
        result = CliRunner().invoke(
            main, ["init", "--index", f"{index_name}-*", "--es-url", es_url]
        )
        assert result.exit_code == 0, result.output
        assert _fp(es, index)["packed"] == {"type": "binary", "doc_values": True}
        assert _fp(es, index)["minhash"] == {"type": "binary", "doc_values": True}
    finally:
        es.indices.delete(index=index)


def test_new_index_keeps_blocks_in_source_only(es: Elasticsearch, index_name: str) -> None:
    """Blocks are stored but not indexed: a ``terms`` query on them matches nothing and
    fails nowhere; bands are found, and ``exists`` on them works without doc values."""
    assert ensure_index(es, index_name) == "created"
    fp = fingerprint("the quick brown fox jumps over the lazy dog " * 20).to_es()
    es.index(index=index_name, id="1", document={FINGERPRINT_FIELD: fp}, refresh=True)
    stored = es.get(index=index_name, id="1")["_source"][FINGERPRINT_FIELD]
    assert stored == fp and stored["block_0"] == fp["block_0"]
    assert set(_fp(es, index_name)) == {
        "simhash", "minhash", "packed", "id", "band", "exact_key", "token_count", "version",
        "fields", "numbers",
    }  # fmt: skip

    def hits(query: dict) -> list[str]:
        answer = es.search(index=index_name, query=query)
        assert answer["_shards"]["failed"] == 0
        return [h["_id"] for h in answer["hits"]["hits"]]

    assert hits({"terms": {f"{FINGERPRINT_FIELD}.block_0": [fp["block_0"]]}}) == []
    assert hits({"terms": {f"{FINGERPRINT_FIELD}.band": fp["band"][:3]}}) == ["1"]
    assert hits({"exists": {"field": f"{FINGERPRINT_FIELD}.band"}}) == ["1"]
    assert hits({"term": {f"{FINGERPRINT_FIELD}.exact_key": fp["exact_key"]}}) == ["1"]


def test_old_layouts_stay_usable_beside_new_indices(es: Elasticsearch, index_name: str) -> None:
    """An index created with indexed blocks keeps its mapping (``ensure_index`` adds only
    ``id`` and ``packed``, and ``band`` to one created before bands); one search over old and
    new indices finds by blocks in the old ones only, by bands in both, with no shard failure.
    ``packed`` and ``id`` are read from doc values in both (``packed`` is a new field: it gets
    doc values even where ``minhash`` has none); ``minhash`` has doc values in neither."""
    old, pre_band, new = f"{index_name}-old", f"{index_name}-preband", f"{index_name}-new"
    es.indices.create(index=old, mappings=index_mappings(indexed_blocks=True))
    before_bands = index_mappings(indexed_blocks=True)
    del before_bands["properties"][FINGERPRINT_FIELD]["properties"]["band"]
    es.indices.create(index=pre_band, mappings=before_bands)
    try:
        mapped_old = _object(es, old)
        assert ensure_index(es, old) == "updated"
        assert _object(es, old) == {
            **mapped_old,
            "properties": {
                **mapped_old["properties"],
                "id": {"type": "binary", "doc_values": True},
                "packed": {"type": "binary", "doc_values": True},
                "fields": {"type": "keyword", "doc_values": False},
            },
        }
        assert ensure_index(es, old) == "compatible"
        assert ensure_index(es, pre_band) == "updated"
        upgraded = _object(es, pre_band)
        assert "dynamic" not in upgraded
        assert upgraded["properties"]["band"] == {"type": "keyword", "doc_values": False}
        assert upgraded["properties"]["block_7"] == {"type": "keyword"}
        assert upgraded["properties"]["id"] == {"type": "binary", "doc_values": True}
        assert upgraded["properties"]["packed"] == {"type": "binary", "doc_values": True}
        assert ensure_index(es, new) == "created"
        fp = fingerprint("the quick brown fox jumps over the lazy dog " * 20).to_es("1")
        for index in (old, new):
            es.index(index=index, id="1", document={FINGERPRINT_FIELD: fp}, refresh=True)
        both = f"{old},{new}"
        slim = es.search(
            index=both,
            stored_fields="_none_",
            docvalue_fields=[f"{FINGERPRINT_FIELD}.id", f"{FINGERPRINT_FIELD}.packed"],
        ).body
        assert slim["_shards"]["failed"] == 0
        assert [h["fields"] for h in slim["hits"]["hits"]] == [
            {f"{FINGERPRINT_FIELD}.id": [fp["id"]], f"{FINGERPRINT_FIELD}.packed": [fp["packed"]]}
        ] * 2
        with pytest.raises(BadRequestError, match="minhash"):  # doc values in neither
            es.search(index=both, docvalue_fields=[f"{FINGERPRINT_FIELD}.minhash"])

        def found(field: str, values: list[str]) -> set[str]:
            query = {"terms": {f"{FINGERPRINT_FIELD}.{field}": values}}
            answer = es.search(index=both, query=query)
            assert answer["_shards"]["failed"] == 0
            return {h["_index"] for h in answer["hits"]["hits"]}

        assert found("block_2", [fp["block_2"]]) == {old}
        assert found("band", fp["band"]) == {old, new}
    finally:
        es.options(ignore_status=404).indices.delete(index=f"{old},{pre_band},{new}")


def test_unreachable_cluster_fails_fast_with_url() -> None:
    url = "http://127.0.0.1:9"
    result = CliRunner().invoke(main, ["init", "--index", "x", "--es-url", url])
    assert result.exit_code == 3
    assert url in result.output
