"""Collapsing inside a Python app (``collapse.inprocess``), on the real node: the app's own
client gets the proxy's answer (same hits, groups, counts), and the proxy mounted in a host app
answers as the proxy on its own port.

The ES-client cases run against Elasticsearch; the OpenSearch-client cases are marked
``opensearch`` and run against either engine (CI runs them on OpenSearch too).
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import elastic_transport
import httpx
import pytest
from elasticsearch import AsyncElasticsearch, BadRequestError, Elasticsearch, NotFoundError
from fastapi import FastAPI
from opensearchpy import AsyncOpenSearch, OpenSearch
from starlette.applications import Starlette
from starlette.routing import Mount

import collapse
from collapse.errors import BadRequest, NotFound
from collapse.settings import Settings
from tests.conftest import ServerThread, free_port, only_elasticsearch
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants
from tests.test_proxy_search import SORTED, wire_story

pytestmark = [pytest.mark.es]

Search = Callable[..., Awaitable[dict[str, Any]]]
STORM = {"query": {"match": {"body": "storm"}}, "sort": [{"n": "asc"}]}


@pytest.fixture(scope="module")
def indices(es: Elasticsearch) -> Iterator[tuple[str, str]]:
    """The wire story (20 copies among 40 others) and 6 stories of 5 copies among 30 others,
    shuffled (the paging tests' index): built once for the module."""
    wire, scattered = (f"test-inprocess-{name}-{random.randrange(1 << 30):x}" for name in "ws")
    wire_story(es, wire)
    rng = random.Random(11)
    texts = [t for _ in range(6) for t in variants(text(rng, 250, "storm"), 5, rng)]
    texts += [text(rng, 200, "storm") for _ in range(30)]
    rng.shuffle(texts)
    create_index(es, scattered)
    index_docs(
        es,
        scattered,
        [
            {"_id": f"d{n}", "n": n, "body": t, "collapse_fp": fp}
            for n, (t, fp) in enumerate(zip(texts, fingerprints(texts), strict=True))
        ],
    )
    yield wire, scattered
    es.options(ignore_status=404).indices.delete(index=f"{wire},{scattered}")


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without what differs between two runs of one search (its times; an
    ``_msearch``'s items too)."""
    out = copy.deepcopy(answer)
    out.pop("took", None)
    if isinstance(out.get("collapse"), dict):
        out["collapse"].pop("took_ms", None)
    if isinstance(out.get("responses"), list):
        out["responses"] = [comparable(item) for item in out["responses"]]
    return out


def proxy_params(params: dict[str, Any]) -> dict[str, str]:
    """Keyword parameters of the in-process API as the proxy's query string."""
    out = {}
    for name, value in params.items():
        value = ("true" if value else "false") if isinstance(value, bool) else str(value)
        out["from" if name == "from_" else name] = value
    return out


class Api:
    """One way to ask: the proxy over HTTP, or a collapser (``search``, ``msearch``,
    ``expand``)."""

    def __init__(self, search: Search, msearch: Search, expand: Search) -> None:
        self.search, self.msearch, self.expand = search, msearch, expand

    @classmethod
    def of(cls, collapser: collapse.AsyncCollapser) -> Api:
        return cls(collapser.search, collapser.msearch, collapser.expand)


def via_proxy(proxy_url: str) -> Api:
    async def search(
        *, index: str, body: dict[str, Any] | None = None, **params: Any
    ) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(
                f"{proxy_url}/{index}/_search", json=body or {}, params=proxy_params(params)
            )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    async def msearch(
        *, searches: list[dict[str, Any]], index: str | None = None, **params: Any
    ) -> dict[str, Any]:
        lines = b"".join(json.dumps(line).encode() + b"\n" for line in searches)
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(
                f"{proxy_url}/{index}/_msearch" if index else f"{proxy_url}/_msearch",
                content=lines,
                params=proxy_params(params),
                headers={"content-type": "application/x-ndjson"},
            )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    async def expand(
        *, index: str, id: str, body: dict[str, Any] | None = None, **params: Any
    ) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(
                f"{proxy_url}/{index}/_collapse/{id}", json=body or {}, params=proxy_params(params)
            )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    return Api(search, msearch, expand)


async def scenario(api: Api, wire: str, scattered: str) -> list[dict[str, Any]]:
    """The proxy's folding cases, one search each, three pages of ``search_after``, and
    ``_msearch`` (a failed search among them)."""
    search = api.search
    match = {"query": {"match": {"body": "earthquake"}}}
    out = [
        await search(index=wire, body={**SORTED, "size": 10}, collapse_members=50),
        await search(
            index=wire,
            body={**SORTED, "size": 3},
            collapse_window=10,
            collapse_members=30,
            collapse_explain=True,
        ),
        await search(index=wire, body={**match, "size": 5}),
        await search(index=wire, body={**SORTED, "from": 5, "size": 5}),
        await search(index=wire, body=SORTED, from_=10, size=5),
        await search(index=wire, q="body:earthquake", sort="n:asc", size=2, _source=False),
        await search(index=wire, body={**SORTED, "size": 2}, collapse_total=True),
        await search(index=wire, body={**SORTED, "_source": ["n"], "size": 4}),
        await search(index=wire, body=SORTED, _source_includes="n,collapse_fp.exact_key"),
        await search(
            index=wire,
            body={**SORTED, "size": 3},
            filter_path="hits.total,hits.hits._id,hits.hits._collapse.folded,collapse.groups",
        ),
        await search(index=wire, body=SORTED, collapse_max_distance=0, collapse_min_similarity=1),
        await search(index=wire, body={**SORTED, "size": 4}, collapse=False),
        await search(index=f"{wire}*", body={"query": {"match": {"body": "no-such-word"}}}),
        await search(index=scattered, body={**STORM, "from": 0, "size": 5}, collapse_members=50),
    ]
    after = out[-1]["hits"]["hits"][-1]["sort"]
    for _ in range(2):  # continued from the last hit: then the cursor rides in sort
        out.append(
            await search(
                index=scattered,
                body={**STORM, "size": 5, "search_after": after},
                collapse_members=50,
            )
        )
        after = out[-1]["hits"]["hits"][-1]["sort"]
    searches = [
        {"index": wire},
        {**SORTED, "size": 2},
        {"index": scattered, "preference": "inprocess"},
        {**STORM, "size": 5},
        {"index": "test-inprocess-no-such-index"},
        SORTED,
        {"index": f"{wire}*"},
        {"query": {"match": {"body": "no-such-word"}}},
    ]
    out.append(await api.msearch(searches=searches, collapse_members=5))
    out.append(await api.msearch(index=wire, searches=[{}, {**SORTED, "size": 3}]))
    out.append(await api.msearch(searches=searches[:4], collapse=False))
    out.append(await api.expand(index=wire, id="c0", body=SORTED, from_=5, size=5))
    out.append(
        await api.expand(index=wire, id="c0", body={**SORTED, "size": 3}, collapse_window=10)
    )
    out.append(await api.expand(index=wire, id="c1", body=SORTED))
    out.append(await api.expand(index=wire, id="c0", body=SORTED, _source_includes="n", size=2))
    return out


def check_folding(answers: list[dict[str, Any]]) -> None:
    """What the proxy's own tests assert of these searches (so that equal is not trivial)."""
    first = answers[0]
    assert [h["_id"] for h in first["hits"]["hits"]] == ["c0", *(f"u{i}" for i in range(9))]
    assert first["hits"]["hits"][0]["_collapse"]["folded"] == 19
    assert first["hits"]["total"] == {"value": 60, "relation": "eq"}
    beyond = answers[1]["hits"]["hits"][0]["_collapse"]["members"]
    assert {m["found"] for m in beyond} == {"window", "probe"}
    assert answers[6]["collapse"]["total_groups"] == 41
    assert set(answers[8]["hits"]["hits"][0]["_source"]) == {"n", "collapse_fp"}
    assert "collapse" not in answers[11] and len(answers[11]["hits"]["hits"]) == 4
    expanded = answers[-4:]
    answers = answers[:-4]
    assert expanded[0]["hits"]["total"]["value"] == 19 and len(expanded[0]["hits"]["hits"]) == 5
    assert expanded[1]["hits"]["total"]["value"] == 19 and expanded[1]["collapse"]["window"] == 10
    assert expanded[2]["collapse"]["representative"] is False
    assert expanded[3]["hits"]["hits"][0]["_source"].keys() == {"n"}
    pages = answers[-6:-3]
    shown = [h["_id"] for page in pages for h in page["hits"]["hits"]]
    assert len(shown) == len(set(shown)) == 15
    assert all(str(h["sort"][-1]).startswith("collapse:") for h in pages[-1]["hits"]["hits"])
    multi = answers[-3]["responses"]
    assert multi[0]["hits"]["hits"][0]["_collapse"]["folded"] == 19 and multi[0]["status"] == 200
    assert multi[2]["status"] == 404 and multi[2]["error"]["type"] == "index_not_found_exception"
    assert "collapse" not in answers[-1]["responses"][0]


def _sync(collapser: collapse.Collapser) -> Api:
    async def search(**kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(collapser.search, **kwargs)

    async def msearch(**kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(collapser.msearch, **kwargs)

    async def expand(**kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(collapser.expand, **kwargs)

    return Api(search, msearch, expand)


CLIENTS = [
    pytest.param("Elasticsearch", marks=only_elasticsearch),
    pytest.param("AsyncElasticsearch", marks=only_elasticsearch),
    pytest.param("OpenSearch", marks=pytest.mark.opensearch),
    pytest.param("AsyncOpenSearch", marks=pytest.mark.opensearch),
]


@pytest.mark.parametrize("client_class", CLIENTS)
async def test_the_apps_client_gets_the_proxys_answers(
    client_class: str, es_url: str, indices: tuple[str, str], proxy_url: str
) -> None:
    wire, scattered = indices
    settings = Settings(es_url=[es_url])
    expected = await scenario(via_proxy(proxy_url), wire, scattered)
    check_folding(expected)
    if client_class.startswith("Async"):
        cls = AsyncElasticsearch if client_class == "AsyncElasticsearch" else AsyncOpenSearch
        client = cls(es_url)
        try:
            got = await scenario(Api.of(collapse.AsyncCollapser(client, settings)), wire, scattered)
        finally:
            await client.close()
    else:
        sync = Elasticsearch(es_url) if client_class == "Elasticsearch" else OpenSearch(es_url)
        with collapse.Collapser(sync, settings) as collapser:
            got = await scenario(_sync(collapser), wire, scattered)
        sync.close()
    assert [comparable(a) for a in got] == [comparable(a) for a in expected]


@pytest.mark.opensearch
def test_many_threads_share_one_sync_collapser(
    es_url: str, indices: tuple[str, str], proxy_url: str
) -> None:
    wire, _ = indices
    bodies = [{**SORTED, "from": f, "size": 5} for f in range(0, 40, 5)]
    with httpx.Client(timeout=30) as http:
        expected = [http.post(f"{proxy_url}/{wire}/_search", json=b).json() for b in bodies]
    client = OpenSearch(es_url)
    with collapse.Collapser(client, Settings(es_url=[es_url])) as collapser:

        async def all_at_once() -> list[dict[str, Any]]:
            return list(
                await asyncio.gather(
                    *(asyncio.to_thread(collapser.search, index=wire, body=b) for b in bodies)
                )
            )

        got = asyncio.run(all_at_once())
    client.close()
    assert [comparable(a) for a in got] == [comparable(a) for a in expected]


def test_the_public_names_load_the_in_process_api_only_when_used() -> None:
    code = (
        "import sys, collapse\n"
        "before = 'collapse.inprocess' in sys.modules or 'elasticsearch' in sys.modules\n"
        "names = [getattr(collapse, name) for name in collapse.__all__]\n"
        "print(before, 'collapse.inprocess' in sys.modules, collapse.Collapser.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "collapse.inprocess"]
    with pytest.raises(AttributeError, match="no attribute 'Collapsers'"):
        collapse.Collapsers  # noqa: B018


def test_a_client_of_the_wrong_kind_is_refused_with_the_class_to_use(es_url: str) -> None:
    with pytest.raises(TypeError, match=r"use collapse\.AsyncCollapser"):
        collapse.Collapser(AsyncElasticsearch(es_url))
    with pytest.raises(TypeError, match=r"use collapse\.Collapser"):
        collapse.AsyncCollapser(Elasticsearch(es_url))
    with pytest.raises(TypeError, match="got str"):
        collapse.Collapser(es_url)
    with httpx.Client() as http, pytest.raises(TypeError, match="got Client"):
        collapse.AsyncCollapser(http)


@only_elasticsearch
async def test_errors_are_the_clients_own_as_elasticsearch_gave_them(
    es: Elasticsearch, es_url: str, indices: tuple[str, str], proxy_url: str
) -> None:
    wire, _ = indices
    client = AsyncElasticsearch(es_url)
    collapser = collapse.AsyncCollapser(client, Settings(es_url=[es_url]))
    try:
        missing = "test-inprocess-no-such-index"
        with pytest.raises(NotFoundError) as not_found:
            await collapser.search(index=missing, body=SORTED)
        proxied = httpx.post(f"{proxy_url}/{missing}/_search", json=SORTED)
        assert not_found.value.meta.status == proxied.status_code == 404
        assert not_found.value.body == proxied.json()
        with pytest.raises(BadRequestError) as negative:
            await collapser.search(index=wire, body={"from": -1})
        with pytest.raises(BadRequestError) as direct:
            es.search(index=wire, body={"from": -1})
        assert negative.value.body == direct.value.body
        with pytest.raises(BadRequestError, match="parsing_exception"):
            await collapser.search(index=wire, body={"query": {"no_such_query": {}}})
        with pytest.raises(BadRequest) as bad:
            await collapser.search(index=wire, body=SORTED, collapse_window=0)
        proxied = httpx.post(f"{proxy_url}/{wire}/_search?collapse_window=0", json=SORTED)
        assert proxied.status_code == 400 and bad.value.body() == proxied.json()
        with pytest.raises(BadRequestError) as refused:  # a header Elasticsearch refuses
            await collapser.msearch(searches=[{"indx": wire}, SORTED])
        proxied = httpx.post(
            f"{proxy_url}/_msearch",
            content=json.dumps({"indx": wire}) + "\n" + json.dumps(SORTED) + "\n",
            headers={"content-type": "application/x-ndjson"},
        )
        assert proxied.status_code == 400 and refused.value.body == proxied.json()
        with pytest.raises(NotFound) as no_doc:
            await collapser.expand(index=wire, id="no-such-doc", body=SORTED)
        proxied = httpx.post(f"{proxy_url}/{wire}/_collapse/no-such-doc", json=SORTED)
        assert proxied.status_code == 404 and no_doc.value.body() == proxied.json()
        with pytest.raises(NotFoundError):  # the search on a missing index: the client's own
            await collapser.expand(index="test-inprocess-no-such-index", id="c0", body=SORTED)
        with pytest.raises(TypeError, match="go in body"):
            await collapser.search(index=wire, query={"match_all": {}})  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="index expression"):
            await collapser.search(index="", body=SORTED)
    finally:
        await client.close()


@only_elasticsearch
def test_an_unreachable_node_raises_the_clients_connection_error(es_url: str) -> None:
    client = Elasticsearch(f"http://127.0.0.1:{free_port()}", max_retries=0)
    collapser = collapse.Collapser(client, Settings(es_url=[es_url]))
    with pytest.raises(elastic_transport.ConnectionError):
        collapser.search(index="anything", body=SORTED)
    collapser.close()
    with pytest.raises(RuntimeError, match="closed"):
        collapser.search(index="anything", body=SORTED)
    client.close()


@pytest.mark.opensearch
@pytest.mark.parametrize("host", ["FastAPI", "Starlette"])
async def test_the_proxy_mounted_in_an_app_answers_as_the_proxy(
    host: str, es_url: str, indices: tuple[str, str], proxy_url: str
) -> None:
    """Mounted under a path that is also an index's name (``/{wire}/{wire}/_search``), started
    by its first request (httpx's ASGI transport runs no lifespan, as a mount does not)."""
    wire, _ = indices
    proxy = collapse.asgi_app(Settings(es_url=[es_url]))
    outer: Starlette
    if host == "FastAPI":
        outer = FastAPI()
        outer.mount(f"/{wire}", proxy)

        @outer.get("/hello")
        async def hello() -> dict[str, str]:
            return {"from": "the host"}
    else:
        outer = Starlette(routes=[Mount(f"/{wire}", app=proxy)])
    try:
        transport = httpx.ASGITransport(app=outer)
        async with httpx.AsyncClient(transport=transport, base_url="http://host") as http:
            for params in ({"collapse_members": "50"}, {"collapse": "false"}):
                got = await http.post(f"/{wire}/{wire}/_search", json=SORTED, params=params)
                expected = httpx.post(f"{proxy_url}/{wire}/_search", json=SORTED, params=params)
                assert got.status_code == expected.status_code == 200
                assert comparable(got.json()) == comparable(expected.json())
            assert got.headers["x-elastic-product"] == "Elasticsearch"
            math = await http.post(f"/{wire}/%3C{wire}%3E/_search", json=SORTED)  # <{wire}>
            expected = httpx.post(f"{proxy_url}/{wire}/_search", json=SORTED)
            assert comparable(math.json()) == comparable(expected.json())
            doc = await http.get(f"/{wire}/{wire}/_doc/c0")
            assert doc.status_code == 200 and "collapse_fp" not in doc.json()["_source"]
            internal = await http.get(f"/{wire}/collapse-boilerplate/_search")  # never served
            assert internal.status_code == 403
            if host == "FastAPI":
                assert (await http.get("/hello")).json() == {"from": "the host"}
    finally:
        await proxy.aclose()
    assert getattr(proxy.app.state, "upstream", None) is None


@pytest.mark.opensearch
def test_the_hosts_lifespan_starts_and_stops_the_mounted_proxy(
    es_url: str, indices: tuple[str, str], proxy_url: str
) -> None:
    wire, _ = indices
    proxy = collapse.asgi_app(Settings(es_url=[es_url]))
    outer = FastAPI(lifespan=proxy.lifespan)
    outer.mount("/es", proxy)
    with ServerThread(outer) as server:
        assert proxy.app.state.upstream is not None  # started before any request
        got = httpx.post(f"{server.url}/es/{wire}/_search", json=SORTED, timeout=30)
        expected = httpx.post(f"{proxy_url}/{wire}/_search", json=SORTED, timeout=30)
        assert got.status_code == 200
        assert comparable(got.json()) == comparable(expected.json())
    assert getattr(proxy.app.state, "upstream", None) is None
