"""``python -m collapse``: serve the proxy with uvicorn."""

from __future__ import annotations

import os

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--es-url", envvar="ES_URL", help="Elasticsearch node URL(s), comma-separated.")
@click.option("--log-level", default="info", show_default=True)
def main(host: str, port: int, workers: int, es_url: str | None, log_level: str) -> None:
    """Serve the collapsing proxy in front of Elasticsearch."""
    import uvicorn

    if es_url:
        os.environ["ES_URL"] = es_url
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
        log_level=log_level,
        access_log=False,  # collapse.middleware.request_id writes JSON access lines instead
    )


if __name__ == "__main__":
    main()
