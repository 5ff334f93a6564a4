"""The proxy's ASGI middleware, one per module, installed in a fixed order by ``install``.

Outermost first, as a request meets them:

    RequestIdMiddleware      request id (X-Request-Id / X-Opaque-Id), one JSON access-log line,
                             request count and latency by route template and status
    CORSMiddleware           only when ``cors_origins`` is configured (closed by default)
    AccessControlMiddleware  allowlist (403), API key on write endpoints (401/403)
    BodySizeLimitMiddleware  413 above ``max_body_bytes``; a gzip/deflate body decoded (413
                             past the limit decoded, 400 undecodable, 415 another coding)
    ExposureMiddleware       indices outside ``exposed_indices`` (403/404), wildcards narrowed
    SearchLaneMiddleware     ``_search``/``_msearch`` without FastAPI's router: collapsed, or
                             (``collapse=false``, scroll) straight to Elasticsearch

so that denied, oversized and failed requests are logged and counted like the others.
"""

from __future__ import annotations

from fastapi import FastAPI

from collapse.exposure import Allowlist, Exposure
from collapse.middleware.access import AccessControlMiddleware
from collapse.middleware.body_limit import BodySizeLimitMiddleware
from collapse.middleware.cors import add_cors
from collapse.middleware.exposure import ExposureMiddleware
from collapse.middleware.request_id import RequestIdMiddleware
from collapse.middleware.search_lane import SearchLaneMiddleware
from collapse.settings import Settings

__all__ = [
    "AccessControlMiddleware",
    "BodySizeLimitMiddleware",
    "ExposureMiddleware",
    "RequestIdMiddleware",
    "SearchLaneMiddleware",
    "install",
]


def install(app: FastAPI, settings: Settings) -> None:
    """Add the middleware to ``app`` (Starlette runs the last added outermost); the allowlist
    is ``app.state.exposure`` (the scroll route checks its pages with it)."""
    # The store the indexer writes by default, and the one this proxy reads.
    store = Settings.model_fields["write_model_store"].default
    internal = frozenset({store, settings.write_model_store})
    app.state.exposure = Exposure(
        Allowlist(tuple(settings.exposed_indices), internal), settings.exposure_cache_seconds
    )
    app.add_middleware(SearchLaneMiddleware)
    app.add_middleware(ExposureMiddleware, exposure=app.state.exposure)
    app.add_middleware(BodySizeLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(
        AccessControlMiddleware,
        admin_passthrough=settings.admin_passthrough,
        write_api_key=settings.write_api_key,
    )
    add_cors(app, settings.cors_origins)
    app.add_middleware(RequestIdMiddleware)
