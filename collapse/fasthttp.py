"""A lean keep-alive HTTP/1.1 client for the hot path to Elasticsearch (asyncio + httptools).

Measured on the 2-core bench machine, ``httpx.AsyncClient`` spends ~1.2 ms of CPU per search
round trip (URL parsing, header models, httpcore's pool and anyio streams); this client spends
a fraction of that: one ``asyncio.Protocol`` per pooled connection, the response parsed by
``httptools`` (uvicorn's parser, already a dependency through ``uvicorn[standard]``).

It raises httpx's exception types (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``,
``ReadError``, ``RemoteProtocolError``) and returns ``httpx.Response`` objects, so
``collapse.upstream`` keeps one error mapping whichever client carried a request.
:meth:`FastClient.handles` says which requests it takes: plain ``http://`` nodes without
credentials in the URL, GET/POST/PUT/DELETE with a conservative path; everything else (HEAD,
TLS, odd paths) goes through httpx.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from urllib.parse import quote, urlencode, urlsplit

import httptools
import httpx

_SAFE_PATH = re.compile(r"[A-Za-z0-9._~\-/,*:+@=!$&'()]*")
_METHODS = frozenset({"GET", "POST", "PUT", "DELETE"})


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.used = False
        self._waiter: asyncio.Future[None] | None = None
        self._headers: list[tuple[str, str]] = []
        self._body: list[bytes] = []
        self._got_bytes = False
        self._done = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._got_bytes = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"invalid response from Elasticsearch: {exc}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self._done:
            self._fail(httpx.ReadError(f"connection closed by Elasticsearch: {exc or 'EOF'}"))

    def eof_received(self) -> bool | None:
        self.closed = True
        return None

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._done = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _fail(self, exc: Exception) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)

    def close(self) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.cancel()  # nobody waits for it any more
        if self.transport is not None:
            self.transport.close()

    async def exchange(self, request: bytes, timeout: float) -> httpx.Response:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self._headers, self._body, self._got_bytes, self._done = [], [], False, False
        self.used = True
        self.transport.write(request)
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter), timeout)
        except TimeoutError as exc:
            self.close()
            raise httpx.ReadTimeout("timed out waiting for Elasticsearch") from exc
        except BaseException:
            self.close()  # cancelled (the proxy's time budget) or failed: never reuse it
            raise
        status = self.parser.get_status_code()
        if not self.parser.should_keep_alive():
            self.close()
        return httpx.Response(status, headers=self._headers, content=b"".join(self._body))


class _Pool:
    """Idle connections of one node, at most ``limit`` open at once."""

    def __init__(self, host: str, port: int, limit: int) -> None:
        self.host, self.port = host, port
        self.idle: deque[_Connection] = deque()
        self.slots = asyncio.Semaphore(limit)


class FastClient:
    """Keep-alive pools over ``http://`` nodes; see the module docstring."""

    def __init__(self, nodes: list[str], *, timeout: float, connect_timeout: float, limit: int):
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.limit = limit
        self.pools: dict[str, _Pool] = {}
        for node in nodes:
            parts = urlsplit(node)
            if parts.scheme != "http" or parts.username or parts.password or not parts.hostname:
                continue
            if parts.path not in ("", "/"):
                continue
            self.pools[node] = _Pool(parts.hostname, parts.port or 80, limit)
            self.pools[node].hostport = f"{parts.hostname}:{parts.port or 80}"  # type: ignore[attr-defined]

    def handles(self, node: str, method: str, path: str) -> bool:
        return node in self.pools and method in _METHODS and _SAFE_PATH.fullmatch(path) is not None

    async def _connect(self, pool: _Pool) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(_Connection, pool.host, pool.port), self.connect_timeout
            )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {pool.host}:{pool.port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        return conn

    async def request(
        self,
        node: str,
        method: str,
        path: str,
        *,
        params: object = None,
        content: bytes | None = None,
        headers: httpx.Headers,
    ) -> httpx.Response:
        pool = self.pools[node]
        target = quote(path, safe="/%:@!$&'()*+,;=-._~")
        if params:
            items = params.items() if hasattr(params, "items") else params  # type: ignore[union-attr]
            query = urlencode(list(items), quote_via=quote)  # type: ignore[arg-type]
            if query:
                target = f"{target}?{query}"
        body = content or b""
        lines = [f"{method} {target} HTTP/1.1", f"host: {pool.hostport}"]  # type: ignore[attr-defined]
        for name, value in headers.multi_items():
            lname = name.lower()
            if lname in ("host", "content-length", "transfer-encoding", "connection"):
                continue
            lines.append(f"{name}: {value}")
        if body or method in ("POST", "PUT"):
            lines.append(f"content-length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        request = head + body
        async with pool.slots:
            while pool.idle:
                conn = pool.idle.pop()
                if conn.closed or conn.transport is None or conn.transport.is_closing():
                    continue
                try:
                    answer = await conn.exchange(request, self.timeout)
                except httpx.ReadError:
                    if conn._got_bytes:
                        raise
                    continue  # a kept-alive connection the node had closed: try another
                self._release(pool, conn)
                return answer
            conn = await self._connect(pool)
            answer = await conn.exchange(request, self.timeout)
            self._release(pool, conn)
            return answer

    @staticmethod
    def _release(pool: _Pool, conn: _Connection) -> None:
        if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
            pool.idle.append(conn)

    async def aclose(self) -> None:
        for pool in self.pools.values():
            while pool.idle:
                pool.idle.pop().close()
