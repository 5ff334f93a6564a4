"""What the commands share: the --es-url option, the exit codes, and fatal-error mapping."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import click
from elasticsearch import Elasticsearch

from indexer.documents import TextFields
from indexer.es import DEFAULT_ES_URL, ClusterUnavailable, connect
from indexer.grouping import DEFAULT_THRESHOLDS, Thresholds

__all__ = [
    "EXIT_FATAL",
    "EXIT_NO_TEXT",
    "EXIT_OK",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "Fatal",
    "client",
    "es_url_option",
    "no_text_warning",
    "text_field_option",
    "text_fields_given",
    "thresholds",
    "thresholds_options",
]

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_FATAL = 3
#: Most documents had no text in the fields fingerprinted: nothing (or little) will collapse.
EXIT_NO_TEXT = 4

F = TypeVar("F", bound=Callable[..., Any])


class Fatal(click.ClickException):
    """Cannot proceed: the cluster is unreachable, or the index is not ours to write (exit 3)."""

    exit_code = EXIT_FATAL


def es_url_option(fn: F) -> F:
    """``--es-url`` (env ``ES_URL``): one node URL or a comma-separated list."""
    return click.option(
        "--es-url",
        envvar="ES_URL",
        default=DEFAULT_ES_URL,
        show_default=True,
        help="Elasticsearch URL(s), comma-separated [env ES_URL].",
    )(fn)


def thresholds_options(fn: F) -> F:
    """``--max-distance`` and ``--min-similarity``: the grouping rule's thresholds, the proxy's
    defaults unless given (:func:`thresholds` makes them one value)."""
    fn = click.option(
        "--min-similarity",
        type=click.FloatRange(0, 1),
        default=DEFAULT_THRESHOLDS.min_similarity,
        show_default=True,
        help="Smallest MinHash similarity (the proxy's default).",
    )(fn)
    return click.option(
        "--max-distance",
        type=click.IntRange(0, 64),
        default=DEFAULT_THRESHOLDS.max_distance,
        show_default=True,
        help="Largest SimHash Hamming distance (the proxy's default).",
    )(fn)


def thresholds(max_distance: int, min_similarity: float) -> Thresholds:
    """The rule's thresholds of :func:`thresholds_options`' values."""
    return replace(DEFAULT_THRESHOLDS, max_distance=max_distance, min_similarity=min_similarity)


def client(es_url: str) -> Elasticsearch:
    """A connected client, or exit 3 naming the URL tried."""
    try:
        return connect(es_url)
    except ClusterUnavailable as exc:
        raise Fatal(str(exc)) from exc


def text_field_option(fn: F) -> F:
    """``--text-field NAME`` (repeatable): the fields whose text is fingerprinted; and
    ``--url-field NAME``: the field whose URL gives a document's host."""
    fn = click.option(
        "--url-field",
        "url_field",
        default=None,
        help="The field holding a document's URL, whose host picks its boilerplate model: a "
        "name or a dot path (page.link). Default: the field the index records (init), else url.",
    )(fn)
    return click.option(
        "--text-field",
        "text_fields",
        multiple=True,
        help="A field whose text is fingerprinted: a name or a dot path into objects "
        "(article.body); repeat for several, joined in the order given. Default: the fields "
        "the index records (init), else title, body and text.",
    )(fn)


def text_fields_given(names: tuple[str, ...], url: str | None = None) -> TextFields | None:
    """The ``--text-field`` values, with the ``--url-field`` one, as :class:`TextFields` (None
    when no text field was given: a url field alone goes with the text fields the index
    records, ``indexer.mapping.with_url_field``). Both are checked here."""
    try:
        if url is not None:
            TextFields.of(None, url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--url-field") from exc
    if not names:
        return None
    try:
        return TextFields.of(names, url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--text-field") from exc


def no_text_warning(
    index: str, read: int, no_text: int, fields: Sequence[str], seen: Sequence[str]
) -> str | None:
    """What to tell the user when no text was found in most documents read (more than half,
    or all when nothing was fingerprinted), else None."""
    if read == 0 or no_text == 0 or 2 * no_text <= read:
        return None
    hint = f"; the documents have most often: {', '.join(seen)}" if seen else ""
    named = "".join(f" --text-field {name}" for name in (seen[:2] or ["FIELD"]))
    return (
        f"{no_text} of {read} documents have no text in the fields fingerprinted "
        f"({', '.join(fields)}){hint}. Name the fields with "
        f"`indexer init --index {index}{named}`, then run `indexer backfill --index {index}`."
    )
