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

The engine may be OpenSearch: the first request asks ``GET /`` (``indexer.engine``) before it is
sent, until a node answers that. On OpenSearch the differences are mapped here, so no route
knows them: Elasticsearch's versioned media types go out plain (OpenSearch answers them 406),
answers carry ``X-Elastic-Product: Elasticsearch`` as the proxy's own do (the official
Elasticsearch clients require it), and Elasticsearch's point-in-time calls (``POST
/{index}/_pit``, ``DELETE /_pit``) are sent as OpenSearch's and answered in Elasticsearch's
shape (:meth:`Upstream._opensearch_pit`).

The client is an ``httpx.AsyncClient`` over the proxy's own pooled HTTP/1.1 transport
(``collapse.http11``): httpx's interface and errors, the request in one write, the answer parsed
by httptools and read whole. ``Upstream`` itself lays each request out as bytes and hands it to
that transport directly, and gets an ``httpx.Response`` back (without ``.request``). Cookies are
neither stored nor sent: one client serves every user of the proxy. Why this transport and what
it costs: docs/proxy.md.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import random
import time
from collections.abc import Mapping
from typing import Any, NamedTuple, cast
from urllib.parse import urlsplit, urlunsplit

import httpx

from collapse.credentials import CREDENTIAL_HEADERS, node_authorization
from collapse.errors import BadRequest, UpstreamTimeout, UpstreamUnavailable
from collapse.http11 import (
    Answer,
    Http11Transport,
    Origin,
    Timeouts,
    header_items,
    request_head,
    response_of,
)
from collapse.logging import current_request_id
from collapse.metrics import UPSTREAM_LATENCY, UPSTREAM_REQUESTS, UPSTREAM_RETRIES, endpoint_of
from collapse.settings import Settings
from indexer.engine import (
    ELASTICSEARCH,
    OPENSEARCH,
    Engine,
    engine_of_root,
    pit_close_request,
    plain_media_type,
)

__all__ = [
    "FORWARDED_REQUEST_HEADERS",
    "FORWARDED_RESPONSE_HEADERS",
    "PASSTHROUGH_REQUEST_HEADERS",
    "READ_ONLY_POST_ENDPOINTS",
    "Reply",
    "Upstream",
    "decoded",
    "display_url",
    "forwarded_request_headers",
    "forwarded_response_headers",
    "is_idempotent_read",
    "passthrough_request_headers",
]

#: POST endpoints that only read, so that sending them again is safe.
READ_ONLY_POST_ENDPOINTS = frozenset(
    {"_search", "_msearch", "_count", "_mget", "_field_caps", "_validate", "_explain", "_collapse"}
)


@functools.lru_cache(maxsize=1024)
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


#: What a pass-through (an answer returned as Elasticsearch sent it, bytes untouched) also
#: passes on: ``Accept-Encoding``, so that Elasticsearch compresses the answer for a client
#: that asks, as it would without the proxy. Never on the proxy's own searches, whose answers
#: it reads.
PASSTHROUGH_REQUEST_HEADERS = FORWARDED_REQUEST_HEADERS | frozenset({"accept-encoding"})


def passthrough_request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """:func:`forwarded_request_headers` and ``Accept-Encoding``: for answers not read here."""
    return {k: v for k, v in headers.items() if k.lower() in PASSTHROUGH_REQUEST_HEADERS}


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
    httpx skips its cookie bookkeeping on every request and answer."""

    _no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        raise TypeError("the proxy's shared client keeps no cookies")


@functools.lru_cache(maxsize=256)
def _latency(endpoint: str) -> Any:
    """The latency histogram of one endpoint label (looking a label up costs a lock and a hash)."""
    return UPSTREAM_LATENCY.labels(endpoint=endpoint)


@functools.lru_cache(maxsize=1024)
def _answered(endpoint: str, status: str) -> Any:
    """The request counter of one endpoint and status."""
    return UPSTREAM_REQUESTS.labels(endpoint=endpoint, status=status)


#: Request headers the client computes itself (:meth:`Upstream._send`).
_COMPUTED = frozenset({"host", "content-length", "transfer-encoding"})


class _Route(NamedTuple):
    """A node URL with a path, parsed once: where it goes and its request target."""

    url: httpx.URL
    origin: Origin
    host: str
    target: str

    @classmethod
    def of(cls, text: str) -> _Route:
        url = httpx.URL(text)
        port = url.port or (443 if url.scheme == "https" else 80)
        origin = Origin(url.scheme, url.host, port)
        return cls(url, origin, url.netloc.decode("ascii"), url.raw_path.decode("ascii"))


class Reply(NamedTuple):
    """An answer as the proxy's own searches read it: what ``httpx.Response`` would give as
    ``status_code``, ``content`` (decoded) and ``headers.items()``."""

    status: int
    content: bytes
    headers: dict[str, str]

    @classmethod
    def of(cls, answer: Answer) -> Reply:
        body = answer.body
        if any(name.lower() == b"content-encoding" for name, _ in answer.headers):
            body = decoded(answer)
        return cls(answer.status, body, header_items(answer.headers))

    @classmethod
    def of_response(cls, response: httpx.Response) -> Reply:
        return cls(response.status_code, response.content, dict(response.headers.items()))


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
        self._transport = Http11Transport(settings.es_max_connections)
        self.client = _SharedClient(
            transport=self._transport,
            timeout=httpx.Timeout(settings.es_timeout, connect=settings.es_connect_timeout),
            headers={"accept-encoding": "identity"},
        )
        #: The client's own headers, merged once into every request (:meth:`_headers`).
        self._defaults = dict(self.client.headers.items())
        timeout = self.client.timeout
        self._timeouts = Timeouts(timeout.connect, timeout.read, timeout.pool)
        #: Where the paths asked lately go: parsing a URL costs more than the lookup.
        self._route = functools.lru_cache(maxsize=1024)(_Route.of)
        #: The engine behind the nodes, once a node has told (:meth:`detect_engine`).
        self.engine: Engine = ELASTICSEARCH
        self._engine_known = False
        if settings.es_engine != "auto":
            self.engine, self._engine_known = settings.es_engine, True

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _send(
        self,
        node: str,
        method: str,
        path: str,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        content: bytes | None,
        headers: dict[str, str],
    ) -> Answer:
        """One request to ``node``; ``headers`` already merged with the client's (lower-case
        names, :meth:`_headers`). Laid out as bytes here and sent on the transport's pool; what
        ``httpx.Request`` and ``client.send`` would do for it (URL, ``Host``, length) is done
        here once. The answer as the node sent it (encoded, if it came so)."""
        route = self._route(self._node_base[node] + path)
        target = route.target
        if params:
            target = route.url.copy_merge_params(cast(Any, params)).raw_path.decode("ascii")
        pairs = [(k, v) for k, v in headers.items() if k not in _COMPUTED]
        auth = self._node_auth.get(node)
        if auth is not None:
            pairs = [(k, v) for k, v in pairs if k != "authorization"]
            pairs.append(("authorization", auth))
        if content:
            pairs.append(("content-length", str(len(content))))
        elif method in ("POST", "PUT", "PATCH"):
            pairs.append(("content-length", "0"))
        head = request_head(method, target, route.host, pairs)
        answer = await self._transport.exchange(
            route.origin, head, content, self._timeouts, method == "HEAD"
        )
        return answer

    def _headers(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        """The client's headers updated with ``headers``, names in lower case."""
        merged = dict(self._defaults)
        if headers:
            merged.update((k.lower(), v) for k, v in headers.items())
        return merged

    async def detect_engine(self, headers: Mapping[str, str] | None = None) -> Engine:
        """Ask ``GET /`` which engine the nodes run, once one answers (``headers``: the
        credentials to ask with); until then (unreachable, 401) Elasticsearch is assumed.
        A pinned ``es_engine`` is not asked."""
        if self._engine_known:
            return self.engine
        asked = self._headers({"accept": "application/json"})
        for name in CREDENTIAL_HEADERS:
            if headers and name in headers:
                asked[name] = headers[name]
        for node in self.nodes:
            try:
                answer = response_of(await self._send(node, "GET", "/", None, None, asked))
            except httpx.HTTPError:
                continue
            if answer.status_code in (401, 403):
                break
            try:
                body = answer.json()
            except ValueError:
                body = None
            self.engine = engine_of_root(answer.status_code, body)
            self._engine_known = True
            break
        return self.engine

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
        if not self._engine_known:
            await self.detect_engine(headers)
        if self.engine == OPENSEARCH:
            return await self._opensearch(method, path, params, content, headers)
        return await self._request(method, path, params=params, content=content, headers=headers)

    async def reply(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """:meth:`request`'s answer as a :class:`Reply`, without making an ``httpx.Response``
        of Elasticsearch's (the same retries, errors and metrics)."""
        if not self._engine_known:
            await self.detect_engine(headers)
        if self.engine == OPENSEARCH:
            return Reply.of_response(await self._opensearch(method, path, params, content, headers))
        return Reply.of(await self._exchange(method, path, params, content, headers))

    async def exchange(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """:meth:`request`'s answer as status, header pairs and body, without making an
        ``httpx.Response`` of it: what a pass-through sends back as it came (the same retries,
        errors and metrics; the body as it came, encoded if it came so: :func:`decoded`)."""
        if not self._engine_known:
            await self.detect_engine(headers)
        if self.engine == OPENSEARCH:
            if _is_pit(method, path):  # translated: read here
                answer = await self._opensearch(method, path, params, content, headers)
                reason = answer.extensions.get("reason_phrase", b"")
                return Answer(answer.status_code, reason, answer.headers.raw, answer.content)
            # as it came (compressed too, when the client accepts it), with the product header
            got = await self._exchange(method, path, params, content, _plain_media(headers))
            kept = [(n, v) for n, v in got.headers if n.lower() != b"x-elastic-product"]
            return got._replace(headers=[*kept, (b"x-elastic-product", b"Elasticsearch")])
        return await self._exchange(method, path, params, content, headers)

    async def _opensearch(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        content: bytes | None,
        headers: Mapping[str, str] | None,
    ) -> httpx.Response:
        """:meth:`_request` to OpenSearch, with the differences of the module docstring."""
        plain = _plain_media(headers)
        plain.pop("accept-encoding", None)  # answers read here (and made ``httpx.Response``s)
        if _is_pit(method, path):
            bare = path.split("?", 1)[0].rstrip("/")
            answer = await self._opensearch_pit(method, bare, params, content, plain)
        else:
            answer = await self._request(
                method, path, params=params, content=content, headers=plain
            )
        answer.headers["x-elastic-product"] = "Elasticsearch"
        return answer

    async def _opensearch_pit(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        content: bytes | None,
        headers: httpx.Headers,
    ) -> httpx.Response:
        """Elasticsearch's point-in-time open (``{"id"}``) or close (``{"succeeded",
        "num_freed"}``) sent as OpenSearch's. OpenSearch reports a closed id as freed even
        when it was gone already: ``num_freed`` counts what it reports."""
        if method == "POST":  # the index expression stays as the client encoded it
            open_path = path[: -len("/_pit")] + "/_search/point_in_time"
            answer = await self._request(
                "POST", open_path, params=params, content=content, headers=headers
            )
            body = _json_or_none(answer)
            if answer.status_code != 200 or not isinstance(body, dict) or "pit_id" not in body:
                return answer
            out: dict[str, Any] = {"id": body["pit_id"]}
            out.update((k, v) for k, v in body.items() if k not in ("pit_id", "creation_time"))
            return _json_answer(answer, out)
        asked = _json_or_none(content or b"{}")
        pit = asked.get("id") if isinstance(asked, dict) else None
        if not isinstance(pit, str):  # OpenSearch's own refusal of what it was sent
            return await self._request(
                "DELETE", "/_search/point_in_time", params=params, content=content, headers=headers
            )
        close_path, close_body = pit_close_request(OPENSEARCH, pit)
        headers["content-type"] = "application/json"
        answer = await self._request(
            "DELETE",
            close_path,
            params=params,
            content=json.dumps(close_body).encode(),
            headers=headers,
        )
        body = _json_or_none(answer)
        if answer.status_code != 200 or not isinstance(body, dict):
            return answer
        freed = sum(1 for p in body.get("pits", []) if isinstance(p, dict) and p.get("successful"))
        return _json_answer(answer, {"succeeded": freed > 0, "num_freed": freed})

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        return response_of(await self._exchange(method, path, params, content, headers))

    async def _exchange(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | list[tuple[str, str]] | None,
        content: bytes | None,
        headers: Mapping[str, str] | None,
    ) -> Answer:
        merged = self._headers(headers)
        request_id = current_request_id()
        if request_id:
            merged["x-opaque-id"] = request_id
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
                    answer = await self._send(node, method, path, params, content, merged)
                except httpx.TimeoutException as exc:
                    _latency(endpoint).observe(time.perf_counter() - began)
                    if isinstance(exc, httpx.ConnectTimeout):  # nothing was sent
                        last_error = exc
                        continue
                    _answered(endpoint, "timeout").inc()
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
                _latency(endpoint).observe(time.perf_counter() - began)
                _answered(endpoint, str(answer.status)).inc()
                return answer
            else:
                continue
            break
        _answered(endpoint, "unavailable").inc()
        nodes = ", ".join(display_url(node) for node in self.nodes)
        raise UpstreamUnavailable(
            f"Elasticsearch is unreachable ({nodes}): {type(last_error).__name__}: {last_error}"
        ) from last_error


def _plain_media(headers: Mapping[str, str] | None) -> httpx.Headers:
    """``headers`` with ``Accept`` and ``Content-Type`` as OpenSearch takes them (no
    Elasticsearch-versioned media types)."""
    plain = httpx.Headers(headers or {})
    for name in ("accept", "content-type"):
        if name in plain:
            plain[name] = plain_media_type(plain[name])
    return plain


def _is_pit(method: str, path: str) -> bool:
    """Whether a request opens or closes a point in time the Elasticsearch way (``_pit``),
    which OpenSearch takes at other paths."""
    bare = path.split("?", 1)[0].rstrip("/")
    return (method, bare) == ("DELETE", "/_pit") or (method == "POST" and bare.endswith("/_pit"))


def decoded(answer: Answer) -> bytes:
    """The body of an answer that came with a ``Content-Encoding``, decoded as
    ``httpx.Response.content`` reads it."""
    return response_of(answer).content


def _json_or_none(source: httpx.Response | bytes) -> Any:
    """The JSON of an answer or a body; None when it is not JSON."""
    try:
        return source.json() if isinstance(source, httpx.Response) else json.loads(source)
    except ValueError:
        return None


def _json_answer(answer: httpx.Response, body: dict[str, Any]) -> httpx.Response:
    """``answer`` with another JSON body (its status and headers kept)."""
    headers = {k: v for k, v in answer.headers.items() if k.lower() != "content-length"}
    headers["content-type"] = "application/json"
    return httpx.Response(answer.status_code, headers=headers, content=json.dumps(body).encode())
