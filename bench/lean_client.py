"""A lean HTTP/1.1 load client for the benchmarks: keep-alive connections on asyncio protocols.

A load generator must cost far less CPU per request than the server it measures, or the
figure at many clients measures the generator. ``httpx.AsyncClient`` is the right client for
the product but not for this: its pool and per-request objects cost milliseconds of CPU per
request at 32 connections. Here each connection is an ``asyncio.Protocol`` that writes a
request encoded once in advance and parses only the status line and the framing
(``content-length`` or chunked) of the answer; the body is kept as bytes, never decoded.

    clients = await open_clients("127.0.0.1", 9200, 32)
    status, body = await clients[0].request(encode_post("http://127.0.0.1:9200/i/_search", b"{}"))

Only what the benchmarks send: POSTs with a body known in advance, answers with a
``content-length`` or ``transfer-encoding: chunked``, no redirects, no TLS, no pipelining. A
connection the server closed while idle (a keep-alive timeout) is replaced before the next
request; one lost during a request is an error.
"""

from __future__ import annotations

import asyncio
from typing import cast
from urllib.parse import urlsplit


def encode_post(url: str, body: bytes, content_type: str = "application/json") -> bytes:
    """One HTTP/1.1 POST request to ``url`` (``http://host:port/path?query``), as bytes."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    head = (
        f"POST {target} HTTP/1.1\r\nhost: {parts.netloc}\r\n"
        f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


def address(url: str) -> tuple[str, int]:
    """Host and port of an ``http://`` URL."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None:
        raise ValueError(f"lean_client speaks plain http only, not {url!r}")
    return parts.hostname, parts.port or 80


class ProtocolError(RuntimeError):
    """The server's answer is not HTTP/1.1 framing this client understands."""


class Connection(asyncio.Protocol):
    """One keep-alive connection; one request in flight at a time."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._closed: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = exc or ConnectionResetError("connection closed by the server")
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(self._closed)

    def data_received(self, data: bytes) -> None:
        self._buf += data
        if self._waiter is None or self._waiter.done():
            return
        try:
            answer = self._parse()
        except ProtocolError as exc:
            self._waiter.set_exception(exc)
            return
        if answer is not None:
            self._waiter.set_result(answer)

    def _parse(self) -> tuple[int, bytes] | None:
        """The complete answer at the head of the buffer (consumed), or None if not all here."""
        buf = self._buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(buf[:end]).lower()
        if not head.startswith(b"http/1.1 "):
            raise ProtocolError(f"not an HTTP/1.1 answer: {head[:40]!r}")
        status = int(head[9:12])
        start = end + 4
        at = head.find(b"\r\ncontent-length:")
        if at >= 0:
            stop = head.find(b"\r\n", at + 2)
            length = int(head[at + 17 : stop if stop >= 0 else len(head)])
            if len(buf) < start + length:
                return None
            body = bytes(buf[start : start + length])
            del buf[: start + length]
            return status, body
        if b"\r\ntransfer-encoding: chunked" not in head:
            raise ProtocolError("answer without content-length or chunked framing")
        chunks: list[bytes] = []
        pos = start
        while True:
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size = int(bytes(buf[pos:line_end]).split(b";", 1)[0], 16)
            data_start = line_end + 2
            if size == 0:
                if len(buf) < data_start + 2:  # no trailers: the empty line ends the body
                    return None
                del buf[: data_start + 2]
                return status, b"".join(chunks)
            if len(buf) < data_start + size + 2:
                return None
            chunks.append(bytes(buf[data_start : data_start + size]))
            pos = data_start + size + 2

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send one encoded request; its status and body."""
        if self._closed is not None:
            raise self._closed
        assert self._transport is not None
        if self._buf:
            raise ProtocolError(f"{len(self._buf)} bytes the server sent beyond its last answer")
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self._transport.write(raw)
        return await self._waiter

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    @property
    def closed(self) -> bool:
        return self._closed is not None


async def _connect(host: str, port: int) -> Connection:
    _, protocol = await asyncio.get_running_loop().create_connection(Connection, host, port)
    return protocol


class Client:
    """One client loop's connection to ``host:port``, reopened when the server closed it."""

    def __init__(self, host: str, port: int, conn: Connection) -> None:
        self.host, self.port, self._conn = host, port, conn
        self.reconnects = 0

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send one encoded request; its status and body."""
        if self._conn.closed:
            self._conn = await _connect(self.host, self.port)
            self.reconnects += 1
        return await self._conn.request(raw)

    def close(self) -> None:
        self._conn.close()


async def open_clients(host: str, port: int, count: int) -> list[Client]:
    """``count`` clients of ``host:port``, their connections opened together."""
    conns = await asyncio.gather(*(_connect(host, port) for _ in range(count)))
    return [Client(host, port, conn) for conn in conns]
