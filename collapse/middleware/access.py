"""Access control: an allowlist of read endpoints, an API key on write endpoints, 403 elsewhere.

By default the proxy exposes only what a search frontend needs:

    GET|POST      /_search  /{index}/_search      GET|POST  /_msearch  /{index}/_msearch
    GET|POST      /_count   /{index}/_count             GET|POST  /_mget  /{index}/_mget
    GET|HEAD      /{index}/_doc/{id}  /{index}/_source/{id}
    GET|POST|DELETE  /_search/scroll  /_search/scroll/{id}
    POST          /{index}/_pit                   DELETE    /_pit
    POST  /{index}/_search/point_in_time   DELETE  /_search/point_in_time   (OpenSearch's)
    GET|POST      /{index}/_collapse/{id}         (the expander)
    GET|HEAD      /  /static/...  /favicon.ico    (the web page)
    GET|HEAD      /health  /ready  /metrics  /openapi.json  /docs
    GET|HEAD      /_nodes/http  /_nodes/_all/http   (sniffing clients: the proxy as the node)

Write endpoints (``WRITE_ROUTES``: ``_bulk``, ``_doc``, ``_create``, ``_update``, the write-path
enrichment) need the configured key in ``X-API-Key``, compared in constant time: no key → 401,
a wrong key → 403, no key configured → 403 (writes disabled). The key is never forwarded.

Everything else (deleting indices, ``_cluster/settings``, ``_update_by_query``, ``_scripts``,
``_snapshot``, ``_security``, ...) answers 403, unless ``admin_passthrough`` is set: then
such requests pass on to ``routes.admin``, which forwards them unchanged.
"""

from __future__ import annotations

import functools
import hmac
import re
from urllib.parse import unquote

from pydantic import SecretStr
from starlette.types import ASGIApp, Receive, Scope, Send

from collapse.errors import Forbidden, Unauthorized

__all__ = [
    "API_KEY_HEADER",
    "READ_ROUTES",
    "WRITE_ROUTES",
    "AccessControlMiddleware",
    "classify",
    "key_matches",
    "routing_path",
]

_INDEX = r"(?:_all|[^/_][^/]*)"
_ID = r"[^/]+"
_READ = frozenset({"GET", "HEAD", "POST"})
_GET = frozenset({"GET", "HEAD"})


def _routes(
    *pairs: tuple[str, frozenset[str]],
) -> tuple[tuple[re.Pattern[str], frozenset[str]], ...]:
    return tuple((re.compile(pattern), methods) for pattern, methods in pairs)


#: Endpoints anyone may call: (path pattern, methods).
READ_ROUTES = _routes(
    (rf"(?:/{_INDEX})?/_search", _READ),
    (rf"(?:/{_INDEX})?/_msearch", _READ),
    (rf"(?:/{_INDEX})?/_count", _READ),
    (rf"(?:/{_INDEX})?/_mget", _READ),
    (rf"/_search/scroll(?:/{_ID})?", _READ | {"DELETE"}),
    (rf"/{_INDEX}/_pit", frozenset({"POST"})),
    (r"/_pit", frozenset({"DELETE"})),
    (rf"/{_INDEX}/_search/point_in_time", frozenset({"POST"})),
    (r"/_search/point_in_time", frozenset({"DELETE"})),
    (rf"/{_INDEX}/_doc/{_ID}", _GET),
    (rf"/{_INDEX}/_source/{_ID}", _GET),
    (rf"/{_INDEX}/_collapse/{_ID}", _READ),
    (r"/", _GET),
    (r"/static/[^?#]*", _GET),
    (r"/favicon\.ico", _GET),
    (r"/health|/ready|/metrics", _GET),
    (r"/_nodes(?:/_all)?/http", _GET),
    (r"/openapi\.json|/docs|/docs/oauth2-redirect|/redoc", _GET),
)

#: Endpoints that change data: they need the API key.
WRITE_ROUTES = _routes(
    (rf"(?:/{_INDEX})?/_bulk", frozenset({"POST", "PUT"})),
    (rf"/{_INDEX}/_doc", frozenset({"POST"})),
    (rf"/{_INDEX}/_doc/{_ID}", frozenset({"PUT", "POST", "DELETE"})),
    (rf"/{_INDEX}/_create/{_ID}", frozenset({"PUT", "POST"})),
    (rf"/{_INDEX}/_update/{_ID}", frozenset({"POST"})),
)

API_KEY_HEADER = b"x-api-key"
_DOT_SEGMENT = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")


def _matches(
    routes: tuple[tuple[re.Pattern[str], frozenset[str]], ...], method: str, path: str
) -> bool:
    return any(pattern.fullmatch(path) and method in methods for pattern, methods in routes)


@functools.lru_cache(maxsize=4096)
def classify(method: str, path: str) -> str:
    """``"read"``, ``"write"`` or ``"other"`` for a request line (remembered per line: a
    search's is asked by two layers, and most requests repeat a few lines)."""
    if _DOT_SEGMENT.search(path) or "//" in path:
        return "other"
    if _matches(READ_ROUTES, method, path):
        return "read"
    if _matches(WRITE_ROUTES, method, path):
        return "write"
    return "other"


def routing_path(scope: Scope) -> str:
    """The request path as the allowlist sees it: decoded, except that a slash sent encoded
    (``%2F``, as the official client sends an id such as ``a/b``) stays ``%2F`` inside its
    segment instead of splitting it."""
    raw = scope.get("raw_path")
    if not raw or b"%2f" not in raw.lower():
        return str(scope["path"])
    text = raw.decode("latin-1").split("?", 1)[0]
    return "/".join(unquote(part).replace("/", "%2F") for part in text.split("/"))


def key_matches(given: bytes, expected: SecretStr) -> bool:
    """Constant-time comparison of a presented key with the configured one."""
    return hmac.compare_digest(given, expected.get_secret_value().encode("utf-8"))


class AccessControlMiddleware:
    """Lets allowlisted reads through, checks the key on writes, answers 403 to the rest."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        admin_passthrough: bool = False,
        write_api_key: SecretStr | None = None,
    ) -> None:
        self.app = app
        self.admin_passthrough = admin_passthrough
        self.write_api_key = write_api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], routing_path(scope)
        kind = classify(method, path)
        if kind == "read" or (kind == "other" and self.admin_passthrough):
            await self.app(scope, receive, send)
            return
        error: Forbidden | Unauthorized
        if kind == "other":
            error = Forbidden(
                f"{method} {path} is not exposed by the collapsing proxy "
                "(allowlist: search, msearch, count, get documents, scroll, point in time, the "
                "expander, the page, node information for sniffing, "
                "health and metrics; set ADMIN_PASSTHROUGH=true to forward everything)"
            )
            await error.response()(scope, receive, send)
            return
        given = next((value for name, value in scope["headers"] if name == API_KEY_HEADER), None)
        if self.write_api_key is None:
            error = Forbidden(f"{method} {path}: write endpoints are disabled (no WRITE_API_KEY)")
        elif given is None:
            error = Unauthorized(f"{method} {path} needs an API key in the X-API-Key header")
        elif not key_matches(given, self.write_api_key):
            error = Forbidden(f"{method} {path}: the API key is not valid")
        else:
            await self.app(scope, receive, send)
            return
        await error.response()(scope, receive, send)
