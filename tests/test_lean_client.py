"""The benchmarks' lean load client reads real answers whole, however they are framed and cut."""

from __future__ import annotations

import asyncio
import json

import pytest
from elasticsearch import Elasticsearch

from bench import lean_client


def test_searches_elasticsearch_on_kept_alive_connections(
    es: Elasticsearch, es_url: str, index_name: str
) -> None:
    es.index(index=index_name, id="1", document={"body": "river flood rescue"}, refresh=True)
    search = lean_client.encode_post(
        f"{es_url}/{index_name}/_search",
        json.dumps({"query": {"match": {"body": "flood"}}}).encode(),
    )
    missing = lean_client.encode_post(f"{es_url}/no-such-index-lean/_search", b"{}")

    async def run() -> list[tuple[int, bytes]]:
        conns = await lean_client.open_clients(*lean_client.address(es_url), 2)
        try:  # several requests per connection: the framing must leave nothing behind
            return [await conns[k % 2].request(r) for k, r in enumerate([search, missing] * 3)]
        finally:
            for conn in conns:
                conn.close()

    answers = asyncio.run(run())
    assert [status for status, _ in answers] == [200, 404] * 3
    hits = json.loads(answers[0][1])["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["1"]
    assert json.loads(answers[1][1])["error"]["type"] == "index_not_found_exception"


@pytest.mark.parametrize("cut", [1, 7, 4096])
def test_reads_chunked_answers_cut_anywhere(cut: int) -> None:
    bodies = [b'{"a":1}', b"x" * 5000, b""]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for body in bodies:
            await reader.readuntil(b"\r\n\r\n")
            chunks = [body[i : i + 300] for i in range(0, len(body), 300)]
            wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            wire += b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
            for i in range(0, len(wire), cut):
                writer.write(wire[i : i + cut])
                await writer.drain()
        writer.close()

    async def run() -> list[tuple[int, bytes]]:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            (conn,) = await lean_client.open_clients("127.0.0.1", port, 1)
            req = lean_client.encode_post(f"http://127.0.0.1:{port}/x", b"{}")
            out = [await conn.request(req) for _ in bodies]
            conn.close()
            return out

    assert asyncio.run(run()) == [(200, b) for b in bodies]


def test_refuses_what_it_does_not_speak() -> None:
    with pytest.raises(ValueError, match="plain http"):
        lean_client.address("https://127.0.0.1:9200")

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.0 200 OK\r\n\r\nbody until close")
        writer.close()

    async def run() -> None:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            (conn,) = await lean_client.open_clients("127.0.0.1", port, 1)
            await conn.request(lean_client.encode_post(f"http://127.0.0.1:{port}/", b""))

    with pytest.raises(lean_client.ProtocolError, match=r"HTTP/1\.1"):
        asyncio.run(run())


def test_reopens_a_connection_the_server_closed_while_idle() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # as a keep-alive timeout does

    async def run() -> tuple[list[tuple[int, bytes]], int]:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            (client,) = await lean_client.open_clients("127.0.0.1", port, 1)
            req = lean_client.encode_post(f"http://127.0.0.1:{port}/", b"{}")
            out = []
            for _ in range(3):
                out.append(await client.request(req))
                await asyncio.sleep(0.05)  # idle: the close arrives before the next request
            client.close()
            return out, client.reconnects

    answers, reconnects = asyncio.run(run())
    assert answers == [(200, b"ok")] * 3
    assert reconnects == 2
