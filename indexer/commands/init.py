"""``python -m indexer init --index NAME``: create the index (or template) with ``collapse_fp``."""

from __future__ import annotations

import click

from indexer.commands.common import Fatal, client, es_url_option
from indexer.fingerprints import FingerprintParams
from indexer.mapping import MappingConflict, init


@click.command("init")
@click.option(
    "--index", "index", required=True, help="Index name, or a pattern with * for a template."
)
@click.option("--template-name", default=None, help="Index template name (patterns only).")
@click.option(
    "--priority", default=200, show_default=True, type=click.IntRange(0), help="Template priority."
)
@click.option(
    "--blocks",
    type=click.Choice(["1", "2", "4", "8", "16"]),
    default="8",
    show_default=True,
    help="SimHash blocks (one keyword field each).",
)
@es_url_option
def init_command(
    index: str, template_name: str | None, priority: int, blocks: str, es_url: str
) -> None:
    """Create INDEX with the fingerprint fields (your own fields keep their mapping).

    With a pattern (``logs-*``) an index template is created instead. An existing index whose
    fingerprint fields are mapped differently is refused (exit 3) and left unchanged.
    """
    es = client(es_url)
    try:
        result = init(
            es,
            index,
            FingerprintParams(blocks=int(blocks)),
            template_name=template_name,
            priority=priority,
        )
    except MappingConflict as exc:
        raise Fatal(str(exc)) from exc
    finally:
        es.close()
    click.echo(f"{result.kind} {result.name}: {result.action}")
