"""The proxy's error tree, answered in Elasticsearch's own error shape.

    ProxyError                      {"error": {"type", "reason", ...}, "status": N}
    ├── BadRequest          400     invalid collapse_* parameter, damaged collapse cursor
    │   └── Malformed       400     invalid for Elasticsearch too: the route forwards the
    │                               request as it came and answers Elasticsearch's own error
    ├── Unauthorized        401     write endpoint without an API key
    ├── Forbidden           403     endpoint outside the allowlist, an index the proxy does not
    │                               serve (``collapse.exposure``), or a wrong API key
    ├── NotFound            404     the expander's document does not exist
    ├── IndexNotFound       404     a wildcard left no served index and allow_no_indices=false
    ├── PayloadTooLarge     413     request body above ``max_body_bytes`` (decoded, if compressed)
    ├── UnsupportedEncoding 415     request body compressed otherwise than gzip or deflate
    ├── UpstreamUnavailable 503     Elasticsearch refused the connection or is unreachable
    └── UpstreamTimeout     504     Elasticsearch did not answer in time

Elasticsearch's own 4xx/5xx answers are not errors of the proxy: they are passed through as sent.
Errors of the layer below (httpx) are mapped to this tree in one place, ``collapse.upstream``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from fastapi.responses import JSONResponse

__all__ = [
    "BadRequest",
    "Forbidden",
    "IndexNotFound",
    "Malformed",
    "NotFound",
    "PayloadTooLarge",
    "ProxyError",
    "Unauthorized",
    "UnsupportedEncoding",
    "UpstreamTimeout",
    "UpstreamUnavailable",
]


class ProxyError(Exception):
    """An error the proxy answers itself, shaped like Elasticsearch's so clients raise as usual."""

    status_code: ClassVar[int] = 500
    error_type: ClassVar[str] = "proxy_exception"

    def __init__(self, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.extra = extra

    def body(self) -> dict[str, Any]:
        cause = {"type": self.error_type, "reason": self.reason, **self.extra}
        return {"error": {"root_cause": [cause], **cause}, "status": self.status_code}

    def response(self) -> JSONResponse:
        return JSONResponse(
            self.body(),
            status_code=self.status_code,
            headers={"X-Elastic-Product": "Elasticsearch"},
        )


class BadRequest(ProxyError):
    status_code = 400
    error_type = "illegal_argument_exception"


class Malformed(BadRequest):
    """A request Elasticsearch would refuse too (unparsable body, negative ``from``...): routes
    that can forward it do, so that the client gets Elasticsearch's own status and body."""


class Forbidden(ProxyError):
    status_code = 403
    error_type = "security_exception"


class Unauthorized(ProxyError):
    status_code = 401
    error_type = "security_exception"

    def response(self) -> JSONResponse:
        answer = super().response()
        answer.headers["WWW-Authenticate"] = 'ApiKey realm="neardup-collapse"'
        return answer


class PayloadTooLarge(ProxyError):
    status_code = 413
    error_type = "content_too_long_exception"


class UnsupportedEncoding(ProxyError):
    """A request body in a ``Content-Encoding`` the proxy cannot decode (it reads bodies)."""

    status_code = 415
    error_type = "illegal_argument_exception"


class UpstreamUnavailable(ProxyError):
    status_code = 503
    error_type = "upstream_unavailable"


class UpstreamTimeout(ProxyError):
    status_code = 504
    error_type = "upstream_timeout"


class NotFound(ProxyError):
    """The document the expander was asked about does not exist (Elasticsearch's 404 shape)."""

    status_code = 404
    error_type = "resource_not_found_exception"


class IndexNotFound(ProxyError):
    """Nothing the proxy serves is left of an index expression (Elasticsearch's 404 shape)."""

    status_code = 404
    error_type = "index_not_found_exception"
