"""Request bodies sent compressed (``Content-Encoding: gzip`` or ``deflate``), decoded once.

Clients compress what they send: elasticsearch-py with ``http_compress=True`` (the default
for Elastic Cloud), Beats and Logstash bulk loads. Elasticsearch decodes such bodies itself;
the proxy reads search and write bodies, so it decodes them here (``collapse.codings``),
before any route or middleware that reads one, and hands on the plain body with the header
removed. What it forwards to Elasticsearch is then that plain body.

A body is decoded whole and its decoded size is held to ``max_body_bytes`` like a plain
body's (413: a small compressed body can expand a thousandfold). A body that does not decode
is refused (400), and an encoding other than gzip, deflate and identity too (415): nothing is
forwarded half-read.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.codings import codings_of, decode_body
from collapse.errors import BadRequest, PayloadTooLarge, UnsupportedEncoding

__all__ = ["ContentDecodingMiddleware"]


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
        codings = codings_of(values)
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
