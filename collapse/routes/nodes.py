"""What a sniffing client asks (``GET /_nodes/http``): the cluster as one node, the proxy.

Clients that sniff (elasticsearch-py's and opensearch-py's ``sniff_on_start``, the Java
``Sniffer``, Logstash, the Go and JavaScript clients) replace the address they were given by
each node's ``http.publish_address``. Elasticsearch's own answer would send them past the
proxy, to the nodes themselves, and every search after the first sniff would come back
uncollapsed; the proxy's 403 made such clients fail at start. So the proxy answers
Elasticsearch's node information for one node that serves requests, its addresses replaced by
the one the client reached the proxy at (``X-Forwarded-Host`` or ``Host``). The client keeps
its scheme, path prefix and credentials for it, as it does for any sniffed node.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from collapse import jsonio
from collapse.routes.passthrough import elasticsearch_params
from collapse.upstream import Upstream, forwarded_request_headers, forwarded_response_headers

__all__ = ["nodes_http", "proxy_address", "router"]

router = APIRouter(tags=["cluster"])


def proxy_address(request: Request) -> str:
    """``host:port`` of the proxy as the client reached it (a load balancer's, in front of
    one): ``X-Forwarded-Host``, else ``Host``, else the socket's; without a port, the
    scheme's (``X-Forwarded-Proto``, else the request's)."""
    host = request.headers.get("x-forwarded-host", "").split(",")[0].strip()
    host = host or request.headers.get("host", "")
    if not host:
        server = request.scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    if host.rsplit("]", 1)[-1].count(":") == 1:  # a port after the name (or the [v6] address)
        return host
    scheme = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    scheme = scheme or request.url.scheme
    return f"{host}:{443 if scheme == 'https' else 80}"


def _as_proxy(body: dict[str, Any], address: str) -> dict[str, Any]:
    """The node information ``body`` reduced to one node that serves requests (not a
    dedicated master), its HTTP addresses ``address``."""
    nodes = body.get("nodes")
    if not isinstance(nodes, dict) or not nodes:
        return body
    serving = [
        (node_id, info)
        for node_id, info in nodes.items()
        if isinstance(info, dict) and info.get("roles") != ["master"]
    ]
    node_id, info = serving[0] if serving else next(iter(nodes.items()))
    if isinstance(info, dict) and isinstance(info.get("http"), dict):
        http = dict(info["http"])
        if "publish_address" in http:
            http["publish_address"] = address
        if "bound_address" in http:
            http["bound_address"] = [address]
        info = {**info, "http": http}
    out = {**body, "nodes": {node_id: info}}
    if isinstance(body.get("_nodes"), dict):
        out["_nodes"] = {**body["_nodes"], "total": 1, "successful": 1, "failed": 0}
    return out


@router.get("/_nodes/http", summary="Node information for sniffing clients: the proxy")
@router.get("/_nodes/_all/http", summary="Node information for sniffing clients: the proxy")
async def nodes_http(request: Request) -> Response:
    upstream: Upstream = request.app.state.upstream
    answer = await upstream.request(
        "GET",
        "/_nodes/_all/http",
        params=elasticsearch_params(request),
        headers=forwarded_request_headers(request.headers),
    )
    headers = {
        k: v
        for k, v in forwarded_response_headers(answer.headers).items()
        if k.lower() != "content-encoding"  # the body below is decoded
    }
    if answer.status_code != 200:
        return Response(answer.content, status_code=answer.status_code, headers=headers)
    body = jsonio.dumps(_as_proxy(answer.json(), proxy_address(request)))
    return Response(body, status_code=200, headers=headers)
