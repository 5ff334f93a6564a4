"""``python -m indexer lookup --index NAME``: has this content been seen (stored) already?"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from indexer.boilerplate_store import load_models
from indexer.commands.common import client, es_url_option, thresholds, thresholds_options
from indexer.documents import DocumentError
from indexer.hits import DEFAULT_PROBE
from indexer.lookup import lookup_record, matches, search_body, text_and_host
from indexer.mapping import FieldsConflict, recorded_probes, text_fields_for
from indexer.prepare import PrepareConfig

__all__ = ["lookup_command"]


@click.command("lookup")
@click.option("--index", required=True, help="Index (or pattern) to look in.")
@click.option("--text", default=None, help="The text (default: read from --doc or stdin).")
@click.option(
    "--doc",
    "doc_path",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="A JSON document (its text: the fields the index records, default title and "
    "body/text; its url).",
)
@thresholds_options
@click.option(
    "--size",
    type=click.IntRange(1, 10_000),
    default=100,
    show_default=True,
    help="Candidates fetched.",
)
@es_url_option
def lookup_command(
    index: str,
    text: str | None,
    doc_path: Path | None,
    max_distance: int,
    min_similarity: float,
    size: int,
    es_url: str,
) -> None:
    """Print (JSON) the stored near-duplicates of a text or document, with Hamming distance and
    MinHash similarity; exit 0 whether or not any was found."""
    doc = None
    if doc_path is not None:
        raw = sys.stdin.read() if str(doc_path) == "-" else doc_path.read_text(encoding="utf-8")
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise click.UsageError(f"--doc: {exc}") from exc
        if not isinstance(doc, dict):
            raise click.UsageError("--doc: expected a JSON object")
    elif text is None:
        text = sys.stdin.read()
    if doc is None and (not text or not text.strip()):
        raise click.UsageError("no text to look up")
    es = client(es_url)
    try:
        host = None
        if doc is not None:
            try:
                text, host = text_and_host(doc, text_fields_for(es, index))
            except (DocumentError, FieldsConflict) as exc:
                raise click.UsageError(f"--doc: {exc}") from exc
        assert text is not None
        config = PrepareConfig()
        model = load_models(es, index, config.params.version, [host]).get(host) if host else None
        record = lookup_record(text, model, config)
        # the schemes of the indices searched (none yet: the default's keys find nothing anyway)
        probes = frozenset(recorded_probes(es, index).values()) or frozenset({DEFAULT_PROBE})
        hits = es.search(index=index, **search_body(record, size, probes)).body["hits"]["hits"]
    finally:
        es.close()
    result = matches(record, hits, thresholds(max_distance, min_similarity))
    click.echo(result.model_dump_json(indent=2))
