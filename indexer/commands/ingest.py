"""``python -m indexer ingest --index NAME INPUT...``: fingerprint and index documents."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from elasticsearch import TransportError

from indexer.boilerplate import BoilerplateConfig
from indexer.bulk import BulkConfig
from indexer.checkpoint import ResumeMismatch, StateInUse, StateNotAFile
from indexer.commands.common import (
    EXIT_NO_TEXT,
    EXIT_REJECTED,
    Fatal,
    client,
    es_url_option,
    no_text_warning,
    text_field_option,
    text_fields_given,
)
from indexer.commands.learn import learning_options
from indexer.ingest import IngestOptions, ingest
from indexer.mapping import MappingConflict
from indexer.prepare import PrepareConfig
from indexer.sources import EmptyFolder

__all__ = ["ingest_command"]


@click.command("ingest")
@click.option(
    "--index", required=True, help="Target index (created with the fingerprint mapping if missing)."
)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option(
    "--rejects",
    "rejects_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Rejects file (JSON Lines) [default: ./INDEX.rejects.jsonl].",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Resume state file, removed when the run finishes [default: ./.INDEX.ingest-state.json].",
)
@click.option(
    "--resume", is_flag=True, help="Continue an interrupted run: skip documents it settled."
)
@click.option("--allow-rejects", is_flag=True, help="Exit 0 even when documents were rejected.")
@click.option(
    "--boilerplate/--no-boilerplate",
    default=True,
    show_default=True,
    help="Learn and leave out per-host boilerplate shingles.",
)
@learning_options
@click.option(
    "--relearn",
    is_flag=True,
    help="Learn every host's model from this run's sample and replace the stored one "
    "[default: a host with a stored model uses it; the others' are learnt and stored]. Not "
    "while other ingesters of INDEX run.",
)
@click.option(
    "--boilerplate-max-removed",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="A document losing more than this share of its tokens is fingerprinted whole.",
)
@click.option(
    "--boilerplate-min-remaining",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="A document keeping fewer words of its own than this is fingerprinted whole.",
)
@click.option(
    "--max-doc-bytes",
    type=click.IntRange(1),
    default=10 * 1024 * 1024,
    show_default=True,
    help="Larger documents are rejected.",
)
@click.option(
    "--workers", type=click.IntRange(0), default=None, help="Worker processes [default: cores]."
)
@click.option(
    "--batch-size",
    type=click.IntRange(1),
    default=256,
    show_default=True,
    help="Documents per worker task.",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(1),
    default=500,
    show_default=True,
    help="Documents per bulk request.",
)
@click.option(
    "--concurrent-requests",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Bulk requests in flight.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar [default: when stderr is a terminal].",
)
@text_field_option
@es_url_option
def ingest_command(
    index: str,
    inputs: tuple[str, ...],
    text_fields: tuple[str, ...],
    url_field: str | None,
    rejects_path: Path | None,
    state_path: Path | None,
    resume: bool,
    allow_rejects: bool,
    boilerplate: bool,
    boilerplate_share: float,
    boilerplate_slot_share: float,
    boilerplate_min_pages: int,
    boilerplate_max_removed: float,
    boilerplate_min_remaining: int,
    boilerplate_sample: int,
    boilerplate_host_pages: int,
    relearn: bool,
    max_doc_bytes: int,
    workers: int | None,
    batch_size: int,
    chunk_size: int,
    concurrent_requests: int,
    progress: bool | None,
    es_url: str,
) -> None:
    """Fingerprint JSON Lines files and folders (of .html pages and JSON Lines shards) into INDEX.

    JSON Lines: one object per line with id, url, the text fields (those INDEX records, else
    title and body or text), optional html; other fields are kept as they are. An HTML page's
    main text goes to the first text field other than title. Bad documents go to the rejects
    file with the reason and the original; exit 1 when any was rejected (0 with
    --allow-rejects), 3 when the cluster is unreachable, the index is mapped differently or
    records other text fields, 4 when most documents had no text in the text fields.
    """
    opts = IngestOptions(
        index=index,
        text_fields=text_fields_given(text_fields, url_field),
        url_field=url_field,
        inputs=list(inputs),
        rejects_path=rejects_path or Path(f"{index}.rejects.jsonl"),
        state_path=state_path or Path(f".{index}.ingest-state.json"),
        resume=resume,
        prepare=PrepareConfig(
            max_doc_bytes=max_doc_bytes,
            max_removed=boilerplate_max_removed,
            min_remaining=boilerplate_min_remaining,
        ),
        bulk=BulkConfig(chunk_size=chunk_size, concurrency=concurrent_requests),
        batch_size=batch_size,
        boilerplate=boilerplate,
        boilerplate_config=BoilerplateConfig(
            min_share=boilerplate_share,
            slot_share=boilerplate_slot_share,
            min_pages=boilerplate_min_pages,
            max_removed=boilerplate_max_removed,
            min_remaining=boilerplate_min_remaining,
        ),
        boilerplate_sample=boilerplate_sample,
        boilerplate_host_pages=boilerplate_host_pages,
        relearn=relearn,
        progress=sys.stderr.isatty() if progress is None else progress,
        **({"workers": workers} if workers is not None else {}),
    )
    es = client(es_url)
    try:
        summary = ingest(es, opts)
    except (ResumeMismatch, StateInUse, StateNotAFile, EmptyFolder) as exc:
        raise click.UsageError(str(exc)) from exc
    except MappingConflict as exc:
        raise Fatal(str(exc)) from exc
    except TransportError as exc:
        raise Fatal(f"Elasticsearch failed at {es_url}: {exc}; run again with --resume") from exc
    finally:
        es.close()
    click.echo(
        f"read {summary.read}, indexed {summary.indexed}, rejected {summary.rejected}"
        f" in {summary.seconds:.1f} s ({summary.rate:.0f} docs/s)"
        + (f"; {summary.skipped} settled by the earlier run" if summary.skipped else "")
        + (
            f"; boilerplate models for {summary.boilerplate_hosts} hosts"
            + (
                f" ({summary.boilerplate_stored} stored before)"
                if summary.boilerplate_stored
                else ""
            )
            if summary.boilerplate_hosts
            else ""
        )
    )
    if summary.rejected:
        click.echo(f"rejects: {opts.rejects_path}", err=True)
    warning = no_text_warning(
        index, summary.read, summary.no_text, summary.text_fields, summary.fields_seen
    )
    if warning is not None:
        click.echo(f"error: {warning}", err=True)
        sys.exit(EXIT_NO_TEXT)
    if summary.rejected and not allow_rejects:
        sys.exit(EXIT_REJECTED)
