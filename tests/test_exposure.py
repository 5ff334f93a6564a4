"""Exposure on the real node: an index outside ``exposed_indices`` (or our internal model store)
cannot be read or written through any route, body, wildcard, alias or date math, and the
indices the proxy serves keep working, collapsed."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.exposure import Allowlist, View, date_math_glob, matches
from collapse.settings import Settings
from tests.conftest import ServerThread
from tests.proxy_support import create_index, fingerprints, index_docs, text, variants

KEY = "exposure-test-key-0123456789"
NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture(scope="module")
def names(es: Elasticsearch, es_url: str) -> Iterator[dict[str, str]]:
    """``open`` (served, near-duplicates), ``secret`` (not served), ``alias`` (a served-looking
    name pointing at ``secret``), ``dot`` (a ``.`` index) and ``store`` (the model store)."""
    p = f"xp{uuid.uuid4().hex[:8]}"
    n = {
        "p": p,
        "open": f"{p}-open",
        "secret": f"{p}-secret",
        "alias": f"{p}-open-alias",
        "dot": f".{p}-dot",
        "store": f"{p}-store",
    }
    rng = random.Random(19)
    copies = variants(text(rng, 120, "harbour"), 4, rng)
    create_index(es, n["open"])
    index_docs(
        es,
        n["open"],
        [
            {"_id": f"c{k}", "title": "harbour", "body": body, "collapse_fp": fp, "mark": p}
            for k, (body, fp) in enumerate(zip(copies, fingerprints(copies), strict=True))
        ],
    )
    create_index(es, n["secret"])
    index_docs(
        es,
        n["secret"],
        [
            {"_id": f"s{k}", "title": "harbour", "body": "secret harbour text", "mark": p}
            for k in (1, 2, 3)
        ],
    )
    for name in (n["dot"], n["store"]):  # the client warns about dot indices: plain HTTP
        httpx.put(f"{es_url}/{name}", json={"settings": {"number_of_replicas": 0}})
        httpx.put(f"{es_url}/{name}/_doc/d1?refresh=true", json={"mark": p, "body": "harbour"})
    es.indices.put_alias(index=n["secret"], name=n["alias"])
    yield n
    for name in ("open", "secret", "dot", "store"):
        httpx.delete(f"{es_url}/{n[name]}")
    httpx.delete(f"{es_url}/{n['open']}-new")


@pytest.fixture(scope="module")
def proxy(es_url: str, names: dict[str, str]) -> Iterator[str]:
    """A proxy serving ``<p>-open*`` only, its model store ``<p>-store``, writes on."""
    settings = Settings(
        es_url=[es_url],
        exposed_indices=[f"{names['p']}-open*"],
        write_model_store=names["store"],
        write_api_key=KEY,
    )
    with ServerThread(create_app(settings)) as server:
        yield server.url


@pytest.fixture(scope="module")
def default_proxy(es_url: str, names: dict[str, str]) -> Iterator[str]:
    """The default allowlist (everything but the store and hidden indices)."""
    settings = Settings(es_url=[es_url], write_model_store=names["store"])
    with ServerThread(create_app(settings)) as server:
        yield server.url


def refused(answer: httpx.Response, name: str | None = None) -> None:
    assert answer.status_code == 403, answer.text
    error = answer.json()["error"]
    assert error["type"] == "security_exception"
    assert error["root_cause"][0]["type"] == "security_exception"
    if name is not None:
        assert name in error["reason"]


def marked(answer: httpx.Response, p: str) -> set[str]:
    """The indices of an answer's hits (search, msearch, mget)."""
    assert answer.status_code == 200, answer.text
    body = answer.json()
    parts = body.get("responses", [body])
    hits = [h for part in parts for h in part.get("hits", {}).get("hits", [])]
    hits += body.get("docs", [])
    return {h["_index"] for h in hits if h.get("found", True)}


def test_the_model_store_is_never_served(es_url: str, names: dict[str, str]) -> None:
    with ServerThread(create_app(Settings(es_url=[es_url]))) as server:
        refused(httpx.get(f"{server.url}/collapse-boilerplate/_search"), "collapse-boilerplate")
        refused(httpx.get(f"{server.url}/collapse-boilerplate/_doc/x"))
    # Whatever the allowlist says: named, by wildcard, by _all.
    settings = Settings(es_url=[es_url], write_model_store=names["store"], exposed_indices=["*"])
    with ServerThread(create_app(settings)) as server:
        refused(httpx.get(f"{server.url}/{names['store']}/_search"), names["store"])
        for path in ("/_search", "/_all/_search", f"/{names['p']}-*/_search", "/*/_search"):
            query: dict[str, str | int] = {
                "q": f"mark:{names['p']}",
                "expand_wildcards": "all",
                "size": 50,
            }
            got = marked(httpx.get(server.url + path, params=query), names["p"])
            assert names["store"] not in got and names["dot"] not in got, path


def test_default_serves_everything_but_the_store_and_dot_indices(
    default_proxy: str, names: dict[str, str]
) -> None:
    query: dict[str, str | int] = {"q": f"mark:{names['p']}", "size": 50, "collapse": "false"}
    got = marked(httpx.get(f"{default_proxy}/_search", params=query), names["p"])
    assert got == {names["open"], names["secret"]}
    refused(httpx.get(f"{default_proxy}/{names['dot']}/_search"), names["dot"])
    refused(httpx.get(f"{default_proxy}/{names['store']}/_count"), names["store"])
    assert httpx.get(f"{default_proxy}/{names['alias']}/_search").status_code == 200


def test_every_route_refuses_an_index_outside_the_allowlist(
    es_url: str, proxy: str, names: dict[str, str]
) -> None:
    s, a = names["secret"], names["alias"]
    for target in (s, a, f"<{s}>", f"{names['open']},{s}", f"%3C{s}%3E"):
        refused(httpx.get(f"{proxy}/{target}/_search"))
        refused(httpx.get(f"{proxy}/{target}/_search", params={"collapse": "false"}))
        refused(httpx.post(f"{proxy}/{target}/_count", json={}))
        refused(httpx.post(f"{proxy}/{target}/_pit", params={"keep_alive": "1m"}))
    for path in (
        f"/{s}/_doc/s1",
        f"/{s}/_source/s1",
        f"/{a}/_doc/s1",
        f"/{s}/_search?scroll=1m",
        f"/{s}/_collapse/s1",
    ):
        refused(httpx.get(proxy + path), s if a not in path else a)
    refused(httpx.post(f"{proxy}/{s}/_collapse/lookup", json={"text": "secret harbour text"}))
    refused(httpx.post(f"{proxy}/{s}/_mget", json={"ids": ["s1"]}))
    refused(httpx.post(f"{proxy}/_mget", json={"docs": [{"_index": s, "_id": "s1"}]}))
    mixed = {"docs": [{"_id": "c0"}, {"_index": a, "_id": "s1"}]}
    refused(httpx.post(f"{proxy}/{names['open']}/_mget", json=mixed))
    for header in ({"index": s}, {"index": [names["open"], s]}, {"index": a}):
        body = b"%s\n{}\n" % httpx.Request("POST", "/", json=header).content
        refused(httpx.post(f"{proxy}/_msearch", content=body, headers=NDJSON))
    refused(httpx.post(f"{proxy}/{s}/_msearch", content=b"{}\n{}\n", headers=NDJSON))
    # A document of another index read by a query: terms lookup, more_like_this.
    lookup = {"terms": {"body": {"index": s, "id": "s1", "path": "body"}}}
    refused(httpx.post(f"{proxy}/{names['open']}/_search", json={"query": lookup}))
    mlt = {"more_like_this": {"fields": ["body"], "like": [{"_index": s, "_id": "s1"}]}}
    refused(httpx.post(f"{proxy}/{names['open']}/_search", json={"query": mlt}))
    escaped = b'{"query": {"terms": {"body": {"\\u0069ndex": "%s", "id": "s1", "path": "body"}}}}'
    refused(
        httpx.post(
            f"{proxy}/{names['open']}/_search",
            content=escaped % s.encode(),
            headers={"content-type": "application/json"},
        )
    )
    yaml = {"content-type": "application/yaml"}
    answer = httpx.post(
        f"{proxy}/_mget", content=f"docs:\n- _index: {s}\n  _id: s1\n", headers=yaml
    )
    assert answer.status_code == 400


def test_writes_to_an_index_outside_the_allowlist_are_refused(
    es: Elasticsearch, proxy: str, names: dict[str, str]
) -> None:
    s, key = names["secret"], {"x-api-key": KEY}
    refused(httpx.put(f"{proxy}/{s}/_doc/w1", json={"body": "x"}, headers=key))
    refused(httpx.post(f"{proxy}/{names['alias']}/_doc", json={"body": "x"}, headers=key))
    refused(httpx.post(f"{proxy}/{s}/_update/s1", json={"doc": {"body": "x"}}, headers=key))
    refused(httpx.delete(f"{proxy}/{s}/_doc/s1", headers=key))
    bulk = b'{"index":{"_id":"w2"}}\n{"body":"x"}\n{"delete":{"_index":"%s","_id":"s1"}}\n'
    answer = httpx.post(
        f"{proxy}/{names['open']}/_bulk", content=bulk % s.encode(), headers={**NDJSON, **key}
    )
    refused(answer, s)
    es.indices.refresh(index=[s, names["open"]])
    assert es.count(index=s)["count"] == 3
    assert not es.exists(index=names["open"], id="w2")


def test_wildcards_and_aliases_are_narrowed_to_what_is_served(
    proxy: str, names: dict[str, str]
) -> None:
    p = names["p"]
    query: dict[str, str | int] = {"q": f"mark:{p}", "size": 50}
    for path in (
        "/_search",
        "/_all/_search",
        "/*/_search",
        f"/{p}-*/_search",
        f"/{p}-open*/_search",  # matches the alias, which points at the secret index
        f"/*,{names['open']}/_search",
    ):
        extras: list[dict[str, str | int]] = [
            {},
            {"expand_wildcards": "all"},
            {"collapse": "false"},
        ]
        for extra in extras:
            got = marked(httpx.get(proxy + path, params={**query, **extra}), p)
            assert got == {names["open"]}, (path, extra)
    count = httpx.get(f"{proxy}/{p}-*/_count", params={"q": f"mark:{p}"}).json()["count"]
    assert count == 4
    header = b'{"index": "%s-*"}\n{"query": {"term": {"mark": "%s"}}, "size": 50}\n'
    answer = httpx.post(
        f"{proxy}/_msearch", content=header % (p.encode(), p.encode()), headers=NDJSON
    )
    assert marked(answer, p) == {names["open"]}
    # Nothing served left: Elasticsearch's empty answer, or its 404 without the exclusions.
    empty = httpx.get(f"{proxy}/{names['secret']}*/_search")
    assert empty.status_code == 200 and empty.json()["hits"]["hits"] == []
    missing = httpx.get(f"{proxy}/{names['secret']}*/_search", params={"allow_no_indices": "false"})
    assert missing.status_code == 404, missing.text
    error = missing.json()["error"]
    assert error["type"] == "index_not_found_exception"
    assert error["index"] == f"{names['secret']}*" and error["resource.id"] == error["index"]


def test_scroll_and_point_in_time_of_an_index_outside_the_allowlist(
    es_url: str, proxy: str, names: dict[str, str]
) -> None:
    s = names["secret"]
    # Ids obtained from Elasticsearch directly: the proxy still serves nothing of them.
    scroll = httpx.post(f"{es_url}/{s}/_search", params={"scroll": "1m"}, json={"size": 1})
    scroll_id = scroll.json()["_scroll_id"]
    pit_id = httpx.post(f"{es_url}/{s}/_pit", params={"keep_alive": "1m"}).json()["id"]
    try:
        refused(
            httpx.post(f"{proxy}/_search/scroll", json={"scroll": "1m", "scroll_id": scroll_id})
        )
        refused(httpx.post(f"{proxy}/_search", json={"pit": {"id": pit_id}}), s)
        refused(
            httpx.post(
                f"{proxy}/_search", json={"pit": {"id": pit_id}}, params={"collapse": "false"}
            )
        )
        refused(httpx.post(f"{proxy}/{names['open']}/_collapse/c0", json={"pit": {"id": pit_id}}))
        body = b'{}\n{"pit": {"id": "%s"}, "size": 1}\n' % pit_id.encode()
        refused(httpx.post(f"{proxy}/_msearch", content=body, headers=NDJSON))
    finally:
        httpx.request("DELETE", f"{es_url}/_pit", json={"id": pit_id})
        httpx.request("DELETE", f"{es_url}/_search/scroll", json={"scroll_id": scroll_id})
    # Opened through the proxy on a served index: scroll and point in time work.
    opened = httpx.post(f"{proxy}/{names['open']}*/_pit", params={"keep_alive": "1m"})
    assert opened.status_code == 200, opened.text
    pit = opened.json()["id"]
    try:
        page = httpx.post(f"{proxy}/_search", json={"pit": {"id": pit}, "sort": ["_shard_doc"]})
        assert marked(page, names["p"]) == {names["open"]}
    finally:
        httpx.request("DELETE", f"{proxy}/_pit", json={"id": pit})
    first = httpx.post(
        f"{proxy}/{names['open']}/_search", params={"scroll": "1m"}, json={"size": 2}
    )
    assert first.status_code == 200, first.text
    again = httpx.post(
        f"{proxy}/_search/scroll", json={"scroll": "1m", "scroll_id": first.json()["_scroll_id"]}
    )
    assert marked(again, names["p"]) == {names["open"]}
    httpx.request(
        "DELETE", f"{proxy}/_search/scroll", json={"scroll_id": first.json()["_scroll_id"]}
    )


def test_served_indices_keep_working_collapsed(proxy: str, names: dict[str, str]) -> None:
    o = names["open"]
    out = httpx.post(f"{proxy}/{o}/_search", json={"query": {"match": {"title": "harbour"}}})
    assert out.status_code == 200, out.text
    hits = out.json()["hits"]["hits"]
    assert len(hits) == 1 and hits[0]["_collapse"]["folded"] == 3
    rep = hits[0]["_id"]
    expanded = httpx.post(
        f"{proxy}/{o}/_collapse/{rep}", json={"query": {"match": {"title": "harbour"}}}
    )
    assert expanded.status_code == 200 and expanded.json()["hits"]["total"]["value"] == 3
    wild = httpx.post(
        f"{proxy}/{names['p']}-*/_search", json={"query": {"match": {"title": "harbour"}}}
    )
    assert [h["_id"] for h in wild.json()["hits"]["hits"]] == [rep]
    assert httpx.get(f"{proxy}/{o}/_doc/c1").json()["found"] is True
    assert httpx.get(f"{proxy}/%3C{o}%3E/_count").json()["count"] == 4
    got = httpx.post(f"{proxy}/_mget", json={"docs": [{"_index": o, "_id": "c2"}]})
    assert marked(got, names["p"]) == {o}
    looked = httpx.post(f"{proxy}/{o}/_collapse/lookup", json={"text": "harbour"})
    assert looked.status_code == 200, looked.text
    written = httpx.put(f"{proxy}/{o}-new/_doc/1", json={"body": "x"}, headers={"x-api-key": KEY})
    assert written.status_code == 201, written.text


def test_allowlist_rules() -> None:
    allow = Allowlist(("logs-*", ".kib*", "news", "rem:*"), frozenset({"collapse-boilerplate"}))
    assert allow.serves("logs-1") and allow.serves("news") and allow.serves(".kib-1")
    assert not allow.serves("logs-1", hidden=True) and allow.serves("news", hidden=True)
    assert not allow.serves("other") and not allow.serves(".logs-1")
    assert allow.serves("rem:x") and not allow.serves("other:logs-1")
    everything = Allowlist(("*",), frozenset({"collapse-boilerplate"}))
    assert not everything.serves("collapse-boilerplate") and not everything.serves(".security")
    assert not everything.serves("cluster:index")
    assert allow.covers("logs-2024*") and not allow.covers("log*") and not allow.covers("*")
    assert (
        everything.covers("logs-*")
        and not everything.covers("*")
        and not everything.covers("collapse-*")
    )
    assert date_math_glob("<logs-{now/d{yyyy.MM.dd|+12:00}}-x>") == "logs-*-x"
    assert matches("a*b", "a.b") and not matches("a*b", "ab.c") and matches("a.c", "a.c")
    view = View.parse(
        {
            "indices": [
                {"name": "logs-1", "attributes": ["open"]},
                {"name": "s", "attributes": []},
            ],
            "aliases": [
                {"name": "logs-a", "indices": ["s"]},
                {"name": "logs-b", "indices": ["logs-1"]},
            ],
        }
    )
    assert not view.serves(allow, "logs-a") and view.serves(allow, "logs-b")
    assert view.forbidden_indices(allow) == ["s"]
