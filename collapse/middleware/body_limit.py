"""The request body as received: 413 above ``max_body_bytes`` (declared, streamed, or once
decoded), and a compressed body decoded before anything reads it.

Clients compress what they send (``Content-Encoding: gzip`` or ``deflate``): elasticsearch-py
with ``http_compress=True`` (the default for Elastic Cloud), Beats and Logstash bulk loads.
Elasticsearch decodes such bodies itself; the proxy reads search and write bodies, so it
decodes them here (``collapse.codings``), before any middleware or route that reads one, and
hands on the plain body without the header: what it forwards is then that plain body. A body
is decoded whole, its decoded size held to the same limit (a small compressed body can expand
a thousandfold); one that does not decode is refused (400), one in another coding too (415):
nothing is forwarded half-read. One layer for both, since every request passes it.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.codings import codings_of, decode_body
from collapse.errors import BadRequest, PayloadTooLarge, UnsupportedEncoding

__all__ = ["BodySizeLimitMiddleware"]

_DROPPED = (b"content-encoding", b"content-length", b"transfer-encoding")


class _TooLarge(Exception):
    pass


class BodySizeLimitMiddleware:
    """Refuses a body by its Content-Length, or stops reading it once it grows past the limit;
    decodes a compressed one (module docstring)."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    def _error(self, declared: int | None = None) -> PayloadTooLarge:
        size = f" ({declared} bytes)" if declared is not None else ""
        return PayloadTooLarge(
            f"request body{size} is larger than the limit of {self.max_body_bytes} bytes "
            "(setting max_body_bytes)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        coded = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_body_bytes:
                    await self._error(declared).response()(scope, receive, send)
                    return
            elif name == b"content-encoding":
                coded = True
        if coded:
            await self._decoded(scope, receive, send)
            return

        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if started:
                raise
            await self._error().response()(scope, receive, send)

    async def _decoded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app called with the body decoded and the headers describing it."""
        codings = codings_of([v for n, v in scope["headers"] if n == b"content-encoding"])
        if not codings:  # identity only: the body is read as it comes
            headers = [(n, v) for n, v in scope["headers"] if n != b"content-encoding"]
            await self({**scope, "headers": headers}, receive, send)
            return
        chunks: list[bytes] = []
        received = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunks.append(message.get("body", b""))
            received += len(chunks[-1])
            if received > self.max_body_bytes:
                await self._error().response()(scope, receive, send)
                return
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body:  # an empty body (a GET without one) has nothing to decode
            try:
                body = decode_body(body, codings, self.max_body_bytes)
            except (BadRequest, PayloadTooLarge, UnsupportedEncoding) as exc:
                await exc.response()(scope, receive, send)
                return
        headers = [(n, v) for n, v in scope["headers"] if n not in _DROPPED]
        headers.append((b"content-length", str(len(body)).encode()))
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the client's disconnect, when it comes

        await self.app({**scope, "headers": headers}, replay, send)
