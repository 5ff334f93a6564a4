"""The search page: ``/`` serves ``static/index.html``, ``/static/{name}`` its script and style.

``/`` is also Elasticsearch's root, which clients read (``info()``): a request that accepts
``text/html`` (a browser) gets the page, any other is forwarded as ``routes.documents`` does.
This router is included before that one.

Plain files, no build step and no template: the page talks only to this proxy (``/_search``,
``/{index}/_search``, the expander ``/{index}/_collapse/{id}``), which the Content Security
Policy below enforces in the browser as well — no CDN, no font or script from elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from collapse.routes import documents

__all__ = ["CSP", "FILES", "HEADERS", "STATIC", "page", "router", "static", "wants_html"]

router = APIRouter(include_in_schema=False)

STATIC = Path(__file__).resolve().parent.parent / "static"

#: The files served, with their media types: nothing else under ``static/`` is reachable.
FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _file(name: str) -> Response:
    return FileResponse(STATIC / name, media_type=FILES[name], headers=HEADERS)


def wants_html(request: Request) -> bool:
    """Whether the client asks for a web page (browsers send ``Accept: text/html,...``)."""
    return "text/html" in request.headers.get("accept", "").lower()


@router.api_route("/", methods=["GET", "HEAD"])
async def page(request: Request) -> Response:
    """The search page for browsers; Elasticsearch's root for everyone else."""
    if wants_html(request):
        return _file("index.html")
    return await documents.root(request)


@router.api_route("/static/{name}", methods=["GET", "HEAD"])
async def static(name: str) -> Response:
    """The page's script and style sheet (404 for any other name)."""
    if name not in FILES:
        cause = {"type": "resource_not_found_exception", "reason": f"no such file: /static/{name}"}
        return JSONResponse({"error": {"root_cause": [cause], **cause}, "status": 404}, 404)
    return _file(name)
