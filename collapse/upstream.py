"""The one pooled connection to Elasticsearch per process, and where its errors are mapped.

``Upstream.request`` forwards a request to one of the configured nodes (round robin) and
returns Elasticsearch's answer untouched. Connection failures move on to the next node; when
every node refuses, ``UpstreamUnavailable`` (503); when a node stalls, ``UpstreamTimeout`` (504).
Elasticsearch's own error answers are returned as they are, never raised.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import httpx

from collapse.errors import UpstreamTimeout, UpstreamUnavailable
from collapse.settings import Settings

#: Request headers passed on to Elasticsearch; everything else (cookies, hop-by-hop) stays here.
FORWARDED_REQUEST_HEADERS = frozenset(
    {"accept", "content-type", "authorization", "x-opaque-id", "traceparent", "user-agent"}
)
#: Response headers passed back to the client.
FORWARDED_RESPONSE_HEADERS = frozenset(
    {"content-type", "x-elastic-product", "warning", "x-opaque-id", "content-encoding"}
)


def forwarded_request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The subset of a client's headers that Elasticsearch needs to see."""
    return {k: v for k, v in headers.items() if k.lower() in FORWARDED_REQUEST_HEADERS}


def forwarded_response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The subset of Elasticsearch's headers that the client needs to see."""
    return {k: v for k, v in headers.items() if k.lower() in FORWARDED_RESPONSE_HEADERS}


class Upstream:
    """A pooled async HTTP client over the Elasticsearch nodes of ``Settings.es_url``."""

    def __init__(self, settings: Settings) -> None:
        self.nodes = list(settings.es_url)
        self._next_node = itertools.cycle(range(len(self.nodes)))
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(settings.es_timeout, connect=settings.es_connect_timeout),
            limits=httpx.Limits(
                max_connections=settings.es_max_connections,
                max_keepalive_connections=settings.es_max_connections,
            ),
            headers={"accept-encoding": "identity"},
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | list[tuple[str, str]] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request, trying each node once on connection failure."""
        start = next(self._next_node)
        last_error: Exception | None = None
        for offset in range(len(self.nodes)):
            node = self.nodes[(start + offset) % len(self.nodes)]
            try:
                return await self.client.request(
                    method, node + path, params=params, content=content, headers=headers
                )
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout):
                    last_error = exc
                    continue
                raise UpstreamTimeout(
                    f"Elasticsearch at {node} did not answer within the configured timeout"
                ) from exc
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                last_error = exc
                continue
        raise UpstreamUnavailable(
            f"Elasticsearch is unreachable ({', '.join(self.nodes)}): {last_error}"
        ) from last_error
