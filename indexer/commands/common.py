"""What the commands share: the --es-url option, the exit codes, and fatal-error mapping."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from elasticsearch import Elasticsearch

from indexer.es import DEFAULT_ES_URL, ClusterUnavailable, connect

__all__ = [
    "EXIT_FATAL",
    "EXIT_OK",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "Fatal",
    "client",
    "es_url_option",
]

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_FATAL = 3

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


def client(es_url: str) -> Elasticsearch:
    """A connected client, or exit 3 naming the URL tried."""
    try:
        return connect(es_url)
    except ClusterUnavailable as exc:
        raise Fatal(str(exc)) from exc
