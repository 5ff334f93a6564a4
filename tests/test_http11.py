"""The HTTP/1.1 transport under the proxy's httpx client (``collapse.http11``), against the real
node and the loopback fault injectors: httpx's API over it, its answers, its errors."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.http11 import Http11Transport
from tests.conftest import free_port
from tests.faults import DroppingRelay, StallingServer

pytestmark = pytest.mark.es


async def test_httpx_client_over_the_transport_answers_as_the_node(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.index(index=index_name, id="a", document={"n": 1}, refresh=True)
    async with httpx.AsyncClient(transport=Http11Transport(4), base_url=es_url) as client:
        got = await client.get(f"/{index_name}/_doc/a")
        assert got.status_code == 200 and got.json()["_source"] == {"n": 1}
        assert got.headers["x-elastic-product"] == "Elasticsearch"
        assert got.request.url.path == f"/{index_name}/_doc/a"
        # An answer to HEAD has a length but no body; the connection serves the next request.
        head = await client.head(f"/{index_name}/_doc/a")
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) > 0
        missing = await client.get(f"/{index_name}/_doc/nothing")
        assert missing.status_code == 404 and missing.json()["found"] is False
        searched = await client.post(
            f"/{index_name}/_search",
            content=b'{"size": 1}',
            params={"q": "n:1"},
            headers={"content-type": "application/json"},
        )
        assert searched.json()["hits"]["hits"][0]["_id"] == "a"


async def test_concurrent_requests_beyond_the_pool_wait_for_a_connection(es_url: str) -> None:
    async with httpx.AsyncClient(transport=Http11Transport(2), base_url=es_url) as client:
        answers = await asyncio.gather(*(client.get("/_count") for _ in range(12)))
    assert {a.status_code for a in answers} == {200}


async def test_refused_connection_is_a_connect_error() -> None:
    async with httpx.AsyncClient(transport=Http11Transport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{free_port()}/")


async def test_a_stalling_node_is_a_read_timeout() -> None:
    server = StallingServer()
    try:
        timeout = httpx.Timeout(0.5, connect=2)
        async with httpx.AsyncClient(transport=Http11Transport(), timeout=timeout) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.get(server.url)
    finally:
        server.close()


async def test_a_connection_dropped_before_the_answer_is_a_protocol_error(es_url: str) -> None:
    relay = DroppingRelay(int(es_url.rsplit(":", 1)[1]), drop=1)
    try:
        async with httpx.AsyncClient(transport=Http11Transport()) as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(relay.url)
            assert (await client.get(f"{relay.url}/_count")).status_code == 200  # a new connection
    finally:
        relay.close()


async def test_an_encoded_answer_reads_the_same_raw_and_as_httpx(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    """``Upstream.exchange`` (the pass-through's) hands an encoded answer on as it came, and
    ``decoded`` gives the body ``Upstream.request``'s ``httpx.Response`` reads."""
    from collapse.settings import Settings
    from collapse.upstream import Upstream, decoded

    es.index(index=index_name, id="a", document={"n": 1, "text": "x" * 2000}, refresh=True)
    upstream = Upstream(Settings(es_url=[es_url]))
    try:
        asked = {"accept-encoding": "gzip"}
        raw = await upstream.exchange("GET", f"/{index_name}/_doc/a", headers=asked)
        read = await upstream.request("GET", f"/{index_name}/_doc/a", headers=asked)
        plain = await upstream.exchange("GET", f"/{index_name}/_doc/a")
        replied = await upstream.reply("GET", f"/{index_name}/_doc/a", headers=asked)
    finally:
        await upstream.aclose()
    names = {name.lower() for name, _ in raw.headers}
    assert b"content-encoding" in names and raw.status == read.status_code == 200
    assert decoded(raw) == read.content == plain.body
    # ``Upstream.reply`` (the proxy's own searches') reads it as the httpx.Response does.
    assert replied.status == 200 and replied.content == read.content
    assert replied.headers == dict(read.headers.items())
    assert b"content-encoding" not in {name.lower() for name, _ in plain.headers}


async def test_the_read_timeout_counts_from_each_request_on_a_kept_connection() -> None:
    """On one kept-alive connection: a request answered within the read timeout is answered
    even when the connection's previous request started more than the timeout before its
    answer; a request never answered is a read timeout."""
    asked = connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal asked, connections
        connections += 1
        while await reader.readuntil(b"\r\n\r\n"):
            asked += 1
            if asked == 2:
                await asyncio.sleep(0.4)
            if asked <= 2:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        timeout = httpx.Timeout(0.5, connect=2)
        transport = Http11Transport()
        async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
            first = await client.get(f"http://127.0.0.1:{port}/")
            await asyncio.sleep(0.3)
            second = await client.get(f"http://127.0.0.1:{port}/")  # answered 0.7 s after the first
            assert first.content == second.content == b"ok"
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"http://127.0.0.1:{port}/")
        assert (asked, connections) == (3, 1)
    finally:
        server.close()
