"""The FastAPI application: one ``Upstream`` per process, the routes, the error handler."""

from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.telemetry import TelemetryConfig
from starlette.types import ASGIApp, Receive, Scope, Send

from collapse import logging as json_logging
from collapse import middleware
from collapse.coalesce import Coalescer
from collapse.enrich import ModelCache
from collapse.errors import BadRequest, ProxyError
from collapse.index_fields import IndexFields
from collapse.routes import (
    admin,
    cursors,
    documents,
    expander,
    health,
    lookup,
    nodes,
    opensearch,
    page,
    search,
    write,
)
from collapse.settings import Settings, get_settings
from collapse.upstream import Upstream
from collapse.write_mapping import MappingGuard
from indexer import __version__
from indexer.fingerprints import FingerprintParams
from indexer.hits import use_compiled

__all__ = ["create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the proxy; ``settings`` defaults to the environment's."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.collapse_compiled:
            use_compiled()  # before serving: no request waits for it
        app.state.upstream = Upstream(settings)
        await app.state.upstream.detect_engine()  # Elasticsearch or OpenSearch (or at 1st use)
        app.state.index_fields = IndexFields(app.state.upstream, settings.write_model_cache_seconds)
        app.state.mapping_guard = (
            MappingGuard(app.state.upstream, settings.write_model_cache_seconds)
            if settings.write_map_fingerprints
            else None
        )
        app.state.models = ModelCache(
            app.state.upstream,
            FingerprintParams().version,
            settings.write_model_store,
            settings.write_model_cache_seconds,
        )
        inflight = settings.collapse_coalesce
        app.state.coalescer = Coalescer(max_inflight=inflight) if inflight else None
        # Start-up objects (modules, routes, models) leave the cyclic collector's reach: its
        # full passes then walk only what requests allocate, which shortens the pauses that
        # land on a request's tail latency.
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            await app.state.upstream.aclose()

    app = _Proxy(
        telemetry=_telemetry(),
        title="neardup collapse",
        summary="Elasticsearch-compatible search folding near-duplicates behind their best copy.",
        version=__version__,
        lifespan=lifespan,
    )
    app.state.settings = settings

    @app.exception_handler(ProxyError)
    async def _proxy_error(_: Request, exc: ProxyError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return BadRequest(_validation_reason(exc)).response()

    @app.exception_handler(Exception)
    async def _internal_error(_: Request, exc: Exception) -> JSONResponse:
        # Logged with its traceback by middleware.request_id; the client sees no traceback.
        return ProxyError(f"internal error of the proxy ({type(exc).__name__})").response()

    json_logging.configure(settings, settings.collapse_log_level.upper())
    middleware.install(app, settings)
    # Searches first: routes are tried in order, and they are what the proxy serves most (no
    # other route's path ends in /_search: an index named "static" is searched, not served).
    app.include_router(search.router)
    app.include_router(cursors.router)  # /_search/scroll: before any /{index}/... route
    app.include_router(opensearch.router)  # OpenSearch's point-in-time paths
    app.include_router(health.router)
    app.include_router(nodes.router)  # sniffing clients: before the admin catch-all
    app.include_router(page.router)  # the search page at / (before documents' root route)

    app.include_router(lookup.router)  # before the expander: /_collapse/lookup is no doc id
    app.include_router(expander.router)
    app.include_router(write.router)  # writes with the API key, fingerprinted
    app.include_router(documents.router)
    if settings.admin_passthrough:
        app.include_router(admin.router)  # a catch-all: keep it the last router
    app.openapi = lambda: _openapi_schema(app)  # type: ignore[method-assign]
    return app


#: FastAPI's own OpenTelemetry switched off (its spans, metrics and logs).
_NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def _telemetry() -> TelemetryConfig | None:
    """FastAPI's own OpenTelemetry as FastAPI sets it (None) when a tracer, meter or logger
    provider is configured when the app is made; off when none is: FastAPI then asks
    OpenTelemetry for the three providers on every request to find it has nothing to do."""
    try:
        from fastapi.telemetry._api import _unconfigured
        from opentelemetry import _logs, metrics, trace
    except ImportError:  # another FastAPI or OpenTelemetry: FastAPI's default
        return None
    providers = (
        trace.get_tracer_provider(),
        metrics.get_meter_provider(),
        _logs.get_logger_provider(),
    )
    return _NO_TELEMETRY if all(_unconfigured(p) for p in providers) else None


#: The layers FastAPI puts before the app's own middleware, outermost first.
_FASTAPI_OUTER = ("ServerErrorMiddleware", "ExceptionTelemetryMiddleware", "AppBodyLimitMiddleware")


class _Proxy(FastAPI):
    """FastAPI whose HTTP requests enter the proxy's outermost middleware
    (``middleware.RequestIdMiddleware``) directly when FastAPI's own outer layers have nothing
    to do: its OpenTelemetry off, no ``root_path``, no ``max_body_size``, not in debug. The
    request id layer answers every error itself (a 500 with the request id), so Starlette's
    error layer would only raise again what it raises; anything else (lifespan, websockets,
    another set-up) goes FastAPI's way."""

    _entry: ASGIApp | None = None
    _entry_known = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if not self._entry_known:
                self._entry, self._entry_known = self._outermost(), True
            if self._entry is not None:
                scope["app"] = self  # what Starlette's own call sets
                await self._entry(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    def _outermost(self) -> ASGIApp | None:
        """The request id layer, when only FastAPI's three outer layers (errors, telemetry,
        body limit) stand before it and none of them has work to do; else None."""
        if (
            self.root_path
            or self.debug
            or self.max_body_size is not None
            or any(self._telemetry[k] for k in ("tracing", "metrics", "logs"))
        ):
            return None
        if self.middleware_stack is None:
            self.middleware_stack = self.build_middleware_stack()
        node: Any = self.middleware_stack
        for outer in _FASTAPI_OUTER:
            if type(node).__name__ != outer:
                return None
            node = node.app
        return node if isinstance(node, middleware.RequestIdMiddleware) else None


def _openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with an operationId per method for routes serving GET and POST.

    FastAPI gives both methods of such a route one id and warns; the warning must not turn
    ``/openapi.json`` into a 500 where warnings are errors (the tests), and clients of the schema
    (schemathesis) need the ids unique.
    """
    if app.openapi_schema is None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Duplicate Operation ID")
            schema = FastAPI.openapi(app)
        seen: set[str] = set()
        for operations in schema.get("paths", {}).values():
            for method, operation in operations.items():
                operation_id = operation.get("operationId")
                if operation_id in seen:
                    operation["operationId"] = f"{operation_id}_{method}"
                seen.add(operation["operationId"] if operation_id else "")
        app.openapi_schema = schema
    return app.openapi_schema


def _validation_reason(exc: RequestValidationError) -> str:
    """One readable line from FastAPI's validation errors: where and what."""
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        parts.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"
