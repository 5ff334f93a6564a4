"""Admin passthrough: with ``admin_passthrough`` set, any request outside the allowlist is
forwarded to Elasticsearch unchanged. Registered last, and only when the setting is on; the
access-control middleware answers 403 to such requests otherwise."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from collapse.routes.passthrough import forward

__all__ = ["admin_passthrough", "router"]

router = APIRouter(include_in_schema=False)

_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]


@router.api_route("/{path:path}", methods=_METHODS)
async def admin_passthrough(path: str, request: Request) -> Response:
    return await forward(request, "/" + path)
