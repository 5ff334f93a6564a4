"""The access line written without a LogRecord (``collapse.logging.log_info``) is the line
logging's own way writes: same keys, same order, same redaction."""

from __future__ import annotations

import io
import json
import logging

from collapse.logging import JsonFormatter, configure, log_info, request_id_var
from collapse.settings import Settings

FIELDS = {
    "method": "GET",
    "path": "/idx/_search",
    "query_keys": ["api_key", "q"],
    "status": 200,
    "duration_ms": 1.5,
    "client": "127.0.0.1",
    "route": "/{index}/_search",
}


def test_line_is_what_format_makes_of_the_record() -> None:
    formatter = JsonFormatter(["s3cret"])
    record = logging.LogRecord(
        "collapse.access", logging.INFO, __file__, 1, "%s %s %d", ("GET", "/s3cret", 200), None
    )
    for key, value in FIELDS.items():
        setattr(record, key, value)
    token = request_id_var.set("rid-1")
    try:
        expected = formatter.format(record)
        got = formatter.line(record.created, "collapse.access", "GET /s3cret 200", FIELDS)
    finally:
        request_id_var.reset(token)
    assert got == expected
    assert "s3cret" not in got and list(json.loads(got))[:5] == [
        "ts",
        "level",
        "logger",
        "msg",
        "request_id",
    ]


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_log_info_writes_the_same_line_both_ways() -> None:
    configure(Settings(es_url=["http://127.0.0.1:9200"]))
    handler = next(h for h in logging.getLogger("collapse").handlers if hasattr(h, "setStream"))
    logger = logging.getLogger("collapse.access")
    direct, ordinary = io.StringIO(), io.StringIO()
    previous = handler.setStream(direct)
    try:
        log_info(logger, "%s %s %d", ("GET", "/idx/_search", 200), FIELDS)
        handler.setStream(ordinary)
        logger.info("%s %s %d", "GET", "/idx/_search", 200, extra=FIELDS)
        # A filter on the logger: logging's ordinary way, so the filter is honoured.
        logger.addFilter(lambda record: False)
        try:
            log_info(logger, "%s %s %d", ("GET", "/idx/_search", 200), FIELDS)
        finally:
            logger.filters.clear()
    finally:
        handler.setStream(previous)
    (fast,), (slow,) = _lines(direct), _lines(ordinary)
    assert fast.pop("ts") and slow.pop("ts")
    assert list(fast.items()) == list(slow.items())
