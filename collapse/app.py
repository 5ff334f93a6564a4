"""The FastAPI application: one ``Upstream`` per process, the routes, the error handler."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from collapse.errors import ProxyError
from collapse.routes import passthrough
from collapse.settings import Settings, get_settings
from collapse.upstream import Upstream


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the proxy; ``settings`` defaults to the environment's."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.upstream = Upstream(settings)
        try:
            yield
        finally:
            await app.state.upstream.aclose()

    app = FastAPI(
        title="neardup collapse",
        summary="Elasticsearch-compatible search folding near-duplicates behind their best copy.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings

    @app.exception_handler(ProxyError)
    async def _proxy_error(_: Request, exc: ProxyError) -> JSONResponse:
        return exc.response()

    app.include_router(passthrough.router)
    return app
