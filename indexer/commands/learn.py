"""``python -m indexer learn --index NAME INPUT...``: learn and store the host boilerplate models.

Run it once before several ``indexer ingest`` processes share one input: each ingester then
uses the stored model of every host instead of learning its own from its part.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from elasticsearch import Elasticsearch, NotFoundError, TransportError

from indexer.boilerplate import BoilerplateConfig
from indexer.commands.common import (
    Fatal,
    client,
    es_url_option,
    text_field_option,
    text_fields_given,
)
from indexer.ingest import DEFAULT_BOILERPLATE_SAMPLE, IngestOptions, learn
from indexer.mapping import MappingConflict
from indexer.prepare import PrepareConfig
from indexer.sample import DEFAULT_HOST_PAGES

__all__ = ["learn_command", "learning_options"]

F = TypeVar("F", bound=Callable[..., Any])

#: Hosts listed one per line by ``learn``; more are counted.
_SHOWN = 20


def _one_index(es: Elasticsearch, name: str) -> str:
    """The concrete index that ``name`` (an index, an alias) names: models are stored, and
    read by ``backfill`` and the proxy, under a concrete index's name."""
    try:
        found = sorted(es.indices.get(index=name, allow_no_indices=False).body)
    except NotFoundError:
        found = []
    if not found:
        raise Fatal(f"no index {name} to learn from: give the INPUTS its documents come from")
    if len(found) > 1:
        listed = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise Fatal(f"{name} names {len(found)} indices ({listed}): learn from one at a time")
    return found[0]


def learning_options(fn: F) -> F:
    """The options that decide a host's model (shared by ``learn`` and ``ingest``)."""
    options = [
        click.option(
            "--boilerplate-share",
            type=click.FloatRange(0, 1, min_open=True),
            default=0.5,
            show_default=True,
            help="A shingle on more than this share of a host's pages is boilerplate.",
        ),
        click.option(
            "--boilerplate-slot-share",
            type=click.FloatRange(0, 1, min_open=True),
            default=0.05,
            show_default=True,
            help="A short line starting alike on more than this share of a host's pages is a "
            "template slot (cut whatever follows the start).",
        ),
        click.option(
            "--boilerplate-min-pages",
            type=click.IntRange(1),
            default=BoilerplateConfig().min_pages,
            show_default=True,
            help="Hosts with fewer pages get no boilerplate model.",
        ),
        click.option(
            "--boilerplate-sample",
            type=click.IntRange(0),
            default=DEFAULT_BOILERPLATE_SAMPLE,
            show_default=True,
            help="Documents read in the learning pass.",
        ),
        click.option(
            "--boilerplate-host-pages",
            type=click.IntRange(1),
            default=DEFAULT_HOST_PAGES,
            show_default=True,
            help="Of them, pages of one host learnt from, at most (its other pages wait for "
            "its model). Lower: a load of one big host starts sooner, its model learns less.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command("learn")
@click.option(
    "--index", required=True, help="Target index (created with the fingerprint mapping if missing)."
)
@click.argument("inputs", nargs=-1, type=click.Path(exists=True, allow_dash=True))
@learning_options
@click.option(
    "--max-doc-bytes",
    type=click.IntRange(1),
    default=10 * 1024 * 1024,
    show_default=True,
    help="Larger documents are left out.",
)
@click.option(
    "--workers", type=click.IntRange(0), default=None, help="Worker processes [default: cores]."
)
@text_field_option
@es_url_option
def learn_command(
    index: str,
    inputs: tuple[str, ...],
    text_fields: tuple[str, ...],
    url_field: str | None,
    boilerplate_share: float,
    boilerplate_slot_share: float,
    boilerplate_min_pages: int,
    boilerplate_sample: int,
    boilerplate_host_pages: int,
    max_doc_bytes: int,
    workers: int | None,
    es_url: str,
) -> None:
    """Learn the per-host boilerplate models of INDEX from the first --boilerplate-sample
    documents of INPUTS (as `ingest` reads them) and store them, replacing stored ones.

    Without INPUTS, from INDEX's own documents (written by another loader or through the
    proxy; their url field gives the host), then run `backfill --index INDEX --all` so that
    every document is fingerprinted with them.

    Run it before ingesting parts of one input with several `indexer ingest` processes: each
    then fingerprints every host with the stored model (the version printed here, kept in each
    document's collapse_fp.model), so the parts are fingerprinted as one run would.
    """
    opts = IngestOptions(
        index=index,
        text_fields=text_fields_given(text_fields, url_field),
        url_field=url_field,
        inputs=list(inputs),
        rejects_path=Path(f"{index}.rejects.jsonl"),  # not written
        state_path=Path(f".{index}.ingest-state.json"),  # not written
        prepare=PrepareConfig(max_doc_bytes=max_doc_bytes),
        boilerplate_config=BoilerplateConfig(
            min_share=boilerplate_share,
            slot_share=boilerplate_slot_share,
            min_pages=boilerplate_min_pages,
        ),
        boilerplate_sample=boilerplate_sample,
        boilerplate_host_pages=boilerplate_host_pages,
        **({"workers": workers} if workers is not None else {}),
    )
    es = client(es_url)
    try:
        if not inputs:  # from the index's own documents: one concrete index, models under its name
            opts.index = _one_index(es, index)
        summary = learn(es, opts)
    except MappingConflict as exc:
        raise Fatal(str(exc)) from exc
    except TransportError as exc:
        raise Fatal(f"Elasticsearch failed at {es_url}: {exc}") from exc
    finally:
        es.close()
    click.echo(
        f"read {summary.read}, hosts {summary.hosts}, models stored for {len(summary.models)}"
        f" (index {opts.index}, fingerprint version {summary.version}) in {summary.seconds:.1f} s"
    )
    for host, version in list(summary.models.items())[:_SHOWN]:
        click.echo(f"{host}: model {version} from {summary.pages[host]} pages")
    if len(summary.models) > _SHOWN:
        click.echo(f"... and {len(summary.models) - _SHOWN} more hosts")
