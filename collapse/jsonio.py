"""JSON in and out of the proxy: orjson when installed (the faster parser), else the stdlib.

Only collapsed answers are parsed and serialised; ``collapse=false`` answers are never touched.
"""

from __future__ import annotations

import json
from typing import Any

from collapse.errors import Malformed

__all__ = ["parse_body", "parse_ndjson"]

try:  # pragma: no cover - which branch runs depends on the environment
    import orjson

    def loads(data: bytes | str) -> Any:
        return orjson.loads(data)

    def dumps(value: Any) -> bytes:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)

    def dumps_pretty(value: Any) -> bytes:
        option = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
        return orjson.dumps(value, option=option)

    _DECODE_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover

    def loads(data: bytes | str) -> Any:
        return json.loads(data)

    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), default=_numpy_default).encode()

    def dumps_pretty(value: Any) -> bytes:
        return (json.dumps(value, indent=2, default=_numpy_default) + "\n").encode()

    _DECODE_ERRORS = (json.JSONDecodeError, UnicodeDecodeError)


def _numpy_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def parse_body(data: bytes) -> dict[str, Any]:
    """A search body, or ``{}`` when empty; Malformed (400) when it is not a JSON object."""
    if not data.strip():
        return {}
    try:
        body = loads(data)
    except _DECODE_ERRORS as exc:
        raise Malformed(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise Malformed("request body must be a JSON object")
    return body


def parse_ndjson(data: bytes) -> list[dict[str, Any]]:
    """The lines of an NDJSON body (``_msearch``), each a JSON object; blank lines skipped."""
    return [parse_body(line) for line in data.split(b"\n") if line.strip()]
