"""The access line written without a LogRecord (``collapse.logging.log_info``) is the line
logging's own way writes: same keys, same order, same redaction."""

from __future__ import annotations

import io
import json
import logging

from hypothesis import given, settings
from hypothesis import strategies as st

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


#: Texts, some holding what redaction looks for (credential words, the secret, a URL with a
#: password, an escape that reads as a word once encoded).
_PIECES = st.one_of(
    st.text(max_size=8),
    st.sampled_from(
        [
            "token",
            "\token",
            "\tOKEN=abc",
            "api_key: x",
            "Bearer abc.def",
            "basic",
            "password=pw",
            "s3cret",
            "http://u:p@host/",
            ":/",
            "/",
            "Authorization",
        ]
    ),
)
_TEXT = st.lists(_PIECES, max_size=3).map("".join)
_FIELD_VALUES = st.one_of(
    _TEXT,
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.lists(_TEXT, max_size=3),
    st.lists(st.one_of(st.integers(), _TEXT), max_size=3),
    st.dictionaries(_TEXT, st.integers(), max_size=2),
)


@settings(max_examples=1000, deadline=None)
@given(
    message=_TEXT,
    request_id=st.one_of(st.none(), st.just(""), _TEXT),
    fields=st.dictionaries(
        st.one_of(_TEXT, st.sampled_from(["ts", "level", "status", "route"])),
        _FIELD_VALUES,
        max_size=8,
    ),
    created=st.floats(min_value=0, max_value=4e9),
)
def test_line_is_what_format_makes_of_any_fields(
    message: str, request_id: str | None, fields: dict[str, object], created: float
) -> None:
    formatter = JsonFormatter(["s3cret"])
    record = logging.LogRecord("collapse.access", logging.INFO, __file__, 1, "%s", (message,), None)
    record.created, record.msecs = created, (created - int(created)) * 1000
    # An extra field may not overwrite the record's own fields or attributes (logging refuses
    # the first), and a ``request_id`` field is the record's request id to ``format``.
    kept = {
        k: v
        for k, v in fields.items()
        if k not in vars(record) and k not in ("message", "request_id") and not k.startswith("__")
    }
    for key, value in kept.items():
        setattr(record, key, value)
    token = request_id_var.set(request_id)
    try:
        expected = formatter.format(record)
        got = formatter.line(created, "collapse.access", message, kept)
    finally:
        request_id_var.reset(token)
    assert got == expected


@settings(max_examples=1000, deadline=None)
@given(text=_TEXT)
def test_redact_skips_the_patterns_only_where_none_can_match(text: str) -> None:
    from collapse.logging import _CREDENTIAL_PATTERNS, REDACTED, redact

    every = _CREDENTIAL_PATTERNS[0].sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
    every = _CREDENTIAL_PATTERNS[1].sub(lambda m: f"{m[1]} {REDACTED}", every)
    every = _CREDENTIAL_PATTERNS[2].sub(lambda m: f"{m[1]}{REDACTED}@", every)
    assert redact(text) == every
