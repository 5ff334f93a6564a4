"""``python -m indexer backfill --index NAME``: fingerprint an existing index in place."""

from __future__ import annotations

import sys

import click
from elasticsearch import TransportError

from indexer.backfill import backfill
from indexer.commands.common import (
    EXIT_NO_TEXT,
    EXIT_REJECTED,
    Fatal,
    client,
    es_url_option,
    no_text_warning,
)
from indexer.mapping import MappingConflict

__all__ = ["backfill_command"]


@click.command("backfill")
@click.option("--index", required=True, help="Index (or pattern) whose documents get fingerprints.")
@click.option("--page-size", type=click.IntRange(1, 10_000), default=500, show_default=True)
@click.option(
    "--verify",
    is_flag=True,
    help="Also read every current document and rewrite band keys, collapse_fp.id and "
    "collapse_fp.packed that disagree with the rest of its fingerprint (an id kept by a "
    "reindex that changed ids; values left by a partial update). Reads the whole index.",
)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Fingerprint every document again, current or not: after `learn` stored new host "
    "boilerplate models (from the index's own documents, for one), so that all use them. "
    "Run again after an interruption, it starts over.",
)
@es_url_option
def backfill_command(index: str, page_size: int, verify: bool, every: bool, es_url: str) -> None:
    """Add fingerprints to documents lacking them, carrying another fingerprint version or
    computed from other text fields than INDEX records (``init --text-field``), and
    collapse_fp.id (the document's _id) to current ones stored without it (ids Elasticsearch
    generated).

    Point in time + search_after, bulk partial updates; run it again after an interruption
    and it continues with the documents still lacking them. Exit 1 when some failed.

    Each document is fingerprinted with its host's stored boilerplate model. An index whose
    documents were written by another loader or through the proxy has none until `learn
    --index INDEX` (without INPUTS) learns them from its own documents; then `backfill --all`.
    """
    es = client(es_url)
    try:
        s = backfill(es, index, page_size=page_size, verify=verify, every=every)
    except MappingConflict as exc:
        raise Fatal(str(exc)) from exc
    except TransportError as exc:
        raise Fatal(
            f"Elasticsearch failed at {es_url}: {exc}; run backfill again to continue"
        ) from exc
    finally:
        es.close()
    click.echo(
        f"scanned {s.scanned}, updated {s.updated}, ids added {s.ids_added}, "
        f"without text {s.no_text}, "
        f"changed meanwhile {s.conflicts}, failed {s.failed}"
        + (f", stale values rewritten {s.corrected}" if verify or s.corrected else "")
        + (f", found right {s.verified}" if verify else "")
        + f" in {s.seconds:.1f} s"
    )
    warning = no_text_warning(index, s.scanned, s.no_text, s.text_fields, s.fields_seen)
    if warning is not None:
        click.echo(f"error: {warning}", err=True)
        sys.exit(EXIT_NO_TEXT)
    if s.failed:
        sys.exit(EXIT_REJECTED)
