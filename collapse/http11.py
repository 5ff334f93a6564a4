"""The HTTP/1.1 client under the proxy's httpx client: pooled keep-alive connections, answers
parsed by httptools (the C parser uvicorn serves with).

:class:`Http11Transport` is an ``httpx.AsyncBaseTransport``, so ``httpx.AsyncClient`` works over
it; ``collapse.upstream`` calls its leaner entry, :meth:`Http11Transport.exchange`, with the
request already laid out as bytes and gets the answer back as its status, raw header pairs and
body. Errors are httpx's, mapped here and nowhere else:

    could not connect (refused, unreachable, TLS)       httpx.ConnectError
    connecting took longer than the ``connect`` timeout  httpx.ConnectTimeout
    no free connection within the ``pool`` timeout       httpx.ConnectTimeout
    no byte of the answer for ``read`` seconds           httpx.ReadTimeout
    the node hung up before any byte of the answer       httpx.RemoteProtocolError
    the node hung up in the middle of the answer         httpx.ReadError
    an answer that is not HTTP/1.x                       httpx.RemoteProtocolError

A ``ConnectTimeout`` or ``ConnectError`` means nothing was sent. One request at a time per
connection, at most ``max_connections`` requests in flight (more wait for a slot); an idle
connection is reused for ``keepalive_expiry`` seconds unless the node closed it or asked to
close. A request is never sent twice here: whether to retry is ``collapse.upstream``'s decision.
Answers are read whole and never decoded (``Content-Encoding`` is the caller's business).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from typing import Any, NamedTuple

import httptools
import httpx

__all__ = [
    "Answer",
    "Http11Transport",
    "Origin",
    "Timeouts",
    "header_items",
    "request_head",
    "response_of",
]


class Origin(NamedTuple):
    """Where a request goes: scheme, host and port."""

    scheme: str
    host: str
    port: int


class Timeouts(NamedTuple):
    """Seconds (None: no limit) to open a connection, to wait for each read of the answer, and
    to wait for a free connection."""

    connect: float | None
    read: float | None
    pool: float | None


class Answer(NamedTuple):
    """An answer as the node sent it: status, reason phrase, header pairs, body."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes


def request_head(method: str, target: str, host: str, headers: list[tuple[str, str]]) -> bytes:
    """The request line and headers of one request, ``Host`` first.

    A CR or LF in a header would split it into two: refused (``ValueError``).
    """
    lines = [f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n"]
    for name, value in headers:
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"a line break in the value of the request header {name!r}")
        lines.append(f"{name}: {value}\r\n")
    lines.append("\r\n")
    text = "".join(lines)
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _error(
    kind: type[httpx.TransportError], message: str, cause: BaseException | None
) -> Exception:
    error = kind(message)
    error.__cause__ = cause
    return error


class _Connection(asyncio.Protocol):
    """One kept-alive connection; :meth:`exchange` sends a request and waits for its answer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[Answer] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._head_only = False
        self._reads = 0
        self._reason = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._chunks: list[bytes] = []
        self._headers_done = False

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._read_to_close():
            self._answer(b"".join(self._chunks))  # framed by the end of the connection
        elif self._reads:
            waiter.set_exception(
                _error(httpx.ReadError, "the connection closed in the middle of the answer", exc)
            )
        else:
            waiter.set_exception(
                _error(
                    httpx.RemoteProtocolError,
                    "Server disconnected without sending a response.",
                    exc,
                )
            )

    def data_received(self, data: bytes) -> None:
        self._reads += 1
        parser = self._parser
        if parser is None:  # nothing was asked: not HTTP we can follow
            self.close()
            return
        try:
            parser.feed_data(data)
        except httptools.HttpParserError as exc:
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_exception(
                    _error(httpx.RemoteProtocolError, f"invalid HTTP answer: {exc}", exc)
                )
            self.close()

    # httptools callbacks

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._headers_done = True
        if self._head_only:  # an answer to HEAD has no body, whatever its Content-Length says
            self._answer(b"")

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if not self._head_only:
            self._answer(b"".join(self._chunks))

    # the connection's own

    def _read_to_close(self) -> bool:
        """Whether the answer has neither a length nor chunks: its body ends with the connection."""
        names = {name.lower() for name, _ in self._headers}
        return b"content-length" not in names and b"transfer-encoding" not in names

    def _answer(self, body: bytes) -> None:
        waiter, parser = self._waiter, self._parser
        if waiter is None or parser is None or waiter.done():
            return
        self.reusable = not self.closed and parser.should_keep_alive()
        waiter.set_result(Answer(parser.get_status_code(), self._reason, self._headers, body))

    def _stalled(self) -> None:
        """The read timer: fails the request when nothing came for its read timeout. One timer
        per connection, left armed between requests (no timer made and cancelled per request):
        when it fires it looks at the request in flight, if any, and arms itself again while
        that request may still wait."""
        self._timer = None
        waiter, seconds = self._waiter, self._read
        if waiter is None or waiter.done() or seconds is None:
            return  # idle, or a request without a read timeout: disarmed
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._reads != self._seen:  # bytes came meanwhile: wait another ``seconds``
            self._seen = self._reads
            self._timer = loop.call_at(now + seconds, self._stalled)
            return
        if now < self._deadline:  # armed for an earlier request: this one's own deadline
            self._timer = loop.call_at(self._deadline, self._stalled)
            return
        waiter.set_exception(httpx.ReadTimeout(f"no answer within {seconds:g} s"))
        self.close()

    def close(self) -> None:
        self.closed = True
        self.reusable = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.transport is not None:
            self.transport.close()

    async def exchange(
        self, head: bytes, body: bytes | None, head_only: bool, read: float | None
    ) -> Answer:
        """Send one request and wait for its whole answer."""
        transport = self.transport
        if transport is None or self.closed:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        self._parser = httptools.HttpResponseParser(self)
        self._head_only = head_only
        self._reads = 0
        self._reason = b""
        self._headers = []
        self._chunks = []
        self._headers_done = False
        self.reusable = False
        if body:
            transport.writelines((head, body))
        else:
            transport.write(head)
        self._read = read
        if read:
            self._seen = 0
            self._deadline = loop.time() + read
            if self._timer is None:
                self._timer = loop.call_at(self._deadline, self._stalled)
        try:
            return await waiter
        finally:
            self._waiter = None
            self._parser = None

    _timer: asyncio.TimerHandle | None = None
    #: The request in flight's read timeout, when it started waiting, the reads seen by the
    #: timer (:meth:`_stalled`).
    _read: float | None = None
    _deadline = 0.0
    _seen = 0


class Http11Transport(httpx.AsyncBaseTransport):
    """httpx's transport over pooled HTTP/1.1 connections (module docstring)."""

    def __init__(self, max_connections: int = 100, keepalive_expiry: float = 5.0) -> None:
        self._limit = max_connections
        self._keepalive = keepalive_expiry
        self._busy = 0
        self._slots: deque[asyncio.Future[None]] = deque()
        self._idle: dict[Origin, list[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None

    async def exchange(
        self,
        origin: Origin,
        head: bytes,
        body: bytes | None,
        timeouts: Timeouts,
        head_only: bool = False,
    ) -> Answer:
        """Send ``head`` and ``body`` to ``origin`` on a pooled connection; its whole answer."""
        await self._take_slot(timeouts.pool)
        try:
            connection = await self._connection(origin, timeouts.connect)
        except BaseException:
            self._give_slot()
            raise
        try:
            answer = await connection.exchange(head, body, head_only, timeouts.read)
        except BaseException:
            connection.close()  # its state is unknown: never reused
            self._give_slot()
            raise
        self._give_slot()
        if connection.reusable:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self._limit:
                connection.idle_since = time.monotonic()
                idle.append(connection)
                return answer
        connection.close()
        return answer

    async def _take_slot(self, pool: float | None) -> None:
        if self._busy < self._limit:
            self._busy += 1
            return
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._slots.append(slot)
        try:
            await asyncio.wait_for(slot, pool)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout("no free connection to the node within the timeout") from exc
        except BaseException:
            if slot.done() and not slot.cancelled():
                self._give_slot()  # handed over as this request was cancelled: pass it on
            raise

    def _give_slot(self) -> None:
        while self._slots:
            slot = self._slots.popleft()
            if not slot.done():
                slot.set_result(None)  # handed over: the count of requests in flight stays
                return
        self._busy -= 1

    async def _connection(self, origin: Origin, connect: float | None) -> _Connection:
        idle = self._idle.get(origin)
        if idle:
            now = time.monotonic()
            while idle:
                connection = idle.pop()  # the most recent: the least likely to have expired
                if not connection.closed and now - connection.idle_since < self._keepalive:
                    return connection
                connection.close()
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if origin.scheme == "https" else None
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(_Connection, origin.host, origin.port, ssl=tls), connect
            )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"could not connect to {origin.host}:{origin.port}") from exc
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """httpx's entry: the request as httpx built it (its ``Host`` and length included)."""
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        target = url.raw_path.decode("ascii")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        host = next((v for k, v in headers if k.lower() == "host"), url.netloc.decode("ascii"))
        head = request_head(
            request.method, target, host, [(k, v) for k, v in headers if k.lower() != "host"]
        )
        asked: dict[str, Any] = request.extensions.get("timeout", {})
        timeouts = Timeouts(asked.get("connect"), asked.get("read"), asked.get("pool"))
        body = await request.aread()
        answer = await self.exchange(
            Origin(url.scheme, url.host, port), head, body, timeouts, request.method == "HEAD"
        )
        return response_of(answer, request)

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


def response_of(answer: Answer, request: httpx.Request | None = None) -> httpx.Response:
    """The ``httpx.Response`` of an answer, its body read (decoded when it came encoded)."""
    extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
    if answer.reason:
        extensions["reason_phrase"] = answer.reason
    response = httpx.Response(
        answer.status,
        headers=answer.headers,
        stream=httpx.ByteStream(answer.body),
        request=request,
        extensions=extensions,
    )
    if any(name.lower() == b"content-encoding" for name, _ in answer.headers):
        response.read()  # through httpx's decoders
    else:
        # What ``Response.read()`` stores for a body that needs no decoding, without running
        # it through httpx's decoders chunk by chunk.
        response._content = answer.body
    return response


def header_items(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """What ``httpx.Headers(headers).items()`` gives, without making the ``Headers``: names in
    lower case, the values of a repeated name joined by ``", "``, decoded as ASCII, else UTF-8,
    else ISO-8859-1 (the first that fits every name and value)."""
    encoding = _encoding(headers)
    out: dict[str, str] = {}
    for name, value in headers:
        key, text = name.lower().decode(encoding), value.decode(encoding)
        if key in out:
            out[key] += f", {text}"
        else:
            out[key] = text
    return out


def _encoding(headers: list[tuple[bytes, bytes]]) -> str:
    """The encoding ``httpx.Headers`` reads these headers with."""
    if all(name.isascii() and value.isascii() for name, value in headers):
        return "ascii"
    try:
        for name, value in headers:
            name.decode("utf-8")
            value.decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return "utf-8"
