"""``python -m collapse``: serve the proxy with uvicorn."""

from __future__ import annotations

import os
import sys

# The Elasticsearch client imports pyarrow when it is installed (for Arrow answers the proxy
# never asks for); the ingest workers' tokeniser is why it is. Marking it absent for the served
# proxy's processes keeps Arrow out of every worker's memory (docs/proxy.md, "Memory").
sys.modules.setdefault("pyarrow", None)  # type: ignore[arg-type]

import logging  # noqa: E402

# The served proxy's log lines carry no caller's file, thread or process (collapse.logging):
# logging need not look them up for every record (the logging HOWTO's "Optimization").
# Set here, so in every worker (each imports this module) and never in an app that mounts
# the proxy in its own process.
logging._srcfile = None
logging.logThreads = False
logging.logProcesses = False
logging.logMultiprocessing = False

import click  # noqa: E402

from indexer import __version__  # noqa: E402  # the one version of the package (pyproject.toml)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup-collapse")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--es-url", envvar="ES_URL", help="Elasticsearch node URL(s), comma-separated.")
@click.option(
    "--exposed-indices",
    envvar="EXPOSED_INDICES",
    metavar="PATTERNS",
    help="Index patterns the proxy serves, comma-separated (default *: every index but the "
    "boilerplate model store and hidden ones).",
)
@click.option(
    "--log-level",
    envvar="COLLAPSE_LOG_LEVEL",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"], case_sensitive=False),
    help="Lowest level logged (the JSON access lines are info).",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    help="Any setting of collapse/settings.py, e.g. --set collapse_max_distance=12 "
    "(same as the environment variable COLLAPSE_MAX_DISTANCE=12).",
)
def main(
    host: str,
    port: int,
    workers: int,
    es_url: str | None,
    exposed_indices: str | None,
    log_level: str,
    overrides: tuple[str],
) -> None:
    """Serve the collapsing proxy in front of Elasticsearch."""
    import uvicorn
    from pydantic import ValidationError

    from collapse.settings import Settings

    if es_url:
        os.environ["ES_URL"] = es_url
    if exposed_indices:
        os.environ["EXPOSED_INDICES"] = exposed_indices
    os.environ["COLLAPSE_LOG_LEVEL"] = log_level.lower()  # read by every worker's settings
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or name.strip().lower() not in Settings.model_fields:
            raise click.BadParameter(
                f"{item!r}: expected NAME=VALUE with a setting's name", param_hint="--set"
            )
        os.environ[name.strip().upper()] = value
    try:
        Settings()  # fail here, with the reason, rather than in every worker
    except ValidationError as exc:
        raise click.BadParameter(str(exc), param_hint="--set / environment") from exc
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Each worker is a process: they share metrics through files (see collapse.metrics).
        import atexit
        import shutil
        import tempfile

        metrics_dir = tempfile.mkdtemp(prefix="collapse-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        atexit.register(shutil.rmtree, metrics_dir, ignore_errors=True)
    uvicorn.run(
        "collapse.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level.lower(),
        access_log=False,  # collapse.middleware.request_id writes JSON access lines instead
        loop="uvloop",  # uvicorn[standard]: the C event loop and HTTP parser, explicitly
        http="httptools",
    )


if __name__ == "__main__":
    main()
