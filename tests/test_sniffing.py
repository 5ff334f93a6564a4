"""Clients that sniff the cluster's nodes stay on the proxy: ``GET /_nodes/http`` through it
answers the node information of one node, whose HTTP address is the proxy's own."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.settings import Settings
from tests.conftest import ServerThread
from tests.test_proxy_search import SORTED, wire_story

pytestmark = [pytest.mark.es, pytest.mark.opensearch]


@pytest.fixture(scope="module")
def admin_proxy(es_url: str) -> Iterator[str]:
    """A proxy that forwards everything outside its allowlist (``admin_passthrough``)."""
    with ServerThread(create_app(Settings(es_url=[es_url], admin_passthrough=True))) as server:
        yield server.url


def test_a_client_sniffing_on_start_keeps_searching_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    client = Elasticsearch(
        proxy_url, sniff_on_start=True, sniff_before_requests=True, request_timeout=30
    )
    out = client.search(index=index_name, query=SORTED["query"], sort=SORTED["sort"], size=3)
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 19  # collapsed: the proxy answered
    pool = [node.base_url for node in client.transport.node_pool.all()]
    assert pool == [proxy_url]


@pytest.mark.parametrize("path", ["/_nodes/http", "/_nodes/_all/http"])
def test_the_node_information_names_the_proxy_and_keeps_elasticsearchs_facts(
    es: Elasticsearch, proxy_url: str, admin_proxy: str, path: str
) -> None:
    direct = es.perform_request("GET", "/_nodes/_all/http").body
    one = next(iter(direct["nodes"].values()))
    for url in (proxy_url, admin_proxy):  # the admin passthrough does not bypass it
        answer = httpx.get(url + path, timeout=30)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["cluster_name"] == direct["cluster_name"]
        assert body["_nodes"] == {"total": 1, "successful": 1, "failed": 0}
        ((node_id, node),) = body["nodes"].items()
        assert node_id in direct["nodes"]
        assert node["version"] == one["version"] and node["roles"] != ["master"]
        port = url.rsplit(":", 1)[1]
        assert node["http"]["publish_address"] == f"127.0.0.1:{port}"
        assert node["http"]["bound_address"] == [f"127.0.0.1:{port}"]


def test_behind_a_load_balancer_the_forwarded_host_is_published(proxy_url: str) -> None:
    cases = [
        ({"x-forwarded-host": "search.example.com", "x-forwarded-proto": "https"}, 443),
        ({"x-forwarded-host": "search.example.com"}, 80),
        ({"x-forwarded-host": "search.example.com:9243, lb.internal"}, 9243),
    ]
    for headers, port in cases:
        answer = httpx.get(proxy_url + "/_nodes/http", headers=headers, timeout=30)
        (node,) = answer.json()["nodes"].values()
        host = headers["x-forwarded-host"].split(",")[0].split(":")[0]
        assert node["http"]["publish_address"] == f"{host}:{port}"


def test_filter_path_is_elasticsearchs_and_errors_pass_through(proxy_url: str) -> None:
    answer = httpx.get(
        proxy_url + "/_nodes/http", params={"filter_path": "nodes.*.http.publish_address"}
    )
    (node,) = answer.json()["nodes"].values()
    assert node == {"http": {"publish_address": proxy_url.removeprefix("http://")}}
    refused = httpx.get(proxy_url + "/_nodes/http", params={"timeout": "not-a-time"})
    assert refused.status_code == 400 and refused.json()["error"]["type"]


def test_of_several_nodes_one_that_serves_requests_is_named() -> None:
    """A dedicated master is never the node named (clients skip such nodes when sniffing)."""
    from collapse.routes.nodes import _as_proxy

    http = {"publish_address": "10.0.0.1:9200", "bound_address": ["10.0.0.1:9200"]}
    body = {
        "_nodes": {"total": 3, "successful": 3, "failed": 0},
        "cluster_name": "c",
        "nodes": {
            "m": {"roles": ["master"], "http": http},
            "d1": {"roles": ["data", "ingest"], "http": http},
            "d2": {"roles": ["data"], "http": http},
        },
    }
    out = _as_proxy(body, "search.example.com:443")
    assert list(out["nodes"]) == ["d1"]
    assert out["nodes"]["d1"]["http"] == {
        "publish_address": "search.example.com:443",
        "bound_address": ["search.example.com:443"],
    }
    assert out["_nodes"]["total"] == 1 and body["nodes"]["d1"]["http"] is http  # not changed
    assert _as_proxy({"nodes": {}}, "x:1") == {"nodes": {}}
