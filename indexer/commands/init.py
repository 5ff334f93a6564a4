"""``python -m indexer init --index NAME``: create the index (or template) with ``collapse_fp``."""

from __future__ import annotations

import click

from indexer.commands.common import (
    Fatal,
    client,
    es_url_option,
    text_field_option,
    text_fields_given,
)
from indexer.fingerprints import FingerprintParams
from indexer.hits import DEFAULT_PROBE, PROBES, Probe
from indexer.mapping import MappingConflict, init, with_url_field

__all__ = ["init_command"]


@click.command("init")
@click.option(
    "--index", "index", required=True, help="Index name, or a pattern with * for a template."
)
@click.option("--template-name", default=None, help="Index template name (patterns only).")
@click.option(
    "--priority", default=200, show_default=True, type=click.IntRange(0), help="Template priority."
)
@click.option(
    "--probe",
    type=click.Choice(PROBES),
    default=None,
    help="How the proxy finds copies beyond its window: MinHash band keys or the four 16-bit "
    f"SimHash blocks, indexed [new indices: {DEFAULT_PROBE}; existing ones keep theirs].",
)
@text_field_option
@es_url_option
def init_command(
    index: str,
    template_name: str | None,
    priority: int,
    probe: Probe | None,
    text_fields: tuple[str, ...],
    url_field: str | None,
    es_url: str,
) -> None:
    """Create INDEX with the fingerprint fields (your own fields keep their mapping), and record
    which fields' text is fingerprinted (--text-field; kept when not given), which field's URL
    gives a document's host (--url-field; kept when not given, else url) and how copies are
    found (--probe; an existing index keeps its scheme, another is refused).

    With a pattern (``logs-*``) an index template is created instead. An existing index whose
    fingerprint fields are mapped differently is refused (exit 3) and left unchanged: the
    message says how to rebuild. Naming other text fields than an existing index records, or
    an index recording another fingerprint version, calls for ``backfill`` next.
    """
    given = text_fields_given(text_fields, url_field)
    es = client(es_url)
    try:
        if given is None and url_field is not None:
            given = with_url_field(es, index, url_field)
        result = init(
            es,
            index,
            FingerprintParams(),
            text_fields=given,
            probe=probe,
            template_name=template_name,
            priority=priority,
        )
    except MappingConflict as exc:
        raise Fatal(str(exc)) from exc
    finally:
        es.close()
    click.echo(
        f"{result.kind} {result.name}: {result.action}; text fields: "
        + ", ".join(result.text_fields)
        + (f"; url field: {result.url_field}" if result.url_field != "url" else "")
        + f"; probe: {result.probe}"
    )
    if result.version_before is not None:
        click.echo(
            f"documents of fingerprint version {result.version_before}: run "
            f"`indexer backfill --index {index}` to fingerprint them with this version"
        )
    if result.fields_before is not None:
        click.echo(
            f"text fields changed (were {', '.join(result.fields_before)}): run "
            f"`indexer backfill --index {index}` to fingerprint the documents from the new ones"
        )
