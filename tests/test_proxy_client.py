"""The official Python client, pointed at the proxy, works untouched (and the expander)."""

from __future__ import annotations

import httpx
import pytest
from elasticsearch import ApiError, Elasticsearch

from indexer.engine import OPENSEARCH
from tests.conftest import ENGINE
from tests.test_proxy_search import SORTED, wire_story

pytestmark = [pytest.mark.es, pytest.mark.opensearch]


@pytest.fixture
def client(proxy_url: str) -> Elasticsearch:
    return Elasticsearch(proxy_url, request_timeout=30)


def test_official_client_search_count_get(
    es: Elasticsearch, index_name: str, client: Elasticsearch
) -> None:
    wire_story(es, index_name)
    out = client.search(index=index_name, query=SORTED["query"], sort=SORTED["sort"], size=3)
    assert [h["_id"] for h in out["hits"]["hits"]] == ["c0", "u0", "u1"]
    assert out["hits"]["hits"][0]["_collapse"]["folded"] == 19
    assert out.meta.headers["x-elastic-product"] == "Elasticsearch"
    if ENGINE != OPENSEARCH:  # OpenSearch answers plain JSON (the proxy asks it so)
        assert "compatible-with=9" in out.meta.headers["content-type"]
    assert client.count(index=index_name)["count"] == 60
    doc = client.get(index=index_name, id="c3")
    assert doc["_id"] == "c3" and doc["found"]
    assert out["hits"]["total"]["value"] == 60  # hits.total counts every matching document
    multi = client.msearch(searches=[{"index": index_name}, {**SORTED, "size": 1}])
    assert multi["responses"][0]["hits"]["hits"][0]["_collapse"]["folded"] == 19
    with pytest.raises(ApiError) as missing:
        client.search(index="no-such-index-anywhere", query={"match_all": {}})
    assert missing.value.meta.status == 404


def test_documents_are_got_by_their_exact_id(
    es: Elasticsearch, index_name: str, client: Elasticsearch, proxy_url: str
) -> None:
    """Ids with ``?``, ``#``, ``%``, spaces and non-ASCII reach Elasticsearch whole (the route
    receives them decoded: forwarded as they are, ``a?b`` would fetch ``a``)."""
    es.index(index=index_name, id="a", document={"n": 0}, refresh=True)
    odd = "a?b#c%d e é"
    es.index(index=index_name, id=odd, document={"n": 1}, refresh=True)
    assert client.get(index=index_name, id=odd)["_source"] == {"n": 1}
    assert client.get_source(index=index_name, id=odd) == {"n": 1}
    assert client.exists(index=index_name, id=odd)
    # A slash inside an id arrives encoded (%2F): one id, not two path segments.
    slashed = "news/2026/a b"
    es.index(index=index_name, id=slashed, document={"n": 2}, refresh=True)
    assert client.get(index=index_name, id=slashed)["_id"] == slashed
    assert client.get_source(index=index_name, id=slashed) == {"n": 2}
    assert client.exists(index=index_name, id=slashed)
    assert not client.exists(index=index_name, id="news/2026")
    # The same path with literal slashes is no document endpoint: refused, nothing forwarded.
    assert httpx.get(f"{proxy_url}/{index_name}/_doc/news/2026").status_code == 403


def test_info_is_elasticsearchs_own_answer(es_url: str, proxy_url: str) -> None:
    direct = httpx.get(f"{es_url}/")
    proxied = httpx.get(f"{proxy_url}/")
    assert proxied.status_code == direct.status_code
    if direct.status_code == 200:
        assert Elasticsearch(proxy_url).info()["version"]["number"]
    else:  # the minimal distribution has no GET / (405): the proxy passes that on
        with pytest.raises(ApiError):
            Elasticsearch(proxy_url).info()
    assert httpx.head(f"{proxy_url}/").status_code == httpx.head(f"{es_url}/").status_code


def test_expander_takes_an_id_with_a_slash(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    copy = {**es.get(index=index_name, id="c1")["_source"], "n": -1}
    es.index(index=index_name, id="wire/c1", document=copy, refresh=True)
    body = {**SORTED, "size": 10}
    rep = httpx.post(f"{proxy_url}/{index_name}/_search", json=body).json()["hits"]["hits"][0]
    assert rep["_id"] == "wire/c1" and rep["_collapse"]["folded"] == 20
    answer = httpx.post(
        f"{proxy_url}/{index_name}/_collapse/wire%2Fc1", json=body, params={"size": 50}
    )
    assert answer.status_code == 200, answer.text
    ids = [h["_id"] for h in answer.json()["hits"]["hits"]]
    assert ids == [f"c{i}" for i in range(20)]  # its copies, not itself


def test_expander_lists_the_near_duplicates_ranked(
    es: Elasticsearch, es_url: str, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    answer = httpx.post(
        f"{proxy_url}/{index_name}/_collapse/c0",
        json={"query": SORTED["query"], "sort": SORTED["sort"]},
        params={"collapse_explain": "true"},
    )
    assert answer.status_code == 200, answer.text
    out = answer.json()
    assert [h["_id"] for h in out["hits"]["hits"]] == [f"c{i}" for i in range(1, 20)]
    assert out["hits"]["total"] == {"value": 19, "relation": "eq"}
    assert all(0 < h["_collapse"]["hamming"] <= 18 for h in out["hits"]["hits"])
    assert all("collapse_fp" not in h["_source"] for h in out["hits"]["hits"])
    assert out["collapse"]["representative"] is True
    narrow = httpx.get(
        f"{proxy_url}/{index_name}/_collapse/c0", params={"collapse_max_distance": "3"}
    ).json()
    assert narrow["hits"]["total"]["value"] < 19
    # The query string pages the members; the body stays the search's.
    pages = [
        httpx.post(
            f"{proxy_url}/{index_name}/_collapse/c0",
            json={"query": SORTED["query"], "sort": SORTED["sort"]},
            params={"from": start, "size": 7},
        ).json()
        for start in (0, 7, 14)
    ]
    assert [h["_id"] for p in pages for h in p["hits"]["hits"]] == [f"c{i}" for i in range(1, 20)]
    assert all(p["hits"]["total"] == {"value": 19, "relation": "eq"} for p in pages)
    # A member is no representative: nothing is folded behind it.
    member = httpx.post(f"{proxy_url}/{index_name}/_collapse/c3", json=SORTED).json()
    assert member["hits"] == {
        "total": {"value": 0, "relation": "eq"},
        "max_score": None,
        "hits": [],
    }
    assert member["collapse"]["representative"] is False
    from collapse.app import create_app
    from collapse.settings import Settings
    from tests.conftest import ServerThread

    with ServerThread(create_app(Settings(es_url=[es_url], collapse_expand_size=1))) as server:
        url = f"{server.url}/{index_name}/_collapse/c0"
        default = httpx.post(url, json=SORTED).json()
        deep = httpx.post(url, json=SORTED, params={"from": 15, "size": 4}).json()
        none = httpx.post(url, json=SORTED, params={"collapse_max_distance": "0"}).json()
    assert [h["_id"] for h in default["hits"]["hits"]] == ["c1"]
    assert [h["_id"] for h in deep["hits"]["hits"]] == ["c16", "c17", "c18", "c19"]
    assert none["hits"]["hits"] == [] and none["hits"]["total"] == {"value": 0, "relation": "eq"}
    bad = httpx.get(f"{proxy_url}/{index_name}/_collapse/c0", params={"from": "-1"})
    assert bad.status_code == 400
    missing = httpx.get(f"{proxy_url}/{index_name}/_collapse/nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "resource_not_found_exception"
