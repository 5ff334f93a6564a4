"""``?pretty`` indents a collapsed answer as Elasticsearch indents its own; a search asking for
an answer in YAML (``format=yaml`` or ``Accept``) gets Elasticsearch's own answer, every
parameter applied, since the proxy reads and writes JSON."""

from __future__ import annotations

import json

import httpx
import pytest
from elasticsearch import Elasticsearch

from tests.proxy_support import without_took
from tests.test_proxy_search import SORTED, wire_story

pytestmark = pytest.mark.es


def test_pretty_indents_the_collapsed_answer(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    url = f"{proxy_url}/{index_name}/_search"
    compact = httpx.post(url, json={**SORTED, "size": 3}, timeout=30)
    for flag in ("", "true"):
        pretty = httpx.post(url, json={**SORTED, "size": 3}, params={"pretty": flag}, timeout=30)
        assert pretty.status_code == 200, pretty.text
        assert pretty.text.startswith('{\n  "') and pretty.text.endswith("}\n")
        assert without_took(pretty.content) == without_took(compact.content)
        assert pretty.json()["hits"]["hits"][0]["_collapse"]["folded"] == 19
    plain = httpx.post(url, json={**SORTED, "size": 3}, params={"pretty": "false"}, timeout=30)
    assert "\n" not in plain.text
    lines = b"{}\n%s\n" % json.dumps({**SORTED, "size": 2}).encode()
    multi = httpx.post(
        f"{proxy_url}/{index_name}/_msearch",
        content=lines,
        params={"pretty": ""},
        headers={"content-type": "application/x-ndjson"},
        timeout=30,
    )
    assert multi.text.startswith('{\n  "')
    assert multi.json()["responses"][0]["hits"]["hits"][0]["_collapse"]["folded"] == 19


@pytest.mark.parametrize(
    "params, headers",
    [
        ({"format": "yaml"}, {}),
        ({}, {"accept": "application/yaml"}),
    ],
)
def test_a_yaml_answer_is_elasticsearchs_own(
    es: Elasticsearch,
    es_url: str,
    index_name: str,
    proxy_url: str,
    params: dict[str, str],
    headers: dict[str, str],
) -> None:
    wire_story(es, index_name)
    asked = {"q": "body:earthquake", "size": "3", "filter_path": "hits.total,hits.hits._id"}
    asked |= params
    direct = httpx.get(f"{es_url}/{index_name}/_search", params=asked, headers=headers)
    proxied = httpx.get(f"{proxy_url}/{index_name}/_search", params=asked, headers=headers)
    assert proxied.status_code == direct.status_code == 200, proxied.text
    assert proxied.headers["content-type"].startswith("application/yaml")
    assert proxied.text == direct.text  # filter_path applied by Elasticsearch, no took left
    assert proxied.text.count("_id:") == 3 and "value: 60" in proxied.text
