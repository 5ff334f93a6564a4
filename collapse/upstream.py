"""The one pooled connection to Elasticsearch per process, and where its errors are mapped.

``Upstream.request`` forwards a request to one of the configured nodes (round robin) and
returns Elasticsearch's answer untouched. Connection failures move on to the next node; when
every node refuses, ``UpstreamUnavailable`` (503); when a node stalls, ``UpstreamTimeout`` (504).
Elasticsearch's own error answers are returned as they are, never raised.

Retries, only where safe: a connection that could not be opened moves on to the next node for
any request (nothing was sent). Idempotent reads (GET/HEAD, and POST to ``_search``, ``_msearch``,
``_count``, ...) also move on after a connection that broke before the answer, and when every
node failed they try all nodes again, at most ``es_retries`` more rounds, after a jittered
exponential back-off (``es_retry_backoff`` × 2^round × uniform(0.5, 1.5)). A timeout waiting
for an answer is never retried: it answers 504 within ``es_timeout``.

Every request carries the proxy's request id as ``X-Opaque-Id`` (``collapse.logging``).

The client is an ``httpx.AsyncClient`` whose transport is aiohttp's pooled connector
(``httpx-aiohttp``): same httpx interface and errors, but the request goes out in one write and
is parsed by aiohttp's C parser. Measured on the bench machine: 0.67 ms of client CPU per search
round trip against 1.1 ms for httpx's default transport (docs/proxy.md). Cookies are neither
stored nor sent: one client serves every user of the proxy.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
import time
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from collapse.credentials import CREDENTIAL_HEADERS, node_authorization
from collapse.errors import BadRequest, UpstreamTimeout, UpstreamUnavailable
from collapse.logging import current_request_id
from collapse.metrics import UPSTREAM_LATENCY, UPSTREAM_REQUESTS, UPSTREAM_RETRIES, endpoint_of
from collapse.settings import Settings

#: POST endpoints that only read, so that sending them again is safe.
READ_ONLY_POST_ENDPOINTS = frozenset(
    {"_search", "_msearch", "_count", "_mget", "_field_caps", "_validate", "_explain", "_collapse"}
)


def is_idempotent_read(method: str, path: str) -> bool:
    """True when sending the request twice cannot change anything in Elasticsearch (a scroll's
    next page can: the first request may have moved the scroll on)."""
    method = method.upper()
    segments = path.split("?", 1)[0].strip("/").split("/")
    if segments[:2] == ["_search", "scroll"]:
        return False
    if method in ("GET", "HEAD"):
        return True
    if method != "POST":
        return False
    return any(segment in READ_ONLY_POST_ENDPOINTS for segment in segments[-2:])


def display_url(url: str) -> str:
    """A node URL without its user and password, for error messages and logs."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


#: Request headers passed on to Elasticsearch; everything else (cookies, hop-by-hop) stays here.
FORWARDED_REQUEST_HEADERS = CREDENTIAL_HEADERS | frozenset(
    {"accept", "content-type", "x-opaque-id", "traceparent", "user-agent"}
)
#: Response headers passed back to the client (``WWW-Authenticate``: how to log in, with a 401).
FORWARDED_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "x-elastic-product",
        "warning",
        "x-opaque-id",
        "content-encoding",
        "www-authenticate",
    }
)


def forwarded_request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The subset of a client's headers that Elasticsearch needs to see."""
    return {k: v for k, v in headers.items() if k.lower() in FORWARDED_REQUEST_HEADERS}


def forwarded_response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The subset of Elasticsearch's headers that the client needs to see."""
    return {k: v for k, v in headers.items() if k.lower() in FORWARDED_RESPONSE_HEADERS}


class _NoCookies(httpx.Cookies):
    """Cookies that are never kept nor sent: a cookie of one user's answer must never reach
    another's request through the shared client."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None


class _SharedClient(httpx.AsyncClient):
    """The process's one ``httpx.AsyncClient``: it has no cookies (:class:`_NoCookies`), so
    httpx skips its cookie bookkeeping on every request and answer (measured with the cached
    URLs of :class:`Upstream`: 0.1-0.15 ms less client CPU per round trip, docs/proxy.md)."""

    _no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        raise TypeError("the proxy's shared client keeps no cookies")


def _never_sent(exc: httpx.ConnectTimeout) -> bool:
    """True when the connection could not be opened, so that nothing reached Elasticsearch.

    httpx-aiohttp maps every aiohttp connection error to ``ConnectTimeout``, including a
    connection that broke after the request was written: the aiohttp cause tells them apart.
    """
    cause = exc.__cause__
    return cause is None or isinstance(
        cause, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError
    )


def _session_factory(limits: httpx.Limits) -> Any:
    """The aiohttp session under the httpx client (made inside the running event loop)."""

    def make() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=limits.max_connections or 0, keepalive_timeout=limits.keepalive_expiry or 5.0
        )
        session = aiohttp.ClientSession(connector=connector)
        # aiohttp sends a PUT or DELETE again when a kept-alive connection drops; whether the
        # write reached Elasticsearch is unknown then, so only ``Upstream.request`` decides
        # (reads only). No public switch: pinned by tests/test_reliability.py.
        session._retry_connection = False
        return session

    return make


class Upstream:
    """A pooled async HTTP client over the Elasticsearch nodes of ``Settings.es_url``."""

    def __init__(self, settings: Settings) -> None:
        self.nodes = list(settings.es_url)
        #: Credentials of a node URL replace the client's (``collapse.credentials``).
        self._node_auth = {node: node_authorization(node) for node in self.nodes}
        self._node_base = {node: display_url(node) for node in self.nodes}
        self.retries = settings.es_retries
        self.retry_backoff = settings.es_retry_backoff
        self._next_node = itertools.cycle(range(len(self.nodes)))
        limits = httpx.Limits(
            max_connections=settings.es_max_connections,
            max_keepalive_connections=settings.es_max_connections,
        )
        self.client = _SharedClient(
            transport=AiohttpTransport(limits=limits, client=_session_factory(limits)),
            timeout=httpx.Timeout(settings.es_timeout, connect=settings.es_connect_timeout),
            limits=limits,
            headers={"accept-encoding": "identity"},
        )
        #: Parsed URLs of the paths asked lately: parsing one costs more than the lookup.
        self._url = functools.lru_cache(maxsize=1024)(httpx.URL)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _send(
        self,
        node: str,
        method: str,
        path: str,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        content: bytes | None,
        headers: httpx.Headers,
    ) -> httpx.Response:
        auth = self._node_auth.get(node)
        if auth is not None:
            headers = httpx.Headers(headers)
            headers["authorization"] = auth
        return await self.client.request(
            method,
            self._url(self._node_base[node] + path),
            params=cast(Any, params) or None,  # an empty list would still re-parse the URL
            content=content,
            headers=headers,
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request: each node once on connection failure, more rounds for reads."""
        headers = httpx.Headers(headers or {})
        request_id = current_request_id()
        if request_id:
            headers["x-opaque-id"] = request_id
        endpoint = endpoint_of(path)
        idempotent = is_idempotent_read(method, path)
        rounds = 1 + (self.retries if idempotent else 0)
        last_error: Exception | None = None
        for round_ in range(rounds):
            if round_:
                UPSTREAM_RETRIES.labels(endpoint=endpoint).inc()
                delay = self.retry_backoff * (2 ** (round_ - 1)) * random.uniform(0.5, 1.5)
                await asyncio.sleep(delay)
            start = next(self._next_node)
            for offset in range(len(self.nodes)):
                node = self.nodes[(start + offset) % len(self.nodes)]
                began = time.perf_counter()
                try:
                    answer = await self._send(node, method, path, params, content, headers)
                except httpx.TimeoutException as exc:
                    UPSTREAM_LATENCY.labels(endpoint=endpoint).observe(time.perf_counter() - began)
                    if isinstance(exc, httpx.ConnectTimeout):
                        last_error = exc
                        if _never_sent(exc) or idempotent:
                            continue
                        break
                    UPSTREAM_REQUESTS.labels(endpoint=endpoint, status="timeout").inc()
                    raise UpstreamTimeout(
                        f"Elasticsearch at {display_url(node)} did not answer within the "
                        "configured timeout"
                    ) from exc
                except httpx.InvalidURL as exc:
                    raise BadRequest(f"invalid characters in the request path: {exc}") from exc
                except httpx.ConnectError as exc:
                    last_error = exc
                    continue
                except httpx.TransportError as exc:
                    # The request may have reached Elasticsearch: only reads go on elsewhere.
                    last_error = exc
                    if idempotent:
                        continue
                    break
                UPSTREAM_LATENCY.labels(endpoint=endpoint).observe(time.perf_counter() - began)
                UPSTREAM_REQUESTS.labels(endpoint=endpoint, status=str(answer.status_code)).inc()
                return answer
            else:
                continue
            break
        UPSTREAM_REQUESTS.labels(endpoint=endpoint, status="unavailable").inc()
        nodes = ", ".join(display_url(node) for node in self.nodes)
        raise UpstreamUnavailable(
            f"Elasticsearch is unreachable ({nodes}): {type(last_error).__name__}: {last_error}"
        ) from last_error
