"""Request bodies sent compressed (``Content-Encoding: gzip`` or ``deflate``), decoded once.

Clients compress what they send: elasticsearch-py with ``http_compress=True`` (the default
for Elastic Cloud), Beats and Logstash bulk loads. Elasticsearch decodes such bodies itself;
the proxy reads search and write bodies, so it decodes them here, before any route or
middleware that reads one, and hands on the plain body with the header removed. What it
forwards to Elasticsearch is then that plain body.

A body is decoded whole and its decoded size is held to ``max_body_bytes`` like a plain
body's (413: a small compressed body can expand a thousandfold). A body that does not decode
is refused (400), and an encoding other than gzip, deflate and identity too (415): nothing is
forwarded half-read.
"""

from __future__ import annotations

import zlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.errors import BadRequest, PayloadTooLarge, UnsupportedEncoding

__all__ = ["ContentDecodingMiddleware", "decode_body"]

#: Content codings decoded here (RFC 9110 §8.4.1; the ``x-`` forms are their old names).
_GZIP = frozenset({"gzip", "x-gzip"})
_DEFLATE = frozenset({"deflate", "x-deflate"})
_CHUNK = 1 << 16  # bytes of output decoded per step (the limit is checked between steps)


class _Undecodable(Exception):
    pass


class _TooLarge(Exception):
    pass


def _codings(values: list[bytes]) -> list[str]:
    """The codings of every ``Content-Encoding`` header, in the order they were applied,
    ``identity`` dropped."""
    out: list[str] = []
    for value in values:
        for part in value.decode("latin-1").split(","):
            coding = part.strip().lower()
            if coding and coding != "identity":
                out.append(coding)
    return out


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    """``data`` decoded by zlib with ``wbits``, concatenated streams (gzip members) included,
    at most ``limit`` bytes of output."""
    out: list[bytes] = []
    size = 0
    while True:
        d = zlib.decompressobj(wbits)
        pending = data
        while True:
            chunk = d.decompress(pending, _CHUNK)
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            out.append(chunk)
            pending = d.unconsumed_tail
            if d.eof or not (pending or chunk):
                break
        if not d.eof:
            raise _Undecodable("the compressed body ends before its stream does")
        data = d.unused_data
        if not data:
            return b"".join(out)
        if wbits != 31:  # only gzip concatenates members
            raise _Undecodable("bytes follow the compressed stream")


def _deflate_wbits(data: bytes) -> int:
    """HTTP's ``deflate`` is a zlib stream (RFC 1950); some clients send the raw deflate data
    alone. A zlib header says which: compression method 8, and a multiple of 31."""
    if len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0:
        return 15
    return -15


def decode_body(body: bytes, codings: list[str], limit: int) -> bytes:
    """``body`` with ``codings`` (in the order they were applied) undone; at most ``limit``
    bytes. Raises :class:`~collapse.errors.BadRequest` for a body that does not decode,
    :class:`~collapse.errors.PayloadTooLarge` past the limit and
    :class:`~collapse.errors.UnsupportedEncoding` for a coding it does not know."""
    unknown = [c for c in codings if c not in _GZIP | _DEFLATE]
    if unknown:
        raise UnsupportedEncoding(
            f"request body in Content-Encoding [{', '.join(unknown)}]: the proxy decodes "
            "gzip and deflate only"
        )
    try:
        for coding in reversed(codings):
            wbits = 31 if coding in _GZIP else _deflate_wbits(body)
            body = _inflate(body, wbits, limit)
    except _TooLarge:
        raise PayloadTooLarge(
            f"request body decoded from [{', '.join(codings)}] is larger than the limit of "
            f"{limit} bytes (setting max_body_bytes)"
        ) from None
    except (zlib.error, _Undecodable) as exc:
        raise BadRequest(
            f"request body does not decode as Content-Encoding [{', '.join(codings)}]: {exc}"
        ) from None
    return body


class ContentDecodingMiddleware:
    """Decodes a compressed request body (see the module docstring); the headers the app
    sees then describe the plain body (no ``Content-Encoding``, its ``Content-Length``)."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        values = [value for name, value in scope["headers"] if name == b"content-encoding"]
        if not values:
            await self.app(scope, receive, send)
            return
        codings = _codings(values)
        if not codings:  # identity only: the body is read as it comes
            headers = [(n, v) for n, v in scope["headers"] if n != b"content-encoding"]
            await self.app({**scope, "headers": headers}, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body:  # an empty body (a GET without one) has nothing to decode
            try:
                body = decode_body(body, codings, self.max_body_bytes)
            except (BadRequest, PayloadTooLarge, UnsupportedEncoding) as exc:
                await exc.response()(scope, receive, send)
                return
        drop = (b"content-encoding", b"content-length", b"transfer-encoding")
        headers = [(n, v) for n, v in scope["headers"] if n not in drop]
        headers.append((b"content-length", str(len(body)).encode()))
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the client's disconnect, when it comes

        await self.app({**scope, "headers": headers}, replay, send)
