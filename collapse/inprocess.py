"""Collapsing inside a Python app: the proxy's collapsed search over the app's own client.

:class:`AsyncCollapser` takes an ``AsyncElasticsearch`` or ``AsyncOpenSearch``,
:class:`Collapser` an ``Elasticsearch`` or ``OpenSearch``. ``search(index=..., body=...,
**params)`` runs the proxy's own steps (``collapse.search``: window, probe, fill, render) and
returns the body the proxy answers: the page of representatives, each with its ``_collapse``,
the top-level ``collapse`` object, Elasticsearch's ``hits.total``; ``msearch(searches=...)``
answers an ``_msearch`` as the proxy does (every search collapsed, in lockstep), and
``expand(index=..., id=..., body=...)`` as its expander (the members a search folded behind one
of its results, ``routes.expander.expansion``). Every request
goes out through the given client (its nodes, credentials, retries, TLS): no HTTP hop of ours.
``params`` are the proxy's query string: Elasticsearch's search parameters (``from_`` for
``from``, as the official clients name it) and the ``collapse_*`` controls.

Where it differs from the proxy:

* errors are the client's own. When Elasticsearch refuses the search (or the proxy would
  forward it as sent: negative ``from``, an unparsable body), the search is sent as given and
  the client raises its usual ``ApiError`` / ``TransportError``; a client that cannot reach its
  nodes raises its own connection error; an invalid ``collapse_*`` control raises
  :class:`~collapse.errors.BadRequest`;
* the proxy's exposure allowlist does not apply: the client reads what its credentials allow.

:func:`asgi_app` is the whole proxy as an ASGI application to mount in a FastAPI or Starlette
app (``app.mount("/es", asgi_app(settings))``). Starlette does not run a mounted application's
lifespan: the proxy starts on its first request, or in the host's lifespan
(:meth:`MountedProxy.lifespan`), and serves the paths below its mount point as its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal, TypeVar
from urllib.parse import quote, urlencode

import httpx
from starlette.types import Receive, Scope, Send

from collapse import jsonio
from collapse.coalesce import Coalescer
from collapse.errors import Malformed, UpstreamTimeout, UpstreamUnavailable
from collapse.executor import Executor, SubResult, index_path
from collapse.filter_path import parse as parse_filter_path
from collapse.index_fields import IndexFields
from collapse.params import CollapseParams, collapse_disabled
from collapse.routes.expander import expansion
from collapse.routes.search import msearch_answer, msearches, refused_whole
from collapse.search import Outcome, SearchRequest, collapse_all, parse, render
from collapse.settings import Settings, get_settings
from collapse.upstream import Reply, Upstream
from indexer.engine import ELASTICSEARCH, OPENSEARCH, Engine
from indexer.hits import use_compiled

__all__ = [
    "AsyncCollapser",
    "ClientUpstream",
    "Collapser",
    "MountedProxy",
    "Param",
    "asgi_app",
]

T = TypeVar("T")
#: A query-string value as the official clients take them (a list is joined with commas).
Param = str | int | float | bool | Sequence[str]
_Kind = Literal["elasticsearch", "opensearch"]
_JSON_HEADERS = {"content-type": "application/json"}
_JSON = "application/json"
_NDJSON = "application/x-ndjson"


def _client_kind(client: object, want_async: bool) -> _Kind:
    """The library of ``client``; TypeError, naming the class to use, for anything else."""
    kinds: list[tuple[type, _Kind, bool]] = []
    with contextlib.suppress(ImportError):
        from elasticsearch import AsyncElasticsearch, Elasticsearch

        kinds += [(AsyncElasticsearch, ELASTICSEARCH, True), (Elasticsearch, ELASTICSEARCH, False)]
    with contextlib.suppress(ImportError):
        from opensearchpy import AsyncOpenSearch, OpenSearch

        kinds += [(AsyncOpenSearch, OPENSEARCH, True), (OpenSearch, OPENSEARCH, False)]
    for cls, kind, is_async in kinds:
        if isinstance(client, cls):
            if is_async != want_async:
                use = "AsyncCollapser" if is_async else "Collapser"
                raise TypeError(
                    f"{type(client).__name__} is for {'async' if is_async else 'sync'}"
                    f" code: use collapse.{use}"
                )
            return kind
    raise TypeError(
        "expected an Elasticsearch or OpenSearch client (elasticsearch-py's "
        f"{'AsyncElasticsearch' if want_async else 'Elasticsearch'}, opensearch-py's "
        f"{'AsyncOpenSearch' if want_async else 'OpenSearch'}), got {type(client).__name__}"
    )


def _query_value(value: Param) -> str:
    """A parameter as the query string carries it (the official clients' encoding)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return ",".join(str(v) for v in value)


def _answer(status: int, body: Any) -> httpx.Response:
    """A client's answer (its body deserialised) as the ``httpx.Response`` Upstream returns;
    no headers of Elasticsearch's (only the proxy's routes pass them on)."""
    if body is None:
        content = b""
    elif isinstance(body, bytes):
        content = body
    elif isinstance(body, str):
        content = body.encode()
    else:
        content = jsonio.dumps(body)
    return httpx.Response(status, headers=_JSON_HEADERS, content=content)


class ClientUpstream(Upstream):
    """:class:`~collapse.upstream.Upstream`'s interface (what ``Executor`` and ``IndexFields``
    call) over an app's own client, without a connection pool of ours.

    :meth:`request` hands back Elasticsearch's answer, errors included, as the proxy's does;
    the client's connection errors become ``UpstreamUnavailable`` / ``UpstreamTimeout`` with
    the client's as their cause. A sync client's calls run in worker threads."""

    def __init__(self, client: Any, kind: _Kind, *, blocking: bool) -> None:
        self.app_client = client
        self.kind = kind
        self.blocking = blocking
        self.engine: Engine = kind
        self._engine_known = True
        self.nodes = []

    async def aclose(self) -> None:
        """Nothing to close: the client is the app's."""

    async def detect_engine(self, headers: Mapping[str, str] | None = None) -> Engine:
        return self.engine

    def _call(
        self, method: str, target: str, body: Any, headers: Mapping[str, str]
    ) -> Callable[[], Any]:
        """The client's own call for one request (a coroutine function for an async client)."""
        if self.kind == ELASTICSEARCH:
            return functools.partial(
                self.app_client.perform_request, method, target, headers=headers, body=body
            )
        return functools.partial(
            self.app_client.transport.perform_request, method, target, headers=headers, body=body
        )

    async def send(self, method: str, target: str, body: Any, headers: Mapping[str, str]) -> Any:
        """One request as the client makes it: its answer, or its own exception."""
        call = self._call(method, target, body, headers)
        if self.blocking:
            return await asyncio.to_thread(call)
        return await call()

    def body_of(self, answer: Any) -> Any:
        """The body of what :meth:`send` returned."""
        return answer.body if self.kind == ELASTICSEARCH else answer

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params or ())
        target = f"{path}?{urlencode(pairs)}" if pairs else path
        sent = dict(headers or {})
        if not any(name.lower() == "accept" for name in sent):  # a media type for both
            sent["accept"] = "application/json"  # (elasticsearch-py makes them compatible-with)
        try:
            answer = await self.send(method, target, content, sent)
        except Exception as exc:
            return self._failed(exc)
        if self.kind == ELASTICSEARCH:
            return _answer(answer.meta.status, answer.body)
        return _answer(200, answer)  # opensearch-py's transport answers the body only

    async def reply(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        answer = await self.request(method, path, params=params, content=content, headers=headers)
        return Reply.of_response(answer)

    def _failed(self, exc: Exception) -> httpx.Response:
        """Elasticsearch's error answer as an answer; the client's connection errors mapped."""
        answer = _es_failed(exc) if self.kind == ELASTICSEARCH else _os_failed(exc)
        if answer is None:
            raise exc
        return answer


def _es_failed(exc: Exception) -> httpx.Response | None:
    """elasticsearch-py's exception as Elasticsearch's answer (None: not the client's)."""
    from elastic_transport import ConnectionTimeout, TransportError
    from elasticsearch import ApiError, UnsupportedProductError

    if isinstance(exc, ApiError) and not isinstance(exc, UnsupportedProductError):
        return _answer(exc.meta.status, exc.body)
    if isinstance(exc, ConnectionTimeout):
        raise UpstreamTimeout(f"the client's request timed out: {exc}") from exc
    if isinstance(exc, TransportError):
        raise UpstreamUnavailable(f"the client could not reach its nodes: {exc}") from exc
    return None


def _os_failed(exc: Exception) -> httpx.Response | None:
    """opensearch-py's exception as the engine's answer (None: not the client's)."""
    from opensearchpy.exceptions import ConnectionError, ConnectionTimeout, TransportError

    if isinstance(exc, ConnectionTimeout):
        raise UpstreamTimeout(f"the client's request timed out: {exc}") from exc
    if isinstance(exc, ConnectionError):
        raise UpstreamUnavailable(f"the client could not reach its nodes: {exc}") from exc
    if isinstance(exc, TransportError) and isinstance(exc.status_code, int):
        return _answer(exc.status_code, exc.info)
    return None


class _Request:
    """One call's query string, read as the proxy reads it: the collapsing controls (None: not
    collapsed), what goes to Elasticsearch, and the ``filter_path`` the answer gets."""

    def __init__(self, settings: Settings, params: Mapping[str, Param]) -> None:
        query = {("from" if k == "from_" else k): _query_value(v) for k, v in params.items()}
        self.ctl: CollapseParams | None = None
        if not collapse_disabled(query) and "scroll" not in query:
            controls = {k: v for k, v in query.items() if k.startswith("collapse")}
            ctl = CollapseParams.from_query(controls, settings)
            self.ctl = ctl if ctl.enabled else None
        #: The query string as sent to Elasticsearch when the request goes as given.
        self.sent = {
            k: v for k, v in query.items() if k != "collapse" and not k.startswith("collapse_")
        }
        #: What is left for the collapsed search (``parse`` consumes its own parameters).
        self.left = dict(self.sent)
        self.filter_path = parse_filter_path(self.left.pop("filter_path", None))

    def filtered(self, out: dict[str, Any]) -> dict[str, Any]:
        return self.filter_path.apply(out) if self.filter_path is not None else out


def _index(index: str | Sequence[str] | None) -> str | None:
    if index is not None and not isinstance(index, str):
        index = ",".join(index)
    if index == "":
        raise ValueError("index: an index expression, or None for every index")
    return index


def _raise_cause(exc: Exception) -> None:
    """The client's own error behind the proxy's (it could not reach its nodes), if any."""
    if isinstance(exc.__cause__, Exception):
        raise exc.__cause__ from None


class _Core:
    """The collapsed searches over one client, as coroutines (both collapsers run them)."""

    def __init__(self, client: Any, kind: _Kind, settings: Settings, *, blocking: bool) -> None:
        self.settings = settings
        if settings.collapse_compiled:
            use_compiled()
        self.upstream = ClientUpstream(client, kind, blocking=blocking)
        self.index_fields = IndexFields(self.upstream, settings.write_model_cache_seconds)
        inflight = settings.collapse_coalesce
        self.coalescer = Coalescer(max_inflight=inflight) if inflight else None

    async def search(
        self,
        index: str | Sequence[str] | None,
        body: Mapping[str, Any] | None,
        params: Mapping[str, Param],
    ) -> dict[str, Any]:
        """The proxy's answer to ``POST /{index}/_search?{params}`` with ``body``."""
        index = _index(index)
        call = _Request(self.settings, params)
        raw = jsonio.dumps(dict(body or {}))  # parsed again: the caller's body is never changed
        path = index_path(index, "_search")
        if call.ctl is None:
            return await self._as_sent(path, raw, call.sent, _JSON)
        try:
            req = parse(self.settings, call.ctl, index, jsonio.parse_body(raw), call.left)
        except Malformed:  # Elasticsearch refuses it too: its own error, raised by the client
            return await self._as_sent(path, raw, call.sent, _JSON)
        executor = Executor(
            self.upstream, {}, list(call.left.items()), batch=False, coalescer=self.coalescer
        )
        (done,) = await self._collapse_all([req], executor)
        if isinstance(done, SubResult):  # refused: the client raises Elasticsearch's error
            return await self._as_sent(path, raw, call.sent, _JSON)
        return call.filtered(render(done))

    async def msearch(
        self,
        searches: Sequence[Mapping[str, Any]],
        index: str | Sequence[str] | None,
        params: Mapping[str, Param],
    ) -> dict[str, Any]:
        """The proxy's answer to ``POST /{index}/_msearch?{params}`` with ``searches`` (a
        header, a body, a header, ...), each search collapsed, all in lockstep."""
        index = _index(index)
        call = _Request(self.settings, params)
        raw = b"".join(jsonio.dumps(dict(line)) + b"\n" for line in searches)
        path = index_path(index, "_msearch")
        if call.ctl is None:
            return await self._as_sent(path, raw, call.sent, _NDJSON)
        try:
            reqs = msearches(self.settings, call.ctl, index, raw)
        except Malformed:
            return await self._as_sent(path, raw, call.sent, _NDJSON)
        executor = Executor(self.upstream, {}, list(call.left.items()), batch=True)
        done = await self._collapse_all(reqs, executor)
        if refused_whole(done) is not None:
            return await self._as_sent(path, raw, call.sent, _NDJSON)
        return call.filtered(msearch_answer(done))

    async def expand(
        self,
        index: str | Sequence[str],
        doc_id: str,
        body: Mapping[str, Any] | None,
        params: Mapping[str, Param],
    ) -> dict[str, Any]:
        """The proxy's answer to ``POST /{index}/_collapse/{doc_id}?{params}`` with ``body``."""
        started = time.perf_counter()
        target = _index(index)
        if target is None:
            raise ValueError("index: the index expression the search ran on")
        query = {("from" if k == "from_" else k): _query_value(v) for k, v in params.items()}
        controls = {k: v for k, v in query.items() if k.startswith("collapse")}
        sent = {k: v for k, v in query.items() if k != "collapse" and not k.startswith("collapse_")}
        filter_path = parse_filter_path(sent.pop("filter_path", None))
        raw = jsonio.dumps(dict(body or {}))
        try:
            done = await expansion(
                self.settings,
                lambda rest: Executor(self.upstream, {}, rest, batch=False),
                self.index_fields,
                target,
                doc_id,
                raw,
                dict(sent),
                controls,
                started,
            )
        except (UpstreamUnavailable, UpstreamTimeout) as exc:
            _raise_cause(exc)
            raise
        if isinstance(done, SubResult):  # the search as given: the client raises its error
            search = {k: v for k, v in sent.items() if k not in ("from", "size")}
            await self._as_sent(index_path(target, "_search"), raw, search, _JSON)
            raise UpstreamUnavailable(
                f"Elasticsearch answered {done.status} to the fetch of the members"
            )
        out = done[0]
        return filter_path.apply(out) if filter_path is not None else out

    async def _collapse_all(
        self, reqs: list[SearchRequest], executor: Executor
    ) -> list[Outcome | SubResult]:
        """``collapse_all``, the client's own error raised when it could not reach its nodes."""
        budget = self.settings.collapse_time_budget_ms
        try:
            return await collapse_all(reqs, executor, budget, self.index_fields)
        except (UpstreamUnavailable, UpstreamTimeout) as exc:
            _raise_cause(exc)
            raise

    async def _as_sent(
        self, path: str, raw: bytes, query: Mapping[str, str], content_type: str
    ) -> dict[str, Any]:
        """The request sent as given, through the client: its answer, or its own exception."""
        target = f"{path}?{urlencode(list(query.items()))}" if query else path
        headers = {"content-type": content_type, "accept": "application/json"}
        answer = await self.upstream.send("POST", target, raw, headers)
        body = self.upstream.body_of(answer)
        return dict(body) if isinstance(body, Mapping) else {"body": body}


def _checked(params: Mapping[str, Any]) -> Mapping[str, Param]:
    """Query-string parameters; a body field given as one is refused with where it goes."""
    for name, value in params.items():
        if isinstance(value, Mapping) or (
            isinstance(value, Sequence)
            and not isinstance(value, str)
            and not all(isinstance(v, str) for v in value)
        ):
            raise TypeError(
                f"{name}: parameters are the query string's (strings, numbers, booleans, "
                "lists of names); body fields such as query or sort go in body={...}"
            )
    return params


class AsyncCollapser:
    """Collapsed searches through an app's ``AsyncElasticsearch`` or ``AsyncOpenSearch``.

    ``settings``: the collapsing defaults (``COLLAPSE_*``; only those are read, the node URLs
    are the client's); the environment's by default. The client stays the app's: closing it is
    the app's business."""

    def __init__(self, client: Any, settings: Settings | None = None) -> None:
        kind = _client_kind(client, want_async=True)
        self.client = client
        self.settings = settings or get_settings()
        self._core = _Core(client, kind, self.settings, blocking=False)

    async def search(
        self,
        *,
        index: str | Sequence[str] | None = None,
        body: Mapping[str, Any] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """The proxy's answer to this search (see the module docstring for errors)."""
        return await self._core.search(index, body, _checked(params))

    async def msearch(
        self,
        *,
        searches: Sequence[Mapping[str, Any]],
        index: str | Sequence[str] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """The proxy's answer to this ``_msearch``: ``searches`` as elasticsearch-py's
        (a header, a body, a header, ...), each collapsed; a failed search is its error item."""
        return await self._core.msearch(searches, index, _checked(params))

    async def expand(
        self,
        *,
        index: str | Sequence[str],
        id: str,
        body: Mapping[str, Any] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """The expander's answer: the members a collapsed search (``body``, the same
        ``collapse_*`` controls) folded behind its result ``id``, paged with ``from_``/``size``;
        :class:`~collapse.errors.NotFound` when the document does not exist."""
        return await self._core.expand(index, id, body, _checked(params))


class _LoopThread:
    """An event loop of its own in a daemon thread: where a sync collapser's searches run, so
    that the caller's threads (and any loop they run) are never involved."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="collapse-inprocess", daemon=True
        )
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self.loop.is_closed():
            coroutine.close()
            raise RuntimeError("this Collapser is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        if self.loop.is_closed() or not self.thread.is_alive():
            return
        if threading.current_thread() is self.thread:  # a finalizer run by the loop itself
            self.loop.stop()
            return
        workers = self.loop.shutdown_default_executor()
        asyncio.run_coroutine_threadsafe(workers, self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class Collapser:
    """Collapsed searches through an app's sync ``Elasticsearch`` or ``OpenSearch``.

    Safe to call from several threads at once. ``close()`` (or ``with``) stops its thread; the
    client stays the app's. ``settings`` as :class:`AsyncCollapser`'s."""

    def __init__(self, client: Any, settings: Settings | None = None) -> None:
        kind = _client_kind(client, want_async=False)
        self.client = client
        self.settings = settings or get_settings()
        self._core = _Core(client, kind, self.settings, blocking=True)
        self._loop = _LoopThread()
        self._close = weakref.finalize(self, self._loop.close)

    def search(
        self,
        *,
        index: str | Sequence[str] | None = None,
        body: Mapping[str, Any] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """The proxy's answer to this search (see the module docstring for errors)."""
        return self._loop.run(self._core.search(index, body, _checked(params)))

    def msearch(
        self,
        *,
        searches: Sequence[Mapping[str, Any]],
        index: str | Sequence[str] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """As :meth:`AsyncCollapser.msearch`."""
        return self._loop.run(self._core.msearch(searches, index, _checked(params)))

    def expand(
        self,
        *,
        index: str | Sequence[str],
        id: str,
        body: Mapping[str, Any] | None = None,
        **params: Param,
    ) -> dict[str, Any]:
        """As :meth:`AsyncCollapser.expand`."""
        return self._loop.run(self._core.expand(index, id, body, _checked(params)))

    def close(self) -> None:
        self._close()

    def __enter__(self) -> Collapser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MountedProxy:
    """The proxy (:func:`collapse.app.create_app`) as an ASGI application to mount.

    It starts (Elasticsearch client, engine detection) at its first request, or in the host's
    lifespan with :meth:`lifespan`; it stops with :meth:`aclose` (the host's shutdown). A
    request below the mount point reaches it as a request to the proxy's own root: ``/es`` +
    ``/docs/_search`` is ``/docs/_search``, whatever the index is called."""

    def __init__(self, settings: Settings | None = None) -> None:
        from collapse.app import create_app

        self.app = create_app(settings)
        self._running: contextlib.AsyncExitStack | None = None
        self._lock = threading.Lock()  # guards the making of the asyncio lock below
        self._starting: asyncio.Lock | None = None  # made in the loop that starts the proxy

    async def start(self) -> None:
        """Start the proxy unless it runs (served as a top-level app, its own lifespan did)."""
        if self._running is not None or getattr(self.app.state, "upstream", None) is not None:
            return
        with self._lock:
            if self._starting is None:
                self._starting = asyncio.Lock()
        async with self._starting:
            if self._running is not None:
                return
            stack = contextlib.AsyncExitStack()
            await stack.enter_async_context(self.app.router.lifespan_context(self.app))
            self._running = stack

    async def aclose(self) -> None:
        """Stop the proxy (its Elasticsearch client); a later request starts it again."""
        stack, self._running = self._running, None
        if stack is not None:
            await stack.aclose()
            del self.app.state.upstream
            self._starting = None  # a later start may come from another event loop

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """Running for the duration: ``FastAPI(lifespan=proxy.lifespan)``, or ``async with
        proxy.lifespan():`` inside the host's own lifespan."""
        await self.start()
        try:
            yield
        finally:
            await self.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # served as a top-level app: the proxy's own lifespan
            await self.app(scope, receive, send)
            return
        await self.start()
        await self.app(_below_mount(scope), receive, send)


def _below_mount(scope: Scope) -> Scope:
    """``scope`` as the proxy's own: the mount point (``root_path``) taken off the path."""
    root: str = scope.get("root_path", "")
    path: str = scope["path"]
    if not root or not path.startswith(root) or path[len(root) : len(root) + 1] not in ("", "/"):
        return scope
    raw = scope.get("raw_path")
    prefix = quote(root).encode("latin-1")
    if raw is not None:
        raw = raw[len(prefix) :] or b"/" if raw.startswith(prefix) else None
    return {**scope, "path": path[len(root) :] or "/", "raw_path": raw, "root_path": ""}


def asgi_app(settings: Settings | None = None) -> MountedProxy:
    """The proxy to mount in an app: ``app.mount("/es", collapse.asgi_app(settings))``."""
    return MountedProxy(settings)
