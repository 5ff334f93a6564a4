"""Structured JSON logs, one object per line, with the request id and without secrets.

``configure(settings)`` sends the ``collapse`` loggers (and uvicorn's error log) to stderr as
JSON: ``{"ts", "level", "logger", "msg", "request_id", ...extra fields}``. The request id of the
request being served lives in ``request_id_var`` (set by ``middleware.request_id``); every line
logged while serving it carries it, and ``collapse.upstream`` sends it to Elasticsearch as
``X-Opaque-Id`` so a slow-log or task entry there can be traced back to the proxy's line.

Secrets never reach a log line: the configured API key and any password in an ``ES_URL`` are
replaced by ``[REDACTED]`` in every message and field, and so is anything that looks like an
``Authorization``/``X-API-Key`` value. Request headers and bodies are never logged.
"""

from __future__ import annotations

import contextvars
import functools
import json
import json.encoder
import logging
import re
import sys
import time
from typing import Any, cast
from urllib.parse import urlsplit

from collapse.settings import Settings

__all__ = [
    "REDACTED",
    "JsonFormatter",
    "configure",
    "current_request_id",
    "log_info",
    "redact",
    "request_id_var",
    "secrets_of",
]

#: The id of the request being served in this task, or ``None`` outside a request.
request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "collapse_request_id", default=None
)

REDACTED = "[REDACTED]"

#: Values that look like credentials wherever they appear in a message.
_CREDENTIAL_PATTERNS = (
    re.compile(
        r"(?i)(authorization|x-api-key|api[_-]?key|password|secret|token)([\"']?\s*[:=]\s*[\"']?)([^\s\"',&}]+)"
    ),
    re.compile(r"(?i)\b(ApiKey|Bearer|Basic)\s+[A-Za-z0-9+/=._~-]+"),
    re.compile(r"(?i)(https?://)[^/\s:@]+:[^/\s@]+@"),
)

#: A credential pattern can only match text holding one of these (lower case).
_CREDENTIAL_WORDS = (
    "authorization",
    "api",
    "password",
    "secret",
    "token",
    "bearer",
    "basic",
    "://",
)


#: The fields of a LogRecord that are not "extra" fields given by the caller.
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def current_request_id() -> str | None:
    """The request id of the request being served, if any."""
    return request_id_var.get()


def secrets_of(settings: Settings) -> list[str]:
    """The configured secret values that must never be logged."""
    found = []
    if settings.write_api_key is not None:
        found.append(settings.write_api_key.get_secret_value())
    for url in settings.es_url:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
    return [value for value in found if value]


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """``text`` with known secret values and credential-looking values replaced."""
    for value in secrets:
        text = text.replace(value, REDACTED)
    lowered = text.lower()
    for word in _CREDENTIAL_WORDS:
        if word in lowered:
            break
    else:
        return text  # none of the patterns can match: skip the regexes (every access line)
    text = _CREDENTIAL_PATTERNS[0].sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
    text = _CREDENTIAL_PATTERNS[1].sub(lambda m: f"{m[1]} {REDACTED}", text)
    return _CREDENTIAL_PATTERNS[2].sub(lambda m: f"{m[1]}{REDACTED}@", text)


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON object; extra fields given with ``extra=`` are kept."""

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _second(int(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redact(_encode(entry), self.secrets)

    def line(self, created: float, logger: str, message: str, fields: dict[str, Any]) -> str:
        """What :meth:`format` makes of an info record of ``logger`` created at ``created``
        with ``message`` and ``extra=fields``, without the record."""
        msecs = int((created - int(created)) * 1000)
        entry: dict[str, Any] = {
            "ts": _second(int(created)) + f".{msecs:03d}Z",
            "level": "info",
            "logger": logger,
            "msg": message,
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in fields.items():
            if key not in entry:
                entry[key] = value
        return redact(_encode(entry), self.secrets)


#: ``json.dumps(entry, default=str, ensure_ascii=False)``, its encoder made once.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)
#: The C encoder ``_ENCODER.encode`` makes anew on every call, made once (no check for
#: circular references: a log entry is a flat dict of strings, numbers and lists).
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_ITERENCODE: Any = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True
    )
)


def _encode(entry: dict[str, Any]) -> str:
    """``_ENCODER.encode(entry)``, the same text."""
    if _ITERENCODE is None:
        return _ENCODER.encode(entry)
    return "".join(_ITERENCODE(entry, 0))


@functools.lru_cache(maxsize=4)
def _second(seconds: int) -> str:
    """The UTC timestamp of a second, to the second (the lines of one second share it)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


_HANDLER_MARK = "_collapse_json_handler"


def log_info(
    logger: logging.Logger, fmt: str, args: tuple[Any, ...], fields: dict[str, Any]
) -> None:
    """``logger.info(fmt, *args, extra=fields)``: the same line, written straight to the
    proxy's JSON handler when that handler is the only place the line goes (no ``LogRecord`` is
    made then: the access line of every request). Any other set-up of the logger (filters,
    handlers of its own, a test's capture) takes logging's ordinary way."""
    if not logger.isEnabledFor(logging.INFO):
        return
    handler = _json_handler(logger)
    if handler is not None:
        formatter = cast(JsonFormatter, handler.formatter)
        text = formatter.line(time.time(), logger.name, fmt % args, fields) + handler.terminator
        handler.acquire()
        try:
            handler.stream.write(text)
            handler.stream.flush()
            return
        except Exception:  # logging's own way below reports it
            pass
        finally:
            handler.release()
    logger.info(fmt, *args, extra=fields)


def _json_handler(logger: logging.Logger) -> logging.StreamHandler[Any] | None:
    """The proxy's JSON handler when a record of ``logger`` would reach it and nothing else."""
    if logger.filters:
        return None
    current: logging.Logger | None = logger
    while current is not None:
        if current.handlers:
            handler = current.handlers[0]
            if (
                len(current.handlers) == 1
                and not current.propagate
                and getattr(handler, _HANDLER_MARK, False)
                and isinstance(handler, logging.StreamHandler)
                and isinstance(handler.formatter, JsonFormatter)
                and not handler.filters
                and handler.level <= logging.INFO
            ):
                return handler
            return None
        if not current.propagate:
            return None
        current = current.parent
    return None


def configure(settings: Settings, level: int | str = logging.INFO) -> None:
    """Send the proxy's loggers to stderr as JSON lines; safe to call again (replaces secrets)."""
    formatter = JsonFormatter(secrets_of(settings))
    for name in ("collapse", "uvicorn.error"):
        logger = logging.getLogger(name)
        handler = next((h for h in logger.handlers if getattr(h, _HANDLER_MARK, False)), None)
        if handler is None:
            for old in list(logger.handlers):
                logger.removeHandler(old)
            handler = logging.StreamHandler(sys.stderr)
            setattr(handler, _HANDLER_MARK, True)
            logger.addHandler(handler)
        handler.setFormatter(formatter)
        logger.propagate = False
        if logger.level == logging.NOTSET or name == "collapse":
            logger.setLevel(level)
